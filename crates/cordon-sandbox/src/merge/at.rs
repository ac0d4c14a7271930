//! The merge's steps on directory descriptors: every call names an entry relative to a
//! directory opened without following symlinks.

use crate::error::SandboxError;
use cordon_policy::planted::LeftKind;
use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::Path;

pub(super) fn errno(what: impl std::fmt::Display) -> impl FnOnce(Errno) -> SandboxError {
    move |e| SandboxError::io(what.to_string(), std::io::Error::from(e))
}

pub(super) const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

pub(super) fn names(dir: BorrowedFd<'_>) -> Result<Vec<Vec<u8>>, SandboxError> {
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

pub(super) fn kind_of(mode: u32) -> (LeftKind, FileType) {
    let ft = FileType::from_raw_mode(mode);
    let k = match ft {
        FileType::RegularFile => LeftKind::File,
        FileType::Directory => LeftKind::Dir,
        FileType::Symlink => LeftKind::Symlink,
        _ => LeftKind::Other,
    };
    (k, ft)
}

pub(super) fn xattr(fd: BorrowedFd<'_>, name: &str) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; 256];
    match rustix::fs::fgetxattr(fd, name, &mut buf[..]) {
        Ok(n) => {
            buf.truncate(n);
            Some(buf)
        }
        Err(_) => None,
    }
}

/// The mode a merged entry gets: no set-user-ID, set-group-ID or sticky bit, and no write
/// bit for the group or others: a run never opens a file or a directory (a `.git/hooks`
/// made `1777`) to other users of the host.
pub(super) fn merged_mode(mode: u32, _dir: bool) -> u32 {
    mode & 0o755
}

/// Narrow the mode of the layer's regular file `name` in `dir` to [`merged_mode`] before it
/// lands (set-id and sticky bits never reach the host, nor a write bit for the group or
/// others); returns the narrowed mode. Changes nothing when the mode is already narrow.
pub(super) fn narrow_file_mode(
    dir: BorrowedFd<'_>,
    name: &[u8],
    mode: u32,
    path: &Path,
) -> Result<Mode, SandboxError> {
    let narrowed = Mode::from_raw_mode(merged_mode(mode, false));
    if mode & 0o7777 != narrowed.as_raw_mode() {
        rustix::fs::chmodat(dir, name, narrowed, AtFlags::empty()).map_err(errno(format_args!(
            "cannot narrow the mode of {}",
            path.display()
        )))?;
    }
    Ok(narrowed)
}

/// The mode of a directory the host already has, after the run changed it: the owner's
/// bits follow the run, the group's and others' can only narrow (and nothing special is
/// added).
pub(super) fn narrowed_dir_mode(host: u32, run: u32) -> u32 {
    (run & 0o700) | (host & run & 0o7077)
}

/// Open `name` in `dst` as a directory, making it when missing. Returns whether a
/// directory was already there.
pub(super) fn open_or_make_dir(
    dst: BorrowedFd<'_>,
    name: &[u8],
    path: &Path,
) -> Result<(OwnedFd, bool), SandboxError> {
    match rustix::fs::openat(dst, name, DIR_FLAGS, Mode::empty()) {
        Ok(fd) => return Ok((fd, true)),
        Err(Errno::NOENT) => {}
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

/// Mark the directory `name` of the layer directory `up` as replaced (opaque), as
/// overlayfs would have had the run replaced it itself; anything else is left alone.
pub(super) fn mark_opaque(up: BorrowedFd<'_>, name: &[u8], at: &Path) -> Result<(), SandboxError> {
    let Ok(st) = rustix::fs::statat(up, name, AtFlags::SYMLINK_NOFOLLOW) else {
        return Ok(());
    };
    if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
        return Ok(());
    }
    let fd = rustix::fs::openat(up, name, DIR_FLAGS, Mode::empty()).map_err(errno(
        format_args!("cannot open the change to {}", at.display()),
    ))?;
    rustix::fs::fsetxattr(
        &fd,
        "user.overlay.opaque",
        b"y",
        rustix::fs::XattrFlags::empty(),
    )
    .map_err(errno(format_args!(
        "cannot mark the change to {} as a replaced directory",
        at.display()
    )))
}

pub(super) fn remove_file_at(
    dst: BorrowedFd<'_>,
    name: &[u8],
    path: &Path,
) -> Result<(), SandboxError> {
    match rustix::fs::unlinkat(dst, name, AtFlags::empty()) {
        Ok(()) | Err(Errno::NOENT) => Ok(()),
        Err(e) => Err(SandboxError::io(
            format!("cannot replace {}", path.display()),
            e.into(),
        )),
    }
}

/// Open a host directory the run deleted, to empty it: made searchable first when the
/// host or the run left it otherwise (never through a symlink).
pub(super) fn open_dir_for_removal(
    dst: BorrowedFd<'_>,
    name: &[u8],
    path: &Path,
) -> Result<OwnedFd, SandboxError> {
    let fd = match rustix::fs::openat(dst, name, DIR_FLAGS, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::ACCESS) => {
            let p = rustix::fs::openat(
                dst,
                name,
                OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(errno(format_args!("cannot open {}", path.display())))?;
            let _ = rustix::fs::fchmod(&p, Mode::from_raw_mode(0o700));
            rustix::fs::openat(dst, name, DIR_FLAGS, Mode::empty())
                .map_err(errno(format_args!("cannot open {}", path.display())))?
        }
        Err(e) => {
            return Err(SandboxError::io(
                format!("cannot open {}, which the run deleted", path.display()),
                e.into(),
            ));
        }
    };
    Ok(fd)
}

pub(super) fn exists_at(dir: BorrowedFd<'_>, name: &[u8]) -> bool {
    rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).is_ok()
}

pub(super) fn is_dir_at(dir: BorrowedFd<'_>, name: &[u8]) -> bool {
    rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Directory)
}

/// A temporary name beside `name`: hidden, short enough for any file system (a name of
/// 255 bytes plus a prefix would not be), unique to this process.
pub(super) fn temp_name(name: &[u8]) -> std::ffi::CString {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut t = b".cordon-merge-".to_vec();
    t.extend_from_slice(&name[..name.len().min(180)]);
    t.extend_from_slice(format!(".{}-{n}", std::process::id()).as_bytes());
    // A name from a directory entry has no NUL byte.
    std::ffi::CString::new(t).unwrap_or_default()
}
