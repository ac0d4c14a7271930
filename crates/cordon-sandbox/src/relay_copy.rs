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
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
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
/// cannot be made.
pub(crate) fn copy_in(state: &Path, exe: &File) -> Option<PathBuf> {
    let m = exe.metadata().ok()?;
    // The state directory too, as cordon's store makes it, if this is its first run.
    let dir = state.join(DIR);
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .ok()?;
    let dir = std::fs::canonicalize(dir).ok()?;
    let name = format!(
        "cordon-{:x}-{:x}-{:x}-{:x}.{:x}",
        m.dev(),
        m.ino(),
        m.size(),
        m.mtime(),
        m.mtime_nsec()
    );
    let path = dir.join(&name);
    let made = std::fs::symlink_metadata(&path)
        .is_ok_and(|c| c.file_type().is_file() && c.len() == m.size() && c.mode() & 0o022 == 0);
    if !made {
        let tmp = dir.join(format!(".{name}.{}", std::process::id()));
        let write = || -> std::io::Result<()> {
            let mut out = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o700)
                .open(&tmp)?;
            std::io::copy(&mut &*exe, &mut out)?;
            out.sync_all()?;
            out.set_permissions(std::fs::Permissions::from_mode(0o500))?;
            std::fs::rename(&tmp, &path)
        };
        if write().is_err() {
            let _ = std::fs::remove_file(&tmp);
            return None;
        }
        // Copies of other binaries (an earlier version) are no longer needed.
        for entry in std::fs::read_dir(&dir).ok()?.flatten() {
            let n = entry.file_name();
            if n.to_string_lossy().starts_with("cordon-") && n != name.as_str() {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    Some(path)
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
}
