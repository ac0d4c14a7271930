//! The one error type of the store. Every variant names the file it concerns and says
//! what to do; callers turn any of them into "deny" (the store never fails open).

use std::fmt;
use std::path::{Path, PathBuf};

/// What went wrong with a store or an audit log; see [`StoreError`].
#[derive(Debug)]
#[non_exhaustive]
pub enum StoreErrorKind {
    /// Another process holds the database lock for longer than the busy timeout.
    Locked,
    /// The file is not a cordon store or its pages are damaged.
    Corrupt(String),
    /// The disk (or the file system quota) is full.
    Full,
    /// The store was written by a newer cordon with a schema this build does not know.
    NewerSchema {
        /// Schema version found in the file.
        found: i64,
        /// Newest schema version this build understands.
        supported: i64,
    },
    /// The file or its directory has permissions that would let other users read or
    /// forge approvals, or could not be created with safe permissions.
    Permissions(String),
    /// No home or state directory is known, so there is no default location.
    NoStateDir,
    /// A pending approval with this id does not exist.
    NoSuchPending(i64),
    /// The pending approval was already answered.
    AlreadyAnswered {
        /// The approval's id.
        id: i64,
        /// Its current state (`approved` or `denied`).
        state: String,
    },
    /// An argument the caller passed is unusable (for example an empty fingerprint).
    Invalid(String),
    /// Any other I/O, SQLite or PostgreSQL failure.
    Io(String),
    /// The shared PostgreSQL store could not be reached, or the connection was lost.
    Unavailable(String),
    /// TLS to the shared store's server failed: its certificate was not accepted
    /// (another CA, another host name, expired) or it does not speak TLS. Nothing was
    /// sent to it.
    Tls(String),
    /// The shared store's database role may not do this (a machine's role answering an
    /// approval, writing a lease or a rule); nothing was changed.
    NotPermitted(String),
    /// A pending approval cannot be approved here: the request it shows is not the call
    /// its fingerprint names (secrets were cut out of it, or the asking machine's record
    /// was altered), so a lease would grant something the human did not read. It stays
    /// pending; it can still be denied, or approved with an edit spelling the whole input.
    Unverifiable {
        /// The approval's id.
        id: i64,
        /// Why, in a clause.
        why: String,
    },
}

/// An error from the store or the audit log, naming the file it concerns.
#[derive(Debug)]
pub struct StoreError {
    path: PathBuf,
    kind: StoreErrorKind,
}

impl StoreError {
    /// An error of `kind` concerning `path` (for code that writes a log or a store on
    /// the store's behalf, such as a service's audit writer).
    pub fn new(path: &Path, kind: StoreErrorKind) -> Self {
        StoreError {
            path: path.to_path_buf(),
            kind,
        }
    }

    pub(crate) fn io(path: &Path, err: &std::io::Error) -> Self {
        let kind = match err.raw_os_error() {
            Some(code) if code == libc_enospc() || code == libc_edquot() => StoreErrorKind::Full,
            _ if err.kind() == std::io::ErrorKind::PermissionDenied => {
                StoreErrorKind::Permissions(err.to_string())
            }
            _ => StoreErrorKind::Io(err.to_string()),
        };
        StoreError::new(path, kind)
    }

    pub(crate) fn sqlite(path: &Path, err: rusqlite::Error) -> Self {
        use rusqlite::ErrorCode as C;
        let kind = match &err {
            rusqlite::Error::SqliteFailure(e, msg) => match e.code {
                C::DatabaseBusy | C::DatabaseLocked => StoreErrorKind::Locked,
                C::DatabaseCorrupt | C::NotADatabase => {
                    StoreErrorKind::Corrupt(msg.clone().unwrap_or_else(|| e.to_string()))
                }
                C::DiskFull => StoreErrorKind::Full,
                C::PermissionDenied | C::ReadOnly | C::CannotOpen => {
                    StoreErrorKind::Permissions(msg.clone().unwrap_or_else(|| e.to_string()))
                }
                _ => StoreErrorKind::Io(err.to_string()),
            },
            _ => StoreErrorKind::Io(err.to_string()),
        };
        StoreError::new(path, kind)
    }

    /// Whether the error concerns a shared (PostgreSQL) store: its path is the URL.
    fn is_shared(&self) -> bool {
        let p = self.path.to_string_lossy();
        p.starts_with("postgres://") || p.starts_with("postgresql://")
    }

    /// The file this error concerns.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What went wrong.
    pub fn kind(&self) -> &StoreErrorKind {
        &self.kind
    }
}

// The errno values are fixed by the Linux ABI; naming them here avoids a libc dependency.
const fn libc_enospc() -> i32 {
    28
}
const fn libc_edquot() -> i32 {
    122
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.path.display();
        match &self.kind {
            StoreErrorKind::Locked => write!(
                f,
                "{p} is locked by another process; nothing was granted from it — retry when that process has finished"
            ),
            StoreErrorKind::Corrupt(why) => write!(
                f,
                "{p} is corrupt ({why}); nothing was granted from it — move it aside and cordon will start an empty store"
            ),
            StoreErrorKind::Full => write!(
                f,
                "the disk holding {p} is full; nothing was granted — free some space and retry"
            ),
            StoreErrorKind::NewerSchema { found, supported } => write!(
                f,
                "{p} has schema version {found} but this cordon understands up to {supported}; nothing was granted from it — upgrade cordon or point it at another store"
            ),
            StoreErrorKind::Permissions(why) if self.is_shared() => write!(
                f,
                "the shared store {p} refused the login ({why}); nothing was granted from it — check the role in `[store] url` and its password (`password_file` or `password_env`)"
            ),
            StoreErrorKind::Permissions(why) => write!(
                f,
                "{p} cannot be used safely ({why}); nothing was granted from it — fix its ownership and permissions (0600 file in a 0700 directory)"
            ),
            StoreErrorKind::NoStateDir => write!(
                f,
                "no state directory is known (neither XDG_STATE_HOME nor HOME is set); set CORDON_STATE_DIR or pass a store path"
            ),
            StoreErrorKind::NoSuchPending(id) => {
                write!(
                    f,
                    "{p} holds no pending approval with id {id}; run `cordon approvals list`"
                )
            }
            StoreErrorKind::AlreadyAnswered { id, state } => {
                write!(f, "approval {id} in {p} was already answered ({state})")
            }
            StoreErrorKind::Invalid(why) => write!(f, "{p}: {why}"),
            StoreErrorKind::Unavailable(why) => write!(
                f,
                "the shared store {p} is unavailable ({why}); nothing was granted from it — check that the PostgreSQL server is running and reachable"
            ),
            StoreErrorKind::Io(why) if self.is_shared() => write!(
                f,
                "the shared store {p} could not be used ({why}); nothing was granted from it — check `[store] url` and the server's log"
            ),
            StoreErrorKind::Io(why) => write!(
                f,
                "{p} could not be used ({why}); nothing was granted from it — check the file and its directory"
            ),
            StoreErrorKind::NotPermitted(why) => write!(
                f,
                "the shared store {p} refused this to the database role cordon logs in as ({why}); nothing was changed or granted — answering approvals, writing leases, remembering rules and ending sessions need a role in cordon_approver"
            ),
            StoreErrorKind::Unverifiable { id, why } => write!(
                f,
                "approval {id} in {p} cannot be approved from what it shows ({why}), so nothing was granted and it stays pending — answer the call at the asking machine's terminal, approve it with an edit that spells the whole input, or deny it"
            ),
            StoreErrorKind::Tls(why) => write!(
                f,
                "the shared store {p} was refused: TLS with verify-full failed ({why}), so no login, password or query was sent and nothing was granted from it — check `[store] ca_file` and that the server's certificate names the host in the URL"
            ),
        }
    }
}

impl std::error::Error for StoreError {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PgTarget;

    /// A shared store's errors give advice about the server and its login, not the local
    /// file's; an empty host is named as such; a URL's `#fragment` is never shown.
    #[test]
    fn a_shared_stores_errors_speak_of_the_server() {
        let url = Path::new("postgres://m1@localhost/cordon");
        let e = StoreError::new(
            url,
            StoreErrorKind::Permissions("password authentication failed".into()),
        );
        let text = e.to_string();
        assert!(
            text.contains("refused the login") && !text.contains("0700"),
            "{text}"
        );
        let e = StoreError::new(url, StoreErrorKind::Io("relation missing".into()));
        let text = e.to_string();
        assert!(!text.contains("check the file and its directory"), "{text}");
        let file = Path::new("/home/u/.local/state/cordon/store.sqlite3");
        let text = StoreError::new(file, StoreErrorKind::Permissions("denied".into())).to_string();
        assert!(text.contains("0700"), "{text}");
        let text = PgTarget::new("postgresql:///cordon?host=&user=u", None, "m")
            .unwrap_err()
            .to_string();
        assert!(!text.contains("host  is"), "{text}");
        assert!(
            text.contains("empty host") || text.contains("no host"),
            "{text}"
        );
        let t = PgTarget::new("postgres://u@localhost/cordon#SECRET-FRAGMENT", None, "m").unwrap();
        assert!(!t.url().contains("SECRET"), "{}", t.url());
    }

    /// The driver's refusal of a configuration (a password the server asks for and none
    /// given) is a configuration error, not an unavailable server.
    #[test]
    fn a_missing_password_is_not_an_unavailable_server() {
        let Some(c) = crate::pg_test::Cluster::shared() else {
            return;
        };
        let db = c.fresh_database();
        // More ports than hosts: the driver refuses the configuration before any socket.
        let url = format!(
            "postgresql:///{db}?host={}&port=5432,5433,5434&user=postgres",
            c.socket_dir().display()
        );
        let t = match PgTarget::new(&url, None, "m") {
            Ok(t) => t,
            Err(e) => {
                let text = e.to_string();
                assert!(!text.contains("server is running"), "{text}");
                return;
            }
        };
        let e = crate::Store::open_at(&crate::StoreAt::Postgres(t)).unwrap_err();
        let text = e.to_string();
        assert!(
            !text.contains("check that the PostgreSQL server is running"),
            "{text}"
        );
    }
}
