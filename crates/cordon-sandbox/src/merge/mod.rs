//! Merging a run's copy-on-write layer back into the host's tree.
//!
//! Runs on the caller's side, after the command and every process of its sandbox are
//! gone, with the upper directory in a private change set (`changes.rs`) that nothing
//! else writes. Every step is relative to a directory descriptor opened without following
//! symlinks, so a symlink the host's tree acquired (or that the run left) never sends a
//! write elsewhere: a name is replaced, never written through; and no path is ever
//! handed to the kernel whole, so no tree is too deep for `PATH_MAX`.
//!
//! **What may land.** Each entry is judged by [`cordon_policy::planted::judge_left`]
//! first: what it refuses stays out of the host's tree; what it holds (a host tool would
//! obey or run it without being asked) waits in the change set until a human reviews and
//! applies it ([`MergeOptions::reviewed`]); a git configuration file is merged only after
//! `git config` itself has parsed it. A symlink that leads out of its root is held too:
//! a later writer on the host (cordon included) would follow it.
//!
//! **Three-way.** The run saw each host entry as it was when the run first touched it,
//! which is after the run started ([`MergeOptions::horizon`]). A host entry whose change
//! time is at or after the start was changed by the host during the run: the host's
//! version wins, the run's stays in the change set, and the report lists the conflict
//! (it may also be a change the run saw; then nothing is lost either). So the merge
//! never deletes or overwrites what the run did not see: a file the host created in a
//! directory the run replaced is kept.
//!
//! **Progress is kept in the layer.** Every merged entry leaves the layer (a rename, or
//! a copy then an unlink), a whiteout is removed once honoured, a replaced directory is
//! unmarked once the host entries it no longer has are gone, and an emptied directory of
//! the layer is removed. What is left in the layer after a merge is exactly what did not
//! land, so a merge that stops part way (a full disk) leaves a change set that `cordon
//! changes apply` completes, never a half state it cannot finish.
//!
//! overlayfs records a deletion as a whiteout (a character device 0:0) and a directory
//! that replaced a deleted one as *opaque* (`user.overlay.opaque`); both are honoured.
//! A layer holding overlayfs metadata that cordon does not merge (redirects, metacopy)
//! refuses that entry instead of guessing. Set-user-ID and set-group-ID bits are dropped
//! from merged files.
//!
//! A run may be given an allowlist ([`MergeOptions::only`]): then only the listed paths
//! (and what lies beneath them) reach the host's tree, the directories leading to them
//! are entered without taking their mode or opacity from the layer, and every other
//! change stays in the layer, where `cordon changes` shows it to a human.
//!
//! A layer whose root is writable only for some files of it ([`Layer::files`]) is
//! merged as if with those files as the allowlist, whichever merge is asked for, and
//! stricter: each file is merged only as a regular file. A symlink there could send a
//! later writer elsewhere, a directory would grant a whole tree, and a removal is not a
//! write; each is refused.

use crate::changes::{Layer, Stamp};
use crate::error::SandboxError;
use cordon_policy::planted::{Leave, LeftKind};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};
use rustix::io::Errno;
use scope::{Allowed, Outcome, Scope};
use std::ffi::{CStr, OsStr};
use std::io::Write;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// Directories deeper than this below a root are not merged (each level holds two
/// descriptors while it is merged).
pub const MAX_DEPTH: usize = 256;
/// The largest git configuration file checked (and so merged).
const MAX_GIT_CONFIG: u64 = 1 << 20;
/// Paths listed one by one in a report; beyond, only counted.
pub const MAX_LISTED: usize = 10_000;

/// Merge `layer`'s upper directory into its root (see the module's documentation). An
/// error means the merge stopped part way; what was not merged is still in the layer,
/// and merging it again completes it.
pub fn merge(layer: &Layer, opts: &MergeOptions<'_>) -> Result<MergeReport, SandboxError> {
    let up = OwnedFd::from(cordon_fs::Dir::open_ambient(&layer.upper).map_err(|e| {
        SandboxError::io(
            format!("cannot open the run's changes in {}", layer.upper.display()),
            e.into(),
        )
    })?);
    let root = OwnedFd::from(cordon_fs::Dir::open_ambient(&layer.root).map_err(|e| {
        SandboxError::io(
            format!(
                "cannot open {} to merge the run's changes (it must still be a directory, not a symlink)",
                layer.root.display()
            ),
            e.into(),
        )
    })?);
    let mut m = Merger {
        opts,
        judge: judge::Judge::new(&layer.root, &layer.upper, opts.home, opts.horizon),
        scope: Scope::new(layer, opts.only),
        report: MergeReport::default(),
        quiet: 0,
        scanned: std::collections::HashMap::new(),
    };
    m.dir(up.as_fd(), root.as_fd(), &layer.root, 0)?;
    Ok(m.report)
}

/// What [`Merger::subdir`] needs to know of a directory in the layer.
struct DirFacts {
    /// Its mode in the layer.
    mode: u32,
    /// It only leads to an allowed path: entered, never replaced or re-moded.
    passage: bool,
}

struct Merger<'a> {
    opts: &'a MergeOptions<'a>,
    judge: judge::Judge<'a>,
    /// What the allowlist and a root writable only for some files let the merge touch.
    scope: Scope,
    report: MergeReport,
    /// Inside a directory the merge created: its entries are counted with it, not
    /// listed one by one.
    quiet: usize,
    /// New directories of the layer already walked by [`Merger::land_new_tree`]: how
    /// many entries each holds when every one would land as it is (`None`: not all).
    scanned: std::collections::HashMap<PathBuf, Option<u64>>,
}

/// Whether `st` (a host entry) changed after `horizon`: the host's own change, made
/// while the run went on. The horizon is taken finely and the command starts only once
/// the coarse clock has passed it (see `run/wait.rs`), so a change stamped at or before
/// it was made before the command could see anything, and the run saw it.
pub(crate) fn changed_since(st: &Stat, horizon: Stamp) -> bool {
    let nanos = i64::try_from(st.st_ctime_nsec).unwrap_or(i64::MAX);
    (st.st_ctime, nanos) > (horizon.secs, horizon.nanos)
}

/// Whether the symlink at `path` (in the root `root`) with `target` leads out of
/// `root`: absolute and elsewhere, or climbing out with `..`. Judged on the text, as a
/// later writer would follow it.
pub(crate) fn leads_out(path: &Path, target: &[u8], root: &Path) -> bool {
    let target = Path::new(OsStr::from_bytes(target));
    // `a/b/up/../x` goes wherever the link `a/b/up` leads, not to `a/b/x`: a `..` after a
    // named component cannot be judged on the text, so it counts as leading out.
    let mut named = false;
    for c in target.components() {
        match c {
            Component::Normal(_) => named = true,
            Component::ParentDir if named => return true,
            _ => {}
        }
    }
    let joined = if target.is_absolute() {
        target.to_path_buf()
    } else {
        path.parent().unwrap_or(root).join(target)
    };
    let mut clean = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                if !clean.pop() {
                    return true;
                }
            }
            Component::CurDir => {}
            other => clean.push(other),
        }
    }
    !clean.starts_with(root)
}

impl Merger<'_> {
    fn refuse(&mut self, path: PathBuf, reason: impl Into<String>) {
        self.report.refused.push(Refused {
            path,
            reason: reason.into(),
        });
    }

    fn conflict(&mut self, path: PathBuf, reason: impl Into<String>) {
        self.report.conflicts.push(Refused {
            path,
            reason: reason.into(),
        });
    }

    fn landed(&mut self, path: PathBuf, change: &str, entries: Option<u64>) {
        self.report.merged += u64::from(change != "delete");
        if self.quiet > 0 {
            return;
        }
        if self.report.landed.len() < MAX_LISTED {
            self.report.landed.push(Landed {
                path,
                change: change.to_string(),
                entries,
            });
        } else {
            self.report.unlisted += 1;
        }
    }

    fn removed(&mut self, path: PathBuf) {
        self.report.removed += 1;
        if self.quiet > 0 {
            return;
        }
        if self.report.landed.len() < MAX_LISTED {
            self.report.landed.push(Landed {
                path,
                change: "delete".into(),
                entries: None,
            });
        } else {
            self.report.unlisted += 1;
        }
    }

    /// The host's entry `name` in `dst`, when the host changed it during the run (and
    /// the merge does not overwrite such changes).
    fn host_changed(&self, dst: BorrowedFd<'_>, name: &[u8]) -> Option<Stat> {
        if self.opts.overwrite {
            return None;
        }
        rustix::fs::statat(dst, name, AtFlags::SYMLINK_NOFOLLOW)
            .ok()
            .filter(|st| changed_since(st, self.opts.horizon))
    }

    /// Merge the upper directory `up` into the host directory `dst` (at `at`).
    fn dir(
        &mut self,
        up: BorrowedFd<'_>,
        dst: BorrowedFd<'_>,
        at: &Path,
        depth: usize,
    ) -> Result<(), SandboxError> {
        let mine = names(up)?;
        // The host's side of the directory, listed once for many entries: a name it
        // does not have needs no look of its own (and lands with a rename that refuses
        // to replace, so one the host makes meanwhile is still caught). For a few
        // entries, or a host directory that cannot be listed, each name is looked up.
        let host = (mine.len() >= fast::LIST_HOST_FROM)
            .then(|| fast::HostListing::of(dst))
            .flatten();
        for name in mine {
            let absent = match &host {
                Some(h) => !h.has(&name),
                None => fast::absent_at(dst, &name),
            };
            self.entry(up, dst, at, &name, depth, absent)?;
        }
        Ok(())
    }

    /// Remove the host's `name` in `dst` that the run deleted, keeping (and reporting)
    /// whatever in it the host changed during the run.
    fn remove_seen(
        &mut self,
        dst: BorrowedFd<'_>,
        name: &[u8],
        path: &Path,
        depth: usize,
    ) -> Result<(), SandboxError> {
        let Ok(st) = rustix::fs::statat(dst, name, AtFlags::SYMLINK_NOFOLLOW) else {
            return Ok(());
        };
        // Deleting what the rules protect is judged like rewriting it.
        match self.judge.removal(path, kind_of(st.st_mode).0) {
            Leave::Refuse(reason) => {
                self.refuse(path.to_path_buf(), reason);
                return Ok(());
            }
            Leave::Hold(reason) if !self.opts.reviewed => {
                self.report.held.push(Refused {
                    path: path.to_path_buf(),
                    reason,
                });
                return Ok(());
            }
            Leave::Hold(_) | Leave::Keep | Leave::CheckGitConfig => {}
        }
        let is_dir = FileType::from_raw_mode(st.st_mode) == FileType::Directory;
        if !is_dir {
            if !self.opts.overwrite && changed_since(&st, self.opts.horizon) {
                self.report.spared.push(Refused {
                    path: path.to_path_buf(),
                    reason:
                        "the host made or changed it during the run, which deleted it; it was kept"
                            .into(),
                });
                return Ok(());
            }
            match rustix::fs::unlinkat(dst, name, AtFlags::empty()) {
                Ok(()) | Err(Errno::NOENT) => {}
                Err(e) => {
                    return Err(SandboxError::io(
                        format!("cannot remove {}, which the run deleted", path.display()),
                        e.into(),
                    ));
                }
            }
            self.removed(path.to_path_buf());
            return Ok(());
        }
        if !self.opts.overwrite && changed_since(&st, self.opts.horizon) {
            // Entries came or went, or it was moved here, while the run went on: what it
            // holds may be nothing the run saw (a moved directory keeps its files' old
            // change times). It stays whole.
            self.report.spared.push(Refused {
                path: path.to_path_buf(),
                reason: "the host changed this directory during the run, which deleted it; it was kept with everything in it".into(),
            });
            return Ok(());
        }
        if depth >= MAX_DEPTH * 4 {
            return Err(SandboxError::setup(format!(
                "{} is too deep to remove",
                path.display()
            )));
        }
        let child = open_dir_for_removal(dst, name, path)?;
        for n in names(child.as_fd())? {
            let p = path.join(OsStr::from_bytes(&n));
            let quiet = self.quiet;
            // Its entries are listed with it.
            self.quiet += 1;
            let r = self.remove_seen(child.as_fd(), &n, &p, depth + 1);
            self.quiet = quiet;
            r?;
        }
        match rustix::fs::unlinkat(dst, name, AtFlags::REMOVEDIR) {
            Ok(()) | Err(Errno::NOENT) => {
                self.removed(path.to_path_buf());
                Ok(())
            }
            // The host put something in it during the run: it stays, with what the host
            // added (reported one by one above).
            Err(Errno::NOTEMPTY | Errno::EXIST) => Ok(()),
            Err(e) => Err(SandboxError::io(
                format!("cannot remove {}, which the run deleted", path.display()),
                e.into(),
            )),
        }
    }

    /// Merge the layer's `name` of `up` into `dst` (at `at`). `absent`: the host did not
    /// have the name when looked (its listing, or a lookup); the verdicts are then reached
    /// without looking again, and a name the host makes before the entry is placed sends
    /// it back here to be judged as the host's (with `overwrite` the run's entry would
    /// otherwise replace the host's under a verdict reached for no entry at all).
    fn entry(
        &mut self,
        up: BorrowedFd<'_>,
        dst: BorrowedFd<'_>,
        at: &Path,
        name: &[u8],
        depth: usize,
        absent: bool,
    ) -> Result<(), SandboxError> {
        let path = at.join(OsStr::from_bytes(name));
        let st = rustix::fs::statat(up, name, AtFlags::SYMLINK_NOFOLLOW).map_err(errno(
            format_args!("cannot inspect the change to {}", path.display()),
        ))?;
        let (kind, ft) = kind_of(st.st_mode);
        if ft == FileType::Socket {
            // A socket is a rendezvous of the processes that are gone: nothing to keep,
            // refuse or show, whatever the scope (the preview skips it the same way).
            return Ok(());
        }
        let whiteout = ft == FileType::CharacterDevice && st.st_rdev == 0;
        let host = || {
            if absent {
                return None;
            }
            rustix::fs::statat(dst, name, AtFlags::SYMLINK_NOFOLLOW)
                .ok()
                .map(|h| FileType::from_raw_mode(h.st_mode))
        };
        let allowed = match self.scope.outcome(&path, kind, whiteout, host) {
            Outcome::Merge(allowed) => allowed,
            Outcome::Keep => {
                // Left where it is: the layer keeps it for a human (`cordon changes`).
                self.report.kept.push(path);
                return Ok(());
            }
            Outcome::Refuse(reason) => {
                self.refuse(path, reason);
                return Ok(());
            }
        };
        if whiteout {
            // A whiteout: the run deleted this entry.
            let judged = self.report.refused.len() + self.report.held.len();
            self.remove_seen(dst, name, &path, depth)?;
            let kept_out = self.report.refused.len() + self.report.held.len() > judged;
            // Honoured: the layer no longer needs it. Kept while the host's entry is
            // still there (a conflict, or a removal refused or held), for a later
            // `apply --overwrite` or a review.
            if exists_at(dst, name) && kept_out {
                self.report.spared.retain(|s| !s.path.starts_with(&path));
            } else if exists_at(dst, name) {
                self.report.spared.retain(|s| !s.path.starts_with(&path));
                self.conflict(
                    path,
                    "the host changed it during the run, which deleted it; the host's version was kept",
                );
            } else {
                let _ = rustix::fs::unlinkat(up, name, AtFlags::empty());
            }
            return Ok(());
        }
        let host_has = absent.then_some(false);
        let leave = self
            .judge
            .entry_known(up, Some(dst), host_has, &path, name, kind);
        match leave {
            Leave::Refuse(reason) if reason == cordon_policy::planted::COMPILED_CACHE => {
                self.report.caches += 1;
                return Ok(());
            }
            Leave::Refuse(reason) => {
                self.refuse(path, reason);
                return Ok(());
            }
            // Waits in the layer for a human (`cordon changes show`, then `apply`).
            Leave::Hold(reason) if !self.opts.reviewed => {
                self.report.held.push(Refused { path, reason });
                return Ok(());
            }
            Leave::Hold(_) | Leave::Keep | Leave::CheckGitConfig => {}
        }
        // Set-id and sticky bits never reach the host (as root, the run's files are
        // root's), nor a write bit for the group or others (another user could then plant
        // code).
        let mode = if kind == LeftKind::File {
            narrow_file_mode(up, name, st.st_mode, &path)?
        } else {
            Mode::from_raw_mode(merged_mode(st.st_mode, false))
        };
        // A file with other names in the layer is copied, never moved: a rename would land
        // one inode under several names, and a later write on the host to an ordinary one
        // would rewrite a protected one (`ln .git/config notes.txt`).
        let linked = kind == LeftKind::File && st.st_nlink > 1;
        if absent && kind != LeftKind::Other {
            // The short ways (`fast.rs`): one rename that replaces nothing.
            let landed = match kind {
                LeftKind::File => !linked && self.land_absent(up, dst, name, &path, "write")?,
                LeftKind::Symlink => self.land_absent(up, dst, name, &path, "symlink")?,
                _ => {
                    allowed == Allowed::Yes
                        && self.land_new_tree(up, dst, name, &path, st.st_mode, depth)?
                }
            };
            if landed {
                return Ok(());
            }
            if exists_at(dst, name) {
                return self.entry(up, dst, at, name, depth, false);
            }
        }
        match kind {
            LeftKind::File => self.place(
                up,
                dst,
                name,
                &path,
                depth,
                "write",
                linked,
                |m, up, dst, tmp| m.copy_file(up, name, dst, tmp, mode),
            ),
            LeftKind::Symlink => {
                let target = rustix::fs::readlinkat(up, name, Vec::new()).map_err(errno(
                    format_args!("cannot read the symlink {}", path.display()),
                ))?;
                self.place(
                    up,
                    dst,
                    name,
                    &path,
                    depth,
                    "symlink",
                    false,
                    |_, _, dst, tmp| {
                        rustix::fs::symlinkat(target.as_c_str(), dst, tmp)
                            .map_err(errno("cannot create a symlink"))
                    },
                )
            }
            LeftKind::Dir => {
                let facts = DirFacts {
                    mode: st.st_mode,
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
    /// over (and removed on any error). A directory in the way (the run replaced it) is
    /// removed first. A host entry changed during the run is kept instead.
    #[allow(clippy::too_many_arguments)]
    fn place(
        &mut self,
        up: BorrowedFd<'_>,
        dst: BorrowedFd<'_>,
        name: &[u8],
        path: &Path,
        depth: usize,
        change: &str,
        copy: bool,
        make: impl FnOnce(&mut Self, BorrowedFd<'_>, BorrowedFd<'_>, &CStr) -> Result<(), SandboxError>,
    ) -> Result<(), SandboxError> {
        if self.host_changed(dst, name).is_some() {
            self.conflict(
                path.to_path_buf(),
                "the host changed it during the run; the host's version was kept and the run's waits in the change set",
            );
            return Ok(());
        }
        if is_dir_at(dst, name) {
            let judged = self.report.refused.len() + self.report.held.len();
            self.remove_seen(dst, name, path, depth)?;
            let kept_out = self.report.refused.len() + self.report.held.len() > judged;
            if exists_at(dst, name) && kept_out {
                // What the directory held that the rules keep (a hook) stays, and the
                // run's entry waits in the layer.
                self.report.spared.retain(|s| !s.path.starts_with(path));
                return Ok(());
            }
            if exists_at(dst, name) {
                self.report.spared.retain(|s| !s.path.starts_with(path));
                // What the host added to the directory during the run stays.
                self.conflict(
                    path.to_path_buf(),
                    "the run replaced this directory, but the host added to it during the run; the host's version was kept",
                );
                return Ok(());
            }
        }
        #[cfg(test)]
        tests::fail_point()?;
        let moved = if copy {
            Err(Errno::XDEV)
        } else {
            rustix::fs::renameat(up, name, dst, name)
        };
        match moved {
            Ok(()) => {
                self.landed(path.to_path_buf(), change, None);
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
        let made = make(self, up, dst, &tmp).and_then(|()| {
            rustix::fs::renameat(dst, tmp.as_c_str(), dst, name)
                .map_err(|e| SandboxError::io(format!("cannot merge {}", path.display()), e.into()))
        });
        if let Err(e) = made {
            // A full disk must not leave half a file in the user's tree.
            let _ = rustix::fs::unlinkat(dst, tmp.as_c_str(), AtFlags::empty());
            return Err(e);
        }
        // Landed: the layer's copy is no longer needed.
        let _ = rustix::fs::unlinkat(up, name, AtFlags::empty());
        self.landed(path.to_path_buf(), change, None);
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
        DirFacts { mode, passage }: DirFacts,
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
        let marked = xattr(up_child.as_fd(), "user.overlay.opaque").is_some_and(|v| v == b"y");
        // A passage never removes what the host has beside the allowed path.
        let opaque = !passage && marked;
        // A file or symlink where the run made a directory: replaced, unless the host
        // changed it during the run.
        if let Ok(st) = rustix::fs::statat(dst, name, AtFlags::SYMLINK_NOFOLLOW)
            && FileType::from_raw_mode(st.st_mode) != FileType::Directory
        {
            if passage {
                // The allowlist names what lies below, not the host's file here.
                self.report.kept.push(path.to_path_buf());
                return Ok(());
            }
            if !self.opts.overwrite && changed_since(&st, self.opts.horizon) {
                self.conflict(
                    path.to_path_buf(),
                    "the run made a directory where the host changed a file during the run; the host's version was kept",
                );
                return Ok(());
            }
            remove_file_at(dst, name, path)?;
        }
        let (dst_child, existed) = open_or_make_dir(dst, name, path)?;
        if opaque && existed {
            // The run replaced this directory: the host entries it no longer had go
            // (unless the host changed them during the run). Below it every directory is
            // the run's alone, so each carries the mark on; then this one is unmarked,
            // so that merging what is left later removes nothing again.
            let mine = names(up_child.as_fd())?;
            for n in names(dst_child.as_fd())? {
                if !mine.contains(&n) {
                    let p = path.join(OsStr::from_bytes(&n));
                    self.remove_seen(dst_child.as_fd(), &n, &p, depth + 1)?;
                }
            }
            for n in &mine {
                mark_opaque(up_child.as_fd(), n, path)?;
            }
        }
        if marked && rustix::fs::fremovexattr(&up_child, "user.overlay.opaque").is_err() {
            self.refuse(
                path.to_path_buf(),
                "the run replaced this directory and cordon cannot unmark it; merge the rest of its changes by hand",
            );
            return Ok(());
        }
        let quiet = self.quiet;
        if !existed {
            self.quiet += 1;
        }
        let before = self.report.merged;
        let merged = self.dir(up_child.as_fd(), dst_child.as_fd(), path, depth + 1);
        self.quiet = quiet;
        merged?;
        if !existed {
            let entries = self.report.merged - before;
            self.landed(path.to_path_buf(), "dir", Some(entries));
        }
        // Emptied: nothing of it is left to merge (what stayed out keeps it).
        let _ = rustix::fs::unlinkat(up, name, AtFlags::REMOVEDIR);
        if passage && existed {
            return Ok(());
        }
        let new_mode = if existed {
            let host = rustix::fs::fstat(&dst_child)
                .map(|st| st.st_mode)
                .unwrap_or(0o700);
            narrowed_dir_mode(host, mode)
        } else {
            merged_mode(mode, true)
        };
        rustix::fs::fchmod(&dst_child, Mode::from_raw_mode(new_mode)).map_err(errno(format_args!(
            "cannot set the mode of {}",
            path.display()
        )))
    }
}

mod at;
mod fast;
mod gitcheck;
mod gitstate;
mod hostfacts;
mod judge;
mod preview;
mod report;
mod scope;

pub use gitcheck::{git_config_judgement, git_config_refusal, gitmodules_judgement};
pub use preview::{Pending, preview_layer};
pub use report::{Landed, MergeOptions, MergeReport, Refused};

use at::{
    DIR_FLAGS, errno, exists_at, is_dir_at, kind_of, mark_opaque, merged_mode, names,
    narrow_file_mode, narrowed_dir_mode, open_dir_for_removal, open_or_make_dir, remove_file_at,
    temp_name, xattr,
};

#[cfg(test)]
mod fast_tests;
#[cfg(test)]
mod planted_tests;
#[cfg(test)]
mod scope_tests;
#[cfg(test)]
mod tests;
