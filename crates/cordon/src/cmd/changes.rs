//! `cordon changes`: the changes of runs that ended without being merged.
//!
//! In the full tier a run's writes to its writable roots wait in a copy-on-write layer
//! until cordon merges them after the run. A run whose cordon was killed merges nothing;
//! its layer stays, and these subcommands list it, show what merging it would do, merge
//! it (with the same refusals as after a normal run) or discard it.
//!
//! Exit status: 0 done; 2 an unknown id or a change set still in use; 1 the change set
//! could not be read, merged or removed.

use cordon_policy::terminal::{path_for_terminal, sanitize_for_terminal};
use cordon_sandbox::{LeftChanges, changes_base, claim, list_left, merge_layer, preview_layer};
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
    /// Show what merging a change set would write, delete and refuse.
    Show {
        /// The id shown by `cordon changes list`.
        id: String,
        /// One JSON object per line instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Merge a change set into the host's tree, refusing what would run on the host.
    Apply {
        /// The id shown by `cordon changes list`.
        id: String,
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
                if json {
                    println!(
                        "{}",
                        json!({"id": l.id(), "created": l.meta.created, "running": l.running,
                               "command": l.meta.command, "roots": roots})
                    );
                } else {
                    println!(
                        "{}\t{}\t{}\t{}",
                        sanitize_for_terminal(&l.id()),
                        if l.running { "running" } else { "left" },
                        sanitize_for_terminal(&roots.join(",")),
                        sanitize_for_terminal(&l.meta.command.join(" "))
                    );
                }
            }
            Ok(())
        }
        ChangesCommand::Show { id, json } => {
            let l = find(&id)?;
            let home = home();
            for layer in &l.meta.layers {
                let pending = preview_layer(layer, &home)
                    .map_err(|e| Exit::new(Code::Internal, e.message))?;
                for p in pending {
                    if json {
                        println!("{}", json!(p));
                    } else {
                        let path = path_for_terminal(&p.path);
                        match &p.refused {
                            Some(r) => println!("refuse\t{path}\t{}", sanitize_for_terminal(r)),
                            None => println!("{}\t{path}", p.change),
                        }
                    }
                }
            }
            Ok(())
        }
        ChangesCommand::Apply { id } => {
            let l = find(&id)?;
            let set = claim(&l).map_err(|e| Exit::new(Code::Invalid, e.message))?;
            let home = home();
            for layer in set.layers() {
                let m =
                    merge_layer(layer, &home).map_err(|e| Exit::new(Code::Internal, e.message))?;
                eprintln!(
                    "cordon: merged {} entries into {}, removed {}",
                    m.merged,
                    path_for_terminal(&layer.root),
                    m.removed
                );
                for r in m.refused {
                    eprintln!(
                        "cordon: not merged: {}: {}",
                        path_for_terminal(&r.path),
                        sanitize_for_terminal(&r.reason)
                    );
                }
            }
            set.remove()
                .map_err(|e| Exit::new(Code::Internal, e.message))
        }
        ChangesCommand::Discard { id } => {
            let l = find(&id)?;
            let set = claim(&l).map_err(|e| Exit::new(Code::Invalid, e.message))?;
            set.remove()
                .map_err(|e| Exit::new(Code::Internal, e.message))
        }
    }
}
