#![allow(clippy::disallowed_methods)]
//! What a finished run left in the host's tree: its copy-on-write layers merged back,
//! protected paths it created removed.

use crate::changes::ChangeSet;
use crate::error::SandboxError;
use crate::report::{Blocked, BlockedKind, DenialReport};
use crate::spec::SandboxSpec;
use std::path::Path;

/// Merge every layer of `set` into its root, report what stayed out, and delete the set.
/// A merge that stops part way keeps the set (for `cordon changes`) and says so.
pub(super) fn merge_back(
    set: ChangeSet,
    spec: &SandboxSpec,
    report: &mut DenialReport,
) -> Result<(), SandboxError> {
    let started = std::time::Instant::now();
    if set.is_untouched() {
        // Most runs change nothing: their set is kept for the next run.
        let recycled = set.recycle();
        report.merged.micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        return recycled;
    }
    let id = set
        .dir()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Changes outside an allowlist stay in the set for a human.
    let mut keep = false;
    for layer in set.layers() {
        let merged = match &spec.merge_only {
            Some(only) => crate::merge::merge_layer_only(layer, &spec.home, only),
            None => crate::merge::merge_layer(layer, &spec.home),
        };
        match merged {
            Ok(m) => {
                report.merged.merged += m.merged;
                report.merged.removed += m.removed;
                if !m.kept.is_empty() || !m.held.is_empty() {
                    keep = true;
                }
                for h in m.held {
                    report.blocked.push(Blocked {
                        kind: BlockedKind::NotMerged,
                        target: h.path.display().to_string(),
                        detail: format!(
                            "held for review: {}; it waits in `cordon changes show {id}`",
                            h.reason
                        ),
                    });
                }
                for p in m.kept {
                    report.blocked.push(Blocked {
                        kind: BlockedKind::NotMerged,
                        target: p.display().to_string(),
                        detail: format!(
                            "not merged into the host's tree: the run may change only the paths it declared; the change waits in `cordon changes show {id}`"
                        ),
                    });
                }
                for r in m.refused {
                    report.blocked.push(Blocked {
                        kind: BlockedKind::NotMerged,
                        target: r.path.display().to_string(),
                        detail: format!("not merged into the host's tree: {}", r.reason),
                    });
                }
            }
            Err(e) => {
                return Err(SandboxError::setup(format!(
                    "{}; the run's remaining changes are kept: see `cordon changes show {id}`",
                    e.message
                )));
            }
        }
    }
    let removed = if keep { Ok(()) } else { set.remove() };
    report.merged.micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
    removed
}

/// A protected path that did not exist before the run and exists now was created by
/// the sandbox (or, rarely, by a host process at the same time). Remove it without
/// following symlinks and say what happened; `None` when there was nothing to undo.
pub(super) fn remove_created(p: &Path) -> Option<String> {
    // The common case: still absent.
    let meta = std::fs::symlink_metadata(p).ok()?;
    // Refuse to act through a parent that became a symlink: the path would resolve
    // elsewhere.
    let mut cur = std::path::PathBuf::new();
    for c in p.parent()?.components() {
        cur.push(c);
        if std::fs::symlink_metadata(&cur)
            .ok()?
            .file_type()
            .is_symlink()
        {
            return Some(format!(
                "created a protected path whose parent {} is now a symlink; left in place for review",
                cur.display()
            ));
        }
    }
    let removed = if meta.is_dir() {
        std::fs::remove_dir_all(p)
    } else {
        std::fs::remove_file(p)
    };
    Some(match removed {
        Ok(()) => "the sandbox created this protected path; it was removed after the run".into(),
        Err(e) => format!("the sandbox created this protected path and removing it failed: {e}"),
    })
}
