//! Hard links to guarded files.
//!
//! A file with more than one hard link is one file under several names: `key.txt` in
//! the workspace and `~/.ssh/id_rsa` can be the same inode, and reading either reads the
//! key. The guards match names, so a path whose file has more than one link is compared
//! by device and inode with the guarded files that exist, and judged as the guarded
//! file it is. Only such paths pay for it (an ordinary file has one link), and the
//! guarded files are listed once per decision: each guarded name under HOME and in
//! `/etc` is examined, and a guarded directory is walked a few levels deep within a
//! bound. Symbolic links are never followed here (the path walk handles them).
//!
//! Reads only, through [`FileFacts`]: never writes.

use std::path::{Path, PathBuf};

use crate::facts::{FileFacts, FileKind};
use crate::guards;

/// How deep a guarded directory is walked (`~/.gnupg/private-keys-v1.d/X.key` is 2).
const MAX_DEPTH: usize = 4;
/// How many entries are examined in all, so a large browser profile stays cheap.
const MAX_ENTRIES: usize = 4096;

/// The guarded files that exist, by (device, inode).
#[derive(Debug, Default)]
pub struct GuardedFiles {
    files: Vec<((u64, u64), PathBuf)>,
}

impl GuardedFiles {
    /// List the guarded files under `home` and the system's secret files.
    pub fn list(home: &Path, fs: &dyn FileFacts) -> Self {
        let mut out = GuardedFiles::default();
        let mut budget = MAX_ENTRIES;
        let home_paths = guards::SENSITIVE_HOME_PATHS
            .iter()
            .chain(guards::PROTECTED_HOME_PATHS)
            .map(|p| home.join(p));
        let system = guards::SENSITIVE_SYSTEM_PATHS.iter().map(PathBuf::from);
        for p in home_paths.chain(system) {
            out.add(&p, fs, 0, &mut budget);
        }
        // The SSH server's host keys.
        let dir = Path::new(guards::SSH_HOST_KEY_DIR);
        for name in fs.list_dir(dir).unwrap_or_default() {
            if guards::is_ssh_host_key(&name) {
                out.add(&dir.join(name), fs, MAX_DEPTH, &mut budget);
            }
        }
        out
    }

    fn add(&mut self, path: &Path, fs: &dyn FileFacts, depth: usize, budget: &mut usize) {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        match fs.metadata(path).map(|m| m.kind) {
            Some(FileKind::File) => {
                if let Some(id) = fs.file_id(path) {
                    self.files.push((id, path.to_path_buf()));
                }
            }
            Some(FileKind::Dir) if depth < MAX_DEPTH => {
                for name in fs.list_dir(path).unwrap_or_default() {
                    self.add(&path.join(name), fs, depth + 1, budget);
                }
            }
            _ => {}
        }
    }

    /// The guarded file with this (device, inode), if one is listed.
    pub fn named(&self, id: (u64, u64)) -> Option<&Path> {
        self.files
            .iter()
            .find(|(i, _)| *i == id)
            .map(|(_, p)| p.as_path())
    }
}
