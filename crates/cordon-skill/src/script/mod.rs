//! Scripts in Python, JavaScript/TypeScript and Ruby, read with real parsers
//! (tree-sitter grammars) for what they would run and touch: the processes they start
//! and the command lines those get, downloads and whether downloaded code is run,
//! files written, environment variables read, paths named, and network destinations.
//! Arguments are constant-folded (see [`fold`]), so a command or a credential path
//! assembled from literal parts is seen as the text it becomes.
//!
//! This module only extracts [`Facts`]; `review` judges them with the shell analysis and
//! the policy's guards, like any other command.

mod bind;
mod calls;
mod capability;
mod climb;
mod climb_lost;
mod envflow;
mod fold;
mod handles;
mod ident;
mod introspect;
mod js_caps;
mod lang;
mod modules;
mod net_calls;
mod pathvals;
mod places;
mod py_features;
mod py_lib_sinks;
mod py_libs;
mod py_members;
mod py_values;
mod python_caps;
mod rb_alias;
mod rb_symbols;
mod relread;
mod sdk_keys;

pub(crate) use climb::with_script;
pub(crate) use lang::Lang;

pub(crate) use fold::RUNTIME;
pub(crate) use pathvals::{HOME_ANY, runtime_glob};
/// Most bytes of content read as written to one file.
pub(crate) const MAX_WRITTEN: usize = 1 << 20;
use fold::V;
pub(crate) use js_caps::is_climb;
pub(crate) use relread::relative_secret;
use std::collections::HashMap;
use tree_sitter::{Node, Parser, Tree};

/// How a process is started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cmd {
    /// A string run by a shell; `exact` when no part of it is known only at run time.
    Shell { text: String, exact: bool },
    /// A program and its arguments (unknown parts are [`RUNTIME`]).
    Argv { argv: Vec<String>, exact: bool },
    /// A command known only at run time.
    Unknown,
}

/// A network call: its destination when it folds, and whether its response is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Net {
    pub line: usize,
    /// The URL or host, possibly with [`RUNTIME`] parts; `None` when nothing is known.
    pub dest: Option<String>,
    pub exact: bool,
    /// The call fetches content (rather than only sending).
    pub fetch: bool,
}

/// What a script does, as far as its text shows.
#[derive(Debug, Default, Clone)]
pub(crate) struct Facts {
    pub spawns: Vec<(usize, Cmd)>,
    pub net: Vec<Net>,
    /// Files written (the path, when it folds exactly).
    pub writes: Vec<(usize, Option<String>)>,
    /// Permission changes (`chmod`).
    pub chmods: Vec<usize>,
    /// Code evaluated at run time: `exec`, `eval`, `runpy.run_path`, a dynamic import.
    pub code: Vec<(usize, String)>,
    /// Modules or files imported, required or loaded, by exact name.
    pub imports: Vec<(usize, String)>,
    /// Environment variables read, by exact name.
    pub env: Vec<(usize, String)>,
    /// Exact strings that look like paths.
    pub paths: Vec<(usize, String)>,
    /// Exact relative paths with a folder part not judged as they are
    /// (`theme/.aws/credentials`): judged where a working folder or a link takes them.
    pub rel_paths: Vec<(usize, String)>,
    /// The parser met text it could not read.
    pub parse_errors: usize,
    /// Uses of a capable module or builtin that no judged call resolves.
    pub unresolved: Vec<(usize, String)>,
    /// Modules imported that cordon does not know to be harmless (by exact name; the
    /// review drops the package's own).
    pub modules: Vec<(usize, String)>,
    /// Uses of the whole environment other than named reads (see `envflow`); `true`
    /// when the environment reaches a network call's or a spawn's arguments.
    pub env_dumps: Vec<(usize, bool)>,
    /// Path patterns the script reads through: glob and walk calls, and paths built with
    /// parts known only at run time (each such part a `*`, a leading one the home
    /// folder).
    /// The flag says the pattern was built from parts known only at run time.
    pub globs: Vec<(usize, String, bool)>,
    /// Files written, created or moved to: the folded path (with [`RUNTIME`] parts) and
    /// whether it is exact.
    pub targets: Vec<(usize, String, bool)>,
    /// Environment variables set: the name and the value, each when it folds exactly.
    pub env_sets: Vec<(usize, Option<String>, Option<String>)>,
    /// Archives extracted (`extractall`, `extract`, `shutil.unpack_archive`), by line.
    pub unpacks: Vec<usize>,
    /// Files written with a content that folds exactly: the line, the path and the text.
    pub written: Vec<(usize, String, String)>,
    /// Working folders the script moves to (`os.chdir`, `process.chdir`, `Dir.chdir`) or
    /// starts a process in (`cwd=`, `chdir:`): the folded path (with [`RUNTIME`] parts)
    /// and whether it is exact. Relative paths after it name files there.
    pub bases: Vec<(usize, String, bool)>,
    /// Links the script makes: the link's path, what it points to (each folded, with
    /// [`RUNTIME`] parts) and whether both are exact. Paths through the link name
    /// files where it points.
    pub links: Vec<(usize, String, String, bool)>,
    /// Text the script prints (`true`), and text with a command's shape it holds
    /// (`false`), with [`RUNTIME`] parts: an agent that runs the script may read it as
    /// the next thing to do.
    pub printed: Vec<(usize, String, bool)>,
}

impl Facts {
    /// Nothing was found that the review judges.
    pub(crate) fn is_empty(&self) -> bool {
        self.spawns.is_empty()
            && self.net.is_empty()
            && self.writes.is_empty()
            && self.code.is_empty()
            && self.env.is_empty()
            && self.paths.is_empty()
            && self.unresolved.is_empty()
            && self.modules.is_empty()
            && self.env_dumps.is_empty()
            && self.globs.is_empty()
            && self.targets.is_empty()
            && self.unpacks.is_empty()
    }
}

/// A parsed unit of code and what the folding needs to know about it.
pub(crate) struct Unit<'a> {
    pub(crate) lang: Lang,
    src: &'a str,
    /// Names bound to expressions (`X = ...`), every binding kept.
    consts: HashMap<&'a str, Vec<Node<'a>>>,
    /// Names rebound other than by a plain assignment: never folded.
    poisoned: std::collections::HashSet<&'a str>,
    /// Each node's parent by id (tree-sitter's own `parent()` walks from the root).
    parents: HashMap<usize, Node<'a>>,
    /// Import aliases: local name → canonical dotted name.
    aliases: HashMap<String, String>,
    /// Lines are counted from here (a Markdown block's first line).
    first_line: usize,
    /// Names of functions and classes declared in the unit (JavaScript).
    declared_functions: std::collections::HashSet<&'a str>,
    /// The text names `__file__` (see `climb`).
    names_file: bool,
    /// Names derived from `__file__` that the folder cannot follow (see `climb_lost`).
    file_lost: climb_lost::Lost<'a>,
    /// Names of file handles and the call that opened each (see `handles`).
    handles: HashMap<&'a str, Node<'a>>,
}

/// A call: its canonical callee and its arguments.
pub(crate) struct Call<'a> {
    pub callee: String,
    pub args: Vec<Node<'a>>,
    pub kwargs: Vec<(String, Node<'a>)>,
}

/// Parse `text` and extract its facts. Lines are reported from `first_line`.
pub(crate) fn analyze(lang: Lang, text: &str, first_line: usize) -> Facts {
    let mut parser = Parser::new();
    if parser.set_language(&lang.grammar()).is_err() {
        return Facts {
            parse_errors: 1,
            ..Facts::default()
        };
    }
    let Some(tree) = parser.parse(text, None) else {
        return Facts {
            parse_errors: 1,
            ..Facts::default()
        };
    };
    // Names are looked up as the language compares them: rewrite each identifier to its
    // normal form once, and read the rewritten text.
    if let Some(normal) = ident::normalized_source(lang, text, &tree) {
        let Some(tree) = parser.parse(&normal, None) else {
            return Facts {
                parse_errors: 1,
                ..Facts::default()
            };
        };
        return extract(lang, &normal, &tree, first_line);
    }
    extract(lang, text, &tree, first_line)
}

fn extract(lang: Lang, src: &str, tree: &Tree, first_line: usize) -> Facts {
    let mut unit = Unit {
        lang,
        src,
        consts: HashMap::new(),
        poisoned: std::collections::HashSet::new(),
        parents: HashMap::new(),
        aliases: HashMap::new(),
        first_line,
        declared_functions: std::collections::HashSet::new(),
        names_file: lang == Lang::Python && climb::names_script_path(src),
        file_lost: climb_lost::Lost::default(),
        handles: HashMap::new(),
    };
    let nodes = all_nodes(tree.root_node());
    for &n in &nodes {
        if matches!(
            n.kind(),
            "function_declaration" | "generator_function_declaration" | "class_declaration"
        ) && let Some(name) = n.child_by_field_name("name")
        {
            unit.declared_functions.insert(unit.text(name));
        }
    }
    for &n in &nodes {
        let mut c = n.walk();
        for child in n.children(&mut c) {
            unit.parents.insert(child.id(), n);
        }
    }
    for &n in &nodes {
        unit.bind(n);
        unit.bind_handle(n);
    }
    if unit.names_file {
        unit.lost_file_paths(&nodes);
    }
    let mut facts = Facts::default();
    let mut skip = std::collections::HashSet::new();
    for &n in &nodes {
        if n.is_error() || n.is_missing() {
            facts.parse_errors += 1;
        }
        unit.visit(n, &mut facts, &mut skip);
    }
    unit.capabilities(&nodes, &mut facts);
    unit.string_annotations(&nodes, &mut facts);
    unit.introspection(&nodes, &mut facts);
    unit.py_search_path(&nodes, &mut facts);
    unit.env_dumps(&nodes, &mut facts);
    unit.py_lib_nodes(&nodes, &mut facts);
    unit.py_values(&nodes, &mut facts);
    unit.rb_aliases(&nodes, &mut facts);
    facts
}

/// Every node, in document order, without recursion (the depth is the attacker's).
fn all_nodes(root: Node<'_>) -> Vec<Node<'_>> {
    let mut out = Vec::new();
    let mut cursor = root.walk();
    loop {
        out.push(cursor.node());
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return out;
            }
        }
    }
}

impl<'a> Unit<'a> {
    pub(crate) fn text(&self, n: Node<'_>) -> &'a str {
        self.src.get(n.byte_range()).unwrap_or("")
    }

    pub(crate) fn named<'t>(&self, n: Node<'t>) -> Vec<Node<'t>> {
        let mut c = n.walk();
        n.named_children(&mut c).collect()
    }

    pub(crate) fn line(&self, n: Node<'_>) -> usize {
        self.first_line + n.start_position().row
    }

    /// The canonical dotted name of a callee expression.
    pub(crate) fn dotted(&self, n: Node<'_>) -> String {
        // Callees nest (`a.b.c…`, `f()()()…`) as deep as the text wants: past a bound
        // the name is unknown rather than the stack exhausted.
        let depth = DOTTED_DEPTH.with(|d| {
            d.set(d.get() + 1);
            d.get()
        });
        let out = if depth > 16 {
            "…".to_string()
        } else {
            self.dotted_inner(n)
        };
        DOTTED_DEPTH.with(|d| d.set(d.get() - 1));
        out
    }

    fn dotted_inner(&self, n: Node<'_>) -> String {
        match n.kind() {
            "identifier" | "constant" | "property_identifier" => {
                let t = self.text(n);
                match self.aliases.get(t) {
                    // `from logging import os` binds `os` (see `py_members`).
                    Some(a) => py_members::resolve(a).unwrap_or_else(|| a.clone()),
                    None => t.to_string(),
                }
            }
            "attribute" => {
                let obj = n
                    .child_by_field_name("object")
                    .map(|o| self.dotted(o))
                    .unwrap_or_default();
                let attr = n
                    .child_by_field_name("attribute")
                    .map_or("", |a| self.text(a));
                let path = format!("{obj}.{attr}");
                // `logging.os` is `os` (see `py_members`).
                py_members::resolve(&path).unwrap_or(path)
            }
            "member_expression" | "subscript_expression" if self.is_code_constructor(n) => {
                "Function".to_string()
            }
            "member_expression" => {
                let obj = n
                    .child_by_field_name("object")
                    .map(|o| self.dotted(o))
                    .unwrap_or_default();
                let prop = n
                    .child_by_field_name("property")
                    .map_or("", |a| self.text(a));
                format!("{obj}.{prop}")
            }
            "scope_resolution" => {
                let scope = n.child_by_field_name("scope").map(|o| self.dotted(o));
                let name = n.child_by_field_name("name").map_or("", |a| self.text(a));
                scope.map_or(name.to_string(), |s| format!("{s}::{name}"))
            }
            "call" | "call_expression" => {
                if let Some(m) = self.required_module(n) {
                    return m;
                }
                // `__import__('os')`, `importlib.import_module('os')`: the module;
                // `getattr(os, 'sys' + 'tem')`: the attribute.
                let Some(c) = self.call(n) else {
                    return String::new();
                };
                if let Some(r) = self.resolved_name(n, &c) {
                    return r;
                }
                {
                    let folded = |i: usize| {
                        c.args
                            .get(i)
                            .and_then(|&a| self.fold(a).exact_str().map(str::to_string))
                    };
                    match c.callee.as_str() {
                        "__import__" | "importlib.import_module" => {
                            if let Some(m) = folded(0) {
                                return m;
                            }
                        }
                        "getattr" => {
                            if let (Some(&obj), Some(attr)) = (c.args.first(), folded(1)) {
                                return format!("{}.{attr}", self.dotted(obj));
                            }
                        }
                        _ => {}
                    }
                }
                // Computed once: each computation walks the callee again.
                format!("{}()", c.callee)
            }
            // `process['env']`, `cp['exec']`: a member named by a literal key.
            "subscript_expression" => {
                let obj = n.child_by_field_name("object").map(|o| self.dotted(o));
                let key = n
                    .child_by_field_name("index")
                    .and_then(|i| self.fold(i).exact_str().map(str::to_string));
                match (obj, key) {
                    (Some(o), Some(k)) => format!("{o}.{k}"),
                    _ => self.text(n).to_string(),
                }
            }
            "parenthesized_expression" | "non_null_expression" | "await_expression" => self
                .named(n)
                .into_iter()
                .next()
                .map(|c| self.dotted(c))
                .unwrap_or_default(),
            _ => self.text(n).to_string(),
        }
    }

    /// The receiver of a method call, when there is one.
    pub(crate) fn receiver<'t>(&self, n: Node<'t>) -> Option<Node<'t>> {
        match self.lang {
            Lang::Ruby => n.child_by_field_name("receiver"),
            Lang::Python => n
                .child_by_field_name("function")
                .filter(|f| f.kind() == "attribute")
                .and_then(|f| f.child_by_field_name("object")),
            _ => n
                .child_by_field_name("function")
                .filter(|f| f.kind() == "member_expression")
                .and_then(|f| f.child_by_field_name("object")),
        }
    }

    /// A call's parts, for the call node kinds of each language.
    pub(crate) fn call<'t>(&self, n: Node<'t>) -> Option<Call<'t>> {
        let (callee, args_node) = match (self.lang, n.kind()) {
            (Lang::Python, "call") => (
                self.dotted(n.child_by_field_name("function")?),
                n.child_by_field_name("arguments"),
            ),
            (Lang::Ruby, "call") => {
                let method = self.text(n.child_by_field_name("method")?);
                let callee = match n.child_by_field_name("receiver") {
                    Some(r) => format!("{}.{method}", self.dotted(r)),
                    None => method.to_string(),
                };
                (callee, n.child_by_field_name("arguments"))
            }
            (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, "call_expression") => (
                self.dotted(n.child_by_field_name("function")?),
                n.child_by_field_name("arguments"),
            ),
            (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, "new_expression") => (
                format!("new {}", self.dotted(n.child_by_field_name("constructor")?)),
                n.child_by_field_name("arguments"),
            ),
            _ => return None,
        };
        let mut args = Vec::new();
        let mut kwargs = Vec::new();
        if let Some(a) = args_node {
            let children = if a.kind() == "generator_expression" {
                vec![a]
            } else {
                self.named(a)
            };
            for c in children {
                match c.kind() {
                    "comment" => {}
                    "keyword_argument" | "pair" => {
                        let key = c
                            .child_by_field_name("name")
                            .or(c.child_by_field_name("key"));
                        // Ruby 3.1's `chdir:` is `chdir: chdir`, the variable of the name.
                        let value = c.child_by_field_name("value").or(key);
                        if let (Some(k), Some(v)) = (key, value) {
                            kwargs.push((
                                self.text(k)
                                    .trim_end_matches(':')
                                    .trim_start_matches(':')
                                    .to_string(),
                                v,
                            ));
                        }
                    }
                    "object" => {
                        // An options object (`{shell: true}`) is read as keywords too.
                        // `{ cwd }` is `{ cwd: cwd }`.
                        for p in self
                            .named(c)
                            .into_iter()
                            .filter(|p| p.kind() == "shorthand_property_identifier")
                        {
                            kwargs.push((self.text(p).to_string(), p));
                        }
                        for p in self.named(c).into_iter().filter(|p| p.kind() == "pair") {
                            if let (Some(k), Some(v)) =
                                (p.child_by_field_name("key"), p.child_by_field_name("value"))
                            {
                                kwargs
                                    .push((self.text(k).trim_matches(['"', '\'']).to_string(), v));
                            }
                        }
                        args.push(c);
                    }
                    _ => args.push(c),
                }
            }
        }
        let callee = callee
            .trim_start_matches("builtins.")
            .trim_start_matches("globalThis.")
            .trim_start_matches("window.")
            .trim_start_matches("Kernel.")
            .to_string();
        Some(Call {
            callee,
            args,
            kwargs,
        })
    }

    /// The variable name of an environment lookup expression (`os.environ['X']`,
    /// `process.env.X`, `process.env['X']`, `ENV['X']`).
    pub(crate) fn env_name(&self, n: Node<'_>) -> Option<String> {
        let (obj, key) = match n.kind() {
            "subscript" => (
                n.child_by_field_name("value")?,
                n.child_by_field_name("subscript")?,
            ),
            "subscript_expression" => (
                n.child_by_field_name("object")?,
                n.child_by_field_name("index")?,
            ),
            "element_reference" => (
                n.child_by_field_name("object")?,
                self.named(n).into_iter().nth(1)?,
            ),
            "member_expression" => {
                let obj = n.child_by_field_name("object")?;
                let prop = n.child_by_field_name("property")?;
                if calls::is_env_object(&self.dotted(obj)) {
                    return Some(self.text(prop).to_string());
                }
                return None;
            }
            _ => return None,
        };
        if !calls::is_env_object(&self.dotted(obj)) {
            return None;
        }
        self.fold(key).exact_str().map(str::to_string)
    }

    fn visit(&self, n: Node<'_>, facts: &mut Facts, skip: &mut std::collections::HashSet<usize>) {
        let line = self.line(n);
        self.sdk_key_read(n, facts);
        match n.kind() {
            "subshell" => {
                // Ruby backticks and %x(): shell text.
                let v = self.fold_string_like(n);
                facts.spawns.push((
                    line,
                    Cmd::Shell {
                        text: v.text(),
                        exact: v.exact(),
                    },
                ));
            }
            "import_statement" | "import_from_statement" if self.lang == Lang::Python => {
                let module = n
                    .child_by_field_name("module_name")
                    .or_else(|| n.child_by_field_name("name"))
                    .map(|m| self.text(m).to_string());
                if let Some(m) = module {
                    facts.imports.push((line, m));
                }
            }
            "subscript" | "subscript_expression" | "element_reference" | "member_expression" => {
                if let Some(name) = self.env_name(n) {
                    facts.env.push((line, name));
                }
            }
            "string"
            | "template_string"
            | "concatenated_string"
            | "binary_operator"
            | "binary_expression"
            | "binary" => {
                // Only the outermost expression of a chain is folded (its parts are in
                // it), so a long chain is folded once, not once per link. (Parents are
                // not asked for: tree-sitter finds a parent by walking from the root.)
                let inner = skip.remove(&n.id());
                for c in self.named(n) {
                    if matches!(
                        c.kind(),
                        "string"
                            | "template_string"
                            | "concatenated_string"
                            | "binary_operator"
                            | "binary_expression"
                            | "binary"
                    ) {
                        skip.insert(c.id());
                    }
                }
                if !inner {
                    let v = self.fold(n);
                    // Text with a command's shape that the script holds is text an
                    // agent may be shown (printed, or in a message it writes).
                    if let V::Str(s, _) = &v
                        && facts.printed.len() < 64
                        && ["|", "$(", "`", "&&"].iter().any(|m| s.contains(m))
                    {
                        facts.printed.push((line, s.clone(), false));
                    }
                    match v {
                        V::Str(s, true) if pathvals::looks_like_path(&s) => {
                            facts.paths.push((line, s));
                        }
                        V::Str(s, true) if places::relative_path(&s) => {
                            facts.rel_paths.push((line, s));
                        }
                        V::Str(s, false) => {
                            facts
                                .globs
                                .extend(pathvals::runtime_glob(&s).map(|g| (line, g, true)));
                        }
                        _ => {}
                    }
                }
            }
            _ => {
                if let Some(call) = self.call(n) {
                    self.classify_call(n, &call, facts);
                }
            }
        }
    }

    fn fold_string_like(&self, n: Node<'_>) -> V {
        let mut v = V::Str(String::new(), true);
        for c in self.named(n) {
            let part = match c.kind() {
                "string_content" => V::Str(self.text(c).into(), true),
                "interpolation" => match self.named(c).into_iter().next().map(|e| self.fold(e)) {
                    Some(V::Str(s, e)) => V::Str(s, e),
                    _ => V::Str(RUNTIME.into(), false),
                },
                _ => V::Str(RUNTIME.into(), false),
            };
            v = V::Str(v.text() + &part.text(), v.exact() && part.exact());
        }
        v
    }
}

thread_local! {
    /// How deep [`Unit::dotted`] is on this thread.
    static DOTTED_DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// `node:child_process` → `child_process`.
fn js_module(m: &str) -> String {
    m.trim_start_matches("node:").to_string()
}

#[cfg(test)]
mod caps_tests;
#[cfg(test)]
mod flow_tests;
#[cfg(test)]
mod py_libs_tests;
#[cfg(test)]
mod py_tests;
#[cfg(test)]
mod read_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod unpack_tests;
