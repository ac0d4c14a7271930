//! What a finished run left in the host's tree: its copy-on-write layers merged back
//! (or held for review), protected paths it created removed.

use crate::changes::ChangeSet;
use crate::error::SandboxError;
use crate::merge::{MergeOptions, MergeReport};
use crate::report::{Blocked, BlockedKind, DenialReport};
use crate::spec::SandboxSpec;
use std::path::Path;

/// Merge every layer of `set` into its root, report what landed and what stayed out,
/// and delete the set unless something in it waits for a human (held, kept by an
/// allowlist, or in conflict with a host change). With `--hold`, nothing is merged and
/// the set waits whole. A merge that stops part way keeps the set, which `cordon
/// changes apply` completes, and says so; the report is filled either way.
pub(super) fn merge_back(
    mut set: ChangeSet,
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
    if spec.hold {
        set.mark_held()?;
        report.changes.change_set = Some(id);
        report.changes.held = true;
        return Ok(());
    }
    let opts = MergeOptions {
        home: &spec.home,
        horizon: set.meta().horizon(),
        only: spec.merge_only.as_deref(),
        reviewed: false,
        overwrite: false,
    };
    let mut keep = false;
    let mut failed = None;
    for layer in set.layers() {
        match crate::merge::merge(layer, &opts) {
            Ok(m) => {
                keep |= m.left_for_review();
                account(m, &id, report);
            }
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    report.merged.micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
    if let Some(e) = failed {
        report.changes.change_set = Some(id.clone());
        return Err(SandboxError::setup(format!(
            "{}; what did not land is kept: see `cordon changes show {id}`, then `cordon changes apply {id}` to finish",
            e.message
        )));
    }
    if keep {
        report.changes.change_set = Some(id);
        return Ok(());
    }
    // Everything landed, so every layer is empty again: the set is the next run's spare
    // (removed instead if anything is left in it).
    set.recycle()
}

/// Add one layer's merge to the run's report.
fn account(m: MergeReport, id: &str, report: &mut DenialReport) {
    report.merged.merged += m.merged;
    report.merged.removed += m.removed;
    let room = crate::merge::MAX_LISTED.saturating_sub(report.changes.landed.len());
    let over = m.landed.len().saturating_sub(room) as u64;
    report.changes.unlisted += m.unlisted + over;
    // Every Python test run leaves them: one count, not a blocked action each.
    report.changes.caches += m.caches;
    report
        .changes
        .landed
        .extend(m.landed.into_iter().take(room));
    for p in m.kept {
        report.blocked.push(Blocked {
            kind: BlockedKind::NotMerged,
            target: p.display().to_string(),
            detail: format!(
                "not merged into the host's tree: the run may change only the paths it declared or was granted; the change waits in `cordon changes show {id}`"
            ),
        });
    }
    for h in m.held {
        report.blocked.push(Blocked {
            kind: BlockedKind::Held,
            target: h.path.display().to_string(),
            detail: format!(
                "held for review: {}; see `cordon changes show {id}`, then `cordon changes apply {id}` or `discard {id}`",
                h.reason
            ),
        });
    }
    for c in m.conflicts {
        report.blocked.push(Blocked {
            kind: BlockedKind::Conflict,
            target: c.path.display().to_string(),
            detail: format!(
                "{}; `cordon changes show {id}` shows the run's version (`cordon changes apply {id} --overwrite` takes it)",
                c.reason
            ),
        });
    }
    for s in m.spared {
        report.blocked.push(Blocked {
            kind: BlockedKind::HostKept,
            target: s.path.display().to_string(),
            detail: s.reason,
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
    let _ = meta;
    Some(match cordon_fs::remove_tree_at(p) {
        Ok(()) => "the sandbox created this protected path; it was removed after the run".into(),
        Err(e) => format!("the sandbox created this protected path and removing it failed: {e}"),
    })
}
