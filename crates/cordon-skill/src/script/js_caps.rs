//! JavaScript values that are the `Function` constructor without being named so:
//! any function's `.constructor` (`(() => {}).constructor`,
//! `(async function () {}).constructor`, `Object.getPrototypeOf(function* () {})
//! .constructor`, `[].constructor.constructor`) builds a function from text, as `eval`
//! runs it. Such an expression is read as `Function` wherever names are resolved.
//! Also the table of JavaScript's capable modules and globals.

use super::calls::{EXEC_DEPTH, merge};
use super::fold::V;
use super::{Facts, Lang, Unit};
use tree_sitter::Node;

/// JavaScript modules and globals that start processes, evaluate code or reach the network.
pub(super) const JS_ROOTS: &[&str] = &[
    "child_process",
    "vm",
    "worker_threads",
    "cluster",
    "http",
    "https",
    "http2",
    "net",
    "tls",
    "dgram",
    "module",
    "inspector",
    "execa",
    "shelljs",
    "zx",
    "axios",
    "got",
    "node-fetch",
    "undici",
    "cross-spawn",
    "process",
    "require",
    "eval",
    "Function",
    "fetch",
    "globalThis",
    "global",
    "window",
    "self",
    "Bun",
    "Deno",
    "import",
    "$",
    "WebSocket",
    "XMLHttpRequest",
    "setTimeout",
    "setInterval",
    "dns",
    "repl",
    "test",
    "sqlite",
    "wasi",
];

/// Members of those that start nothing and reach nothing (prefixes).
pub(super) const JS_SAFE: &[&str] = &[
    "process.env",
    "process.argv",
    "process.exit",
    "process.cwd",
    "process.platform",
    "process.stdout",
    "process.stderr",
    "process.stdin",
    "process.exitCode",
    "process.on",
    "process.nextTick",
    "process.version",
    "process.versions",
    "process.pid",
    "process.arch",
    "process.hrtime",
    "process.memoryUsage",
    "process.uptime",
    "process.chdir",
    "process.once",
    "process.emitWarning",
    "process.title",
    "Deno.env",
    "Deno.args",
    "Deno.exit",
    "Deno.cwd",
    "Bun.env",
    "Bun.argv",
    "globalThis.process.env",
    "http.STATUS_CODES",
    "https.STATUS_CODES",
];

/// Node kinds whose value is a function.
const FUNCTION_KINDS: &[&str] = &[
    "arrow_function",
    "function_expression",
    "function",
    "generator_function",
    "generator_function_declaration",
    "function_declaration",
    "class",
];

/// JavaScript calls that run the text they are given (the last argument of the
/// `Function` constructor, the first of the others).
const JS_CODE: &[&str] = &[
    "eval",
    "Function",
    "new Function",
    "vm.runInThisContext",
    "vm.runInNewContext",
    "vm.runInContext",
    "new vm.Script",
];

impl Unit<'_> {
    /// Literal code handed to `eval`, `Function` or `vm` is analyzed as the JavaScript it
    /// is, as Python's literal `exec` is (and is still code evaluated at run time, a
    /// review: JavaScript that evaluates text is rarely plain). `true` when it was.
    pub(super) fn js_literal_code(
        &self,
        line: usize,
        name: &str,
        args: &[V],
        facts: &mut Facts,
    ) -> bool {
        if !matches!(self.lang, Lang::JavaScript | Lang::TypeScript | Lang::Tsx)
            || !JS_CODE.contains(&name)
            || EXEC_DEPTH.with(|d| d.get()) >= 8
        {
            return false;
        }
        let code = if name.ends_with("Function") {
            args.last()
        } else {
            args.first()
        };
        let Some(text) = code.and_then(V::exact_str) else {
            return false;
        };
        EXEC_DEPTH.with(|d| d.set(d.get() + 1));
        let inner = super::analyze(Lang::JavaScript, text, line);
        EXEC_DEPTH.with(|d| d.set(d.get() - 1));
        merge(facts, inner);
        facts.code.push((line, format!("{name}({text})")));
        true
    }
    /// Is `n` (a member expression) the `constructor` of a function, that is, a
    /// constructor of code?
    pub(super) fn is_code_constructor(&self, n: Node<'_>) -> bool {
        if n.kind() != "member_expression" && n.kind() != "subscript_expression" {
            return false;
        }
        let prop = n
            .child_by_field_name("property")
            .map(|p| self.text(p).to_string())
            .or_else(|| {
                n.child_by_field_name("index")
                    .and_then(|i| self.fold(i).exact_str().map(str::to_string))
            });
        if prop.as_deref() != Some("constructor") {
            return false;
        }
        n.child_by_field_name("object")
            .is_some_and(|o| self.is_function_value(o, 0))
    }

    /// A call of some value's `constructor` with arguments (`x.constructor('code')`):
    /// when `x` may be a function, that builds a function from text. `this.constructor`
    /// (a class making another of its instances) is left alone.
    pub(super) fn constructor_call(&self, n: Node<'_>) -> Option<String> {
        if n.kind() != "call_expression" {
            return None;
        }
        let f = n.child_by_field_name("function")?;
        let prop = f.child_by_field_name("property")?;
        let obj = f.child_by_field_name("object")?;
        let args = n.child_by_field_name("arguments")?;
        (f.kind() == "member_expression"
            && self.text(prop) == "constructor"
            && obj.kind() != "this"
            && !self.named(args).is_empty())
        .then(|| format!("{}.constructor(…)", self.text(obj)))
    }

    /// Is `n` inside a function or a class, where `this` is not the global object?
    /// (An arrow function has the `this` of where it stands.)
    pub(super) fn in_function(&self, n: Node<'_>) -> bool {
        let mut cur = n;
        for _ in 0..4096 {
            let Some(&p) = self.parents.get(&cur.id()) else {
                return false;
            };
            if p.kind() != "arrow_function"
                && (FUNCTION_KINDS.contains(&p.kind())
                    || matches!(p.kind(), "method_definition" | "class_body"))
            {
                return true;
            }
            cur = p;
        }
        true
    }

    /// Is `n` a function (so its `.constructor` is `Function` or one of its kin)?
    fn is_function_value(&self, n: Node<'_>, depth: usize) -> bool {
        if depth > 8 {
            return false;
        }
        match n.kind() {
            k if FUNCTION_KINDS.contains(&k) => true,
            "parenthesized_expression" | "await_expression" | "non_null_expression" => self
                .named(n)
                .into_iter()
                .next()
                .is_some_and(|c| self.is_function_value(c, depth + 1)),
            // `x.constructor` is a constructor, itself a function.
            "member_expression" | "subscript_expression" => {
                let prop = n
                    .child_by_field_name("property")
                    .map(|p| self.text(p).to_string())
                    .or_else(|| {
                        n.child_by_field_name("index")
                            .and_then(|i| self.fold(i).exact_str().map(str::to_string))
                    });
                prop.as_deref() == Some("constructor")
            }
            // `Object.getPrototypeOf(fn)`: a function's prototype is a function
            // (`Function.prototype`, or the async or generator kin).
            "call_expression" => {
                let callee = n
                    .child_by_field_name("function")
                    .map(|f| self.dotted(f))
                    .unwrap_or_default();
                let first = n
                    .child_by_field_name("arguments")
                    .and_then(|a| self.named(a).into_iter().next());
                matches!(
                    callee.as_str(),
                    "Object.getPrototypeOf" | "Reflect.getPrototypeOf"
                ) && first.is_some_and(|a| self.is_function_value(a, depth + 1))
            }
            // A name bound once to a function, or declared as one.
            "identifier" => {
                let name = self.text(n);
                let bound = self.consts.get(name).is_some_and(|v| {
                    v.len() == 1 && v.iter().all(|&x| self.is_function_value(x, depth + 1))
                });
                bound || self.declared_functions.contains(name)
            }
            _ => false,
        }
    }
}
