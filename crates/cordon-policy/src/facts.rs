//! File-system facts, read through a trait so the decision core stays pure.
//!
//! The policy needs to know whether a path exists, whether it is a symlink and to where,
//! and how many hard links a file has; it also reads a few small config files (a
//! repository's `.git/config`). [`RealFs`] answers from the running system, [`FakeFs`]
//! from a table, so every path class can be tested without touching the disk.
//!
//! This module must never write, and never follow a symlink on the caller's behalf: the
//! resolution of links is the policy's own job (see `paths`), done one component at a time.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What kind of file a path names, without following a final symlink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (not followed).
    Symlink,
    /// A device, FIFO, socket or anything else.
    Other,
}

/// The facts the policy uses about one path (as `lstat` sees it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileMeta {
    /// The kind of file, final symlink not followed.
    pub kind: FileKind,
    /// Number of hard links (1 for an ordinary file).
    pub nlink: u64,
}

/// Read-only questions the policy may ask about the file system.
pub trait FileFacts {
    /// `lstat(path)`: `None` when the path does not exist or cannot be examined.
    fn metadata(&self, path: &Path) -> Option<FileMeta>;
    /// `readlink(path)`: `None` when it is not a symlink or cannot be read.
    fn read_link(&self, path: &Path) -> Option<PathBuf>;
    /// The contents of a small regular file, or `None` when it is missing, not a regular
    /// file, unreadable, or larger than `limit` bytes.
    fn read_small_file(&self, path: &Path, limit: u64) -> Option<Vec<u8>>;
    /// The facts of the absolute `path` when it exists and no component of it (the last
    /// included) is a symbolic link, found in one step; `None` when that is not so or
    /// not known (a link on the way, a missing component, an error, no such step here),
    /// and the caller walks the path one component at a time instead. An answer must
    /// mean exactly that the walk would find no link and end on this file.
    fn plain_metadata(&self, _path: &Path) -> Option<FileMeta> {
        None
    }
    /// The device and inode of the file `path` names (final symlink not followed):
    /// two paths with the same pair are one file. `None` when not known.
    fn file_id(&self, _path: &Path) -> Option<(u64, u64)> {
        None
    }
    /// The names in directory `path`, or `None` when it cannot be listed.
    fn list_dir(&self, _path: &Path) -> Option<Vec<std::ffi::OsString>> {
        None
    }
}

/// The real file system of the running process.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealFs;

impl FileFacts for RealFs {
    fn metadata(&self, path: &Path) -> Option<FileMeta> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::symlink_metadata(path).ok()?;
        let ft = m.file_type();
        let kind = if ft.is_symlink() {
            FileKind::Symlink
        } else if ft.is_dir() {
            FileKind::Dir
        } else if ft.is_file() {
            FileKind::File
        } else {
            FileKind::Other
        };
        Some(FileMeta {
            kind,
            nlink: m.nlink(),
        })
    }

    fn read_link(&self, path: &Path) -> Option<PathBuf> {
        std::fs::read_link(path).ok()
    }

    /// One `openat2(O_PATH, RESOLVE_NO_SYMLINKS)` and an `fstat`: the kernel walks the
    /// path once and refuses any link on the way (magic links such as `/proc/self/cwd`
    /// included), where the walk would `lstat` every prefix. Any failure (a link, a
    /// missing component, no `openat2` on this kernel or under this seccomp filter) is
    /// `None`, and the walk decides.
    fn plain_metadata(&self, path: &Path) -> Option<FileMeta> {
        use rustix::fs::{FileType, Mode, OFlags, ResolveFlags};
        if !path.is_absolute() {
            return None;
        }
        let fd = rustix::fs::openat2(
            rustix::fs::CWD,
            path,
            OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
            ResolveFlags::NO_SYMLINKS,
        )
        .ok()?;
        let st = rustix::fs::fstat(&fd).ok()?;
        let kind = match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => FileKind::File,
            FileType::Directory => FileKind::Dir,
            // Never reached: the flags refuse a link.
            FileType::Symlink => return None,
            _ => FileKind::Other,
        };
        Some(FileMeta {
            kind,
            nlink: st.st_nlink,
        })
    }

    fn file_id(&self, path: &Path) -> Option<(u64, u64)> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::symlink_metadata(path).ok()?;
        Some((m.dev(), m.ino()))
    }

    fn list_dir(&self, path: &Path) -> Option<Vec<std::ffi::OsString>> {
        let rd = std::fs::read_dir(path).ok()?;
        Some(rd.filter_map(|e| e.ok().map(|e| e.file_name())).collect())
    }

    fn read_small_file(&self, path: &Path, limit: u64) -> Option<Vec<u8>> {
        // Never blocks on a FIFO planted where a config file is looked for.
        cordon_fs::read_regular(path, limit).ok()
    }
}

/// An in-memory file system for tests and benchmarks.
///
/// Paths are absolute. Parent directories of added entries are created implicitly.
#[derive(Debug, Clone, Default)]
pub struct FakeFs {
    entries: BTreeMap<PathBuf, FakeEntry>,
    next_ino: u64,
}

#[derive(Debug, Clone)]
enum FakeEntry {
    Dir,
    File {
        nlink: u64,
        contents: Vec<u8>,
        /// The inode: hard links made by [`FakeFs::hard_link`] share one.
        ino: u64,
    },
    Symlink(PathBuf),
}

impl FakeFs {
    /// An empty file system (only `/` exists).
    pub fn new() -> Self {
        let mut fs = FakeFs::default();
        fs.entries.insert(PathBuf::from("/"), FakeEntry::Dir);
        fs
    }

    fn add_parents(&mut self, path: &Path) {
        for a in path.ancestors().skip(1) {
            self.entries
                .entry(a.to_path_buf())
                .or_insert(FakeEntry::Dir);
        }
    }

    /// Add a directory.
    pub fn dir(mut self, path: impl AsRef<Path>) -> Self {
        let p = path.as_ref();
        self.add_parents(p);
        self.entries.insert(p.to_path_buf(), FakeEntry::Dir);
        self
    }

    /// Add a regular file with one link.
    pub fn file(self, path: impl AsRef<Path>) -> Self {
        self.file_with(path, 1, b"")
    }

    /// Add a regular file with a link count and contents.
    pub fn file_with(mut self, path: impl AsRef<Path>, nlink: u64, contents: &[u8]) -> Self {
        let p = path.as_ref();
        self.add_parents(p);
        self.next_ino += 1;
        let ino = self.next_ino;
        self.entries.insert(
            p.to_path_buf(),
            FakeEntry::File {
                nlink,
                contents: contents.to_vec(),
                ino,
            },
        );
        self
    }

    /// Add `path` as a hard link of the regular file `existing`: one file with two
    /// names, its link count raised on both. Nothing happens when `existing` is not a
    /// regular file.
    pub fn hard_link(mut self, path: impl AsRef<Path>, existing: impl AsRef<Path>) -> Self {
        let Some(FakeEntry::File { ino, .. }) = self.entries.get(existing.as_ref()).cloned() else {
            return self;
        };
        let p = path.as_ref();
        self.add_parents(p);
        let same = self
            .entries
            .values()
            .filter(|e| matches!(e, FakeEntry::File { ino: i, .. } if *i == ino))
            .count() as u64;
        let contents = match self.entries.get(existing.as_ref()) {
            Some(FakeEntry::File { contents, .. }) => contents.clone(),
            _ => Vec::new(),
        };
        self.entries.insert(
            p.to_path_buf(),
            FakeEntry::File {
                nlink: same + 1,
                contents,
                ino,
            },
        );
        for e in self.entries.values_mut() {
            if let FakeEntry::File { nlink, ino: i, .. } = e
                && *i == ino
            {
                *nlink = same + 1;
            }
        }
        self
    }

    /// Add a symlink at `path` whose target text is `target`.
    pub fn symlink(mut self, path: impl AsRef<Path>, target: impl AsRef<Path>) -> Self {
        let p = path.as_ref();
        self.add_parents(p);
        self.entries.insert(
            p.to_path_buf(),
            FakeEntry::Symlink(target.as_ref().to_path_buf()),
        );
        self
    }
}

impl FileFacts for FakeFs {
    fn metadata(&self, path: &Path) -> Option<FileMeta> {
        Some(match self.entries.get(path)? {
            FakeEntry::Dir => FileMeta {
                kind: FileKind::Dir,
                nlink: 1,
            },
            FakeEntry::File { nlink, .. } => FileMeta {
                kind: FileKind::File,
                nlink: *nlink,
            },
            FakeEntry::Symlink(_) => FileMeta {
                kind: FileKind::Symlink,
                nlink: 1,
            },
        })
    }

    fn read_link(&self, path: &Path) -> Option<PathBuf> {
        match self.entries.get(path)? {
            FakeEntry::Symlink(t) => Some(t.clone()),
            _ => None,
        }
    }

    /// What the kernel's `RESOLVE_NO_SYMLINKS` lookup would say: every prefix a
    /// directory, nothing a link, `..` taken after the directory it leaves.
    fn plain_metadata(&self, path: &Path) -> Option<FileMeta> {
        use std::path::Component;
        if !path.is_absolute() {
            return None;
        }
        let mut cur = PathBuf::from("/");
        for c in path.components() {
            if !matches!(self.entries.get(&cur)?, FakeEntry::Dir) {
                return None;
            }
            match c {
                Component::Normal(s) => cur.push(s),
                Component::ParentDir => {
                    cur.pop();
                }
                _ => {}
            }
            if matches!(self.entries.get(&cur)?, FakeEntry::Symlink(_)) {
                return None;
            }
        }
        self.metadata(&cur)
    }

    fn file_id(&self, path: &Path) -> Option<(u64, u64)> {
        match self.entries.get(path)? {
            FakeEntry::File { ino, .. } => Some((1, *ino)),
            _ => None,
        }
    }

    fn list_dir(&self, path: &Path) -> Option<Vec<std::ffi::OsString>> {
        if !matches!(self.entries.get(path)?, FakeEntry::Dir) {
            return None;
        }
        Some(
            self.entries
                .keys()
                .filter(|k| k.parent() == Some(path))
                .filter_map(|k| k.file_name().map(|n| n.to_os_string()))
                .collect(),
        )
    }

    fn read_small_file(&self, path: &Path, limit: u64) -> Option<Vec<u8>> {
        match self.entries.get(path)? {
            FakeEntry::File { contents, .. } if contents.len() as u64 <= limit => {
                Some(contents.clone())
            }
            _ => None,
        }
    }
}
