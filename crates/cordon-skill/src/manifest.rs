//! The installation manifest: what was installed, from where, with each file's SHA-256 and
//! mode; and the difference between two of them, for upgrades.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The manifest's file name inside an installed package (a package may not carry one).
pub const MANIFEST_NAME: &str = ".cordon-skill.json";

/// Where a package came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceInfo {
    /// The path or URL it was installed from.
    pub location: String,
    /// A revision (commit, tag, version) when the caller knows one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
}

/// One installed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    /// Path relative to the package root, `/`-separated.
    pub path: String,
    /// SHA-256 of the content, lower-case hex.
    pub sha256: String,
    /// The mode it was installed with (`0o755` for declared scripts, else `0o644`).
    pub mode: u32,
    /// Whether `SKILL.md` declares it a script.
    pub script: bool,
}

/// What an installation holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Format version of this file.
    pub format: u32,
    /// The package name (its directory name).
    pub name: String,
    /// Where it came from.
    pub source: SourceInfo,
    /// Every file.
    pub files: Vec<FileRecord>,
    /// Internal symbolic links (path, target).
    #[serde(default)]
    pub symlinks: Vec<(String, String)>,
}

/// How a file differs between the installed and the new package.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    /// Changed content or mode.
    Changed,
    /// New in the package.
    Added,
    /// Gone from the package.
    Removed,
}

/// One line of an upgrade's difference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiffEntry {
    /// Package-relative path.
    pub path: String,
    /// What changed.
    pub change: Change,
    /// Whether the file is a script in the new package (or was one, when removed).
    pub script: bool,
}

/// What an upgrade changes, scripts first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Diff {
    /// Every difference: changed or added scripts first, then the rest, each by path.
    pub entries: Vec<DiffEntry>,
}

impl Diff {
    /// Compare the installed manifest with the new one.
    pub fn between(old: &Manifest, new: &Manifest) -> Diff {
        let old_files: BTreeMap<&str, &FileRecord> =
            old.files.iter().map(|f| (f.path.as_str(), f)).collect();
        let new_files: BTreeMap<&str, &FileRecord> =
            new.files.iter().map(|f| (f.path.as_str(), f)).collect();
        let mut entries = Vec::new();
        for (path, f) in &new_files {
            match old_files.get(path) {
                None => entries.push(DiffEntry {
                    path: path.to_string(),
                    change: Change::Added,
                    script: f.script,
                }),
                Some(o) if o.sha256 != f.sha256 || o.mode != f.mode => entries.push(DiffEntry {
                    path: path.to_string(),
                    change: Change::Changed,
                    script: f.script,
                }),
                Some(_) => {}
            }
        }
        for (path, f) in &old_files {
            if !new_files.contains_key(path) {
                entries.push(DiffEntry {
                    path: path.to_string(),
                    change: Change::Removed,
                    script: f.script,
                });
            }
        }
        if old.symlinks != new.symlinks {
            entries.push(DiffEntry {
                path: "(symbolic links)".into(),
                change: Change::Changed,
                script: false,
            });
        }
        entries.sort_by(|a, b| {
            let rank = |e: &DiffEntry| !(e.script && e.change != Change::Removed);
            (rank(a), a.change, &a.path).cmp(&(rank(b), b.change, &b.path))
        });
        Diff { entries }
    }

    /// Scripts that are new or changed: the upgrade runs code not reviewed before.
    pub fn scripts_changed(&self) -> impl Iterator<Item = &DiffEntry> {
        self.entries
            .iter()
            .filter(|e| e.script && e.change != Change::Removed)
    }

    /// Nothing differs.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
