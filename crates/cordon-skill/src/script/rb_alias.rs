//! Ruby methods renamed and files that are pipes. `alias new old` and
//! `alias_method :new, :old` in any class or module (`class Object` makes the new name
//! callable everywhere) give a capable method (`system`, `` ` ``, `exec`, `eval`, `send`
//! …) another name: the alias is a review, and each call of the new name is judged as a
//! call of the old one. An alias whose old name is known only at run time is a review.
//! `IO.write("|cmd", data)` and `IO.binwrite` start `cmd` with `data` on its standard
//! input (a shell there runs `data` as a script); `IO.write` of a name known only at
//! run time may do the same.

use super::fold::{RUNTIME, V};
use super::rb_symbols::capable;
use super::{Cmd, Facts, Lang, Unit};
use std::collections::HashMap;
use tree_sitter::Node;

/// Programs that run their standard input as a script.
const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "ash", "ruby", "python3", "python",
];

impl<'a> Unit<'a> {
    /// Aliases of capable methods and pipe writes (see the module docs).
    pub(super) fn rb_aliases(&self, nodes: &[Node<'a>], facts: &mut Facts) {
        if self.lang != Lang::Ruby {
            return;
        }
        let mut renamed: HashMap<String, String> = HashMap::new();
        for &n in nodes {
            let line = self.line(n);
            let pair = match n.kind() {
                // (The keyword is an `alias` node too, unnamed.)
                "alias" if n.is_named() => {
                    let kids = self.named(n);
                    // `alias $out $stdout` names variables, not methods.
                    if kids.iter().any(|k| k.kind() == "global_variable") {
                        continue;
                    }
                    (
                        kids.first().and_then(|&k| self.rb_method_name(k)),
                        kids.get(1).and_then(|&k| self.rb_method_name(k)),
                    )
                }
                "call"
                    if n.child_by_field_name("method")
                        .is_some_and(|m| self.text(m) == "alias_method") =>
                {
                    let Some(c) = self.call(n) else { continue };
                    (
                        c.args.first().and_then(|&a| self.rb_symbol(a)),
                        c.args.get(1).and_then(|&a| self.rb_symbol(a)),
                    )
                }
                _ => {
                    self.rb_pipe_write(n, facts);
                    continue;
                }
            };
            match pair {
                (Some(new), Some(old)) => {
                    let old = renamed.get(&old).cloned().unwrap_or(old);
                    if capable(&old) {
                        facts.unresolved.push((
                            line,
                            format!("{new}, an alias of the capable method {old},"),
                        ));
                        renamed.insert(new, old);
                    }
                }
                (_, None) => facts
                    .unresolved
                    .push((line, "an alias of a method named at run time".to_string())),
                (None, Some(old)) if capable(&old) => facts
                    .unresolved
                    .push((line, format!("an alias of the capable method {old}"))),
                _ => {}
            }
        }
        if renamed.is_empty() {
            return;
        }
        // Each call of a new name is a call of the old one.
        for &n in nodes {
            let method = match n.kind() {
                "call" => n.child_by_field_name("method"),
                "identifier" if self.bare_call(n) => Some(n),
                _ => None,
            };
            let Some(old) = method.and_then(|m| renamed.get(self.text(m))) else {
                continue;
            };
            let args: Vec<V> = match self.call(n) {
                Some(c) if n.kind() == "call" => c.args.iter().map(|&a| self.fold(a)).collect(),
                _ => Vec::new(),
            };
            let args = if args.is_empty() {
                vec![V::Unknown]
            } else {
                args
            };
            self.rb_named_call(self.line(n), old, &args, facts);
        }
    }

    /// A method name as `alias` writes it: an identifier, an operator, a symbol.
    fn rb_method_name(&self, n: Node<'_>) -> Option<String> {
        match n.kind() {
            "identifier" | "constant" | "operator" => Some(self.text(n).to_string()),
            _ => self.rb_symbol(n),
        }
    }

    /// Is the identifier `n` a method called without arguments (a statement or a value,
    /// not a name being defined)?
    fn bare_call(&self, n: Node<'_>) -> bool {
        let Some(p) = self.parents.get(&n.id()) else {
            return false;
        };
        let defined = match p.kind() {
            "alias" | "method" | "singleton_method" | "method_parameters" => true,
            "assignment" => p.child_by_field_name("left") == Some(n),
            "call" => p.child_by_field_name("method") == Some(n),
            _ => false,
        };
        !defined && !self.consts.contains_key(self.text(n)) && !self.poisoned.contains(self.text(n))
    }

    /// `IO.write("|cmd", data)`, `IO.binwrite`, `File.write` (see the module docs).
    fn rb_pipe_write(&self, n: Node<'_>, facts: &mut Facts) {
        if n.kind() != "call" {
            return;
        }
        let Some(c) = self.call(n) else { return };
        let Some((recv, method)) = c.callee.rsplit_once('.') else {
            return;
        };
        let recv = recv.rsplit("::").next().unwrap_or(recv);
        if !matches!(method, "write" | "binwrite") || !matches!(recv, "IO" | "File") {
            return;
        }
        let line = self.line(n);
        let target = c.args.first().map(|&a| self.fold(a));
        match target {
            Some(V::Str(s, exact)) if s.starts_with('|') => {
                let cmd = s.trim_start_matches('|').trim().to_string();
                let program = cmd.split_whitespace().next().unwrap_or("");
                let program = program.rsplit('/').next().unwrap_or(program);
                facts.spawns.push((
                    line,
                    Cmd::Shell {
                        text: cmd.clone(),
                        exact,
                    },
                ));
                if SHELLS.contains(&program) {
                    // What is written is the script the shell runs.
                    let data = c.args.get(1).map(|&a| self.fold(a));
                    facts.spawns.push((
                        line,
                        match data {
                            Some(V::Str(text, exact)) => Cmd::Shell { text, exact },
                            _ => Cmd::Unknown,
                        },
                    ));
                }
            }
            // A name whose start is known and is not a pipe.
            Some(V::Str(s, _)) if !s.starts_with(RUNTIME) => {}
            _ if recv == "IO" => facts.unresolved.push((
                line,
                format!(
                    "{}, to a name known only at run time (a name starting with | runs a command),",
                    c.callee
                ),
            )),
            _ => {}
        }
    }
}
