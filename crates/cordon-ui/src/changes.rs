//! Change sets that wait for a human: the console's Changes view.
//!
//! A contained run's writes wait in a change set until cordon merges them; a set stays
//! when the run asked for review (`--hold`), when the merge held entries a host tool would
//! run or obey, when the host changed an entry during the run (a conflict), or when the
//! run was killed. This module lists those sets, shows every change of one (with its
//! diff), and merges or discards one on a human's word, through `cordon_sandbox`'s
//! `review`, `claim`, `apply` and `remove`: it never merges anything itself.
//!
//! Two rules it must keep:
//! * an id from a request only ever selects one of the sets `list_left` finds under the
//!   configured bases, by equality; it never becomes part of a path;
//! * paths, reasons, flags and diffs were written by the sandboxed command, so every such
//!   string has its control characters and bidirectional overrides made visible here (as
//!   `cordon changes show` prints them), and the page writes it as text, never as HTML.

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use cordon_policy::terminal::{path_for_terminal, sanitize_for_terminal};
use cordon_sandbox::{
    Applied, LeftChanges, Pending, changes_base, claim, list_left, review as review_set,
};
use cordon_store::format_time;
use serde_json::{Value, json};

use crate::actions::{ActionError, Places, SOURCE, open_log};

/// A set with more changes than this is shown without diffs: the review reads up to
/// 1 MiB of each text file on both sides, and the console should not hold that much of a
/// run's output in memory for one page. `cordon changes show` prints every diff.
pub const MAX_DIFFED: usize = 200;
/// At most this many changes of one set are listed on the page; the rest are counted.
pub const MAX_SHOWN: usize = 5_000;

/// Where this user's change sets wait, and the home whose start-up files the merge
/// protects.
#[derive(Debug, Clone)]
pub struct ChangePlaces {
    /// The directories holding change sets, searched in order.
    pub bases: Vec<PathBuf>,
    /// The host user's home (the merge refuses or holds start-up files there).
    pub home: PathBuf,
}

impl ChangePlaces {
    /// The places `cordon changes` uses: `changes/` in cordon's state directory and the
    /// fallback base used when that lies inside a writable root, with `$HOME`.
    pub fn for_user() -> ChangePlaces {
        let mut bases = vec![changes_base(&[])];
        let fallback = changes_base(&[PathBuf::from("/")]);
        if !bases.contains(&fallback) {
            bases.push(fallback);
        }
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute())
            .map(|h| std::fs::canonicalize(&h).unwrap_or(h))
            // No home: protect a path that cannot be a root rather than none at all.
            .unwrap_or_else(|| PathBuf::from("/nonexistent"));
        ChangePlaces { bases, home }
    }
}

fn internal(message: String) -> ActionError {
    ActionError {
        status: 500,
        message,
    }
}

/// Every change set under the configured bases, running or not.
fn all_left(places: &ChangePlaces) -> Result<Vec<LeftChanges>, ActionError> {
    let mut out = Vec::new();
    for base in &places.bases {
        out.extend(list_left(base).map_err(|e| internal(e.message))?);
    }
    Ok(out)
}

/// The set whose id is `id`, if it may be reviewed or changed now: an unknown id is
/// 404 and a set whose run still holds it 409.
fn find(places: &ChangePlaces, id: &str) -> Result<LeftChanges, ActionError> {
    let left = all_left(places)?
        .into_iter()
        .find(|l| l.id() == id)
        .ok_or_else(|| ActionError {
            status: 404,
            message: "no change set has this id; reload the list".into(),
        })?;
    if left.running {
        return Err(still_running(&left));
    }
    Ok(left)
}

fn still_running(left: &LeftChanges) -> ActionError {
    ActionError {
        status: 409,
        message: format!(
            "the change set {} belongs to a run that is still going: it can be reviewed, applied or discarded only after the run ends",
            left.id()
        ),
    }
}

/// What waits in a set, counted from its review.
#[derive(Debug, Default)]
struct Waiting {
    changes: usize,
    held: usize,
    conflicts: usize,
    refused: usize,
}

impl Waiting {
    fn of(pending: &[Pending]) -> Waiting {
        let mut w = Waiting {
            changes: pending.len(),
            ..Waiting::default()
        };
        for p in pending {
            if p.refused.is_some() {
                w.refused += 1;
            } else if p.held.is_some() {
                w.held += 1;
            }
            if p.conflict && p.refused.is_none() {
                w.conflicts += 1;
            }
        }
        w
    }

    /// Held for review, as opposed to left by a run that ended without merging.
    fn held(&self, left: &LeftChanges) -> bool {
        left.meta.hold || self.held > 0 || self.conflicts > 0
    }

    /// Why the set waits, one sentence per reason.
    fn why(&self, left: &LeftChanges) -> Vec<String> {
        let mut out = Vec::new();
        if left.meta.hold {
            out.push("held whole: the run asked for its changes to be reviewed (--hold)".into());
        }
        if self.held > 0 {
            out.push(format!(
                "{} held: a host tool would run or obey {}",
                plural(self.held, "entry", "entries"),
                if self.held == 1 { "it" } else { "them" }
            ));
        }
        if self.conflicts > 0 {
            out.push(format!(
                "{}: the host changed the same {} during the run, and the host's version was kept",
                plural(self.conflicts, "conflict", "conflicts"),
                if self.conflicts == 1 {
                    "entry"
                } else {
                    "entries"
                }
            ));
        }
        if out.is_empty() {
            out.push(
                "left: the run ended without merging (it was killed, or its merge stopped part way)"
                    .into(),
            );
        }
        out
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The fields every view of a set carries: id, command, roots, when, why it waits.
fn summary(left: &LeftChanges, waiting: &Waiting) -> Value {
    let held = waiting.held(left);
    json!({
        "id": left.id(),
        "state": if held { "held" } else { "left" },
        "created": format_time(UNIX_EPOCH + Duration::from_secs(left.meta.created)),
        "command": left.meta.command.iter().map(|a| sanitize_for_terminal(a)).collect::<Vec<_>>(),
        "roots": left.meta.layers.iter().map(|l| path_for_terminal(&l.root)).collect::<Vec<_>>(),
        "hold": left.meta.hold,
        "why": waiting.why(left),
        "changes": waiting.changes,
        "held": waiting.held,
        "conflicts": waiting.conflicts,
        "refused": waiting.refused,
    })
}

/// Every change set that does not belong to a running run, held ones first, then the
/// ones killed runs left (oldest first within each), and how many are still running.
pub fn list(places: &ChangePlaces) -> Result<Value, ActionError> {
    let mut running = 0;
    let mut held = Vec::new();
    let mut left_over = Vec::new();
    for left in all_left(places)? {
        if left.running {
            running += 1;
            continue;
        }
        match review_set(&left, &places.home, false) {
            Ok(pending) => {
                let waiting = Waiting::of(&pending);
                let entry = summary(&left, &waiting);
                if waiting.held(&left) {
                    held.push(entry);
                } else {
                    left_over.push(entry);
                }
            }
            // One unreadable set must not hide the others; it is listed with why, and
            // can still be discarded.
            Err(e) => {
                let mut entry = summary(&left, &Waiting::default());
                entry["error"] = json!(sanitize_for_terminal(&e.message));
                left_over.push(entry);
            }
        }
    }
    held.extend(left_over);
    Ok(json!({"sets": held, "running": running}))
}

/// One set with every change its review finds: path, change, why it is refused or held,
/// whether it conflicts, flags, and the diff of text files (see [`MAX_DIFFED`]).
pub fn show(places: &ChangePlaces, id: &str) -> Result<Value, ActionError> {
    let left = find(places, id)?;
    let fail = |e: cordon_sandbox::SandboxError| {
        internal(format!(
            "cannot review the change set {}: {}",
            left.id(),
            e.message
        ))
    };
    let mut pending = review_set(&left, &places.home, false).map_err(fail)?;
    let diffed = pending.len() <= MAX_DIFFED;
    if diffed {
        pending = review_set(&left, &places.home, true).map_err(fail)?;
    }
    let waiting = Waiting::of(&pending);
    let mut out = summary(&left, &waiting);
    out["diffs"] = if diffed {
        json!(true)
    } else {
        json!(format!(
            "not shown: the set has {} changes, more than the {MAX_DIFFED} the console diffs; `cordon changes show {}` prints every diff",
            pending.len(),
            left.id()
        ))
    };
    out["omitted"] = json!(pending.len().saturating_sub(MAX_SHOWN));
    let roots: Vec<PathBuf> = left.meta.layers.iter().map(|l| l.root.clone()).collect();
    out["entries"] = pending
        .iter()
        .take(MAX_SHOWN)
        .map(|p| entry(p, &roots))
        .collect();
    Ok(out)
}

/// One change, every string in it made visible-safe.
fn entry(p: &Pending, roots: &[PathBuf]) -> Value {
    let conflict = p.conflict.then_some(
        "the host changed it after the run started: its version is kept unless the set is applied overwriting conflicts",
    );
    let diff = p.diff.as_deref().map(|d| visible_diff(d, &p.path, roots));
    json!({
        "path": path_for_terminal(&p.path),
        "change": p.change,
        "refused": p.refused.as_deref().map(sanitize_for_terminal),
        "held": p.held.as_deref().map(sanitize_for_terminal),
        "conflict": conflict,
        "flags": p.flags.iter().map(|f| sanitize_for_terminal(f)).collect::<Vec<_>>(),
        "diff": diff,
    })
}

/// A diff with every line made visible-safe, line by line so that the newlines that make
/// the diff stay newlines. Its `---`/`+++` header names the file, and a name may itself
/// hold a newline that would forge diff lines of its own (`x\n+fine`): the header the
/// review writes is recognised whole and rewritten from the escaped name.
fn visible_diff(diff: &str, path: &Path, roots: &[PathBuf]) -> String {
    let mut body = diff;
    let mut out = String::with_capacity(diff.len());
    for root in roots {
        let Ok(rel) = path.strip_prefix(root) else {
            continue;
        };
        let rel = rel.display().to_string();
        if let Some(rest) = diff.strip_prefix(&format!("--- a/{rel}\n+++ b/{rel}\n")) {
            let shown = sanitize_for_terminal(&rel);
            out.push_str(&format!("--- a/{shown}\n+++ b/{shown}\n"));
            body = rest;
            break;
        }
    }
    let lines: Vec<String> = body.lines().map(sanitize_for_terminal).collect();
    out.push_str(&lines.join("\n"));
    out
}

/// Merge set `id` after review: held changes land, refused ones do not, and conflicts
/// keep the host's version unless `overwrite`. The answer says what landed, what was
/// refused and what is left; the audit log records it with the console as its source.
pub fn apply(places: &Places, id: &str, overwrite: bool) -> Result<Value, ActionError> {
    let changes = &places.changes;
    let mut log = open_log(places)?;
    let left = find(changes, id)?;
    let set = claim(&left).map_err(|e| ActionError {
        status: 409,
        message: e.message,
    })?;
    let applied = match cordon_sandbox::apply(set, &changes.home, overwrite) {
        Ok(a) => a,
        Err(e) => {
            log.append(
                &json!({"event": "changes-apply-failed", "changes": left.id(),
                "overwrite": overwrite, "error": e.message, "answered_by": SOURCE}),
            )?;
            return Err(internal(format!(
                "applying the change set {} failed: {}; what merged before the failure stays merged, and applying again completes it",
                left.id(),
                e.message
            )));
        }
    };
    let report = applied_report(&applied);
    let counts = Counts::of(&applied);
    log.append(&json!({
        "event": "changes-applied",
        "changes": left.id(),
        "command": left.meta.command,
        "overwrite": overwrite,
        "landed": counts.landed,
        "removed": counts.removed,
        "refused": counts.refused,
        "conflicts": counts.conflicts,
        "left": applied.left,
        "answered_by": SOURCE,
    }))?;
    let mut message = format!(
        "applied {}: {} landed, {} removed, {} refused",
        left.id(),
        plural(counts.landed as usize, "change", "changes"),
        counts.removed,
        counts.refused
    );
    if applied.left {
        message.push_str(&format!(
            "; the set stays with what did not land ({}{}): Apply, overwriting conflicts takes the run's version, Discard drops it",
            plural(counts.conflicts, "conflict", "conflicts"),
            if counts.kept > 0 {
                format!(", {} kept", counts.kept)
            } else {
                String::new()
            }
        ));
    } else {
        message.push_str("; the set is removed");
    }
    Ok(json!({"message": message, "id": left.id(), "left": applied.left, "roots": report}))
}

/// Totals over every root of an apply.
struct Counts {
    landed: u64,
    removed: u64,
    refused: usize,
    conflicts: usize,
    kept: usize,
}

impl Counts {
    fn of(applied: &Applied) -> Counts {
        let mut c = Counts {
            landed: 0,
            removed: 0,
            refused: 0,
            conflicts: 0,
            kept: 0,
        };
        for (_, m) in &applied.roots {
            c.landed += m.merged;
            c.removed += m.removed;
            c.refused += m.refused.len();
            c.conflicts += m.conflicts.len();
            c.kept += m.kept.len() + m.held.len();
        }
        c
    }
}

/// Root by root: what landed, what was refused, what is left.
fn applied_report(applied: &Applied) -> Value {
    let reasons = |v: &[cordon_sandbox::Refused]| -> Vec<Value> {
        v.iter()
            .map(|r| json!({"path": path_for_terminal(&r.path), "reason": sanitize_for_terminal(&r.reason)}))
            .collect()
    };
    applied
        .roots
        .iter()
        .map(|(root, m)| {
            json!({
                "root": path_for_terminal(root),
                "merged": m.merged,
                "removed": m.removed,
                "landed": m.landed.iter().map(|l| json!({
                    "path": path_for_terminal(&l.path),
                    "change": sanitize_for_terminal(&l.change),
                    "entries": l.entries,
                })).collect::<Vec<_>>(),
                "unlisted": m.unlisted,
                "refused": reasons(&m.refused),
                "held": reasons(&m.held),
                "conflicts": reasons(&m.conflicts),
                "spared": reasons(&m.spared),
                "kept": m.kept.iter().map(|p| path_for_terminal(p)).collect::<Vec<_>>(),
            })
        })
        .collect()
}

/// Delete set `id` without merging anything of it.
pub fn discard(places: &Places, id: &str) -> Result<Value, ActionError> {
    let changes = &places.changes;
    let mut log = open_log(places)?;
    let left = find(changes, id)?;
    let set = claim(&left).map_err(|e| ActionError {
        status: 409,
        message: e.message,
    })?;
    set.remove().map_err(|e| {
        internal(format!(
            "discarding the change set {} failed: {}; discard it again to finish",
            left.id(),
            e.message
        ))
    })?;
    log.append(&json!({
        "event": "changes-discarded",
        "changes": left.id(),
        "command": left.meta.command,
        "answered_by": SOURCE,
    }))?;
    Ok(json!({
        "message": format!("discarded {}: nothing of it landed", left.id()),
        "id": left.id(),
    }))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn for_user_searches_the_state_directory_and_protects_an_absolute_home() {
        let p = ChangePlaces::for_user();
        assert!(!p.bases.is_empty());
        assert!(p.bases.iter().all(|b| b.is_absolute()));
        assert!(p.home.is_absolute());
    }
}
