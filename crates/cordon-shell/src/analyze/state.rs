//! What a simple command changes in this shell for the commands after it: links it
//! makes, variables, aliases and functions it defines or removes, and the working
//! directory.

use super::code::{Code, Runner};
use super::{Analyzer, ENV_BUILTINS, Feed, Scope, join_cwd, norm_path};
use crate::env::Val;
use crate::knowledge::Cd;
use crate::model::{CwdChange, Effects, Word};
use crate::parse::{Arg, Assign, Simple};
use crate::wrappers::{Peeled, shell_quote};

impl Analyzer {
    /// `ln -s TARGET NAME` (run where the text started): a later path through NAME
    /// reaches TARGET.
    pub(super) fn record_link(&mut self, name: Option<&str>, cwd: &CwdChange, effects: &Effects) {
        if matches!(name, Some("ln" | "link"))
            && *cwd == CwdChange::Unchanged
            && let ([target], [link]) = (effects.reads.as_slice(), effects.writes.as_slice())
            && link.literal
            && link.value != "."
        {
            self.links.insert(norm_path(&link.value), target.clone());
        }
    }

    /// Analyze the command again as each program its glob command name can name,
    /// within the budget of such analyses.
    pub(super) fn analyze_variants(
        &mut self,
        s: &Simple,
        scope: &mut Scope,
        variants: Vec<String>,
    ) {
        for p in variants {
            if self.variant_budget == 0 {
                break;
            }
            self.variant_budget -= 1;
            let mut v = s.clone();
            if let Some(first) = v.args.first_mut() {
                *first = Arg::Word(shell_quote(&p));
            }
            self.in_variant = true;
            self.simple(&v, scope);
            self.in_variant = false;
        }
    }

    /// What the command does to the variables of this shell. A computed program name
    /// could be any builtin (`eval`, `read`, `declare`), and `eval` of code known only
    /// at run time could assign anything: every variable becomes unknown. A builtin
    /// that assigns (run as itself, not as a function or alias of its name) records
    /// what it assigns; `source` of a script the text did not write makes every
    /// variable unknown; a `trap` may run between any two later commands.
    pub(super) fn variables_after(
        &mut self,
        idx: usize,
        r: &Runner<'_>,
        code: &Code,
        feed: Option<&Feed>,
        decl_assigns: Vec<(Assign, Val)>,
    ) {
        if !r.program_literal || (code.unseen_eval && r.same_shell) {
            self.env.kill_all();
            return;
        }
        let Some(n) = r.name.filter(|_| r.same_shell) else {
            return;
        };
        if ENV_BUILTINS.contains(&n) && !r.function_call && code.alias_text.is_none() {
            let args_now = self.emitted_args(idx);
            self.builtin_env(n, &args_now, decl_assigns, feed, r.temp);
        }
        if r.sourcing && code.written_script.is_none() {
            self.env.kill_all();
        }
        if n == "trap" && code.sets_trap {
            // The trap's code can run between any two later commands.
            self.env.freeze();
        }
    }

    /// Builtins that change the aliases and functions later commands see: `alias`,
    /// `unalias`, `unset -f`.
    pub(super) fn builtin_state_after(&mut self, name: Option<&str>, peeled: &Peeled, idx: usize) {
        match name {
            Some("alias") if peeled.wrappers.is_empty() => {
                for w in self.emitted_args(idx) {
                    if let Some((n, v)) = w.value.split_once('=') {
                        self.aliases.insert(n.to_owned(), v.to_owned());
                    }
                }
            }
            Some("unalias") => {
                for w in self.emitted_args(idx) {
                    self.aliases.remove(&w.value);
                }
            }
            Some("unset") => {
                let args = self.emitted_args(idx);
                if args.iter().any(|w| w.value == "-f") {
                    for w in args.iter().filter(|w| !w.value.starts_with('-')) {
                        self.functions.remove(&w.value);
                    }
                }
            }
            _ => {}
        }
    }

    /// The arguments of the command emitted at `idx`, as emitted.
    fn emitted_args(&self, idx: usize) -> Vec<Word> {
        self.out
            .commands
            .get(idx)
            .map(|c| c.args.clone())
            .unwrap_or_default()
    }
}

/// A `cd`-like change of directory: later commands run in the joined directory, or in
/// one known only at run time.
pub(super) fn change_directory(scope: &mut Scope, cd: Cd) {
    scope.cwd = match cd {
        Cd::To(w) => join_cwd(&scope.cwd, &w),
        Cd::Unknown => CwdChange::Dynamic,
    };
}
