//! Nested code: substitutions, shell strings, sourced scripts and function bodies
//! at their call sites, each analyzed with the variables it sees.

use super::{Analyzer, MAX_DEPTH, MAX_EXPANSIONS, MAX_FN_ASSIGNS, Nested, Scope, Unseen, Where};
use crate::env::Val;
use crate::model::Context;
use crate::parse::{Assign, Script};
use crate::word::{Subst, SubstKind};

impl Analyzer {
    /// Analyze the bodies of substitutions found in a word.
    pub(super) fn nested(&mut self, substs: &[Subst], scope: &Scope) -> Nested {
        let mut n = Nested::default();
        for s in substs {
            if scope.depth >= MAX_DEPTH {
                n.too_deep = true;
                continue;
            }
            let context = match s.kind {
                SubstKind::Command => Context::CommandSubstitution,
                SubstKind::Process => Context::ProcessSubstitution,
            };
            let mut sc = scope.child(context);
            let start = self.out.commands.len();
            // A substitution runs in a subshell: its assignments do not last.
            let mark = self.env.mark();
            self.run_text(&s.body, &mut sc);
            self.env.restore(mark);
            n.unseen.merge(self.unseen_since(start));
        }
        n
    }

    pub(super) fn nested_script(
        &mut self,
        script: &Script,
        scope: &Scope,
        context: Context,
    ) -> Nested {
        if scope.depth >= MAX_DEPTH {
            return Nested {
                unseen: Unseen::default(),
                too_deep: true,
            };
        }
        let mut sc = scope.child(context);
        let start = self.out.commands.len();
        let mark = self.env.mark();
        self.script(script, &mut sc);
        self.env.restore(mark);
        Nested {
            unseen: self.unseen_since(start),
            too_deep: false,
        }
    }

    pub(super) fn call_function(&mut self, name: &str, scope: &mut Scope) {
        if !self.active.iter().any(|a| a == name) && self.expansions < MAX_EXPANSIONS {
            // A body is analyzed once per definition, directory and state of the
            // inherited variables (see `expand`).
            let mark = self.env.mark();
            self.env.kill_text();
            let key = (
                name.to_owned(),
                format!(
                    "{}:{:?}:{:?}:{:?}",
                    self.fn_generation.get(name).copied().unwrap_or(0),
                    scope.cwd,
                    self.env.get("HOME"),
                    self.env.get("IFS")
                ),
            );
            self.env.restore(mark);
            if self.expanded.insert(key) {
                self.expand(name, scope);
            }
        }
        // What the body assigns is unknown after the call: it may return early.
        match self.fn_assigns.get(name) {
            Some(Some(names)) => {
                for n in names.clone() {
                    self.env.set(&n, Val::Unknown);
                }
            }
            _ => self.env.kill_all(),
        }
    }

    /// Analyze a function body. It may be called from anywhere, with any values, so
    /// every variable the text assigned is unknown inside; what the body assigns is
    /// recorded for the calls.
    pub(super) fn expand(&mut self, name: &str, scope: &mut Scope) {
        let Some(body) = self.functions.get(name).cloned() else {
            return;
        };
        self.expansions += 1;
        self.analyzed.insert(name.to_owned());
        self.active.push(name.to_owned());
        let mut sc = scope.child(Context::FunctionBody);
        let mark = self.env.mark();
        self.env.kill_text();
        self.compound(&body, &mut sc);
        let assigned = if self.env.killed_all_since(mark) {
            None
        } else {
            self.env.assigned_since(mark, MAX_FN_ASSIGNS)
        };
        self.env.restore(mark);
        self.fn_assigns.insert(name.to_owned(), assigned);
        self.active.pop();
        // A function runs in the calling shell: its `cd` persists.
        scope.cwd = sc.cwd;
    }

    /// Analyze code a command runs, with the variables it sees.
    pub(super) fn run_nested(
        &mut self,
        text: &str,
        scope: &Scope,
        context: Context,
        how: Where,
        temp: &[(Assign, Val)],
    ) {
        let mut sc = scope.child(context);
        let mark = self.env.mark();
        match how {
            Where::ThisShell if temp.is_empty() => {
                self.run_text(text, &mut sc);
                return;
            }
            Where::ThisShell => {
                for (a, v) in temp {
                    self.apply_assign(a, v.clone());
                }
                self.run_text(text, &mut sc);
                // The prefix assignments, and what the code assigned with them in
                // place, are not followed past the command.
                let assigned = self.env.assigned_since(mark, MAX_FN_ASSIGNS);
                self.env.restore(mark);
                match assigned {
                    Some(names) if !self.env.killed_all_since(mark) => {
                        for n in names {
                            self.env.set(&n, Val::Unknown);
                        }
                    }
                    _ => self.env.kill_all(),
                }
                return;
            }
            Where::Sourced => {
                // A sourced script may `return` part way.
                let e = self.env.now();
                for (a, v) in temp {
                    self.apply_assign(a, v.clone());
                }
                self.run_text(text, &mut sc);
                self.env.kill_since(e);
                return;
            }
            Where::Later => self.env.kill_text(),
            Where::Child => {
                for (a, v) in temp {
                    self.apply_assign(a, v.clone());
                    self.env.export(&a.name, true);
                }
                self.env.enter_child();
            }
        }
        self.run_text(text, &mut sc);
        self.env.restore(mark);
    }
}
