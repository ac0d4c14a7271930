//! The fallback tier's private scratch directory: where `TMPDIR`, `TMP` and `TEMP`
//! point, since no mount can give the command a `/tmp` of its own there.
//!
//! Without it the command would need the host's `/tmp`, `/var/tmp` and `/dev/shm`, which
//! every process of the host shares: what the command left there (a socket, a file a host
//! program picks up by name) would outlive the run, and it could read what this user's
//! other programs keep there. So the fallback tier grants none of them, and writes only
//! this directory: `cordon-run-UID-PID-RANDOM` in `/var/tmp` (else `/tmp`), made by cordon
//! for one run, mode 0700, checked to be this user's, and removed with everything in it
//! when the run ends. A directory whose cordon died (killed before it could remove it) is
//! removed by a later run once it is an hour old.
//!
//! It owns only that directory: it must never remove anything of the base directory but
//! its own entries, and never follow a symlink (every operation goes through
//! `cordon_fs::Dir`).

use crate::error::SandboxError;
use cordon_fs::Dir;
use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where scratch directories are made, first that exists.
const BASES: &[&str] = &["/var/tmp", "/tmp"];

/// How old a scratch directory of a dead cordon must be before a later run removes it:
/// long enough that a cordon whose PID another PID namespace reuses is not robbed.
const STALE_AFTER: Duration = Duration::from_secs(3600);

/// One run's scratch directory, removed when dropped.
#[derive(Debug)]
pub(crate) struct Scratch {
    base: Dir,
    name: OsString,
    path: PathBuf,
}

impl Scratch {
    /// Make a new scratch directory for a run of this process.
    pub(crate) fn create() -> Result<Scratch, SandboxError> {
        let mut last = None;
        for base in BASES {
            match Scratch::create_in(Path::new(base)) {
                Ok(s) => return Ok(s),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| SandboxError::setup("no directory for scratch space")))
    }

    fn create_in(base: &Path) -> Result<Scratch, SandboxError> {
        let fail = |e: cordon_fs::FsError| {
            SandboxError::setup(format!(
                "cannot make the fallback tier's private scratch directory in {}: {e}",
                base.display()
            ))
        };
        // The rule Landlock gets names the directory's real path.
        let real = std::fs::canonicalize(base).map_err(|e| {
            SandboxError::io(
                format!("cannot use {} for scratch space", base.display()),
                e,
            )
        })?;
        let base = Dir::open_ambient(&real).map_err(fail)?;
        let uid = rustix::process::getuid().as_raw();
        remove_stale(&base, uid);
        let mut last = None;
        for _ in 0..8 {
            let name = OsString::from(format!(
                "cordon-run-{uid}-{}-{:016x}",
                std::process::id(),
                random()?
            ));
            match base.create_dir(Path::new(&name), 0o700) {
                Ok(()) => {}
                // Somebody else's name (or an old one): another.
                Err(e) => {
                    last = Some(e);
                    continue;
                }
            }
            let scratch = Scratch {
                path: real.join(&name),
                base,
                name,
            };
            scratch.check_private()?;
            return Ok(scratch);
        }
        Err(match last {
            Some(e) => fail(e),
            None => SandboxError::setup("cannot name a scratch directory"),
        })
    }

    /// The directory is this user's and nobody else may enter it (a directory of that
    /// name made by someone else in the shared base would be refused by `mkdir`, but
    /// the umask could have left group or other bits).
    fn check_private(&self) -> Result<(), SandboxError> {
        let fail = |e: cordon_fs::FsError| {
            SandboxError::setup(format!("cannot check the scratch directory: {e}"))
        };
        let dir = self.base.open_dir(Path::new(&self.name)).map_err(fail)?;
        let st = dir.own_stat().map_err(fail)?;
        if st.st_uid != rustix::process::geteuid().as_raw() {
            return Err(SandboxError::setup(format!(
                "the scratch directory {} belongs to another user",
                self.path.display()
            )));
        }
        if st.st_mode & 0o077 != 0 {
            dir.set_own_mode(0o700).map_err(fail)?;
        }
        Ok(())
    }

    /// The directory's real path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Remove the directory and everything in it (nothing may run in it any more).
    /// Dropping it tries again, and finds nothing.
    pub(crate) fn remove(self) -> Result<(), SandboxError> {
        self.remove_now()
    }

    fn remove_now(&self) -> Result<(), SandboxError> {
        self.base
            .remove_tree(Path::new(&self.name))
            .map_err(|e| SandboxError::setup(format!("cannot remove the scratch directory: {e}")))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = self.remove_now();
    }
}

/// 64 random bits for a name nobody can guess ahead.
fn random() -> Result<u64, SandboxError> {
    let mut b = [0u8; 8];
    // The kernel's random device, not a path a run can plant.
    #[allow(clippy::disallowed_methods)]
    let urandom = std::fs::File::open("/dev/urandom");
    urandom
        .and_then(|mut f| f.read_exact(&mut b))
        .map_err(|e| SandboxError::io("cannot read /dev/urandom", e))?;
    Ok(u64::from_le_bytes(b))
}

/// Remove the scratch directories of this user's cordons that died without removing
/// theirs (their PID is gone) and that are older than [`STALE_AFTER`]. Best effort:
/// what cannot be removed now is tried again by a later run.
fn remove_stale(base: &Dir, uid: u32) {
    let Ok(names) = base.names() else {
        return;
    };
    let prefix = format!("cordon-run-{uid}-");
    for name in names {
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(&prefix)) else {
            continue;
        };
        let Some(pid) = rest
            .split('-')
            .next()
            .and_then(|p| p.parse::<i32>().ok())
            .filter(|p| *p > 0)
        else {
            continue;
        };
        let alive = !matches!(
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None),
            Err(nix::errno::Errno::ESRCH)
        );
        let rel = Path::new(&name);
        let Ok(st) = base.stat(rel) else {
            continue;
        };
        let age = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|now| {
                now.as_secs()
                    .saturating_sub(u64::try_from(st.st_mtime).unwrap_or(0))
            })
            .unwrap_or(0);
        if !alive && st.st_uid == uid && age >= STALE_AFTER.as_secs() {
            let _ = base.remove_tree(rel);
        }
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_private_directory_removed_with_its_content() {
        let s = Scratch::create().unwrap();
        let path = s.path().to_path_buf();
        let meta = std::fs::metadata(&path).unwrap();
        assert!(meta.is_dir());
        assert_eq!(meta.permissions().mode() & 0o777, 0o700);
        std::fs::create_dir_all(path.join("a/b")).unwrap();
        std::fs::write(path.join("a/b/f"), "x").unwrap();
        // A symlink in it is removed, never followed.
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("keep"), "k").unwrap();
        std::os::unix::fs::symlink(outside.path(), path.join("link")).unwrap();
        s.remove().unwrap();
        assert!(!path.exists());
        assert!(outside.path().join("keep").exists());
        // Dropped without `remove`: gone too.
        let s = Scratch::create().unwrap();
        let path = s.path().to_path_buf();
        drop(s);
        assert!(!path.exists());
    }
}
