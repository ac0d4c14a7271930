//! The merge's short ways for what the host does not have: a directory of the host is
//! listed once instead of looked up name by name, a name it lacks lands with one rename
//! that refuses to replace anything, and a whole new directory whose every entry would
//! land as it is lands with one rename of the directory.
//!
//! None of this judges less: every entry of a new directory still passes the judge, with
//! the same path, before the directory moves; anything the entry-by-entry merge would
//! treat otherwise (held, refused, a git configuration to check, a whiteout, a socket, a
//! special file, a directory too deep, a directory carrying extended attributes: overlayfs
//! metadata, an ACL) sends the directory back to it. A name the host makes after it was listed makes the rename fail (`EEXIST`), and
//! the entry-by-entry merge then judges it as the host's change.

use super::{DIR_FLAGS, MAX_DEPTH, Merger, errno, kind_of, merged_mode, names, narrow_file_mode};
use crate::error::SandboxError;
use cordon_policy::planted::{Leave, LeftKind};
use rustix::fs::{AtFlags, Dir, FileType, Mode, RenameFlags};
use rustix::io::Errno;
use std::collections::HashSet;
use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// A layer directory with at least this many entries has its host side listed once.
pub(super) const LIST_HOST_FROM: usize = 8;

/// The names in a host directory, read once.
pub(super) struct HostListing(HashSet<Vec<u8>>);

impl HostListing {
    /// The names in `dir`; `None` when it cannot be read (then every name is looked up).
    pub(super) fn of(dir: BorrowedFd<'_>) -> Option<HostListing> {
        let mut set = HashSet::new();
        for e in Dir::read_from(dir).ok()? {
            let e = e.ok()?;
            let n = e.file_name().to_bytes();
            if n != b"." && n != b".." {
                set.insert(n.to_vec());
            }
        }
        Some(HostListing(set))
    }

    /// Whether the host had `name` when listed.
    pub(super) fn has(&self, name: &[u8]) -> bool {
        self.0.contains(name)
    }
}

/// Whether the host's `dir` lacks `name`: only when a look says there is no such name
/// (any other failure, a denied search, leaves it to the general way).
pub(super) fn absent_at(dir: BorrowedFd<'_>, name: &[u8]) -> bool {
    matches!(
        rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW),
        Err(Errno::NOENT)
    )
}

/// Whether a directory with the extended attribute `name` must take the entry-by-entry
/// way, which makes a fresh host directory instead of moving the layer's: anything but
/// the security module's label (overlayfs's own marks, an ACL that would open what the
/// host later creates in it to others, a name the run set).
fn keeps_dir_out(name: &[u8]) -> bool {
    !name.is_empty() && !name.starts_with(b"security.")
}

impl Merger<'_> {
    /// Land the layer's `name` (a file or symlink already judged to land) at `name` of
    /// `dst`, which the host did not have when listed: one rename that replaces nothing.
    /// `false` when it must take the general way (the host made the name meanwhile, or
    /// the layer is on another file system).
    pub(super) fn land_absent(
        &mut self,
        up: BorrowedFd<'_>,
        dst: BorrowedFd<'_>,
        name: &[u8],
        path: &Path,
        change: &str,
    ) -> Result<bool, SandboxError> {
        #[cfg(test)]
        super::tests::fail_point()?;
        #[cfg(test)]
        super::fast_tests::race_point(dst, name);
        match rustix::fs::renameat_with(up, name, dst, name, RenameFlags::NOREPLACE) {
            Ok(()) => {
                self.landed(path.to_path_buf(), change, None);
                Ok(true)
            }
            // EINVAL: a file system without RENAME_NOREPLACE.
            Err(Errno::EXIST | Errno::XDEV | Errno::INVAL) => Ok(false),
            Err(e) => Err(SandboxError::io(
                format!("cannot merge {}", path.display()),
                e.into(),
            )),
        }
    }

    /// Land the new directory `name` of `up` (at `path`, of `mode`), which the host did
    /// not have when listed, with one rename, when every entry in it would land as it
    /// is. `false`: merge it entry by entry.
    pub(super) fn land_new_tree(
        &mut self,
        up: BorrowedFd<'_>,
        dst: BorrowedFd<'_>,
        name: &[u8],
        path: &Path,
        mode: u32,
        depth: usize,
    ) -> Result<bool, SandboxError> {
        if self.scope.files_only() || depth >= MAX_DEPTH {
            return Ok(false);
        }
        let Some(entries) = self.whole(up, name, path, mode, depth)? else {
            return Ok(false);
        };
        #[cfg(test)]
        super::tests::fail_point()?;
        #[cfg(test)]
        super::fast_tests::race_point(dst, name);
        match rustix::fs::renameat_with(up, name, dst, name, RenameFlags::NOREPLACE) {
            Ok(()) => {
                // Counted as the entry-by-entry merge counts a directory it made.
                self.report.merged += entries;
                self.landed(path.to_path_buf(), "dir", Some(entries));
                Ok(true)
            }
            Err(Errno::EXIST | Errno::XDEV | Errno::INVAL) => Ok(false),
            Err(e) => Err(SandboxError::io(
                format!("cannot merge {}", path.display()),
                e.into(),
            )),
        }
    }

    /// How many entries the directory `name` of `up` holds (at any depth), when each
    /// would land as it is; modes are narrowed in the layer as the merge narrows them.
    /// `None` when one would not. The walk goes on past such an entry, so that each of
    /// the directories below is judged once and remembered: the entry-by-entry merge
    /// that follows lands the whole ones among them without walking them again.
    fn whole(
        &mut self,
        up: BorrowedFd<'_>,
        name: &[u8],
        path: &Path,
        mode: u32,
        depth: usize,
    ) -> Result<Option<u64>, SandboxError> {
        if let Some(known) = self.scanned.get(path) {
            return Ok(*known);
        }
        let found = self.walk(up, name, path, mode, depth)?;
        self.scanned.insert(path.to_path_buf(), found);
        Ok(found)
    }

    fn walk(
        &mut self,
        up: BorrowedFd<'_>,
        name: &[u8],
        path: &Path,
        mode: u32,
        depth: usize,
    ) -> Result<Option<u64>, SandboxError> {
        if depth >= MAX_DEPTH {
            return Ok(None);
        }
        let dir = rustix::fs::openat(up, name, DIR_FLAGS, Mode::empty()).map_err(errno(
            format_args!("cannot open the change to {}", path.display()),
        ))?;
        let mut whole = true;
        let mut attrs = vec![0u8; 1024];
        match rustix::fs::flistxattr(&dir, &mut attrs[..]) {
            Ok(n) => whole &= !attrs[..n].split(|b| *b == 0).any(keeps_dir_out),
            Err(Errno::NOTSUP) => {}
            // Too many to list here, or unreadable: the general way reads what it needs.
            Err(_) => whole = false,
        }
        let mut count = 0u64;
        for n in names(dir.as_fd())? {
            let p = path.join(OsStr::from_bytes(&n));
            let st = rustix::fs::statat(&dir, n.as_slice(), AtFlags::SYMLINK_NOFOLLOW).map_err(
                errno(format_args!("cannot inspect the change to {}", p.display())),
            )?;
            let (kind, ft) = kind_of(st.st_mode);
            if matches!(kind, LeftKind::Other) {
                // A whiteout, a socket, a device or a fifo: the general way decides.
                whole = false;
                continue;
            }
            if kind == LeftKind::File && st.st_nlink > 1 {
                // A file with another name in the layer: moved whole, both names would
                // land as one inode; the general way copies each name apart.
                whole = false;
                continue;
            }
            let leave = self
                .judge
                .entry_known(dir.as_fd(), None, Some(false), &p, &n, kind);
            if leave != Leave::Keep {
                whole = false;
                continue;
            }
            if ft == FileType::Directory {
                match self.whole(dir.as_fd(), &n, &p, st.st_mode, depth + 1)? {
                    Some(c) => count += c + 1,
                    None => whole = false,
                }
                continue;
            }
            if kind == LeftKind::File {
                narrow_file_mode(dir.as_fd(), &n, st.st_mode, &p)?;
            }
            count += 1;
        }
        if !whole {
            return Ok(None);
        }
        // The mode the entry-by-entry merge gives a directory it makes.
        let narrowed = merged_mode(mode, true);
        if mode & 0o7777 != narrowed {
            rustix::fs::fchmod(&dir, Mode::from_raw_mode(narrowed)).map_err(errno(
                format_args!("cannot set the mode of {}", path.display()),
            ))?;
        }
        Ok(Some(count))
    }
}
