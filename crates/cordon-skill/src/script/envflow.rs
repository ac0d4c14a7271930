//! The whole environment is a credential source: it holds every token and password of
//! the session. A use of the environment object (`os.environ`, `process.env`, `ENV`,
//! `Bun.env`, `Deno.env`) is followed to where its value goes:
//!
//! - a variable read by an exact name (`os.environ['HOME']`, `process.env.X`,
//!   `const {X} = process.env`) is a named read, judged by the variable's name;
//! - setting, deleting or testing a variable, and handing the environment to a child
//!   process as its environment (`env=`, `{env: {...process.env}}`) are harmless: the
//!   child inherits it anyway;
//! - anything else (copied and serialized, iterated, passed to a function, returned,
//!   read by a name known only at run time) is a dump; a dump that reaches the
//!   arguments of a network call or a process spawn, directly or through names bound to
//!   it, is sent.
//!
//! Names are followed by their uses anywhere in the unit (scopes are not modelled, so a
//! name reused for something else is judged by its worst use).

use super::calls::{ARGV_CALLS, NET_CALLS, NET_METHOD_URL, PY_SUBPROCESS, SHELL_STRING};
use super::{Facts, Lang, Unit};
use tree_sitter::Node;

/// Where a use of the environment leads, least serious first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Flow {
    Harmless,
    Dump,
    Sent,
}

/// Steps and node visits the follow-up of one unit may take.
const WORK: usize = 4_000_000;

/// Keys under which an environment is a child process's environment.
const KEEPS_ENV: &[&str] = &["env", "environ", "environment", "extendenv"];

/// Methods that read one variable named by their first argument.
const GETTERS: &[&str] = &["get", "getenv", "fetch", "pop", "setdefault", "[]"];

/// Methods that set, delete or test variables, returning no copy of the environment.
const MUTATORS: &[&str] = &[
    "update",
    "clear",
    "__setitem__",
    "__delitem__",
    "__contains__",
    "putenv",
    "unsetenv",
    "delete",
    "set",
    "has",
    "has_key",
    "include?",
    "key?",
    "contains",
    "[]=",
    "store",
];

/// Calls through which a value passes unchanged in substance (copies, views, merges).
const TRANSPARENT: &[&str] = &[
    "dict",
    "list",
    "tuple",
    "set",
    "frozenset",
    "sorted",
    "filter",
    "map",
    "zip",
    "enumerate",
    "iter",
    "Object.assign",
    "Object.entries",
    "Object.keys",
    "Object.values",
    "Object.fromEntries",
    "structuredClone",
    "Array.from",
];

/// Method names that send their arguments over the network, on any receiver (a
/// `requests.Session`, an HTTP client, a socket).
const SENDING_METHODS: &[&str] = &[
    "post", "put", "patch", "send", "sendall", "sendto", "request", "urlopen", "upload",
];

fn is_env_name(d: &str) -> bool {
    let d = d
        .trim_start_matches("globalThis.")
        .trim_start_matches("global.")
        .trim_start_matches("window.");
    matches!(
        d,
        "os.environ" | "os.environb" | "process.env" | "ENV" | "Bun.env" | "Deno.env"
    ) || d == "import.meta.env"
}

impl<'a> Unit<'a> {
    /// Record every use of the whole environment that is not a named read or a
    /// harmless one, and the names destructured from it.
    pub(super) fn env_dumps(&self, nodes: &[Node<'a>], facts: &mut Facts) {
        // Work for the whole unit (steps climbed, nodes scanned for a name's uses): the
        // text is the attacker's, so past the bound what is left counts as a dump.
        self.env_sets(nodes, facts);
        let mut budget = WORK;
        for &n in nodes {
            if !self.is_env_root(n) {
                continue;
            }
            if budget == 0 {
                facts.env_dumps.push((self.line(n), false));
                break;
            }
            let mut reads = Vec::new();
            let flow = self.climb(n, nodes, 0, &mut budget, &mut reads);
            facts.env.extend(reads);
            match flow {
                Flow::Harmless => {}
                Flow::Dump => facts.env_dumps.push((self.line(n), false)),
                Flow::Sent => facts.env_dumps.push((self.line(n), true)),
            }
        }
    }

    /// Record every variable the script sets (`os.environ[k] = v`, `process.env.K = v`,
    /// `process.env[k] = v`, `ENV[k] = v`, `os.environ.setdefault(k, v)`,
    /// `Deno.env.set(k, v)`, `os.putenv(k, v)`), by its folded name and value.
    pub(super) fn env_sets(&self, nodes: &[Node<'a>], facts: &mut Facts) {
        let exact =
            |n: Option<Node<'a>>| n.and_then(|n| self.fold(n).exact_str().map(str::to_string));
        for &n in nodes {
            let kind = n.kind();
            if matches!(kind, "call" | "call_expression") {
                let Some(f) = n
                    .child_by_field_name("function")
                    .or_else(|| n.child_by_field_name("method"))
                else {
                    continue;
                };
                let callee = self.dotted(f);
                let method = callee.rsplit('.').next().unwrap_or("");
                let on_env = callee.rsplit_once('.').is_some_and(|(o, _)| is_env_name(o));
                let setter = matches!(callee.as_str(), "os.putenv" | "putenv")
                    || (on_env && matches!(method, "setdefault" | "__setitem__" | "set" | "store"));
                if setter {
                    let args = n
                        .child_by_field_name("arguments")
                        .map(|a| self.named(a))
                        .unwrap_or_default();
                    let name = exact(args.first().copied());
                    let value = exact(args.get(1).copied());
                    facts.env_sets.push((self.line(n), name, value));
                }
                continue;
            }
            if !matches!(
                kind,
                "assignment"
                    | "assignment_expression"
                    | "augmented_assignment"
                    | "operator_assignment"
            ) {
                continue;
            }
            let (Some(left), right) = (
                n.child_by_field_name("left"),
                n.child_by_field_name("right"),
            ) else {
                continue;
            };
            let (object, key) = match left.kind() {
                "subscript" => (
                    left.child_by_field_name("value"),
                    left.child_by_field_name("subscript"),
                ),
                "subscript_expression" => (
                    left.child_by_field_name("object"),
                    left.child_by_field_name("index"),
                ),
                "element_reference" => (
                    left.child_by_field_name("object"),
                    self.named(left).get(1).copied(),
                ),
                "member_expression" => (left.child_by_field_name("object"), None),
                _ => continue,
            };
            let Some(object) = object.filter(|o| is_env_name(&self.dotted(*o))) else {
                continue;
            };
            let _ = object;
            let name = if left.kind() == "member_expression" {
                left.child_by_field_name("property")
                    .map(|p| self.text(p).to_string())
            } else {
                exact(key)
            };
            facts.env_sets.push((self.line(n), name, exact(right)));
        }
    }

    fn is_env_root(&self, n: Node<'a>) -> bool {
        let kind = n.kind();
        if !matches!(
            kind,
            "attribute"
                | "member_expression"
                | "subscript_expression"
                | "identifier"
                | "constant"
                | "call"
                | "call_expression"
        ) {
            return false;
        }
        if matches!(kind, "identifier" | "constant") {
            // A name that is part of a larger access (`os.environ`'s `environ`) or bound
            // by an import is not a use; a bare name is the environment only as an
            // import alias of it, or Ruby's `ENV`.
            let Some(p) = self.parents.get(&n.id()) else {
                return false;
            };
            let is_member = matches!(p.kind(), "attribute" | "member_expression")
                && p.child_by_field_name("object") != Some(n);
            if is_member
                || matches!(
                    p.kind(),
                    "import_from_statement" | "aliased_import" | "dotted_name" | "import_specifier"
                )
            {
                return false;
            }
            let text = self.text(n);
            let aliased = self.aliases.contains_key(text);
            if !(aliased || (self.lang == Lang::Ruby && text == "ENV")) {
                return false;
            }
        }
        if kind == "call" && self.lang == Lang::Ruby {
            return false;
        }
        is_env_name(&self.dotted(n))
    }

    fn field_is(&self, p: Node<'a>, field: &str, n: Node<'a>) -> bool {
        p.child_by_field_name(field) == Some(n)
    }

    /// Follow the value at `n` upwards to where it goes.
    fn climb(
        &self,
        n: Node<'a>,
        nodes: &[Node<'a>],
        depth: usize,
        budget: &mut usize,
        reads: &mut Vec<(usize, String)>,
    ) -> Flow {
        let mut cur = n;
        let mut flow = Flow::Harmless;
        loop {
            if *budget == 0 {
                return flow.max(Flow::Dump);
            }
            *budget -= 1;
            let Some(&p) = self.parents.get(&cur.id()) else {
                return flow.max(Flow::Dump);
            };
            match p.kind() {
                "attribute" | "member_expression" if self.field_is(p, "object", cur) => {
                    let attr = p
                        .child_by_field_name("attribute")
                        .or_else(|| p.child_by_field_name("property"))
                        .map_or("", |a| self.text(a));
                    let call = self.parents.get(&p.id()).copied().filter(|c| {
                        matches!(c.kind(), "call" | "call_expression")
                            && c.child_by_field_name("function") == Some(p)
                    });
                    match call {
                        Some(call) => {
                            if let Some(f) = self.method_flow(call, attr) {
                                return flow.max(f);
                            }
                            cur = call;
                        }
                        // A property of JavaScript's environment object is a variable.
                        None if self.lang != Lang::Python => return flow,
                        None => cur = p,
                    }
                }
                "call" if self.lang == Lang::Ruby && self.field_is(p, "receiver", cur) => {
                    let m = p.child_by_field_name("method").map_or("", |m| self.text(m));
                    if let Some(f) = self.method_flow(p, m) {
                        return flow.max(f);
                    }
                    cur = p;
                }
                "subscript" | "subscript_expression" | "element_reference"
                    if self.field_is(p, "value", cur) || self.field_is(p, "object", cur) =>
                {
                    if self.is_assign_target(p) {
                        return flow;
                    }
                    let key = p
                        .child_by_field_name("subscript")
                        .or_else(|| p.child_by_field_name("index"))
                        .or_else(|| self.named(p).into_iter().nth(1));
                    let exact = key.is_some_and(|k| self.fold(k).exact());
                    return if exact { flow } else { flow.max(Flow::Dump) };
                }
                "argument_list" | "arguments" => {
                    let Some(&call) = self.parents.get(&p.id()) else {
                        return flow.max(Flow::Dump);
                    };
                    let Some(c) = self.call(call) else {
                        return flow.max(Flow::Dump);
                    };
                    if sends(&c.callee) {
                        return Flow::Sent;
                    }
                    if !TRANSPARENT.contains(&c.callee.as_str()) {
                        flow = flow.max(Flow::Dump);
                    }
                    cur = call;
                }
                "keyword_argument" | "pair" if self.field_is(p, "value", cur) => {
                    let key = p
                        .child_by_field_name("name")
                        .or_else(|| p.child_by_field_name("key"))
                        .map_or("", |k| self.text(k))
                        .trim_matches(['"', '\'', ':'])
                        .to_ascii_lowercase();
                    if KEEPS_ENV.contains(&key.as_str()) {
                        return flow;
                    }
                    cur = p;
                }
                "assignment"
                | "variable_declarator"
                | "assignment_expression"
                | "default_parameter"
                | "typed_default_parameter"
                | "assignment_pattern"
                | "object_assignment_pattern" => {
                    let left = p
                        .child_by_field_name("left")
                        .or_else(|| p.child_by_field_name("name"));
                    let Some(left) = left else {
                        return flow.max(Flow::Dump);
                    };
                    if left == cur {
                        // Assigned to (`os.environ = {}`): nothing is read.
                        return flow;
                    }
                    return flow.max(self.bound(left, nodes, depth, budget, reads));
                }
                "for_in_clause" if self.field_is(p, "right", cur) => {
                    // A comprehension over it: the comprehension is the value.
                    let Some(&comp) = self.parents.get(&p.id()) else {
                        return flow.max(Flow::Dump);
                    };
                    cur = comp;
                }
                "comparison_operator" | "binary_expression" | "binary" => {
                    let text = self.text(p);
                    let is_in =
                        self.field_is(p, "right", cur) || self.named(p).last() == Some(&cur);
                    if is_in && (text.contains(" in ") || text.contains(" not in ")) {
                        return flow;
                    }
                    cur = p;
                }
                "delete_statement" | "unary_expression"
                    if self.text(p).trim_start().starts_with("del") =>
                {
                    return flow;
                }
                "parenthesized_expression"
                | "await_expression"
                | "as_expression"
                | "non_null_expression"
                | "spread_element"
                | "dictionary_splat"
                | "list_splat"
                | "dictionary"
                | "object"
                | "list"
                | "array"
                | "tuple"
                | "set"
                | "pair"
                | "conditional_expression"
                | "ternary_expression"
                | "boolean_operator"
                | "binary_operator"
                | "interpolation"
                | "template_substitution"
                | "string"
                | "template_string"
                | "dictionary_comprehension"
                | "list_comprehension"
                | "set_comprehension"
                | "generator_expression"
                | "expression_list"
                | "hash"
                | "splat_argument"
                | "hash_splat_argument"
                | "pattern_list"
                | "parenthesized_statements"
                | "formatted_string"
                | "concatenated_string" => cur = p,
                _ => return flow.max(Flow::Dump),
            }
        }
    }

    /// A method called on the environment (or a copy of it): `Some` when the call
    /// settles the flow, `None` when its result carries the environment on.
    fn method_flow(&self, call: Node<'a>, method: &str) -> Option<Flow> {
        if GETTERS.contains(&method) {
            let c = self.call(call)?;
            let exact = c.args.first().is_some_and(|&a| self.fold(a).exact());
            return Some(if exact { Flow::Harmless } else { Flow::Dump });
        }
        MUTATORS.contains(&method).then_some(Flow::Harmless)
    }

    fn is_assign_target(&self, n: Node<'a>) -> bool {
        let Some(&p) = self.parents.get(&n.id()) else {
            return false;
        };
        matches!(
            p.kind(),
            "assignment"
                | "assignment_expression"
                | "augmented_assignment"
                | "augmented_assignment_expression"
                | "operator_assignment"
        ) && p.child_by_field_name("left") == Some(n)
            || matches!(p.kind(), "delete_statement" | "expression_list")
                && self.text(p).trim_start().starts_with("del")
    }

    /// The environment bound to `left` (a name, or a destructuring pattern): where its
    /// uses lead.
    fn bound(
        &self,
        left: Node<'a>,
        nodes: &[Node<'a>],
        depth: usize,
        budget: &mut usize,
        reads: &mut Vec<(usize, String)>,
    ) -> Flow {
        if depth >= 4 {
            return Flow::Dump;
        }
        match left.kind() {
            "identifier" | "shorthand_property_identifier_pattern" => {
                self.uses(self.text(left), left, nodes, depth, budget, reads)
            }
            "object_pattern" => {
                let mut flow = Flow::Harmless;
                for part in self.named(left) {
                    match part.kind() {
                        "shorthand_property_identifier_pattern" => {
                            reads.push((self.line(part), self.text(part).to_string()));
                        }
                        "pair_pattern" => {
                            if let Some(k) = part.child_by_field_name("key") {
                                let name = match k.kind() {
                                    "property_identifier" => Some(self.text(k).to_string()),
                                    _ => self.fold(k).exact_str().map(str::to_string),
                                };
                                match name {
                                    Some(name) => reads.push((self.line(part), name)),
                                    None => flow = flow.max(Flow::Dump),
                                }
                            }
                        }
                        "object_assignment_pattern" => {
                            if let Some(l) = part.child_by_field_name("left") {
                                reads.push((self.line(part), self.text(l).to_string()));
                            }
                        }
                        "rest_pattern" => {
                            let id = self.named(part).into_iter().next();
                            flow = flow.max(match id {
                                Some(id) => self.bound(id, nodes, depth + 1, budget, reads),
                                None => Flow::Dump,
                            });
                        }
                        "comment" => {}
                        _ => flow = flow.max(Flow::Dump),
                    }
                }
                flow
            }
            _ => Flow::Dump,
        }
    }

    /// Where the uses of `name` (other than `binding` and other bindings) lead.
    fn uses(
        &self,
        name: &str,
        binding: Node<'a>,
        nodes: &[Node<'a>],
        depth: usize,
        budget: &mut usize,
        reads: &mut Vec<(usize, String)>,
    ) -> Flow {
        let mut flow = Flow::Harmless;
        if *budget < nodes.len() {
            *budget = 0;
            return Flow::Dump;
        }
        *budget -= nodes.len();
        for &u in nodes {
            if u == binding
                || !matches!(u.kind(), "identifier" | "shorthand_property_identifier")
                || self.text(u) != name
            {
                continue;
            }
            let Some(&p) = self.parents.get(&u.id()) else {
                continue;
            };
            // Binding and naming positions are not uses of the value.
            let naming = match p.kind() {
                "keyword_argument" | "pair" => !self.field_is(p, "value", u),
                "attribute" | "member_expression" => !self.field_is(p, "object", u),
                "parameters" | "formal_parameters" | "lambda_parameters" => true,
                "assignment" | "variable_declarator" | "assignment_expression" => {
                    self.field_is(p, "left", u) || self.field_is(p, "name", u)
                }
                "function_definition" | "class_definition" | "function_declaration" => true,
                _ => false,
            };
            if naming {
                continue;
            }
            if u.kind() == "shorthand_property_identifier"
                && KEEPS_ENV.contains(&name.to_ascii_lowercase().as_str())
            {
                continue;
            }
            flow = flow.max(self.climb(u, nodes, depth + 1, budget, reads));
            if flow == Flow::Sent {
                break;
            }
        }
        flow
    }
}

/// Does a call send its arguments away (a network call) or hand them to a process?
fn sends(callee: &str) -> bool {
    let method = callee.rsplit('.').next().unwrap_or(callee);
    PY_SUBPROCESS.contains(&callee)
        || SHELL_STRING.contains(&callee)
        || ARGV_CALLS.contains(&callee)
        || NET_CALLS.iter().any(|(n, _)| *n == callee)
        || NET_METHOD_URL.contains(&callee)
        || (callee.contains('.') && SENDING_METHODS.contains(&method))
}
