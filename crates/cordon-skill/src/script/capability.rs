//! The capability rule: fail closed on what the call tables do not know.
//!
//! A script that names a process-, code-evaluation-, native- or network-capable module
//! or builtin must use it only in calls the tables in [`super::calls`] judge, with
//! arguments that fold to exact values. Any other use (an alias, a reassignment, a bare
//! reference passed along, a computed attribute or subscript, an unknown member, a call
//! whose arguments are known only at run time) is recorded in [`Facts::unresolved`], and
//! the review asks a human about it. So `pass` means every such use was understood,
//! not that no known-bad spelling was seen.

use super::calls::{
    ARGV_CALLS, NET_CALLS, NET_METHOD_URL, PY_SUBPROCESS, SHELL_STRING, WRITE_CALLS,
};
use super::js_caps::{JS_ROOTS, JS_SAFE};
use super::py_members::{self, Member};
use super::py_values::module_returning;
use super::python_caps::{
    PY_BUILTINS, PY_CODE_ENTRIES, PY_MODULES, PY_SAFE, is_risky, risky_below,
};
use super::{Facts, Lang, Unit};
use std::collections::HashSet;
use tree_sitter::Node;

/// Ruby methods that call a method named by a value, or evaluate code.
const RB_DYNAMIC: &[&str] = &[
    "send",
    "public_send",
    "__send__",
    "method",
    "public_method",
    "singleton_method",
    "instance_method",
    "public_instance_method",
    "instance_eval",
    "class_eval",
    "module_eval",
    "instance_exec",
    "class_exec",
    "eval",
    "const_get",
    "define_method",
    "syscall",
    "fork",
];

/// Ruby constants that start processes or reach the network.
const RB_ROOTS: &[&str] = &[
    "Kernel",
    "IO",
    "Open3",
    "Net",
    "Socket",
    "TCPSocket",
    "UDPSocket",
    "PTY",
    "Process",
    "ObjectSpace",
    "Fiddle",
    "URI",
    "OpenURI",
    "Binding",
    "RubyVM",
];

/// The members of a harmless module: all but its risky ones (see `python_caps`).
const HARMLESS_MEMBERS: &[&str] = &["*"];

fn is_safe(name: &str, table: &[&str]) -> bool {
    table == HARMLESS_MEMBERS
        || table
            .iter()
            .any(|s| name == *s || name.starts_with(&format!("{s}.")))
}

fn judged(name: &str) -> bool {
    let name = name
        .trim_start_matches("builtins.")
        .trim_start_matches("globalThis.")
        .trim_start_matches("window.")
        .trim_start_matches("Kernel.");
    PY_SUBPROCESS.contains(&name)
        || SHELL_STRING.contains(&name)
        || ARGV_CALLS.contains(&name)
        || NET_CALLS.iter().any(|(n, _)| *n == name)
        || NET_METHOD_URL.contains(&name)
        || WRITE_CALLS.contains(&name)
        || super::calls::is_env_getter(name)
        || PY_CODE_ENTRIES.iter().any(|(n, _)| *n == name)
        || matches!(
            name,
            "exec" | "eval" | "__import__" | "importlib.import_module" | "getattr" | "IO.popen"
        )
}

/// Keyword arguments of a judged call that change nothing the review relies on.
const BENIGN_KWARGS: &[&str] = &[
    "cwd",
    "check",
    "capture_output",
    "text",
    "timeout",
    "stdout",
    "stderr",
    "stdin",
    "encoding",
    "errors",
    "universal_newlines",
    "headers",
    "data",
    "json",
    "params",
    "auth",
    "verify",
    "allow_redirects",
    "follow_redirects",
    "method",
    "body",
    "context",
    "env",
    "close_fds",
    "bufsize",
    "stdio",
    "maxBuffer",
    "windowsHide",
    "cookies",
    "files",
    "number",
    "repeat",
];

impl<'a> Unit<'a> {
    fn up(&self, n: Node<'a>) -> Option<Node<'a>> {
        self.parents.get(&n.id()).copied()
    }

    /// Record every use of a capability that is not a judged call with exact arguments.
    pub(super) fn capabilities(&self, nodes: &[Node<'a>], facts: &mut Facts) {
        let mut seen: HashSet<(usize, String)> = HashSet::new();
        let imported = self.imported_roots(nodes);
        let bound = self.import_bound(nodes);
        self.unknown_modules(nodes, PY_MODULES, JS_ROOTS, facts);
        for &n in nodes {
            let found = match self.lang {
                Lang::Python => self.py_use(n, &imported, &bound),
                Lang::Ruby => self.rb_use(n),
                _ => self.js_use(n),
            };
            if let Some(what) = found
                && seen.insert((self.line(n), what.clone()))
            {
                facts.unresolved.push((self.line(n), what));
            }
        }
    }

    fn imported_roots(&self, nodes: &[Node<'a>]) -> HashSet<String> {
        let mut out = HashSet::new();
        for &n in nodes {
            if matches!(n.kind(), "import_statement" | "import_from_statement") {
                for c in self.named(n) {
                    let t = match c.kind() {
                        "aliased_import" => c.child_by_field_name("name").map(|x| self.text(x)),
                        "dotted_name" => Some(self.text(c)),
                        _ => None,
                    };
                    if let Some(t) = t {
                        out.insert(t.split('.').next().unwrap_or(t).to_string());
                    }
                }
            }
        }
        for v in self.aliases.values() {
            out.insert(v.split('.').next().unwrap_or(v).to_string());
        }
        out
    }

    fn py_use(
        &self,
        n: Node<'a>,
        imported: &HashSet<String>,
        bound: &HashSet<&'a str>,
    ) -> Option<String> {
        if n.kind() == "attribute"
            && let Some(a) = n.child_by_field_name("attribute")
            && super::introspect::reaches_namespaces(self.text(a))
        {
            return Some(self.text(a).to_string());
        }
        if n.kind() != "identifier" {
            return None;
        }
        let parent = self.up(n)?;
        match parent.kind() {
            "import_statement"
            | "import_from_statement"
            | "aliased_import"
            | "dotted_name"
            | "parameters"
            | "lambda_parameters"
            | "keyword_separator" => return None,
            "attribute" if parent.child_by_field_name("attribute") == Some(n) => return None,
            "keyword_argument" if parent.child_by_field_name("name") == Some(n) => return None,
            "function_definition" | "class_definition"
                if parent.child_by_field_name("name") == Some(n) =>
            {
                return None;
            }
            "default_parameter" | "typed_parameter" | "typed_default_parameter"
                if parent.child_by_field_name("value") != Some(n) =>
            {
                return None;
            }
            _ => {}
        }
        let text = self.text(n);
        let canonical = self.aliases.get(text).cloned().unwrap_or(text.to_string());
        let root = canonical.split('.').next().unwrap_or("");
        let capable = (PY_MODULES.contains(&root) && imported.contains(root))
            || (PY_BUILTINS.contains(&canonical.as_str()) && !self.consts.contains_key(text));
        if !capable {
            // A harmless module's member: on its allow-list, or a module judged as itself.
            // (A name the script binds itself, `def f(string)`, is not the module.)
            let shadowed = self.consts.contains_key(text) || self.poisoned.contains(text);
            if imported.contains(root)
                && !shadowed
                && let Some(what) = self.member_walk(n, canonical.clone(), bound.contains(text))
            {
                return Some(what);
            }
            // A harmless module's risky member (`typing.get_type_hints`,
            // `logging.config.dictConfig`): judged like a capable module's.
            if imported.contains(root) && (is_risky(&canonical) || risky_below(&canonical)) {
                return self.chain(n, canonical, HARMLESS_MEMBERS);
            }
            return None;
        }
        self.chain(n, canonical, PY_SAFE)
    }

    fn js_use(&self, n: Node<'a>) -> Option<String> {
        if n.kind() == "import" {
            // A dynamic `import(...)`.
            let call = self.up(n).filter(|p| p.kind() == "call_expression")?;
            return self.js_module_call(call, "import");
        }
        if self.is_code_constructor(n) {
            return self.chain(n, "Function".into(), JS_SAFE);
        }
        if let Some(what) = self.constructor_call(n) {
            return Some(what);
        }
        if n.kind() == "this" {
            // `this[name]` at the top of a script is the global object.
            let p = self.up(n)?;
            if self.in_function(n) {
                return None;
            }
            let idx = p
                .child_by_field_name("index")
                .filter(|_| p.kind() == "subscript_expression");
            return idx
                .filter(|&i| self.fold(i).exact_str().is_none())
                .map(|_| "this[…]".to_string());
        }
        if n.kind() != "identifier" {
            return None;
        }
        let parent = self.up(n)?;
        match parent.kind() {
            "import_specifier"
            | "import_clause"
            | "namespace_import"
            | "formal_parameters"
            | "function_declaration"
            | "method_definition"
            | "class_declaration" => return None,
            "variable_declarator" if parent.child_by_field_name("name") == Some(n) => {
                return None;
            }
            _ => {}
        }
        let text = self.text(n);
        let canonical = self.aliases.get(text).cloned().unwrap_or(text.to_string());
        let root = canonical.split('.').next().unwrap_or("");
        let aliased = self.aliases.contains_key(text);
        if !(JS_ROOTS.contains(&root) && (aliased || !self.consts.contains_key(text))) {
            return None;
        }
        if canonical == "require" {
            let call = parent.kind() == "call_expression"
                && parent.child_by_field_name("function") == Some(n);
            if !call {
                return Some("require".into());
            }
            return self.js_module_call(parent, "require");
        }
        self.chain(n, canonical, JS_SAFE)
    }

    /// `require('m')` / `import('m')`: fine when `m` is a literal module that is not
    /// capable, or a capable one bound to a name (whose uses are checked themselves).
    fn js_module_call(&self, call: Node<'a>, what: &str) -> Option<String> {
        let c = self.call(call)?;
        let Some(m) = c
            .args
            .first()
            .and_then(|&a| self.fold(a).exact_str().map(str::to_string))
        else {
            return Some(format!("{what}(…)"));
        };
        let m = m.trim_start_matches("node:").to_string();
        if !JS_ROOTS.contains(&m.as_str()) {
            return None;
        }
        let mut up = self.up(call)?;
        if up.kind() == "await_expression" {
            up = self.up(up)?;
        }
        if up.kind() == "variable_declarator" && what == "require" {
            return None;
        }
        if what == "require" {
            return self.chain(call, m, JS_SAFE);
        }
        Some(format!("{what}('{m}')"))
    }

    fn rb_use(&self, n: Node<'a>) -> Option<String> {
        match n.kind() {
            "call" => {
                let m = self.text(n.child_by_field_name("method")?);
                if RB_DYNAMIC.contains(&m) {
                    return Some(m.to_string());
                }
                let receiver = n.child_by_field_name("receiver");
                let open_pipe = matches!(m, "read" | "readlines" | "foreach" | "open" | "popen")
                    && receiver
                        .is_none_or(|r| matches!(self.text(r), "IO" | "Kernel" | "File" | "URI"));
                let spawn = receiver.is_none() && matches!(m, "system" | "exec" | "spawn");
                if open_pipe || spawn {
                    let c = self.call(n)?;
                    let first = c.args.first().map(|&a| self.fold(a));
                    let pipe = first
                        .as_ref()
                        .and_then(|v| v.exact_str())
                        .is_some_and(|s| s.starts_with('|'));
                    let exact = c.args.iter().all(|&a| self.fold(a).exact());
                    if (spawn && !exact) || (open_pipe && (!exact || pipe) && m != "popen") {
                        return Some(m.to_string());
                    }
                }
                None
            }
            "constant" => {
                let text = self.text(n);
                if !RB_ROOTS.contains(&text) {
                    return None;
                }
                let parent = self.up(n)?;
                if parent.kind() == "scope_resolution"
                    && parent.child_by_field_name("name") == Some(n)
                {
                    return None;
                }
                let mut cur = n;
                let mut name = text.to_string();
                loop {
                    let p = self.up(cur)?;
                    if p.kind() == "scope_resolution" && p.child_by_field_name("scope") == Some(cur)
                    {
                        let nm = p.child_by_field_name("name").map_or("", |x| self.text(x));
                        name = format!("{name}::{nm}");
                        cur = p;
                        continue;
                    }
                    if p.kind() == "call" && p.child_by_field_name("receiver") == Some(cur) {
                        let m = p.child_by_field_name("method").map_or("", |x| self.text(x));
                        let callee = format!("{name}.{m}");
                        if matches!(name.as_str(), "IO" | "Kernel" | "URI")
                            && !judged(&callee)
                            && !matches!(
                                m,
                                "open"
                                    | "read"
                                    | "readlines"
                                    | "foreach"
                                    | "system"
                                    | "exec"
                                    | "spawn"
                            )
                        {
                            // `IO.method(...)`, `Kernel.send(...)`: judged as calls above.
                            return None;
                        }
                        return self.call_ok(p, &callee);
                    }
                    return Some(name);
                }
            }
            _ => None,
        }
    }

    /// Follow a harmless module's value through static attribute access (see
    /// `py_members`): a member bound to a capable module is judged as that module, a
    /// member off the allow-list is reported.
    /// `bound`: the name at `start` was bound by an import statement (it is a module).
    fn member_walk(&self, start: Node<'a>, mut name: String, bound: bool) -> Option<String> {
        let mut cur = start;
        for _ in 0..64 {
            let real = py_members::resolve(&name).unwrap_or_else(|| name.clone());
            if module_returning(&real) {
                return Some(format!("{name}, which returns a module,"));
            }
            let root = real.split('.').next().unwrap_or("");
            if PY_MODULES.contains(&root) {
                // Nobody reaches `os` through `logging` but to hide it: the call itself
                // is judged as `os`'s (the callee resolves), and the path is reported.
                return Some(format!(
                    "{name}, which is the module {root} reached through another,"
                ));
            }
            match py_members::member(&real) {
                Member::Unknown(what) => {
                    return Some(format!("{what}, not a known member of a harmless module,"));
                }
                Member::Known => return None,
                Member::Module | Member::Untabled => {}
            }
            let module = py_members::member(&real) == Member::Module || (bound && cur == start);
            let p = self.up(cur)?;
            match p.kind() {
                "attribute" if p.child_by_field_name("object") == Some(cur) => {
                    let a = p
                        .child_by_field_name("attribute")
                        .map_or("", |a| self.text(a));
                    name = format!("{name}.{a}");
                    cur = p;
                }
                "argument_list" => {
                    // `getattr(logging, 'os')` with a literal name is attribute access.
                    let call = self.up(p)?;
                    let c = self.call(call)?;
                    let attr = c
                        .args
                        .get(1)
                        .and_then(|&a| self.fold(a).exact_str().map(str::to_string));
                    match (
                        c.callee.as_str(),
                        c.args.first().copied() == Some(cur),
                        attr,
                    ) {
                        ("getattr", true, Some(a)) => {
                            name = format!("{name}.{a}");
                            cur = call;
                        }
                        // A standard module handed to a function (`vars(logging)`,
                        // `inspect.getmembers(tempfile)`) hands on every member it has.
                        _ if module && !self.is_import_arg(&c.callee) => {
                            return Some(format!("{name}, a module handed to {},", c.callee));
                        }
                        _ => return None,
                    }
                }
                _ if module && self.hands_on(cur, p) => {
                    return Some(format!(
                        "{name}, a module handed on as a value (stored, returned or passed where the analysis cannot follow it),"
                    ));
                }
                _ => return None,
            }
        }
        None
    }

    /// Names bound to a module by an import statement (`import numpy as np` binds
    /// `np`, `import xml.etree` binds `xml`).
    fn import_bound(&self, nodes: &[Node<'a>]) -> HashSet<&'a str> {
        let mut out = HashSet::new();
        for &n in nodes.iter().filter(|n| n.kind() == "import_statement") {
            for c in self.named(n) {
                let name = match c.kind() {
                    "aliased_import" => c.child_by_field_name("alias").map(|a| self.text(a)),
                    "dotted_name" => self.text(c).split('.').next(),
                    _ => None,
                };
                out.extend(name);
            }
        }
        out
    }

    /// Calls a module may be handed without reaching its members: `importlib.reload`,
    /// `isinstance`-like checks, printing.
    fn is_import_arg(&self, callee: &str) -> bool {
        matches!(
            callee,
            "importlib.reload" | "isinstance" | "issubclass" | "print" | "repr" | "str" | "id"
        )
    }

    /// Follow a capable value through static attribute access to the call that uses it.
    fn chain(&self, start: Node<'a>, mut name: String, safe: &[&str]) -> Option<String> {
        let mut cur = start;
        let python = self.lang == Lang::Python;
        for _ in 0..64 {
            // A safe member bound to a capable module is that module
            // (`importlib.metadata.os` is `os`, not safe as `importlib.metadata` is).
            if python
                && let Some(real) = py_members::resolve(&name)
                && PY_MODULES.contains(&real.split('.').next().unwrap_or(""))
            {
                name = real;
            }
            // A safe prefix ends the walk, unless a risky member lies below it
            // (`importlib.metadata` is safe, `importlib.metadata.EntryPoint` is not).
            let risky = python && is_risky(&name);
            let safe_here = !risky && is_safe(&name, safe);
            if safe_here && !(python && risky_below(&name)) {
                return None;
            }
            let Some(p) = self.up(cur) else {
                return (!safe_here).then_some(name);
            };
            // Attribute access, or an argument (`getattr(typing, 'get_type_hints')`, a
            // module handed to a function), leads further.
            let deeper = (matches!(p.kind(), "attribute" | "member_expression")
                && p.child_by_field_name("object") == Some(cur))
                || matches!(p.kind(), "argument_list" | "arguments");
            if safe_here && !deeper {
                return None;
            }
            let field = |f: &str| p.child_by_field_name(f) == Some(cur);
            match p.kind() {
                "attribute" if field("object") => {
                    let a = p
                        .child_by_field_name("attribute")
                        .map_or("", |a| self.text(a));
                    name = format!("{name}.{a}");
                }
                "member_expression" if field("object") => {
                    let a = p
                        .child_by_field_name("property")
                        .map_or("", |a| self.text(a));
                    name = format!("{name}.{a}");
                }
                "subscript_expression" if field("object") => {
                    let idx = p.child_by_field_name("index")?;
                    let Some(k) = self.fold(idx).exact_str().map(str::to_string) else {
                        return Some(format!("{name}[…]"));
                    };
                    name = format!("{name}.{k}");
                }
                "parenthesized_expression" | "await_expression" | "non_null_expression" => {}
                "call" | "call_expression" if field("function") => {
                    return self.call_ok(p, &name);
                }
                "new_expression" if field("constructor") => {
                    return self.call_ok(p, &format!("new {name}"));
                }
                "argument_list" | "arguments" => {
                    // `getattr(os, 'system')` with a literal name is attribute access.
                    // Anything else holding arguments (a class's bases,
                    // `class P(subprocess.Popen)`) hands the value on.
                    let Some((call, c)) = self.up(p).and_then(|x| Some((x, self.call(x)?))) else {
                        return Some(name);
                    };
                    let first = c.args.first().copied() == Some(cur);
                    let attr = c
                        .args
                        .get(1)
                        .and_then(|&a| self.fold(a).exact_str().map(str::to_string));
                    match (c.callee.as_str(), first, attr) {
                        ("getattr", true, Some(a)) => {
                            name = format!("{name}.{a}");
                            cur = call;
                            continue;
                        }
                        _ => return Some(name),
                    }
                }
                _ => return Some(name),
            }
            cur = p;
        }
        Some(name)
    }

    /// A call of a capable callee: fine when the tables judge it and its arguments fold.
    fn call_ok(&self, call: Node<'a>, name: &str) -> Option<String> {
        if !judged(name) {
            return Some(name.to_string());
        }
        let c = self.call(call)?;
        // Only a call the analysis itself named this way was judged.
        let trim = |s: &str| {
            s.trim_start_matches("builtins.")
                .trim_start_matches("globalThis.")
                .trim_start_matches("window.")
                .trim_start_matches("Kernel.")
                .to_string()
        };
        if trim(&c.callee) != trim(name) {
            return Some(name.to_string());
        }
        if self.safe_loader(&c, name) {
            return None;
        }
        if name == "getattr" {
            // `getattr(obj, 'name')`: the capable object, if any, is checked on its own.
            let literal = c.args.get(1).is_some_and(|&a| self.fold(a).exact());
            return (!literal).then(|| name.to_string());
        }
        let net = NET_CALLS.iter().any(|(n, _)| *n == name) || NET_METHOD_URL.contains(&name);
        if net {
            // The destination is what the review judges; the body and options are data.
            let dest = if NET_METHOD_URL.contains(&name) {
                c.args.get(1)
            } else {
                c.args.first()
            };
            let dest = dest.map(|&d| self.fold(d)).or_else(|| {
                c.kwargs
                    .iter()
                    .find(|(k, _)| k == "url")
                    .map(|(_, v)| self.fold(*v))
            });
            return (!dest.is_some_and(|d| d.exact())).then(|| name.to_string());
        }
        let args_exact = c
            .args
            .iter()
            .filter(|a| a.kind() != "object")
            .all(|&a| self.fold(a).exact());
        let kwargs_ok = c.kwargs.iter().all(|(k, v)| {
            BENIGN_KWARGS.contains(&k.as_str())
                || (matches!(k.as_str(), "shell" | "args" | "input") && self.fold(*v).exact())
        });
        (!(args_exact && kwargs_ok)).then(|| name.to_string())
    }
}
