//! The SQLite store: leases, remembered rules and pending approvals.
//!
//! Every read that could grant something runs inside a `BEGIN IMMEDIATE` transaction,
//! so it either sees a consistent store and records its use, or fails (locked, corrupt,
//! full) and grants nothing.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OpenFlags, config::DbConfig};

use crate::at::{PgTarget, StoreAt};
use crate::error::{StoreError, StoreErrorKind};
use crate::paths;
use db::{Conn, args};

pub use always::{AlwaysApproved, RulePick};
pub use decisions::DecisionRow;
mod always;
pub(crate) mod db;
mod decisions;
mod leases;
mod pending;
mod pg_schema;
mod schema;

pub use leases::GATEWAY_RUN_SESSION;
pub(crate) use leases::once_session;
pub use pending::{Reach, SESSION_TTL};

/// A connection that closes with more than this many pages (4 KiB each) in the WAL
/// checkpoints it and truncates it to nothing. A process that opens the store while no
/// other has it open rebuilds the WAL's index from every frame in it (about 4 µs a page
/// here, on every hook call; and it cannot tell what an earlier checkpoint already copied,
/// so its own checkpoints would copy them all again): the WAL must stay short. A hook
/// call's claim adds one page, so about 64 calls share one checkpoint (its two syncs).
const WAL_TRIM_PAGES: u64 = 64;

/// Newest schema version this build reads and writes (`PRAGMA user_version`).
pub const SCHEMA_VERSION: i64 = 13;

/// Newest schema version of a shared (PostgreSQL) store this build reads and writes.
pub const PG_SCHEMA_VERSION: i64 = 3;

/// Written to `PRAGMA application_id` so another program's database is not mistaken
/// for a store ("cord" in ASCII).
const APPLICATION_ID: i64 = 0x636f_7264;

/// How long a lease made by approving a pending request stays usable by default.
pub(crate) const APPROVED_PENDING_TTL: Duration = Duration::from_secs(24 * 3600);

/// Options for [`Store::open_with`].
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// How long to wait for another process's lock before failing with
    /// [`StoreErrorKind::Locked`] (on PostgreSQL: the fleet's write lock, as the
    /// session's `lock_timeout`).
    pub busy_timeout: Duration,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            busy_timeout: Duration::from_secs(5),
        }
    }
}

/// How far an approval reaches.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Scope {
    /// One use, then spent.
    Once,
    /// Any number of uses by the named session.
    Session(String),
    /// Any number of uses by anyone, until it expires or is revoked.
    Always,
}

impl Scope {
    fn as_str(&self) -> &'static str {
        match self {
            Scope::Once => "once",
            Scope::Session(_) => "session",
            Scope::Always => "always",
        }
    }

    fn from_row(scope: &str, session: Option<String>) -> Option<Scope> {
        match (scope, session) {
            ("once", _) => Some(Scope::Once),
            ("always", _) => Some(Scope::Always),
            ("session", Some(s)) => Some(Scope::Session(s)),
            _ => None,
        }
    }
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Scope::Session(s) => write!(f, "session {s}"),
            other => f.write_str(other.as_str()),
        }
    }
}

/// Identifier of a lease (never reused within one store).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(transparent)]
pub struct LeaseId(pub i64);

impl std::fmt::Display for LeaseId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Identifier of a pending approval (never reused within one store).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(transparent)]
pub struct PendingId(pub i64);

impl std::fmt::Display for PendingId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A lease that [`Store::consume`] found valid and has recorded as used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseUse {
    /// The lease.
    pub lease: LeaseId,
    /// Its scope.
    pub scope: Scope,
    /// The note recorded with the human's answer.
    pub answer: String,
}

/// A lease as listed by [`Store::leases`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// The lease.
    pub id: LeaseId,
    /// Fingerprint of the invocation it covers.
    pub fingerprint: String,
    /// Its scope.
    pub scope: Scope,
    /// When it was granted.
    pub created: SystemTime,
    /// When it stops being valid, if ever.
    pub expires: Option<SystemTime>,
    /// When a once-lease was spent (other scopes do not record uses; the audit log does).
    pub used_at: Option<SystemTime>,
    /// 1 for a spent once-lease, else 0.
    pub uses: i64,
    /// The note recorded with the human's answer.
    pub answer: String,
}

/// A rule a human chose to "always allow".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RememberedRule {
    /// The rule in Claude Code syntax, e.g. `Bash(cargo test:*)`.
    pub rule: String,
    /// The tool kind it applies to (`bash`, `read`, `write`, `network`, `mcp`, …).
    pub tool_kind: String,
    /// When it was saved.
    pub created: SystemTime,
    /// Who saved it.
    pub created_by: String,
}

/// State of a recorded approval request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PendingState {
    /// Waiting for a human.
    Pending,
    /// A human approved it; a once-lease exists for its fingerprint.
    Approved,
    /// A human denied it.
    Denied,
}

impl PendingState {
    fn parse(s: &str) -> Option<Self> {
        match s {
            "pending" => Some(PendingState::Pending),
            "approved" => Some(PendingState::Approved),
            "denied" => Some(PendingState::Denied),
            _ => None,
        }
    }

    /// The word stored and printed for this state.
    pub fn as_str(self) -> &'static str {
        match self {
            PendingState::Pending => "pending",
            PendingState::Approved => "approved",
            PendingState::Denied => "denied",
        }
    }
}

/// A request waiting for a human. Answering it consumes the value: see
/// [`Pending::approve`] and [`Pending::deny`].
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    /// Its id.
    pub id: PendingId,
    /// Fingerprint of the exact invocation.
    pub fingerprint: String,
    /// Session that asked, if any.
    pub session: Option<String>,
    /// The normalized request, as the policy saw it.
    pub request: serde_json::Value,
    /// The verdict that said "ask".
    pub verdict: serde_json::Value,
    /// The narrow rule "always allow" would save (the exact call), if any.
    pub suggestion: Option<String>,
    /// Every rule "always allow" may save, `suggestion` first, then the generalisations
    /// offered with it (each with an example of what else it allows).
    pub suggestions: Vec<cordon_policy::suggest::RuleOption>,
    /// When it was recorded.
    pub created: SystemTime,
    /// The harness's id of the call, if it had one: approving binds the once-lease to it.
    pub operation_id: Option<String>,
    /// The input a human put in place of the call's own when approving it, if any.
    pub edited_input: Option<serde_json::Map<String, serde_json::Value>>,
    /// The machine that asked (`None` for a request recorded before machines were).
    pub machine: Option<String>,
}

/// Proof that a pending request was approved: only [`Pending::approve`] makes one.
#[derive(Debug, Clone, PartialEq)]
pub struct Approved {
    pending: Pending,
    lease: LeaseId,
}

impl Approved {
    /// The request that was approved.
    pub fn request(&self) -> &Pending {
        &self.pending
    }

    /// The once-lease created for its fingerprint.
    pub fn lease(&self) -> LeaseId {
        self.lease
    }
}

/// Proof that a pending request was denied: only [`Pending::deny`] makes one.
#[derive(Debug, Clone, PartialEq)]
pub struct Denied {
    pending: Pending,
}

impl Denied {
    /// The request that was denied.
    pub fn request(&self) -> &Pending {
        &self.pending
    }
}

/// A human's answer to a pending request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Allow it once, in the session it was asked in (or only without a session when it
    /// was asked without one).
    Approve,
    /// Allow it once, in any session or none.
    ApproveAnySession,
    /// Allow the same call for the rest of the session it was asked in (12 hours).
    ApproveForSession,
    /// Refuse it.
    Deny,
}

/// The outcome of [`Store::answer`].
#[derive(Debug, Clone, PartialEq)]
pub enum Answered {
    /// Approved, with the lease that lets the resumed call through once.
    Approved(Approved),
    /// Denied.
    Denied(Denied),
}

/// The store: one connection, to the SQLite file or to the shared PostgreSQL database;
/// open one per thread.
#[derive(Debug)]
pub struct Store {
    pub(crate) conn: Conn,
    /// The file, or the database's URL (never with a password): what errors name.
    pub(crate) path: PathBuf,
    /// The (device, inode) of the file as it was before SQLite opened it.
    identity: (u64, u64),
    /// This machine's name.
    machine: String,
}

impl Drop for Store {
    fn drop(&mut self) {
        let Conn::Lite(conn) = &self.conn else {
            return;
        };
        let mut wal = self.path.clone().into_os_string();
        wal.push("-wal");
        let long = std::fs::symlink_metadata(&wal).is_ok_and(|m| m.len() > WAL_TRIM_PAGES * 4096);
        if long {
            // Never wait for another process's readers here: the next close trims it.
            let _ = conn.busy_timeout(Duration::ZERO);
            let _ = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        }
    }
}

pub(crate) fn now_ms() -> i64 {
    to_ms(SystemTime::now())
}

fn to_ms(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(_) => 0,
    }
}

pub(crate) fn from_ms(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

fn ttl_ms(ttl: Duration) -> i64 {
    i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX)
}

/// This host's name, the machine a store on it names by default.
pub(crate) fn host_name() -> String {
    let name = rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned();
    if name.is_empty() {
        "localhost".into()
    } else {
        name
    }
}

fn whoami() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_else(|_| format!("uid {}", rustix::process::geteuid().as_raw()))
}

/// Put the database in WAL mode and return the mode it is in. Switching a new file's
/// mode takes an exclusive lock for which SQLite does not call the busy handler, so
/// processes that open a fresh store together would see "database is locked" at once;
/// the switch is tried again, briefly, until `timeout` has passed. A file already in
/// WAL mode takes no lock (the mode is read first).
fn wal_mode(conn: &Connection, timeout: Duration) -> rusqlite::Result<String> {
    let start = std::time::Instant::now();
    loop {
        let now: String = conn.pragma_query_value(None, "journal_mode", |r| r.get(0))?;
        if now.eq_ignore_ascii_case("wal") {
            return Ok(now);
        }
        match conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0)) {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy && start.elapsed() < timeout =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            other => return other,
        }
    }
}

impl Store {
    /// Open (creating if needed) the store at `path` with default options.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        Store::open_with(path, &StoreOptions::default())
    }

    /// Open the store at [`default_store_path`](crate::default_store_path), creating its
    /// directory with mode 0700.
    pub fn open_default() -> Result<Store, StoreError> {
        let path = paths::default_store_path()?;
        if let Some(dir) = path.parent() {
            paths::tighten_dir(&paths::ensure_dir(dir)?)?;
        }
        Store::open(&path)
    }

    /// Open (creating if needed) the store at `path`.
    ///
    /// Fails, naming the file, when it is locked past the busy timeout, corrupt, not a
    /// cordon store, of a newer schema, or unsafe (a symlink, another user's file).
    pub fn open_with(path: &Path, options: &StoreOptions) -> Result<Store, StoreError> {
        // Create the file ourselves so that its mode is 0600 from the first byte on. Its
        // identity is taken before SQLite opens the path: a file swapped in between makes
        // `is_current` false, never true for a file this connection does not have.
        let identity = {
            let file = paths::open_private(path, false)?;
            let meta = file.metadata().map_err(|e| StoreError::io(path, &e))?;
            (meta.dev(), meta.ino())
        };
        let err = |e| StoreError::sqlite(path, e);
        // SQLite opens by path, and with `SQLITE_OPEN_NOFOLLOW` it refuses a symlink in
        // any component of it. The directory's own spelling may hold a legitimate one
        // (`/home -> /var/home`), so SQLite is given the directory as the kernel names
        // it; a link planted there afterwards is refused, and a file swapped in between
        // makes `is_current` false (see above).
        let real = std::fs::canonicalize(paths::parent_of(path))
            .map_err(|e| StoreError::io(path, &e))?
            .join(path.file_name().unwrap_or_default());
        let conn = Connection::open_with_flags(
            &real,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX
                | OpenFlags::SQLITE_OPEN_NOFOLLOW,
        )
        .map_err(err)?;
        conn.busy_timeout(options.busy_timeout).map_err(err)?;
        conn.set_prepared_statement_cache_capacity(64);
        let store = Store {
            conn: Conn::Lite(conn),
            path: path.to_path_buf(),
            identity,
            machine: host_name(),
        };
        let conn = store.lite("the store's settings")?;
        let found = store.check_identity()?;
        let mode = wal_mode(conn, options.busy_timeout).map_err(err)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::new(
                path,
                StoreErrorKind::Io(format!(
                    "the journal mode could not be set to WAL (got {mode})"
                )),
            ));
        }
        // Most connections live for one short process (a hook call, a check). By default
        // closing the last connection checkpoints the WAL into the database and deletes it
        // (two fsyncs), and the next process creates it again (two more: its header and the
        // directory). The WAL stays instead; `Drop` empties it once it has grown past
        // `WAL_TRIM_PAGES` pages.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)
            .map_err(err)?;
        conn.execute_batch("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;")
            .map_err(err)?;
        store.migrate(found)?;
        Ok(store)
    }

    /// Open the store wherever it lives. `File` is [`Store::open`].
    pub fn open_at(at: &StoreAt) -> Result<Store, StoreError> {
        match at {
            StoreAt::File(path) => Store::open(path),
            StoreAt::Postgres(target) => Store::open_pg(target, &StoreOptions::default()),
        }
    }

    /// Open the shared store in a PostgreSQL database, creating its tables in an empty
    /// one. Connecting is retried with doubling pauses for at most 2.5 seconds in all.
    ///
    /// Fails, naming the database (never a password), when it is unreachable, refuses
    /// the login, holds another application's tables, or has a newer schema.
    pub fn open_pg(target: &PgTarget, options: &StoreOptions) -> Result<Store, StoreError> {
        let store = Store::connect_pg(target, options)?;
        store.migrate_pg()?;
        Ok(store)
    }

    /// A connection to a shared store, its schema not checked yet.
    fn connect_pg(target: &PgTarget, options: &StoreOptions) -> Result<Store, StoreError> {
        let client = db::connect(target, options.busy_timeout)?;
        Ok(Store {
            conn: Conn::Pg(Box::new(std::cell::RefCell::new(db::PgConn::new(
                client,
                target.clone(),
                options.busy_timeout,
            )))),
            path: PathBuf::from(target.url()),
            identity: (0, 0),
            machine: target.machine().to_string(),
        })
    }

    /// The file this store lives in (for a shared store: its URL, without a password).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether this store is shared by a fleet (PostgreSQL).
    pub fn is_shared(&self) -> bool {
        self.pg()
    }

    /// This machine's name: the shared store's target's, else the host name.
    pub fn machine(&self) -> &str {
        &self.machine
    }

    /// Where the store lives, for messages (never a password).
    pub fn location(&self) -> String {
        match &self.conn {
            Conn::Lite(_) => self.path.display().to_string(),
            Conn::Pg(_) => format!("the PostgreSQL database {}", self.path.display()),
        }
    }

    /// Whether the store's path still names the file this connection was opened on. A
    /// store deleted, or replaced (restored from a backup, moved aside), is no longer
    /// current: a connection kept across calls must then be opened again, or it would
    /// go on granting the old file's leases and writing where nobody reads.
    ///
    /// A shared store is current while its connection is healthy: after the connection
    /// broke (the server restarted, the network failed) it is not, and a holder opens
    /// a new one.
    pub fn is_current(&self) -> bool {
        match &self.conn {
            Conn::Lite(_) => std::fs::symlink_metadata(&self.path)
                .is_ok_and(|m| (m.dev(), m.ino()) == self.identity),
            Conn::Pg(p) => p.try_borrow().is_ok_and(|p| p.healthy()),
        }
    }

    pub(crate) fn err(&self, e: rusqlite::Error) -> StoreError {
        StoreError::sqlite(&self.path, e)
    }

    pub(crate) fn invalid(&self, why: &str) -> StoreError {
        StoreError::new(&self.path, StoreErrorKind::Invalid(why.to_string()))
    }

    /// Save a rule a human chose to "always allow", attributed to the current user.
    /// Saving the same rule twice keeps the first record.
    pub fn remember_rule(&self, rule: &str, tool_kind: &str) -> Result<(), StoreError> {
        self.remember_rule_by(rule, tool_kind, &whoami())
    }

    /// Save a rule, naming who chose it.
    pub fn remember_rule_by(
        &self,
        rule: &str,
        tool_kind: &str,
        by: &str,
    ) -> Result<(), StoreError> {
        if rule.trim().is_empty() {
            return Err(self.invalid("a remembered rule must not be empty"));
        }
        self.exec(
            "INSERT INTO rules (rule, tool_kind, created_ms, created_by) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT DO NOTHING",
            args![rule, tool_kind, now_ms(), by],
        )?;
        Ok(())
    }

    /// Remove a remembered rule; returns whether it existed.
    pub fn forget_rule(&self, rule: &str) -> Result<bool, StoreError> {
        let n = self.exec("DELETE FROM rules WHERE rule = ?1", args![rule])?;
        Ok(n > 0)
    }

    /// Every remembered rule, oldest first.
    pub fn rules(&self) -> Result<Vec<RememberedRule>, StoreError> {
        self.rows(
            "SELECT rule, tool_kind, created_ms, created_by FROM rules ORDER BY id",
            args![],
        )?
        .iter()
        .map(|r| {
            Ok(RememberedRule {
                rule: r.text(0)?,
                tool_kind: r.text(1)?,
                created: from_ms(r.i64(2)?),
                created_by: r.text(3)?,
            })
        })
        .collect()
    }
}
