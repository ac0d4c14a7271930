//! Where the store and the audit log live by default, and how their files are created
//! (`0700` directory, `0600` file, never through a symlink).

use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::{StoreError, StoreErrorKind};

/// The directory holding cordon's state: `$CORDON_STATE_DIR` if set, else
/// `$XDG_STATE_HOME/cordon`, else `~/.local/state/cordon`. Relative values are ignored,
/// as the XDG specification requires.
pub fn state_dir() -> Result<PathBuf, StoreError> {
    let abs = |v: Option<std::ffi::OsString>| {
        v.map(PathBuf::from)
            .filter(|p| p.is_absolute() && !p.as_os_str().is_empty())
    };
    if let Some(dir) = abs(std::env::var_os("CORDON_STATE_DIR")) {
        return Ok(dir);
    }
    if let Some(dir) = abs(std::env::var_os("XDG_STATE_HOME")) {
        return Ok(dir.join("cordon"));
    }
    if let Some(home) = abs(std::env::var_os("HOME")) {
        return Ok(home.join(".local").join("state").join("cordon"));
    }
    Err(StoreError::new(
        Path::new("<state dir>"),
        StoreErrorKind::NoStateDir,
    ))
}

/// Default store file: `state_dir()/store.sqlite3`.
pub fn default_store_path() -> Result<PathBuf, StoreError> {
    Ok(state_dir()?.join("store.sqlite3"))
}

/// Default audit log: `state_dir()/audit.jsonl`.
pub fn default_audit_path() -> Result<PathBuf, StoreError> {
    Ok(state_dir()?.join("audit.jsonl"))
}

/// Create `dir` (and missing parents) with mode 0700.
pub(crate) fn ensure_dir(dir: &Path) -> Result<(), StoreError> {
    if dir.as_os_str().is_empty() || dir.is_dir() {
        return Ok(());
    }
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| StoreError::io(dir, &e))
}

/// Tighten the default state directory to 0700 when we own it.
pub(crate) fn tighten_dir(dir: &Path) -> Result<(), StoreError> {
    let meta = fs::metadata(dir).map_err(|e| StoreError::io(dir, &e))?;
    if meta.mode() & 0o077 != 0 {
        if meta.uid() != rustix::process::geteuid().as_raw() {
            return Err(StoreError::new(
                dir,
                StoreErrorKind::Permissions(
                    "the directory belongs to another user and is open to others".into(),
                ),
            ));
        }
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
            .map_err(|e| StoreError::io(dir, &e))?;
    }
    Ok(())
}

/// Open (creating if missing) a private file: mode 0600, not through a symlink, owned
/// by us. Existing files open to others are tightened to 0600.
pub(crate) fn open_private(path: &Path, append: bool) -> Result<File, StoreError> {
    if let Some(parent) = path.parent() {
        ensure_dir(parent)?;
    }
    let mut opts = OpenOptions::new();
    opts.read(true)
        .create(true)
        .mode(0o600)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
    if append {
        opts.append(true);
    } else {
        opts.write(true);
    }
    let file = opts.open(path).map_err(|e| {
        if e.raw_os_error() == Some(40) {
            // ELOOP: the final component is a symlink.
            StoreError::new(
                path,
                StoreErrorKind::Permissions("the path is a symbolic link".into()),
            )
        } else {
            StoreError::io(path, &e)
        }
    })?;
    let meta = file.metadata().map_err(|e| StoreError::io(path, &e))?;
    if !meta.is_file() {
        return Err(StoreError::new(
            path,
            StoreErrorKind::Permissions("it is not a regular file".into()),
        ));
    }
    if meta.uid() != rustix::process::geteuid().as_raw() {
        return Err(StoreError::new(
            path,
            StoreErrorKind::Permissions("the file belongs to another user".into()),
        ));
    }
    if meta.mode() & 0o077 != 0 {
        file.set_permissions(fs::Permissions::from_mode(0o600))
            .map_err(|e| StoreError::io(path, &e))?;
    }
    Ok(file)
}
