//! Ruby methods looked up by a symbol or a string: `send(:system, cmd)`,
//! `public_send`/`__send__`, a method object (`method(:system)`,
//! `Kernel.public_method(:system)`, `instance_method`) handed on as a block
//! (`list.each(&method(:exec))`) or called later, and `Object.const_get(:Kernel)`. A
//! method object of a capable method is that call: with the items of a literal list
//! when it is the block of an iteration over one, with arguments known only at run
//! time otherwise.

use super::fold::V;
use super::{Call, Cmd, Facts, Lang, Unit};
use tree_sitter::Node;

/// Calls that call the method their first argument names.
const SENDERS: &[&str] = &["send", "public_send", "__send__"];

/// Calls that return the method their first argument names, as an object.
const METHOD_OBJECTS: &[&str] = &[
    "method",
    "public_method",
    "singleton_method",
    "instance_method",
    "public_instance_method",
];

/// Methods that start a process from their arguments.
const SPAWNERS: &[&str] = &["system", "exec", "spawn", "`"];

/// Methods that call another by name, register code to run later, load code on first
/// use, or start a pipeline of processes.
const DISPATCH: &[&str] = &[
    "send",
    "public_send",
    "__send__",
    "const_get",
    "binding",
    "trap",
    "at_exit",
    "autoload",
    "pipeline",
];

/// Kernel (and Object) methods that start processes, run code, open pipes or call
/// methods by name: one list, for calls by name and for aliases (`alias_method :go,
/// :system`).
pub(super) fn capable(name: &str) -> bool {
    [SPAWNERS, CODE, METHOD_OBJECTS, DISPATCH]
        .iter()
        .any(|list| list.contains(&name))
}

/// Methods that run code, load a file as code, or open a pipe.
const CODE: &[&str] = &[
    "eval",
    "instance_eval",
    "class_eval",
    "module_eval",
    "instance_exec",
    "class_exec",
    "load",
    "require",
    "require_relative",
    "syscall",
    "fork",
    "open",
    "popen",
    "capture2",
    "capture2e",
    "capture3",
    "popen3",
    "define_method",
];

impl Unit<'_> {
    /// The name a symbol or string argument holds (`:system`, `"sys" + "tem"`).
    pub(super) fn rb_symbol(&self, n: Node<'_>) -> Option<String> {
        match n.kind() {
            "simple_symbol" => Some(self.text(n).trim_start_matches(':').to_string()),
            _ => self.fold(n).exact_str().map(str::to_string),
        }
    }

    /// `Object.const_get(:Kernel)` is `Kernel`.
    pub(super) fn rb_const_get(&self, c: &Call<'_>) -> Option<String> {
        if self.lang != Lang::Ruby || !c.callee.ends_with("const_get") {
            return None;
        }
        self.rb_symbol(*c.args.first()?)
    }

    /// A method called or taken by name (see the module docs).
    pub(super) fn rb_symbol_call(&self, node: Node<'_>, call: &Call<'_>, facts: &mut Facts) {
        if self.lang != Lang::Ruby || node.kind() != "call" {
            return;
        }
        let Some(method) = node.child_by_field_name("method").map(|m| self.text(m)) else {
            return;
        };
        let Some(sym) = call.args.first().and_then(|&a| self.rb_symbol(a)) else {
            return;
        };
        let line = self.line(node);
        if SENDERS.contains(&method) {
            let rest: Vec<V> = call.args.iter().skip(1).map(|&a| self.fold(a)).collect();
            self.rb_named_call(line, &sym, &rest, facts);
            return;
        }
        if !METHOD_OBJECTS.contains(&method) {
            return;
        }
        // `[...].each(&method(:system))`: called with each item of the list.
        let iterated = self
            .parents
            .get(&node.id())
            .filter(|p| p.kind() == "block_argument")
            .and_then(|p| self.parents.get(&p.id()))
            .and_then(|l| self.parents.get(&l.id()))
            .filter(|c| c.kind() == "call")
            .and_then(|c| c.child_by_field_name("receiver"))
            .map(|r| self.fold(r));
        // `method(:system).call(cmd)`, `.(cmd)`, `[cmd]`: called right away.
        let called = self
            .parents
            .get(&node.id())
            .filter(|p| {
                p.kind() == "call"
                    && p.child_by_field_name("receiver") == Some(node)
                    && p.child_by_field_name("method")
                        .is_none_or(|m| matches!(self.text(m), "call" | "===" | "yield"))
            })
            .and_then(|p| self.call(*p));
        match (iterated, called) {
            (Some(V::List(items)), _) => {
                for item in items {
                    self.rb_named_call(line, &sym, &[item], facts);
                }
            }
            (_, Some(c)) if !c.args.is_empty() => {
                let args: Vec<V> = c.args.iter().map(|&a| self.fold(a)).collect();
                self.rb_named_call(line, &sym, &args, facts);
            }
            _ => self.rb_named_call(line, &sym, &[V::Unknown], facts),
        }
    }

    pub(super) fn rb_named_call(&self, line: usize, sym: &str, args: &[V], facts: &mut Facts) {
        if SPAWNERS.contains(&sym) {
            let cmd = match args {
                [one] if one.exact_str().is_some() || matches!(one, V::Str(..)) => Cmd::Shell {
                    text: one.text(),
                    exact: one.exact(),
                },
                [V::Unknown] | [] => Cmd::Unknown,
                many => Cmd::Argv {
                    argv: many.iter().map(V::text).collect(),
                    exact: many.iter().all(V::exact),
                },
            };
            facts.spawns.push((line, cmd));
        } else if CODE.contains(&sym) || DISPATCH.contains(&sym) {
            let first = args.first().map_or_else(|| "…".to_string(), V::text);
            facts
                .code
                .push((line, format!("{sym}({first}), called by name")));
        }
    }
}
