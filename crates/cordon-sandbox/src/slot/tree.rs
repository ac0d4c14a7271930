//! Walking a slot's tree without following anything planted in it.
//!
//! Every directory is opened relative to its parent's descriptor with `O_NOFOLLOW |
//! O_DIRECTORY`, and every file with `O_NOFOLLOW`, then checked with `fstat`: a symlink
//! in the slot is reported as one and never opened, so sizing, removing and
//! snapshotting cannot be turned into a read or write of a host file. The walk goes
//! [`MAX_DEPTH`] levels deep at most and holds one descriptor per level.

use super::{SlotError, SlotErrorKind};
use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags, Stat};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Deepest directory level walked.
pub const MAX_DEPTH: usize = 256;

/// One entry met by [`walk`].
pub(crate) enum Entry<'a> {
    /// A directory (visited before what it holds).
    Dir,
    /// A regular file, opened read-only.
    File(&'a OwnedFd),
    /// A symlink and its target (never followed).
    Symlink(PathBuf),
    /// A device, FIFO or socket.
    Other,
}

fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// Open the root of a walk: a real directory, not a symlink to one.
pub(crate) fn open_root(root: &Path) -> Result<OwnedFd, SlotError> {
    cordon_fs::Dir::open_ambient(root)
        .map(OwnedFd::from)
        .map_err(|e| SlotError::io(format_args!("cannot open {}", root.display()), e))
}

/// Visit every entry under `root` (relative paths, parents first). With
/// `skip_unreadable`, a directory or file that cannot be opened is passed over;
/// otherwise it ends the walk with an error naming it.
pub(crate) fn walk(
    root: &Path,
    skip_unreadable: bool,
    on: &mut dyn FnMut(&Path, &Stat, Entry<'_>) -> Result<(), SlotError>,
) -> Result<(), SlotError> {
    let fd = open_root(root)?;
    walk_dir(root, &fd, Path::new(""), 0, skip_unreadable, on)
}

fn walk_dir(
    root: &Path,
    fd: &OwnedFd,
    rel: &Path,
    depth: usize,
    skip: bool,
    on: &mut dyn FnMut(&Path, &Stat, Entry<'_>) -> Result<(), SlotError>,
) -> Result<(), SlotError> {
    if depth >= MAX_DEPTH {
        return Err(SlotError::new(
            SlotErrorKind::Io,
            format!(
                "{} is nested more than {MAX_DEPTH} directories deep",
                root.join(rel).display()
            ),
        ));
    }
    let unreadable = |what: &Path, e: rustix::io::Errno| {
        SlotError::io(format_args!("cannot read {}", root.join(what).display()), e)
    };
    let mut names: Vec<Vec<u8>> = Vec::new();
    let dir = Dir::read_from(fd).map_err(|e| unreadable(rel, e))?;
    for entry in dir {
        let entry = entry.map_err(|e| unreadable(rel, e))?;
        let name = entry.file_name().to_bytes();
        if name != b"." && name != b".." {
            names.push(name.to_vec());
        }
    }
    names.sort();
    for name in names {
        let name = OsStr::from_bytes(&name);
        let path = rel.join(name);
        let st = match rustix::fs::statat(fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            // Gone since the listing.
            Err(rustix::io::Errno::NOENT) => continue,
            Err(e) => return Err(unreadable(&path, e)),
        };
        match FileType::from_raw_mode(st.st_mode) {
            FileType::Directory => {
                on(&path, &st, Entry::Dir)?;
                match rustix::fs::openat(fd, name, dir_flags(), Mode::empty()) {
                    Ok(sub) => walk_dir(root, &sub, &path, depth + 1, skip, on)?,
                    Err(_) if skip => {}
                    Err(e) => return Err(unreadable(&path, e)),
                }
            }
            FileType::RegularFile => {
                let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
                match rustix::fs::openat(fd, name, flags, Mode::empty()) {
                    Ok(f) => {
                        let st = rustix::fs::fstat(&f).map_err(|e| unreadable(&path, e))?;
                        if FileType::from_raw_mode(st.st_mode) == FileType::RegularFile {
                            on(&path, &st, Entry::File(&f))?;
                        }
                    }
                    Err(_) if skip => {}
                    Err(e) => return Err(unreadable(&path, e)),
                }
            }
            FileType::Symlink => {
                let target = rustix::fs::readlinkat(fd, name, Vec::new())
                    .map_err(|e| unreadable(&path, e))?;
                let target = PathBuf::from(OsStr::from_bytes(target.as_bytes()));
                on(&path, &st, Entry::Symlink(target))?;
            }
            _ => on(&path, &st, Entry::Other)?,
        }
    }
    Ok(())
}

/// Bytes of the regular files under `root` and the number of entries, without
/// following links; what cannot be read is left out. A missing `root` is empty.
pub fn tree_size(root: &Path) -> Result<(u64, u64), SlotError> {
    if std::fs::symlink_metadata(root).is_err() {
        return Ok((0, 0));
    }
    let (mut bytes, mut entries) = (0u64, 0u64);
    walk(root, true, &mut |_, st, entry| {
        entries += 1;
        if matches!(entry, Entry::File(_)) {
            bytes = bytes.saturating_add(u64::try_from(st.st_size).unwrap_or(0));
        }
        Ok(())
    })?;
    Ok((bytes, entries))
}

/// Give the owner full access to `name` in `parent` (a directory met in a walk), through
/// a descriptor that refuses to be a symlink: `chmod` itself would follow one.
pub(crate) fn open_up(parent: &impl AsFd, name: &OsStr) -> Result<(), rustix::io::Errno> {
    let st = rustix::fs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW)?;
    if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
        return Err(rustix::io::Errno::NOTDIR);
    }
    if st.st_mode & 0o700 == 0o700 {
        return Ok(());
    }
    cordon_fs::set_mode_beneath(parent.as_fd(), Path::new(""), name, 0o700)
        .map_err(|e| rustix::io::Errno::from_raw_os_error(e.raw_os_error().unwrap_or(libc::EINVAL)))
}

/// Remove the tree at `path` without following any link in it, after giving its owner
/// access to every directory in it (a `chmod 000` directory planted by the sandboxed
/// command would otherwise stop the removal part-way): `cordon-fs`'s removal, its parent
/// opened as it is now. Succeeds only when nothing is left; a missing `path` is already
/// removed.
pub fn remove_tree(path: &Path) -> Result<(), SlotError> {
    let fail = |e: &dyn std::fmt::Display| {
        SlotError::io(
            format_args!(
                "cannot remove {} (nothing of it may be left behind)",
                path.display()
            ),
            e,
        )
    };
    cordon_fs::remove_tree_at(path).map_err(|e| fail(&e))?;
    if std::fs::symlink_metadata(path).is_ok() {
        return Err(fail(&"it is still there"));
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn size_and_remove_do_not_follow_planted_links() {
        let t = tempfile::tempdir().unwrap();
        let outside = t.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("precious"), "x".repeat(1000)).unwrap();
        let slot = t.path().join("slot");
        std::fs::create_dir_all(slot.join("a/locked/deeper")).unwrap();
        std::fs::write(slot.join("a/f"), "hello").unwrap();
        std::fs::write(slot.join("a/locked/deeper/g"), "hi").unwrap();
        std::os::unix::fs::symlink(&outside, slot.join("link-dir")).unwrap();
        std::os::unix::fs::symlink(outside.join("precious"), slot.join("link-file")).unwrap();
        let (bytes, _) = tree_size(&slot).unwrap();
        assert_eq!(bytes, 5 + 2, "links are not followed");
        std::fs::set_permissions(
            slot.join("a/locked/deeper"),
            PermissionsExt::from_mode(0o000),
        )
        .unwrap();
        std::fs::set_permissions(slot.join("a/locked"), PermissionsExt::from_mode(0o000)).unwrap();
        remove_tree(&slot).unwrap();
        assert!(!slot.exists());
        assert_eq!(
            std::fs::read_to_string(outside.join("precious"))
                .unwrap()
                .len(),
            1000
        );
    }
}
