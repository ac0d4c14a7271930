//! Where the store and the audit log live by default, and how their files are created
//! (`0700` directory, `0600` file, never through a symlink: through `cordon-fs`).

use cordon_fs::{Dir, FsErrorKind};
use std::fs::File;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::{StoreError, StoreErrorKind};

/// The directory holding cordon's state: `$CORDON_STATE_DIR` if set, else
/// `$XDG_STATE_HOME/cordon`, else `~/.local/state/cordon`, as
/// [`cordon_policy::state_dir::state_dir`] resolves it for the sandbox and the guards too.
/// Relative values are ignored, as the XDG specification requires.
pub fn state_dir() -> Result<PathBuf, StoreError> {
    cordon_policy::state_dir::state_dir()
        .ok_or_else(|| StoreError::new(Path::new("<state dir>"), StoreErrorKind::NoStateDir))
}

/// Default store file: `state_dir()/store.sqlite3`.
pub fn default_store_path() -> Result<PathBuf, StoreError> {
    Ok(state_dir()?.join("store.sqlite3"))
}

/// Default audit log: `state_dir()/audit.jsonl`.
pub fn default_audit_path() -> Result<PathBuf, StoreError> {
    Ok(state_dir()?.join("audit.jsonl"))
}

/// A store error for a failed `cordon-fs` operation at `path`.
pub(crate) fn fs_err(path: &Path, e: cordon_fs::FsError) -> StoreError {
    match e.kind() {
        FsErrorKind::Symlink => StoreError::new(
            path,
            StoreErrorKind::Permissions("the path is a symbolic link".into()),
        ),
        FsErrorKind::WrongType(_) => StoreError::new(
            path,
            StoreErrorKind::Permissions("it is not a regular file".into()),
        ),
        FsErrorKind::NotPrivate(why) => {
            StoreError::new(path, StoreErrorKind::Permissions((*why).into()))
        }
        _ => StoreError::io(path, &std::io::Error::from(e)),
    }
}

/// The directory holding `path` (`.` for a bare name).
pub(crate) fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Create `dir` (and missing parents) with mode 0700 and open it: a symlink at its
/// name, or at the name of a directory created beneath the ones that exist, is refused.
pub(crate) fn ensure_dir(dir: &Path) -> Result<Dir, StoreError> {
    Dir::create_ambient(dir, 0o700).map_err(|e| fs_err(dir, e))
}

/// Tighten the default state directory to 0700 when we own it.
pub(crate) fn tighten_dir(dir: &Dir) -> Result<(), StoreError> {
    let path = dir.path();
    let meta = dir.own_stat().map_err(|e| fs_err(path, e))?;
    if meta.st_mode & 0o077 != 0 {
        if meta.st_uid != rustix::process::geteuid().as_raw() {
            return Err(StoreError::new(
                path,
                StoreErrorKind::Permissions(
                    "the directory belongs to another user and is open to others".into(),
                ),
            ));
        }
        dir.set_own_mode(0o700).map_err(|e| fs_err(path, e))?;
    }
    Ok(())
}

/// Open (creating if missing) a private file: mode 0600, owned by us, reached without
/// a symlink (at its name or on the way from its directory, which is created 0700 when
/// missing), and a regular file (a fifo or a device there is refused without blocking).
/// Existing files open to others are tightened to 0600.
pub(crate) fn open_private(path: &Path, append: bool) -> Result<File, StoreError> {
    let Some(name) = path.file_name() else {
        return Err(StoreError::new(
            path,
            StoreErrorKind::Permissions("it is not a file name".into()),
        ));
    };
    let dir = ensure_dir(parent_of(path))?;
    let opened = if append {
        dir.open_append(Path::new(name), 0o600)
    } else {
        dir.open_rw(Path::new(name), 0o600)
    };
    let file = opened.map_err(|e| fs_err(path, e))?;
    let meta = file.metadata().map_err(|e| StoreError::io(path, &e))?;
    if meta.uid() != rustix::process::geteuid().as_raw() {
        return Err(StoreError::new(
            path,
            StoreErrorKind::Permissions("the file belongs to another user".into()),
        ));
    }
    if meta.mode() & 0o077 != 0 {
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(|e| StoreError::io(path, &e))?;
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    #![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
    use crate::{AuditLog, Durability, Store};
    use std::path::Path;

    /// A workspace holding a store and an audit log the user pointed there, and a host
    /// file and directory a run would like them written into instead.
    struct Scene {
        _t: tempfile::TempDir,
        ws: std::path::PathBuf,
        victim: std::path::PathBuf,
        victim_dir: std::path::PathBuf,
    }

    fn scene() -> Scene {
        let t = tempfile::tempdir().unwrap();
        let ws = t.path().join("ws");
        std::fs::create_dir_all(ws.join("state")).unwrap();
        let victim = t.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let victim_dir = t.path().join("victim-dir");
        std::fs::create_dir(&victim_dir).unwrap();
        Scene {
            ws,
            victim,
            victim_dir,
            _t: t,
        }
    }

    fn unchanged(s: &Scene) {
        assert_eq!(std::fs::read_to_string(&s.victim).unwrap(), "precious");
        assert_eq!(std::fs::read_dir(&s.victim_dir).unwrap().count(), 0);
    }

    #[test]
    fn a_link_planted_at_the_store_or_log_name_is_refused() {
        let s = scene();
        for name in ["store.sqlite3", "audit.jsonl"] {
            std::os::unix::fs::symlink(&s.victim, s.ws.join("state").join(name)).unwrap();
        }
        let store = s.ws.join("state/store.sqlite3");
        assert!(Store::open(&store).is_err());
        let log = s.ws.join("state/audit.jsonl");
        assert!(AuditLog::open(&log, Durability::FsyncEach).is_err());
        unchanged(&s);
    }

    #[test]
    fn a_state_directory_renamed_and_replaced_by_a_link_is_refused() {
        let s = scene();
        let store = s.ws.join("state/store.sqlite3");
        let log = s.ws.join("state/audit.jsonl");
        drop(Store::open(&store).unwrap());
        drop(AuditLog::open(&log, Durability::FsyncEach).unwrap());
        // What a run does meanwhile: the directory moved aside, a link in its place.
        std::fs::rename(s.ws.join("state"), s.ws.join("moved")).unwrap();
        std::os::unix::fs::symlink(&s.victim_dir, s.ws.join("state")).unwrap();
        assert!(Store::open(&store).is_err());
        assert!(AuditLog::open(&log, Durability::FsyncEach).is_err());
        unchanged(&s);
        // A link to the victim file where the log's directory was: refused too.
        std::fs::remove_file(s.ws.join("state")).unwrap();
        std::os::unix::fs::symlink(&s.victim, s.ws.join("state")).unwrap();
        assert!(AuditLog::open(&log, Durability::FsyncEach).is_err());
        unchanged(&s);
    }

    #[test]
    fn the_store_opens_through_a_linked_ancestor_the_user_made() {
        // NOFOLLOW must not refuse a home reached through a link of the system's own
        // (`/home -> /var/home`): SQLite is given the directory's real path.
        let s = scene();
        let real = s.ws.join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, s.ws.join("home")).unwrap();
        let store = Path::new(&s.ws).join("home/state/store.sqlite3");
        drop(Store::open(&store).unwrap());
        assert!(real.join("state/store.sqlite3").is_file());
        unchanged(&s);
    }
}
