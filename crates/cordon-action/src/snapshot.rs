//! What the writable directories of a run held, to tell afterwards which files a run
//! changed beyond the paths its request declared. The sandbox makes whole directories
//! writable; this makes an undeclared change beside a declared path visible (and
//! recorded) rather than silent. It reads metadata only.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Most entries a snapshot records; past this the comparison says it is incomplete.
const MAX_ENTRIES: usize = 200_000;

/// The metadata of every entry beneath some directories.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    entries: BTreeMap<PathBuf, (u64, u64, i64, i64, u32)>,
    /// More entries than the snapshot records.
    pub truncated: bool,
}

impl Snapshot {
    /// Record everything beneath `dirs` (symbolic links are recorded, not followed).
    pub fn take(dirs: &[PathBuf]) -> Snapshot {
        let mut s = Snapshot::default();
        let mut stack: Vec<PathBuf> = dirs.to_vec();
        while let Some(dir) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in rd.flatten() {
                if s.entries.len() >= MAX_ENTRIES {
                    s.truncated = true;
                    return s;
                }
                let p = e.path();
                let Ok(m) = std::fs::symlink_metadata(&p) else {
                    continue;
                };
                s.entries.insert(
                    p.clone(),
                    (m.ino(), m.size(), m.mtime(), m.mtime_nsec(), m.mode()),
                );
                if m.is_dir() {
                    stack.push(p);
                }
            }
        }
        s
    }

    /// Paths created, changed or removed between `self` and `after`, other than
    /// `declared` and the directories that hold them.
    pub fn undeclared_changes(&self, after: &Snapshot, declared: &[PathBuf]) -> Vec<PathBuf> {
        let allowed = |p: &Path| declared.iter().any(|d| d == p || d.starts_with(p));
        let mut out = Vec::new();
        for (p, meta) in &after.entries {
            if self.entries.get(p) != Some(meta) && !allowed(p) {
                out.push(p.clone());
            }
        }
        for p in self.entries.keys() {
            if !after.entries.contains_key(p) && !allowed(p) {
                out.push(p.clone());
            }
        }
        out.sort();
        out
    }
}
