//! Where ssh's relay (the running cordon binary) is bound from, when the user cordon
//! runs as cannot look the binary up by its path (a directory above it closed to them:
//! cordon was started for them by a more privileged process).
//!
//! The kernel binds only files reachable in the sandbox's mount namespace, looked up
//! with the user's own rights; the file `/proc/self/exe` names belongs to the host's
//! namespace and cannot be bound (`mounts.rs`). Rather than copying the running image
//! into every run (its whole size, each time), the caller copies it once into cordon's
//! state directory (`ssh-relay/`, `0700`, hidden from every sandbox), named after the
//! running file's device, inode, size and modification time, and binds that copy; a
//! copy of another binary there is removed when a new one is made. Where no copy can be
//! made, the helper copies the image for the one run ([`crate::plan::MountOp::OwnBinary`]).
//!
//! What this module must never do: name a copy that was not made from the running
//! image, or put one where the command could write it.

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The directory of the copies under the state directory.
const DIR: &str = "ssh-relay";

/// Whether `path` is the running binary (the file `exe`, open on `/proc/self/exe`) and
/// this user can reach it by that path.
pub(crate) fn reachable(exe: &File, path: &Path) -> bool {
    match (exe.metadata(), std::fs::metadata(path)) {
        (Ok(running), Ok(at_path)) => {
            running.dev() == at_path.dev() && running.ino() == at_path.ino()
        }
        _ => false,
    }
}

/// The copy of the running binary `exe` in `state`, made if missing; `None` when it
/// cannot be made. The copy's directory is opened once, never through a link at its
/// name, and the copy is written under a new name there and renamed into place.
pub(crate) fn copy_in(state: &Path, exe: &File) -> Option<PathBuf> {
    let m = exe.metadata().ok()?;
    // The state directory too, as cordon's store makes it, if this is its first run.
    let dir = cordon_fs::Dir::create_ambient(&state.join(DIR), 0o700).ok()?;
    let real = std::fs::canonicalize(dir.path()).ok()?;
    let name = format!(
        "cordon-{:x}-{:x}-{:x}-{:x}.{:x}",
        m.dev(),
        m.ino(),
        m.size(),
        m.mtime(),
        m.mtime_nsec()
    );
    let made = dir.stat(Path::new(&name)).is_ok_and(|c| {
        c.st_mode & libc::S_IFMT == libc::S_IFREG
            && u64::try_from(c.st_size).is_ok_and(|n| n == m.size())
            && c.st_mode & 0o022 == 0
    });
    if !made {
        dir.write_from(Path::new(&name), 0o500, &mut |out| {
            // From the start, whatever an earlier read of `exe` left its offset at.
            std::io::Seek::seek(&mut &*exe, std::io::SeekFrom::Start(0))?;
            std::io::copy(&mut &*exe, out)?;
            out.sync_all()
        })
        .ok()?;
        // Copies of other binaries (an earlier version) are no longer needed.
        for n in dir.names().ok()? {
            if n.to_string_lossy().starts_with("cordon-") && n != name.as_str() {
                let _ = dir.remove(Path::new(&n));
            }
        }
    }
    Some(real.join(name))
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
mod tests {
    use super::*;

    #[test]
    fn the_running_binary_is_copied_once_and_reused() {
        let exe = File::open("/proc/self/exe").unwrap();
        let me = std::env::current_exe().unwrap();
        assert!(reachable(&exe, &me));
        assert!(!reachable(&exe, Path::new("/bin/sh")));
        let state = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(state.path().join(DIR)).unwrap();
        let stale = state.path().join(DIR).join("cordon-0-0-0-0.0");
        std::fs::write(&stale, "old").unwrap();
        let copy = copy_in(state.path(), &exe).unwrap();
        assert_eq!(std::fs::read(&copy).unwrap(), std::fs::read(&me).unwrap());
        assert_eq!(copy.metadata().unwrap().mode() & 0o777, 0o500);
        assert!(!stale.exists());
        let made = copy.metadata().unwrap().modified().unwrap();
        let again = copy_in(state.path(), &exe).unwrap();
        assert_eq!(again, copy);
        assert_eq!(again.metadata().unwrap().modified().unwrap(), made);
    }

    #[test]
    fn a_link_planted_at_the_copy_or_its_directory_is_never_written_through() {
        let exe = File::open("/proc/self/exe").unwrap();
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let victim_dir = t.path().join("victim-dir");
        std::fs::create_dir(&victim_dir).unwrap();
        let state = t.path().join("state");
        std::fs::create_dir_all(state.join(DIR)).unwrap();
        // A link at the copy's own name: replaced, never written through.
        let first = copy_in(&state, &exe).unwrap();
        std::fs::remove_file(&first).unwrap();
        std::os::unix::fs::symlink(&victim, &first).unwrap();
        let copy = copy_in(&state, &exe).unwrap();
        assert_eq!(copy, first);
        assert!(std::fs::symlink_metadata(&copy).unwrap().is_file());
        assert_eq!(
            std::fs::read(&copy).unwrap(),
            std::fs::read("/proc/self/exe").unwrap()
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        // The directory moved aside and a link left in its place: refused.
        std::fs::rename(state.join(DIR), state.join("moved")).unwrap();
        std::os::unix::fs::symlink(&victim_dir, state.join(DIR)).unwrap();
        assert!(copy_in(&state, &exe).is_none());
        assert_eq!(std::fs::read_dir(&victim_dir).unwrap().count(), 0);
    }
}
