//! What the allowlist and a root writable only for some files make of one entry of a
//! layer, before any other judgement. The merge and its preview (`cordon changes show`,
//! the console) ask this one function, so what a human is shown is what `apply` does.

use crate::changes::Layer;
use cordon_policy::planted::LeftKind;
use rustix::fs::FileType;
use std::path::{Path, PathBuf};

/// How the allowlist treats one path of the layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Allowed {
    /// Named (or beneath a named path): merged.
    Yes,
    /// A directory on the way to a named path.
    Passage,
    /// Not named: kept in the layer.
    No,
}

/// What becomes of one entry of the layer by the scope alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Outcome {
    /// Judged and merged like any entry, as the allowlist treats it.
    Merge(Allowed),
    /// Left in the layer for a human (`cordon changes`): outside the scope.
    Keep,
    /// Never lands, for this reason.
    Refuse(String),
}

/// The paths a merge of one layer may touch.
pub(super) struct Scope {
    /// The allowlist, when the run has one (or the files a root is writable for).
    only: Option<Vec<PathBuf>>,
    /// The allowlist names files made writable alone: only regular files are merged at
    /// its paths.
    files_only: bool,
}

impl Scope {
    /// The scope of merging `layer` with the allowlist `only`: a root writable only for
    /// some files merges those, within the allowlist if any.
    pub(super) fn new(layer: &Layer, only: Option<&[PathBuf]>) -> Scope {
        if layer.files.is_empty() {
            return Scope {
                only: only.map(<[PathBuf]>::to_vec),
                files_only: false,
            };
        }
        let files = layer
            .files
            .iter()
            .filter(|f| only.is_none_or(|o| o.iter().any(|a| f.starts_with(a))))
            .cloned()
            .collect();
        Scope {
            only: Some(files),
            files_only: true,
        }
    }

    /// Whether only regular files at the listed paths are merged (a root writable only
    /// for some files).
    pub(super) fn files_only(&self) -> bool {
        self.files_only
    }

    /// How the allowlist treats `path`.
    pub(super) fn allowed(&self, path: &Path) -> Allowed {
        match &self.only {
            None => Allowed::Yes,
            Some(only) if only.iter().any(|a| path.starts_with(a)) => Allowed::Yes,
            Some(only) if only.iter().any(|a| a.starts_with(path)) => Allowed::Passage,
            Some(_) => Allowed::No,
        }
    }

    /// What the scope makes of the layer's entry at `path`, of kind `kind` (`whiteout`:
    /// the run's removal of the entry); `host` says the type of the host's entry there
    /// (`None`: nothing), asked only when the answer depends on it.
    pub(super) fn outcome(
        &self,
        path: &Path,
        kind: LeftKind,
        whiteout: bool,
        host: impl FnOnce() -> Option<FileType>,
    ) -> Outcome {
        let allowed = self.allowed(path);
        if allowed == Allowed::No || (allowed == Allowed::Passage && kind != LeftKind::Dir) {
            return Outcome::Keep;
        }
        if self.files_only && kind != LeftKind::File {
            let what = match kind {
                LeftKind::Dir => "a directory",
                LeftKind::Symlink => "a symlink",
                _ if whiteout => "a removal",
                _ => "a special file",
            };
            return Outcome::Refuse(format!(
                "only this file was made writable, and the run left {what} in its place"
            ));
        }
        let needs_host = self.files_only || allowed == Allowed::Passage;
        let host = if needs_host { host() } else { None };
        if self.files_only && host == Some(FileType::Directory) {
            // Replacing it would remove a tree the root was not writable for.
            return Outcome::Refuse(
                "only this file was made writable, and the host has a directory in its place"
                    .into(),
            );
        }
        if allowed == Allowed::Passage && host.is_some_and(|h| h != FileType::Directory) {
            // The allowlist names what lies below, not the host's file here.
            return Outcome::Keep;
        }
        Outcome::Merge(allowed)
    }
}
