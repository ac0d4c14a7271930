//! Shell variables as far as the text fixes them.
//!
//! Owns: what each variable holds at a point of the walk — a value the text assigned,
//! unset, or unknown — and the bookkeeping that keeps that sound when code runs
//! conditionally, in subshells, in child processes, in loops and in functions. Never
//! guesses: a variable the text did not assign, or that code the analyzer cannot see
//! could have changed, is unknown, and an unknown value makes a word non-literal.
//!
//! Every assignment gets an *epoch* (a counter). Facts are withdrawn by epoch, not by
//! name, so withdrawing everything a region assigned costs O(1):
//! - `kill_since(e)`: bindings made after `e` become unknown (the region they were
//!   made in may not have run);
//! - `kill_all()`: every binding made so far becomes unknown (after `source` of an
//!   unknown file, a dynamic command name, …).
//!
//! A [`Mark`] saves the state so a subshell's assignments can be undone when it ends;
//! undoing walks a journal of the bindings it replaced, so the cost is that of the
//! assignments made, never of the number of variables.

use std::collections::{HashMap, HashSet};

/// The value of a variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Val {
    /// Only known at run time.
    Unknown,
    /// Known to be unset.
    Unset,
    /// A scalar. A leading [`HOME`] character stands for the user's home directory.
    Str(String),
    /// An indexed array: (index, value) sorted by index.
    Arr(Vec<(usize, String)>),
}

/// Stands for the home directory inside values (bash strings cannot hold NUL).
pub(crate) const HOME: char = '\0';

/// Longest value kept; a longer one is unknown (values can double per assignment).
pub(crate) const MAX_VALUE: usize = 4096;

#[derive(Debug, Clone)]
struct Binding {
    val: Val,
    epoch: u64,
    exported: bool,
    readonly: bool,
}

/// Variables whose value changes by itself or is set by the shell.
const VOLATILE: &[&str] = &[
    "RANDOM",
    "SRANDOM",
    "SECONDS",
    "LINENO",
    "EPOCHSECONDS",
    "EPOCHREALTIME",
    "BASHPID",
    "BASH_SUBSHELL",
    "BASH_COMMAND",
    "BASH_LINENO",
    "BASH_SOURCE",
    "BASH_REMATCH",
    "BASH_ARGV",
    "BASH_ARGC",
    "BASH_ALIASES",
    "BASH_CMDS",
    "FUNCNAME",
    "PIPESTATUS",
    "PPID",
    "UID",
    "EUID",
    "GROUPS",
    "PWD",
    "OLDPWD",
    "HISTCMD",
    "OPTIND",
    "OPTARG",
    "REPLY",
    "COLUMNS",
    "LINES",
    "_",
];

/// Saved state for [`Env::restore`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mark {
    journal: usize,
    epoch: u64,
    killed_before: u64,
    text_killed_before: u64,
    child_start: u64,
    frozen: bool,
}

/// The variables of the shell being analyzed.
#[derive(Debug)]
pub(crate) struct Env {
    map: HashMap<String, Binding>,
    epoch: u64,
    /// Bindings with an epoch at or below this are unknown.
    killed_before: u64,
    /// Bindings the text made (epoch above 1) at or below this are unknown.
    text_killed_before: u64,
    /// Disjoint, sorted `(start, end]` epoch ranges whose bindings are unknown.
    dead: Vec<(u64, u64)>,
    /// Replaced bindings, newest last, for [`Env::restore`].
    journal: Vec<(String, Option<Binding>)>,
    /// In a child process: bindings made at or before this epoch are visible only when
    /// exported.
    child_start: u64,
    /// A trap may run at any time: nothing is known.
    frozen: bool,
    /// Names with attributes whose assignments cordon does not model (`declare -i`,
    /// `-l`, `-u`, `-n`, `-A`): always unknown.
    tainted: HashSet<String>,
    /// Epochs at which known bindings were read, while a loop watches (see
    /// [`Env::watch`]).
    reads: Vec<(String, u64)>,
    watching: usize,
}

impl Default for Env {
    fn default() -> Self {
        let mut e = Self {
            map: HashMap::new(),
            epoch: 1,
            killed_before: 0,
            text_killed_before: 0,
            dead: Vec::new(),
            journal: Vec::new(),
            child_start: 0,
            frozen: false,
            tainted: HashSet::new(),
            reads: Vec::new(),
            watching: 0,
        };
        // HOME is inherited: it is the home directory the policy knows as `~`.
        e.map.insert(
            "HOME".into(),
            Binding {
                val: Val::Str(HOME.to_string()),
                epoch: 1,
                exported: true,
                readonly: false,
            },
        );
        // bash ignores an inherited IFS and starts with the default.
        e.map.insert(
            "IFS".into(),
            Binding {
                val: Val::Str(" \t\n".into()),
                epoch: 1,
                exported: false,
                readonly: false,
            },
        );
        e
    }
}

impl Env {
    /// The value of `name` as far as the text fixes it.
    pub(crate) fn get(&mut self, name: &str) -> Val {
        let Some(b) = self.map.get(name) else {
            return Val::Unknown;
        };
        if self.frozen
            || VOLATILE.contains(&name)
            || self.tainted.contains(name)
            || b.epoch <= self.killed_before
            || (b.epoch > 1 && b.epoch <= self.text_killed_before)
            || in_dead(&self.dead, b.epoch)
            || (b.epoch <= self.child_start && !b.exported)
        {
            return Val::Unknown;
        }
        if self.watching > 0 && !matches!(b.val, Val::Unknown) {
            self.reads.push((name.to_owned(), b.epoch));
        }
        b.val.clone()
    }

    /// Is `name` exported?
    pub(crate) fn exported(&self, name: &str) -> bool {
        self.map.get(name).is_some_and(|b| b.exported)
    }

    /// Assign `val` to `name`. A readonly variable keeps its value, as in bash.
    pub(crate) fn set(&mut self, name: &str, val: Val) {
        let old = self.map.get(name).cloned();
        if old.as_ref().is_some_and(|b| b.readonly) {
            return;
        }
        let val = match val {
            _ if self.tainted.contains(name) || VOLATILE.contains(&name) => Val::Unknown,
            Val::Str(s) if s.len() > MAX_VALUE => Val::Unknown,
            Val::Arr(a) if a.iter().map(|(_, s)| s.len()).sum::<usize>() > MAX_VALUE => {
                Val::Unknown
            }
            v => v,
        };
        self.epoch += 1;
        let exported = old.as_ref().is_some_and(|b| b.exported);
        self.map.insert(
            name.to_owned(),
            Binding {
                val,
                epoch: self.epoch,
                exported,
                readonly: false,
            },
        );
        self.journal.push((name.to_owned(), old));
    }

    /// Mark `name` exported (`export NAME`) or not (`export -n NAME`).
    pub(crate) fn export(&mut self, name: &str, on: bool) {
        let old = self.map.get(name).cloned();
        let mut b = old.clone().unwrap_or(Binding {
            val: Val::Unknown,
            epoch: self.epoch,
            exported: false,
            readonly: false,
        });
        if b.exported == on {
            return;
        }
        b.exported = on;
        self.map.insert(name.to_owned(), b);
        self.journal.push((name.to_owned(), old));
    }

    /// Make `name` readonly (`readonly NAME`, `declare -r`).
    pub(crate) fn make_readonly(&mut self, name: &str) {
        let old = self.map.get(name).cloned();
        let mut b = old.clone().unwrap_or(Binding {
            val: Val::Unknown,
            epoch: self.epoch,
            exported: false,
            readonly: false,
        });
        b.readonly = true;
        self.map.insert(name.to_owned(), b);
        self.journal.push((name.to_owned(), old));
    }

    /// `name` has attributes cordon does not model: it stays unknown for good.
    pub(crate) fn taint(&mut self, name: &str) {
        self.tainted.insert(name.to_owned());
    }

    /// Every variable is unknown from now on, whatever is assigned (a trap can run
    /// between any two commands). Undone by [`Env::restore`].
    pub(crate) fn freeze(&mut self) {
        self.frozen = true;
    }

    /// The current epoch, to pass to [`Env::kill_since`] later.
    pub(crate) fn now(&self) -> u64 {
        self.epoch
    }

    /// Bindings made after epoch `e` become unknown.
    pub(crate) fn kill_since(&mut self, e: u64) {
        if e >= self.epoch {
            return;
        }
        // Intervals that start after `e` lie inside the new one.
        while self.dead.last().is_some_and(|(s, _)| *s >= e) {
            self.dead.pop();
        }
        self.dead.push((e, self.epoch));
    }

    /// Every binding the text made so far becomes unknown; what was inherited (HOME,
    /// the default IFS) stays as it is unless the text replaced it.
    pub(crate) fn kill_text(&mut self) {
        self.text_killed_before = self.epoch;
    }

    /// Every binding made so far becomes unknown.
    pub(crate) fn kill_all(&mut self) {
        self.killed_before = self.epoch;
    }

    /// Save the state, to undo a subshell's assignments with [`Env::restore`].
    pub(crate) fn mark(&self) -> Mark {
        Mark {
            journal: self.journal.len(),
            epoch: self.epoch,
            killed_before: self.killed_before,
            text_killed_before: self.text_killed_before,
            child_start: self.child_start,
            frozen: self.frozen,
        }
    }

    /// Undo everything since `m`.
    pub(crate) fn restore(&mut self, m: Mark) {
        while self.journal.len() > m.journal {
            let Some((name, old)) = self.journal.pop() else {
                break;
            };
            match old {
                Some(b) => {
                    self.map.insert(name, b);
                }
                None => {
                    self.map.remove(&name);
                }
            }
        }
        while self.dead.last().is_some_and(|(s, _)| *s >= m.epoch) {
            self.dead.pop();
        }
        self.killed_before = m.killed_before;
        self.text_killed_before = m.text_killed_before;
        self.child_start = m.child_start;
        self.frozen = m.frozen;
    }

    /// Names assigned since `m` (at most `cap`; `None` when there are more).
    pub(crate) fn assigned_since(&self, m: Mark, cap: usize) -> Option<Vec<String>> {
        let mut out: Vec<String> = Vec::new();
        for (name, _) in self.journal.get(m.journal..).unwrap_or(&[]) {
            if !out.contains(name) {
                if out.len() == cap {
                    return None;
                }
                out.push(name.clone());
            }
        }
        Some(out)
    }

    /// Was anything killed wholesale since `m` (by `kill_all`, or a freeze)?
    pub(crate) fn killed_all_since(&self, m: Mark) -> bool {
        self.killed_before > m.killed_before || self.frozen
    }

    /// Enter a child process (`bash -c`, a script): only exported variables are
    /// inherited, and IFS starts at its default. Undone by [`Env::restore`].
    pub(crate) fn enter_child(&mut self) {
        self.child_start = self.epoch;
        self.set("IFS", Val::Str(" \t\n".into()));
    }

    /// Start recording reads of known bindings (a loop body's first pass).
    pub(crate) fn watch(&mut self) -> usize {
        self.watching += 1;
        self.reads.len()
    }

    /// Stop recording; returns the names read at or before epoch `upto` since `from`.
    pub(crate) fn unwatch(&mut self, from: usize, upto: u64) -> Vec<String> {
        let out = self
            .reads
            .get(from..)
            .unwrap_or(&[])
            .iter()
            .filter(|(_, e)| *e <= upto)
            .map(|(n, _)| n.clone())
            .collect();
        self.watching = self.watching.saturating_sub(1);
        if self.watching == 0 {
            self.reads.clear();
        }
        out
    }
}

fn in_dead(dead: &[(u64, u64)], e: u64) -> bool {
    let k = dead.partition_point(|(_, end)| *end < e);
    dead.get(k).is_some_and(|(s, end)| *s < e && e <= *end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> Val {
        Val::Str(v.into())
    }

    #[test]
    fn subshells_undo() {
        let mut e = Env::default();
        e.set("A", s("1"));
        let m = e.mark();
        e.set("A", s("2"));
        e.set("B", s("3"));
        e.kill_all();
        assert_eq!(e.get("A"), Val::Unknown);
        e.restore(m);
        assert_eq!(e.get("A"), s("1"));
        assert_eq!(e.get("B"), Val::Unknown);
    }

    #[test]
    fn regions_kill_by_epoch() {
        let mut e = Env::default();
        e.set("A", s("1"));
        let start = e.now();
        e.set("B", s("2"));
        e.kill_since(start);
        assert_eq!(e.get("A"), s("1"));
        assert_eq!(e.get("B"), Val::Unknown);
        e.set("B", s("3"));
        assert_eq!(e.get("B"), s("3"));
    }

    #[test]
    fn children_see_exports() {
        let mut e = Env::default();
        e.set("A", s("1"));
        e.set("B", s("2"));
        e.export("B", true);
        let m = e.mark();
        e.enter_child();
        assert_eq!(e.get("A"), Val::Unknown);
        assert_eq!(e.get("B"), s("2"));
        assert_eq!(e.get("HOME"), s("\0"));
        e.restore(m);
        assert_eq!(e.get("A"), s("1"));
    }

    #[test]
    fn killing_what_the_text_assigned_is_undone() {
        let mut e = Env::default();
        e.set("A", s("1"));
        let m = e.mark();
        e.kill_text();
        assert_eq!(e.get("A"), Val::Unknown);
        assert_eq!(e.get("HOME"), s("\0"));
        e.restore(m);
        assert_eq!(e.get("A"), s("1"));
    }

    #[test]
    fn readonly_holds() {
        let mut e = Env::default();
        e.set("A", s("1"));
        e.make_readonly("A");
        e.set("A", s("2"));
        assert_eq!(e.get("A"), s("1"));
    }
}
