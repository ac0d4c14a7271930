//! `cordon changes`: change sets that wait, for a human or for completion.
//!
//! In the full tier a run's writes to its writable roots wait in a copy-on-write layer
//! until cordon merges them after the run. A set stays when the run was killed, when the
//! run asked for review (`--hold`), when the merge held something a host tool would run
//! or obey, when the host changed an entry during the run (a conflict), or when the merge
//! stopped part way. These subcommands list the sets, show every change (with diffs and
//! flags), merge one after review, or discard it.
//!
//! Exit status: 0 done; 2 an unknown id or a change set still in use; 1 the change set
//! could not be read, merged or removed.

use cordon_policy::terminal::{path_for_terminal, sanitize_for_terminal};
use cordon_sandbox::{LeftChanges, apply, changes_base, claim, list_left, review};
use serde_json::json;
use std::path::PathBuf;

use crate::exit::{Code, Exit};

/// Subcommands of `cordon changes`.
#[derive(clap::Subcommand)]
pub enum ChangesCommand {
    /// List the change sets left by runs (and those of runs still going).
    List {
        /// One JSON object per line instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Show every change of a set: added, modified and deleted paths, what would be
    /// refused or is held for review and why, conflicts with host changes, flags for
    /// what a host tool may run, and a unified diff of text files.
    Show {
        /// The id shown by `cordon changes list`.
        id: String,
        /// One JSON object per line instead of text.
        #[arg(long)]
        json: bool,
        /// Leave out the diffs.
        #[arg(long)]
        no_diff: bool,
    },
    /// Merge a change set into the host's tree after review: what was held lands, what
    /// the rules refuse (git hooks, code-running git keys, start-up files) does not.
    Apply {
        /// The id shown by `cordon changes list`.
        id: String,
        /// Take the run's version even where the host changed the same entry after the
        /// run started (by default the host's version is kept and the set stays).
        #[arg(long)]
        overwrite: bool,
    },
    /// Delete a change set without merging it.
    Discard {
        /// The id shown by `cordon changes list`.
        id: String,
    },
}

fn home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
        .map(|h| std::fs::canonicalize(&h).unwrap_or(h))
        .unwrap_or_else(|| PathBuf::from("/nonexistent"))
}

/// Every change set this user may have: under the state directory, and under the
/// fallback base used when the state directory lies inside a writable root.
fn all_left() -> Result<Vec<LeftChanges>, Exit> {
    let mut bases = vec![changes_base(&[])];
    let fallback = changes_base(&[PathBuf::from("/")]);
    if !bases.contains(&fallback) {
        bases.push(fallback);
    }
    let mut out = Vec::new();
    for b in bases {
        out.extend(list_left(&b).map_err(|e| Exit::new(Code::Internal, e.message))?);
    }
    Ok(out)
}

fn find(id: &str) -> Result<LeftChanges, Exit> {
    all_left()?
        .into_iter()
        .find(|l| l.id() == id)
        .ok_or_else(|| {
            Exit::new(
                Code::Invalid,
                format!(
                    "no change set has the id {}; `cordon changes list` shows them",
                    sanitize_for_terminal(id)
                ),
            )
        })
}

/// Run `cordon changes …`.
pub fn run(cmd: ChangesCommand) -> anyhow::Result<u8> {
    run_inner(cmd)?;
    Ok(0)
}

fn run_inner(cmd: ChangesCommand) -> Result<(), Exit> {
    match cmd {
        ChangesCommand::List { json } => {
            for l in all_left()? {
                let roots: Vec<String> = l
                    .meta
                    .layers
                    .iter()
                    .map(|x| x.root.display().to_string())
                    .collect();
                let state = match (l.running, l.meta.hold) {
                    (true, _) => "running",
                    (false, true) => "held",
                    (false, false) => "left",
                };
                if json {
                    println!(
                        "{}",
                        json!({"id": l.id(), "created": l.meta.created, "running": l.running,
                               "held": l.meta.hold, "command": l.meta.command, "roots": roots})
                    );
                } else {
                    println!(
                        "{}\t{}\t{}\t{}",
                        sanitize_for_terminal(&l.id()),
                        state,
                        sanitize_for_terminal(&roots.join(",")),
                        sanitize_for_terminal(&l.meta.command.join(" "))
                    );
                }
            }
            Ok(())
        }
        ChangesCommand::Show { id, json, no_diff } => {
            let l = find(&id)?;
            let pending =
                review(&l, &home(), !no_diff).map_err(|e| Exit::new(Code::Internal, e.message))?;
            for p in pending {
                if json {
                    println!("{}", json!(p));
                    continue;
                }
                let path = path_for_terminal(&p.path);
                let verdict = match (&p.refused, &p.held, p.conflict) {
                    (Some(r), _, _) => format!("refused: {}", sanitize_for_terminal(r)),
                    (None, Some(h), _) => format!("held: {}", sanitize_for_terminal(h)),
                    (None, None, true) => {
                        "conflict: the host changed it after the run started".to_string()
                    }
                    (None, None, false) => String::new(),
                };
                let flags: Vec<String> = p.flags.iter().map(|f| sanitize_for_terminal(f)).collect();
                let mut line = format!("{}\t{path}", p.change);
                if !verdict.is_empty() {
                    line.push_str(&format!("\t{verdict}"));
                }
                if !flags.is_empty() {
                    line.push_str(&format!("\t[{}]", flags.join("; ")));
                }
                println!("{line}");
                if let Some(d) = &p.diff {
                    for l in d.lines() {
                        println!("    {}", sanitize_for_terminal(l));
                    }
                }
            }
            Ok(())
        }
        ChangesCommand::Apply { id, overwrite } => {
            let l = find(&id)?;
            let set = claim(&l).map_err(|e| Exit::new(Code::Invalid, e.message))?;
            let applied =
                apply(set, &home(), overwrite).map_err(|e| Exit::new(Code::Internal, e.message))?;
            for (root, m) in &applied.roots {
                eprintln!(
                    "cordon: merged {} entries into {}, removed {}",
                    m.merged,
                    path_for_terminal(root),
                    m.removed
                );
                for r in &m.refused {
                    eprintln!(
                        "cordon: not merged: {}: {}",
                        path_for_terminal(&r.path),
                        sanitize_for_terminal(&r.reason)
                    );
                }
                for c in &m.conflicts {
                    eprintln!(
                        "cordon: conflict: {}: {}",
                        path_for_terminal(&c.path),
                        sanitize_for_terminal(&c.reason)
                    );
                }
            }
            if applied.left {
                eprintln!(
                    "cordon: the change set {} keeps what did not land; `cordon changes apply {} --overwrite` takes the run's version of conflicting entries, `discard` drops them",
                    sanitize_for_terminal(&id),
                    sanitize_for_terminal(&id)
                );
            }
            Ok(())
        }
        ChangesCommand::Discard { id } => {
            let l = find(&id)?;
            let set = claim(&l).map_err(|e| Exit::new(Code::Invalid, e.message))?;
            set.remove()
                .map_err(|e| Exit::new(Code::Internal, e.message))
        }
    }
}
