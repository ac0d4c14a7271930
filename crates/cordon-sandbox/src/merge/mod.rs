#![allow(clippy::disallowed_methods)]
//! Merging a run's copy-on-write layer back into the host's tree.
//!
//! Runs on the caller's side, after the command and every process of its sandbox are
//! gone, with the upper directory in a private change set (`changes.rs`) that nothing
//! else writes. Every step is relative to a directory descriptor opened without following
//! symlinks, so a symlink the host's tree acquired (or that the run left) never sends a
//! write elsewhere: a name is replaced, never written through. Each entry is judged by
//! [`cordon_policy::planted::judge_left`] first; what it refuses stays out of the host's
//! tree and is reported, and a git configuration file is merged only after `git config`
//! itself has parsed it and no key in it runs a program or redirects git.
//!
//! overlayfs records a deletion as a whiteout (a character device 0:0) and a directory
//! that replaced a deleted one as *opaque* (`user.overlay.opaque`); both are honoured.
//! A layer holding overlayfs metadata that cordon does not merge (redirects, metacopy)
//! refuses that entry instead of guessing. Set-user-ID and set-group-ID bits are dropped
//! from merged files.
//!
//! A run may be given an allowlist ([`merge_layer_only`]): then only the listed paths
//! (and what lies beneath them) reach the host's tree, the directories leading to them
//! are entered without taking their mode or opacity from the layer, and every other
//! change stays in the layer, where `cordon changes` shows it to a human.

use crate::changes::Layer;
use crate::error::SandboxError;
use cordon_policy::planted::{Leave, LeftKind, judge_left};
use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::ffi::{CStr, OsStr};
use std::io::Write;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Directories deeper than this below a root are not merged (each level holds two
/// descriptors while it is merged).
pub const MAX_DEPTH: usize = 256;
/// The largest git configuration file checked (and so merged).
const MAX_GIT_CONFIG: u64 = 1 << 20;

/// One entry that stayed out of the host's tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// Where it would have gone on the host.
    pub path: PathBuf,
    /// Why, in one sentence.
    pub reason: String,
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
    /// What stayed out.
    pub refused: Vec<Refused>,
    /// Changes left in the layer because the allowlist does not name them.
    pub kept: Vec<PathBuf>,
    /// Changes left in the layer for review: a host tool would obey or run them.
    pub held: Vec<Refused>,
}

fn errno(what: impl std::fmt::Display) -> impl FnOnce(Errno) -> SandboxError {
    move |e| SandboxError::io(what.to_string(), std::io::Error::from(e))
}

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// Merge `layer`'s upper directory into its root. `home` is the host user's home, for
/// the start-up files the rules protect there. An error means the merge stopped part
/// way; what was not merged is still in the layer.
pub fn merge_layer(layer: &Layer, home: &Path) -> Result<MergeReport, SandboxError> {
    merge_with(layer, home, None)
}

/// [`merge_layer`] for the paths in `only` and what lies beneath them: every other
/// change stays in the layer (listed in [`MergeReport::kept`]).
pub fn merge_layer_only(
    layer: &Layer,
    home: &Path,
    only: &[PathBuf],
) -> Result<MergeReport, SandboxError> {
    merge_with(layer, home, Some(only))
}

fn merge_with(
    layer: &Layer,
    home: &Path,
    only: Option<&[PathBuf]>,
) -> Result<MergeReport, SandboxError> {
    let up = rustix::fs::open(&layer.upper, DIR_FLAGS, Mode::empty()).map_err(errno(
        format_args!("cannot open the run's changes in {}", layer.upper.display()),
    ))?;
    let root = rustix::fs::open(&layer.root, DIR_FLAGS, Mode::empty()).map_err(errno(
        format_args!(
            "cannot open {} to merge the run's changes (it must still be a directory, not a symlink)",
            layer.root.display()
        ),
    ))?;
    let mut m = Merger {
        home,
        only,
        report: MergeReport::default(),
    };
    m.dir(up.as_fd(), root.as_fd(), &layer.root, false, 0)?;
    Ok(m.report)
}

/// What [`Merger::subdir`] needs to know of a directory in the layer.
struct DirFacts {
    /// Its mode in the layer.
    mode: u32,
    /// It lies below a directory the run replaced.
    in_opaque: bool,
    /// It only leads to an allowed path: entered, never replaced or re-moded.
    passage: bool,
}

struct Merger<'a> {
    home: &'a Path,
    /// The allowlist, when the run has one.
    only: Option<&'a [PathBuf]>,
    report: MergeReport,
}

/// How the allowlist treats one path of the layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Allowed {
    /// Named (or beneath a named path): merged.
    Yes,
    /// A directory on the way to a named path.
    Passage,
    /// Not named: kept in the layer.
    No,
}

fn names(dir: BorrowedFd<'_>) -> Result<Vec<Vec<u8>>, SandboxError> {
    let mut out = Vec::new();
    let entries =
        Dir::read_from(dir).map_err(errno("cannot read a directory of the run's changes"))?;
    for e in entries {
        let e = e.map_err(errno("cannot read a directory of the run's changes"))?;
        let n = e.file_name().to_bytes();
        if n != b"." && n != b".." {
            out.push(n.to_vec());
        }
    }
    Ok(out)
}

fn kind_of(mode: u32) -> (LeftKind, FileType) {
    let ft = FileType::from_raw_mode(mode);
    let k = match ft {
        FileType::RegularFile => LeftKind::File,
        FileType::Directory => LeftKind::Dir,
        FileType::Symlink => LeftKind::Symlink,
        _ => LeftKind::Other,
    };
    (k, ft)
}

fn xattr(fd: BorrowedFd<'_>, name: &str) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; 256];
    match rustix::fs::fgetxattr(fd, name, &mut buf[..]) {
        Ok(n) => {
            buf.truncate(n);
            Some(buf)
        }
        Err(_) => None,
    }
}

impl Merger<'_> {
    fn refuse(&mut self, path: PathBuf, reason: impl Into<String>) {
        self.report.refused.push(Refused {
            path,
            reason: reason.into(),
        });
    }

    /// Merge the upper directory `up` into the host directory `dst` (at `at`). With
    /// `opaque`, `dst`'s entries that `up` does not have are removed: the run replaced
    /// the directory.
    fn dir(
        &mut self,
        up: BorrowedFd<'_>,
        dst: BorrowedFd<'_>,
        at: &Path,
        opaque: bool,
        depth: usize,
    ) -> Result<(), SandboxError> {
        let mine = names(up)?;
        if opaque {
            for name in names(dst)? {
                if !mine.contains(&name) {
                    remove_at(dst, &name, depth)?;
                    self.report.removed += 1;
                }
            }
        }
        for name in mine {
            self.entry(up, dst, at, &name, opaque, depth)?;
        }
        Ok(())
    }

    fn allowed(&self, path: &Path) -> Allowed {
        match self.only {
            None => Allowed::Yes,
            Some(only) if only.iter().any(|a| path.starts_with(a)) => Allowed::Yes,
            Some(only) if only.iter().any(|a| a.starts_with(path)) => Allowed::Passage,
            Some(_) => Allowed::No,
        }
    }

    fn entry(
        &mut self,
        up: BorrowedFd<'_>,
        dst: BorrowedFd<'_>,
        at: &Path,
        name: &[u8],
        in_opaque: bool,
        depth: usize,
    ) -> Result<(), SandboxError> {
        let path = at.join(OsStr::from_bytes(name));
        let st = rustix::fs::statat(up, name, AtFlags::SYMLINK_NOFOLLOW).map_err(errno(
            format_args!("cannot inspect the change to {}", path.display()),
        ))?;
        let (kind, ft) = kind_of(st.st_mode);
        let allowed = self.allowed(&path);
        if allowed == Allowed::No || (allowed == Allowed::Passage && kind != LeftKind::Dir) {
            // Left where it is: the layer keeps it for a human (`cordon changes`).
            if ft != FileType::Socket {
                self.report.kept.push(path);
            }
            return Ok(());
        }
        if ft == FileType::CharacterDevice && st.st_rdev == 0 {
            // A whiteout: the run deleted this entry.
            if exists_at(dst, name) {
                remove_at(dst, name, depth)?;
                self.report.removed += 1;
            }
            return Ok(());
        }
        if ft == FileType::Socket {
            // A socket is a rendezvous of the processes that are gone; nothing to keep.
            return Ok(());
        }
        let leave = judge_left(&path, kind, self.home);
        match leave {
            Leave::Refuse(reason) => {
                self.refuse(path, reason);
                return Ok(());
            }
            // Waits in the layer for a human (`cordon changes show`, then `apply`).
            Leave::Hold(reason) => {
                self.report.held.push(Refused { path, reason });
                return Ok(());
            }
            Leave::Keep | Leave::CheckGitConfig => {}
        }
        match kind {
            LeftKind::File => {
                if leave == Leave::CheckGitConfig
                    && let Some(reason) = check_git_config_at(up, name)
                {
                    self.refuse(path, reason);
                    return Ok(());
                }
                // Set-id bits never reach the host (as root, the run's files are root's),
                // nor a write bit for every user (another user could then plant code).
                let mode = Mode::from_raw_mode(merged_mode(st.st_mode, false));
                if st.st_mode & 0o6002 != 0 {
                    rustix::fs::chmodat(up, name, mode, AtFlags::empty()).map_err(errno(
                        format_args!("cannot clear the set-id bits of {}", path.display()),
                    ))?;
                }
                self.place(up, dst, name, &path, depth, |m, up, dst, tmp| {
                    m.copy_file(up, name, dst, tmp, mode)
                })
            }
            LeftKind::Symlink => {
                let target = rustix::fs::readlinkat(up, name, Vec::new()).map_err(errno(
                    format_args!("cannot read the symlink {}", path.display()),
                ))?;
                self.place(up, dst, name, &path, depth, |_, _, dst, tmp| {
                    rustix::fs::symlinkat(target.as_c_str(), dst, tmp)
                        .map_err(errno("cannot create a symlink"))
                })
            }
            LeftKind::Dir => {
                let facts = DirFacts {
                    mode: st.st_mode,
                    in_opaque,
                    passage: allowed == Allowed::Passage,
                };
                self.subdir(up, dst, &path, name, facts, depth)
            }
            LeftKind::Other => {
                self.refuse(path, "only files, directories and symlinks are merged");
                Ok(())
            }
        }
    }

    /// Put the non-directory `name` of `up` at `name` in `dst`: a rename on the same
    /// file system, otherwise `make` writes it under a temporary name that is renamed
    /// over. A directory in the way (the run replaced it) is removed first.
    fn place(
        &mut self,
        up: BorrowedFd<'_>,
        dst: BorrowedFd<'_>,
        name: &[u8],
        path: &Path,
        depth: usize,
        make: impl FnOnce(&mut Self, BorrowedFd<'_>, BorrowedFd<'_>, &CStr) -> Result<(), SandboxError>,
    ) -> Result<(), SandboxError> {
        if is_dir_at(dst, name) {
            remove_at(dst, name, depth)?;
        }
        match rustix::fs::renameat(up, name, dst, name) {
            Ok(()) => {
                self.report.merged += 1;
                return Ok(());
            }
            Err(Errno::XDEV) => {}
            Err(e) => {
                return Err(SandboxError::io(
                    format!("cannot merge {}", path.display()),
                    e.into(),
                ));
            }
        }
        let tmp = temp_name(name);
        let _ = rustix::fs::unlinkat(dst, tmp.as_c_str(), AtFlags::empty());
        make(self, up, dst, &tmp)?;
        rustix::fs::renameat(dst, tmp.as_c_str(), dst, name).map_err(|e| {
            let _ = rustix::fs::unlinkat(dst, tmp.as_c_str(), AtFlags::empty());
            SandboxError::io(format!("cannot merge {}", path.display()), e.into())
        })?;
        self.report.merged += 1;
        Ok(())
    }

    fn copy_file(
        &mut self,
        up: BorrowedFd<'_>,
        name: &[u8],
        dst: BorrowedFd<'_>,
        tmp: &CStr,
        mode: Mode,
    ) -> Result<(), SandboxError> {
        let from = rustix::fs::openat(
            up,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(errno("cannot open a changed file"))?;
        let to = rustix::fs::openat(
            dst,
            tmp,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )
        .map_err(errno("cannot create a file to merge into"))?;
        let mut from = std::fs::File::from(from);
        let mut to = std::fs::File::from(to);
        let n = std::io::copy(&mut from, &mut to)
            .map_err(|e| SandboxError::io("cannot copy a changed file", e))?;
        to.flush()
            .map_err(|e| SandboxError::io("cannot copy a changed file", e))?;
        rustix::fs::fchmod(&to, mode).map_err(errno("cannot set a merged file's mode"))?;
        self.report.copied_bytes += n;
        Ok(())
    }

    fn subdir(
        &mut self,
        up: BorrowedFd<'_>,
        dst: BorrowedFd<'_>,
        path: &Path,
        name: &[u8],
        DirFacts {
            mode,
            in_opaque,
            passage,
        }: DirFacts,
        depth: usize,
    ) -> Result<(), SandboxError> {
        if depth >= MAX_DEPTH {
            self.refuse(
                path.to_path_buf(),
                format!("it is deeper than {MAX_DEPTH} directories"),
            );
            return Ok(());
        }
        let up_child = rustix::fs::openat(up, name, DIR_FLAGS, Mode::empty()).map_err(errno(
            format_args!("cannot open the change to {}", path.display()),
        ))?;
        for unsupported in ["user.overlay.redirect", "user.overlay.metacopy"] {
            if xattr(up_child.as_fd(), unsupported).is_some() {
                self.refuse(
                    path.to_path_buf(),
                    "the copy-on-write layer recorded a move that cordon does not merge",
                );
                return Ok(());
            }
        }
        // Below a directory the run replaced, every directory is the run's alone: what
        // the host has there and the layer does not was gone in the run's view too.
        // A passage never removes what the host has beside the allowed path.
        let opaque = !passage
            && (in_opaque
                || xattr(up_child.as_fd(), "user.overlay.opaque").is_some_and(|v| v == b"y"));
        // What a passage leads to leaves the layer now; were the directory still marked
        // replaced, a later merge of the rest (`cordon changes merge`) would remove it
        // from the host again. Unmarked, that merge only adds what was kept.
        if passage
            && xattr(up_child.as_fd(), "user.overlay.opaque").is_some()
            && rustix::fs::fremovexattr(&up_child, "user.overlay.opaque").is_err()
        {
            self.refuse(
                path.to_path_buf(),
                "the run replaced this directory and cordon cannot unmark it; merge the rest of its changes by hand",
            );
            return Ok(());
        }
        let (dst_child, existed) = open_or_make_dir(dst, name, path, depth)?;
        self.dir(
            up_child.as_fd(),
            dst_child.as_fd(),
            path,
            opaque && existed,
            depth + 1,
        )?;
        if !existed {
            self.report.merged += 1;
        }
        if passage && existed {
            return Ok(());
        }
        rustix::fs::fchmod(&dst_child, Mode::from_raw_mode(merged_mode(mode, true))).map_err(errno(
            format_args!("cannot set the mode of {}", path.display()),
        ))
    }
}

/// The mode a merged entry gets: no set-user-ID bit, no set-group-ID bit on a file, and
/// no write bit for others unless a directory is sticky (as `/tmp` is).
fn merged_mode(mode: u32, dir: bool) -> u32 {
    if dir {
        let m = mode & 0o3777;
        if m & 0o1000 == 0 { m & !0o002 } else { m }
    } else {
        mode & 0o1775
    }
}

/// Open `name` in `dst` as a directory, replacing a file or symlink there by a new
/// directory. Returns whether a directory was already there.
fn open_or_make_dir(
    dst: BorrowedFd<'_>,
    name: &[u8],
    path: &Path,
    depth: usize,
) -> Result<(OwnedFd, bool), SandboxError> {
    match rustix::fs::openat(dst, name, DIR_FLAGS, Mode::empty()) {
        Ok(fd) => return Ok((fd, true)),
        Err(Errno::NOENT) => {}
        // A file or a symlink is in the way: the run replaced it by a directory.
        Err(Errno::NOTDIR | Errno::LOOP) => remove_at(dst, name, depth)?,
        Err(e) => {
            return Err(SandboxError::io(
                format!("cannot open {}", path.display()),
                e.into(),
            ));
        }
    }
    // Private until its contents are in; its mode is set afterwards.
    rustix::fs::mkdirat(dst, name, Mode::from_raw_mode(0o700))
        .map_err(errno(format_args!("cannot create {}", path.display())))?;
    let fd = rustix::fs::openat(dst, name, DIR_FLAGS, Mode::empty())
        .map_err(errno(format_args!("cannot open {}", path.display())))?;
    Ok((fd, false))
}

fn exists_at(dir: BorrowedFd<'_>, name: &[u8]) -> bool {
    rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).is_ok()
}

fn is_dir_at(dir: BorrowedFd<'_>, name: &[u8]) -> bool {
    rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Directory)
}

fn temp_name(name: &[u8]) -> std::ffi::CString {
    let mut t = b".cordon-merge-".to_vec();
    t.extend_from_slice(&name[..name.len().min(200)]);
    // A name from a directory entry has no NUL byte.
    std::ffi::CString::new(t).unwrap_or_default()
}

/// Remove `name` from `dir` without following symlinks; a directory with everything in
/// it (made searchable first when the run or the host left it otherwise).
pub(crate) fn remove_at(
    dir: BorrowedFd<'_>,
    name: &[u8],
    depth: usize,
) -> Result<(), SandboxError> {
    match rustix::fs::unlinkat(dir, name, AtFlags::empty()) {
        Ok(()) | Err(Errno::NOENT) => return Ok(()),
        Err(Errno::ISDIR) => {}
        Err(e) => {
            return Err(SandboxError::io(
                "cannot remove an entry the run deleted",
                e.into(),
            ));
        }
    }
    if depth >= MAX_DEPTH * 4 {
        return Err(SandboxError::setup(
            "a directory the run deleted is too deep to remove",
        ));
    }
    let child = match rustix::fs::openat(dir, name, DIR_FLAGS, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::ACCESS) => {
            rustix::fs::chmodat(dir, name, Mode::from_raw_mode(0o700), AtFlags::empty())
                .map_err(errno("cannot open a directory the run deleted"))?;
            rustix::fs::openat(dir, name, DIR_FLAGS, Mode::empty())
                .map_err(errno("cannot open a directory the run deleted"))?
        }
        Err(e) => {
            return Err(SandboxError::io(
                "cannot open a directory the run deleted",
                e.into(),
            ));
        }
    };
    let _ = rustix::fs::fchmod(&child, Mode::from_raw_mode(0o700));
    for n in names(child.as_fd())? {
        remove_at(child.as_fd(), &n, depth + 1)?;
    }
    rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)
        .map_err(errno("cannot remove a directory the run deleted"))
}

mod gitcheck;
mod preview;

use gitcheck::check_git_config_at;
pub use gitcheck::git_config_refusal;
pub use preview::{Pending, preview_layer};

#[cfg(test)]
mod tests;
