//! Sandbox slots: persistent state directories that a sandboxed run takes as its HOME.
//!
//! A slot is named by a key within a scope (a session, a user, an agent, or one global
//! slot) and lives under cordon's state directory:
//!
//! ```text
//! STATE/slots/SCOPE/SCOPE_ID/KEY/home     the sandbox's HOME (bound read-write)
//! STATE/slots/SCOPE/SCOPE_ID/KEY/tmp      the sandbox's /tmp, when asked
//! STATE/slots/SCOPE/SCOPE_ID/KEY/caches   the developer caches' layers (rebuildable)
//! STATE/slots/SCOPE/SCOPE_ID/KEY.lock     the execution guard (never mounted)
//! ```
//!
//! Everything inside `KEY/` is written by untrusted code. This module and its children
//! therefore never follow a link found there: sizing, removing and snapshotting walk
//! the tree relative to directory descriptors opened with `O_NOFOLLOW` (`tree.rs`),
//! and restoring unpacks into a fresh staging directory the same way (`snapshot.rs`).
//! The slot is not the user's HOME and not under the workspace, so nothing the host
//! runs reads it; cordon only ever mounts it back into a sandbox.
//!
//! It must never decide whether a run may happen: the gate does, before a slot is taken.

mod guard;
mod snapshot;
mod startup;
mod tree;
mod turn;

pub use guard::{Holder, SlotGuard, Wait};
pub use snapshot::{
    Manifest, RestoreLimits, RestoreReport, SNAPSHOT_MAGIC, SnapshotReport, read_manifest, restore,
    restore_within, snapshot, snapshot_to,
};
pub use startup::{
    INSTALL_TREES, UNCHECKED_CACHE_PATHS, reset_startup, startup_files, startup_paths,
};
pub use tree::{remove_tree, tree_size};
pub use turn::{DEFAULT_WAIT, SlotRecorder, SlotRequest, SlotRun, Turn};

use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};

/// Longest slot key, in bytes.
pub const MAX_KEY_LEN: usize = 64;

pub use cordon_policy::settings::SlotScope;

/// What went wrong with a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SlotErrorKind {
    /// A key, scope id or argument that cannot name a slot.
    Invalid,
    /// Another run holds the slot.
    Busy,
    /// The slot does not exist.
    NotFound,
    /// A snapshot that is damaged or unsafe to unpack.
    BadSnapshot,
    /// A file system operation failed.
    Io,
}

/// An error of a slot operation: one sentence a user can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotError {
    /// The category.
    pub kind: SlotErrorKind,
    /// One sentence.
    pub message: String,
}

impl SlotError {
    pub(crate) fn new(kind: SlotErrorKind, message: impl Into<String>) -> Self {
        SlotError {
            kind,
            message: message.into(),
        }
    }

    pub(crate) fn io(context: impl fmt::Display, err: impl fmt::Display) -> Self {
        Self::new(SlotErrorKind::Io, format!("{context}: {err}"))
    }
}

impl fmt::Display for SlotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SlotError {}

/// Whether `s` is a valid slot key: 1 to [`MAX_KEY_LEN`] bytes of ASCII letters, digits,
/// `-`, `_` and `.`, not starting with `.` (so neither `.` nor `..` nor a hidden name).
pub fn validate_key(s: &str) -> Result<(), SlotError> {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if s.is_empty() || s.len() > MAX_KEY_LEN || s.starts_with('.') || !s.chars().all(ok_char) {
        return Err(SlotError::new(
            SlotErrorKind::Invalid,
            format!(
                "the slot key `{}` is not valid: use 1 to {MAX_KEY_LEN} letters, digits, `-`, `_` or `.`, not starting with `.`",
                s.escape_default()
            ),
        ));
    }
    Ok(())
}

/// Prefix of a hashed scope id's directory name.
const HASHED: &str = "h-";

/// A scope id as a directory name: itself when it is a valid key that does not begin
/// with [`HASHED`], else `h-` and a hash of it (session ids and agent names come from
/// harnesses and may hold any byte). Literal names never begin with `h-` and hashed ones
/// always do, so two ids never share a directory.
fn id_dir(id: &str) -> String {
    if validate_key(id).is_ok() && !id.starts_with(HASHED) {
        id.to_string()
    } else {
        let hex = blake3::hash(id.as_bytes()).to_hex();
        format!("{HASHED}{}", &hex[..32])
    }
}

/// One slot's name: scope, scope id and key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotName {
    /// The scope.
    pub scope: SlotScope,
    /// The session id, uid, agent name, or `all` for the global scope.
    pub scope_id: String,
    /// The key.
    pub key: String,
}

impl SlotName {
    /// Name a slot. `session` and `agent` are required by their scopes and ignored by
    /// the others; the user scope takes the effective uid.
    pub fn new(
        scope: SlotScope,
        key: &str,
        session: Option<&str>,
        agent: Option<&str>,
    ) -> Result<SlotName, SlotError> {
        validate_key(key)?;
        let need = |v: Option<&str>, what: &str, flag: &str| match v {
            Some(v) if !v.is_empty() && v.len() <= 256 => Ok(v.to_string()),
            Some(_) => Err(SlotError::new(
                SlotErrorKind::Invalid,
                format!("the {what} must be 1 to 256 bytes to name a slot"),
            )),
            None => Err(SlotError::new(
                SlotErrorKind::Invalid,
                format!(
                    "a slot of scope `{scope}` needs {what}: give {flag}, or choose another --scope"
                ),
            )),
        };
        let scope_id = match scope {
            SlotScope::Session => need(session, "a session id", "--session ID")?,
            SlotScope::Agent => need(agent, "an agent name", "--agent NAME")?,
            SlotScope::User => rustix::process::geteuid().as_raw().to_string(),
            SlotScope::Global => "all".to_string(),
            other => {
                return Err(SlotError::new(
                    SlotErrorKind::Invalid,
                    format!("this cordon cannot name a slot of scope `{other}`"),
                ));
            }
        };
        Ok(SlotName {
            scope,
            scope_id,
            key: key.to_string(),
        })
    }
}

impl fmt::Display for SlotName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({} {})",
            self.key,
            self.scope,
            self.scope_id.escape_default()
        )
    }
}

/// Where a slot's files are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotPaths {
    /// The slot's directory (`KEY/`).
    pub dir: PathBuf,
    /// The execution guard's lock file, beside the directory.
    pub lock: PathBuf,
}

impl SlotPaths {
    /// The paths of `name` under `base` (see [`slots_base`]). The slot's directory is
    /// named by its key, which never begins with `.`; the names cordon keeps beside it
    /// (the lock, a restore's staging) all begin with `.`, so no key can name them.
    pub fn new(base: &Path, name: &SlotName) -> SlotPaths {
        let parent = base.join(name.scope.as_str()).join(id_dir(&name.scope_id));
        SlotPaths {
            dir: parent.join(&name.key),
            lock: parent.join(format!(".{}.lock", name.key)),
        }
    }

    /// The paths of `name` under `base`, refused when an older cordon kept a slot of the
    /// same name where this one no longer looks: a scope id beginning with `h-` used to
    /// name its directory literally, and such a name can also be a hashed id's.
    pub fn locate(base: &Path, name: &SlotName) -> Result<SlotPaths, SlotError> {
        let paths = SlotPaths::new(base, name);
        let id = &name.scope_id;
        if id.starts_with(HASHED) && validate_key(id).is_ok() {
            let old = base.join(name.scope.as_str()).join(id).join(&name.key);
            if std::fs::symlink_metadata(&old).is_ok() {
                return Err(SlotError::new(
                    SlotErrorKind::Invalid,
                    format!(
                        "the scope id `{id}` names its slots by a hash now, and {} may be an older cordon's slot of that id or another id's hashed slot; move it to {} if it is this id's, or remove it",
                        old.display(),
                        paths.dir.display()
                    ),
                ));
            }
        }
        Ok(paths)
    }

    /// A name beside the slot for a restore's staging or the old slot set aside:
    /// `.KEY.WHAT-PID`, which no key can take.
    pub(crate) fn beside(&self, what: &str) -> PathBuf {
        let key = self
            .dir
            .file_name()
            .and_then(OsStr::to_str)
            .unwrap_or("slot");
        self.parent()
            .join(format!(".{key}.{what}-{}", std::process::id()))
    }

    /// The directory that becomes HOME.
    pub fn home(&self) -> PathBuf {
        self.dir.join("home")
    }

    /// The directory that becomes `/tmp` when asked.
    pub fn tmp(&self) -> PathBuf {
        self.dir.join("tmp")
    }

    /// The base of the developer caches' layers.
    pub fn caches(&self) -> PathBuf {
        self.dir.join("caches")
    }

    /// The directory holding the slot and its lock.
    pub fn parent(&self) -> &Path {
        self.dir.parent().unwrap_or(Path::new("/"))
    }

    /// Whether the slot's directory exists (a symlink in its place is not one).
    pub fn exists(&self) -> bool {
        std::fs::symlink_metadata(&self.dir).is_ok_and(|m| m.is_dir())
    }

    /// Create the slot's directories (0700) where missing. A non-directory in the place
    /// of one is refused rather than followed.
    pub fn create(&self) -> Result<(), SlotError> {
        for d in [self.dir.clone(), self.home(), self.tmp(), self.caches()] {
            mkdir_0700(&d)?;
        }
        Ok(())
    }
}

/// Create `d` (and missing parents) with mode 0700 and open it: a symlink or a file in
/// the place of the directory is refused, never followed (`cordon-fs`).
pub(crate) fn mkdir_0700(d: &Path) -> Result<cordon_fs::Dir, SlotError> {
    cordon_fs::Dir::create_ambient(d, 0o700).map_err(|e| match e.kind() {
        cordon_fs::FsErrorKind::Symlink | cordon_fs::FsErrorKind::WrongType(_) => SlotError::new(
            SlotErrorKind::Io,
            format!(
                "{} is not a directory; remove it and try again",
                d.display()
            ),
        ),
        _ => SlotError::io(format_args!("cannot create {}", d.display()), e),
    })
}

/// Where slots live: `slots/` in cordon's state directory.
pub fn slots_base() -> Result<PathBuf, SlotError> {
    let state = cordon_policy::state_dir::state_dir().ok_or_else(|| {
        SlotError::new(
            SlotErrorKind::Io,
            "cannot find cordon's state directory for slots: no state directory is known (neither XDG_STATE_HOME nor HOME is set); set CORDON_STATE_DIR",
        )
    })?;
    Ok(state.join("slots"))
}

/// Take the slot `name` for a run (waiting as `wait` says) and make its directories:
/// the guard is held until the returned [`SlotGuard`] is dropped.
pub fn take(name: &SlotName, wait: Wait) -> Result<(SlotPaths, SlotGuard), SlotError> {
    let paths = SlotPaths::locate(&slots_base()?, name)?;
    let guard = SlotGuard::acquire(&paths, wait)?;
    paths.create()?;
    Ok((paths, guard))
}

/// What the mount plan needs of a slot.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SlotMounts {
    /// Host directory bound read-write at HOME.
    pub home: PathBuf,
    /// Host directory bound read-write at `/tmp`, when asked.
    pub tmp: Option<PathBuf>,
    /// Host directory under which the developer caches' layers persist.
    pub caches: PathBuf,
    /// Keep the start-up files a run leaves (see `startup.rs`); by default they are
    /// reset before every run.
    #[serde(default)]
    pub keep_startup: bool,
}

impl SlotMounts {
    /// The mounts of the slot at `paths`; `/tmp` from the slot when `tmp`.
    pub fn of(paths: &SlotPaths, tmp: bool) -> SlotMounts {
        SlotMounts {
            home: paths.home(),
            tmp: tmp.then(|| paths.tmp()),
            caches: paths.caches(),
            keep_startup: false,
        }
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
mod tests {
    use super::*;

    #[test]
    fn keys() {
        for good in ["venv", "a.b-c_d", "X1", &"k".repeat(MAX_KEY_LEN)] {
            assert!(validate_key(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            ".",
            "..",
            ".hidden",
            "a/b",
            "a b",
            "é",
            &"k".repeat(MAX_KEY_LEN + 1),
        ] {
            assert_eq!(
                validate_key(bad).unwrap_err().kind,
                SlotErrorKind::Invalid,
                "{bad}"
            );
        }
    }

    #[test]
    fn scopes_need_their_ids_and_odd_ids_are_hashed() {
        let e = SlotName::new(SlotScope::Session, "k", None, None).unwrap_err();
        assert!(e.message.contains("--session"), "{e}");
        let e = SlotName::new(SlotScope::Agent, "k", Some("s"), None).unwrap_err();
        assert!(e.message.contains("--agent"), "{e}");
        let n = SlotName::new(SlotScope::Session, "k", Some("../../etc"), None).unwrap();
        let p = SlotPaths::new(Path::new("/b"), &n);
        assert!(
            p.dir.to_string_lossy().starts_with("/b/session/h-"),
            "{}",
            p.dir.display()
        );
        assert_eq!(p.dir.components().count(), 5);
        let g = SlotName::new(SlotScope::Global, "k", None, None).unwrap();
        assert_eq!(
            SlotPaths::new(Path::new("/b"), &g).lock,
            Path::new("/b/global/all/.k.lock")
        );
    }

    #[test]
    fn literal_and_hashed_ids_and_keys_and_locks_never_share_a_name() {
        let base = Path::new("/b");
        // An id that is a hashed id's directory name, written out literally.
        let hashed = SlotName::new(SlotScope::Session, "k", Some("x y"), None).unwrap();
        let hashed_dir = SlotPaths::new(base, &hashed).dir;
        let id = hashed_dir
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        assert!(id.starts_with("h-"), "{id}");
        let literal = SlotName::new(SlotScope::Session, "k", Some(&id), None).unwrap();
        assert_ne!(SlotPaths::new(base, &literal).dir, hashed_dir);
        // A key that spells another key's lock file, or a restore's staging name.
        let global = |k: &str| {
            SlotPaths::new(
                base,
                &SlotName::new(SlotScope::Global, k, None, None).unwrap(),
            )
        };
        let a = global("a");
        for other in ["a.lock", "a.restore-1", "a.old-1"] {
            let o = global(other);
            assert_ne!(o.dir, a.lock, "{other}");
            assert_ne!(o.dir, a.beside("restore"), "{other}");
            assert_ne!(o.dir, a.beside("old"), "{other}");
            assert_ne!(o.lock, a.dir, "{other}");
        }
    }

    #[test]
    fn an_older_literal_h_slot_is_refused_with_where_it_is() {
        let t = tempfile::tempdir().unwrap();
        let n = SlotName::new(SlotScope::Agent, "k", None, Some("h-bot")).unwrap();
        assert!(SlotPaths::locate(t.path(), &n).is_ok());
        std::fs::create_dir_all(t.path().join("agent/h-bot/k")).unwrap();
        let e = SlotPaths::locate(t.path(), &n).unwrap_err();
        assert_eq!(e.kind, SlotErrorKind::Invalid);
        assert!(
            e.message.contains("agent/h-bot/k") && e.message.contains("move it"),
            "{e}"
        );
    }
}
