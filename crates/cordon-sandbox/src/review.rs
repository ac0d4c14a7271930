//! A change set a human reviews: what it would do ([`review`]) and merging it on
//! purpose ([`apply`]), with what the rules hold for review let through and what they
//! refuse still kept out. The surfaces (`cordon changes`, the console) only print.

use crate::changes::{ChangeSet, LeftChanges};
use crate::error::SandboxError;
use crate::merge::{MergeOptions, MergeReport, Pending};
use std::path::{Path, PathBuf};

/// What applying a change set did, root by root.
#[derive(Debug, Clone, Default)]
pub struct Applied {
    /// Each root and its merge.
    pub roots: Vec<(PathBuf, MergeReport)>,
    /// Something is still in the set (a conflict not overwritten, or what an allowlist
    /// kept): the set stays.
    pub left: bool,
}

/// Every change of `left` as merging it on purpose would treat it, with diffs of text
/// files when `diffs`.
pub fn review(left: &LeftChanges, home: &Path, diffs: bool) -> Result<Vec<Pending>, SandboxError> {
    let opts = MergeOptions {
        home,
        horizon: left.meta.horizon(),
        only: None,
        reviewed: true,
        overwrite: false,
    };
    let mut out = Vec::new();
    for layer in &left.meta.layers {
        out.extend(crate::merge::preview_layer(layer, &opts, diffs)?);
    }
    Ok(out)
}

/// Merge a claimed change set after review: held changes land, refused ones do not,
/// and where the host changed an entry after the run started its version is kept
/// unless `overwrite`. The set is removed when nothing is left in it. A merge that
/// stops part way keeps the set, and applying it again completes it.
pub fn apply(set: ChangeSet, home: &Path, overwrite: bool) -> Result<Applied, SandboxError> {
    let opts = MergeOptions {
        home,
        horizon: set.meta().horizon(),
        only: None,
        reviewed: true,
        overwrite,
    };
    let mut applied = Applied::default();
    for layer in set.layers() {
        let m = crate::merge::merge(layer, &opts)?;
        applied.left |= m.left_for_review();
        applied.roots.push((layer.root.clone(), m));
    }
    if !applied.left {
        set.remove()?;
    }
    Ok(applied)
}
