//! What a merge is asked to do and what it reports.

use std::path::{Path, PathBuf};

use crate::changes::Stamp;

/// One entry that stayed out of the host's tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// Where it would have gone on the host.
    pub path: PathBuf,
    /// Why, in one sentence.
    pub reason: String,
}

/// One change that reached the host's tree.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Landed {
    /// Where, on the host.
    pub path: PathBuf,
    /// `write` (a file), `symlink`, `dir` (a directory the merge created, with
    /// everything in it) or `delete`.
    pub change: String,
    /// For a created directory: how many entries it holds (not listed one by one).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub entries: Option<u64>,
}

/// What a merge did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MergeReport {
    /// Files, symlinks and directories written into the host's tree.
    pub merged: u64,
    /// Entries removed from the host's tree (deleted by the run).
    pub removed: u64,
    /// Bytes copied (when the layer is on another file system than the root).
    pub copied_bytes: u64,
    /// What reached the host, path by path (at most [`MAX_LISTED`]; a directory the
    /// merge created is one entry).
    pub landed: Vec<Landed>,
    /// Changes that landed but were not listed (beyond [`MAX_LISTED`]).
    pub unlisted: u64,
    /// What stayed out for good.
    pub refused: Vec<Refused>,
    /// Compiled caches the run left (Python bytecode, a bundler's cache) that stayed out
    /// for good ([`cordon_policy::planted::COMPILED_CACHE`]): counted, not listed, since
    /// every test run leaves them.
    pub caches: u64,
    /// Changes left in the layer because the allowlist does not name them.
    pub kept: Vec<PathBuf>,
    /// Changes left in the layer for review: a host tool would obey or run them.
    pub held: Vec<Refused>,
    /// Changes left in the layer because the host changed the same entry during the
    /// run (the host's version was kept).
    pub conflicts: Vec<Refused>,
    /// Host entries the run deleted (or replaced) that the host changed during the run:
    /// kept, and nothing of the run's waits for them.
    pub spared: Vec<Refused>,
}

impl MergeReport {
    /// Whether anything is left in the layer that a later `cordon changes apply` could
    /// still merge (kept, held or conflicting changes).
    pub fn left_for_review(&self) -> bool {
        !self.kept.is_empty() || !self.held.is_empty() || !self.conflicts.is_empty()
    }
}

/// How to merge a layer.
#[derive(Debug, Clone, Copy)]
pub struct MergeOptions<'a> {
    /// The host user's home, for the start-up files the rules protect there.
    pub home: &'a Path,
    /// When the run started: a host entry changed at or after it is the host's.
    pub horizon: Stamp,
    /// Only these paths (and what lies beneath them) may land.
    pub only: Option<&'a [PathBuf]>,
    /// A human reviewed the change set: what the rules hold for review lands (what they
    /// refuse still does not).
    pub reviewed: bool,
    /// Take the run's version even where the host changed the entry during the run
    /// (`cordon changes apply --overwrite`).
    pub overwrite: bool,
}
