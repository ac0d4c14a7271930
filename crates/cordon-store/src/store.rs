//! The SQLite store: leases, remembered rules and pending approvals.
//!
//! Every read that could grant something runs inside a `BEGIN IMMEDIATE` transaction,
//! so it either sees a consistent store and records its use, or fails (locked, corrupt,
//! full) and grants nothing.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{
    Connection, OpenFlags, OptionalExtension, Transaction, TransactionBehavior, config::DbConfig,
    params,
};

use crate::error::{StoreError, StoreErrorKind};
use crate::paths;

/// A connection that closes with more than this many pages (4 KiB each) in the WAL
/// checkpoints it and truncates it to nothing. A process that opens the store while no
/// other has it open rebuilds the WAL's index from every frame in it (and cannot tell
/// what an earlier checkpoint already copied, so its own checkpoints would copy them all
/// again): the WAL must stay short. A few dozen hook calls share one checkpoint.
const WAL_TRIM_PAGES: u64 = 128;

/// Newest schema version this build reads and writes (`PRAGMA user_version`).
pub const SCHEMA_VERSION: i64 = 6;

/// Written to `PRAGMA application_id` so another program's database is not mistaken
/// for a store ("cord" in ASCII).
const APPLICATION_ID: i64 = 0x636f_7264;

/// Migrations, one per schema version; entry `i` moves the schema from `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE leases (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    fingerprint TEXT    NOT NULL CHECK (length(fingerprint) > 0),
    scope       TEXT    NOT NULL CHECK (scope IN ('once', 'session', 'always')),
    session     TEXT,
    created_ms  INTEGER NOT NULL,
    expires_ms  INTEGER,
    used_at_ms  INTEGER,
    uses        INTEGER NOT NULL DEFAULT 0,
    answer      TEXT    NOT NULL,
    revoked     INTEGER NOT NULL DEFAULT 0,
    CHECK ((scope = 'session') = (session IS NOT NULL))
);
CREATE INDEX leases_by_fingerprint ON leases (fingerprint);
CREATE TABLE rules (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    rule        TEXT    NOT NULL UNIQUE CHECK (length(rule) > 0),
    tool_kind   TEXT    NOT NULL,
    created_ms  INTEGER NOT NULL,
    created_by  TEXT    NOT NULL
);
CREATE TABLE pending (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    fingerprint TEXT    NOT NULL CHECK (length(fingerprint) > 0),
    session     TEXT,
    request     TEXT    NOT NULL,
    verdict     TEXT    NOT NULL,
    suggestion  TEXT,
    created_ms  INTEGER NOT NULL,
    state       TEXT    NOT NULL DEFAULT 'pending'
                CHECK (state IN ('pending', 'approved', 'denied')),
    answered_ms INTEGER,
    lease_id    INTEGER REFERENCES leases (id)
);
CREATE INDEX pending_by_state ON pending (state);
"#,
    r#"
ALTER TABLE leases ADD COLUMN operation_id TEXT;
ALTER TABLE leases ADD COLUMN origin TEXT;
ALTER TABLE leases ADD COLUMN input TEXT;
CREATE INDEX leases_by_origin ON leases (origin) WHERE origin IS NOT NULL;
ALTER TABLE pending ADD COLUMN operation_id TEXT;
ALTER TABLE pending ADD COLUMN edited_input TEXT;
CREATE TABLE operations (
    operation_id TEXT    NOT NULL CHECK (length(operation_id) > 0),
    surface      TEXT    NOT NULL,
    fingerprint  TEXT    NOT NULL,
    at_ms        INTEGER NOT NULL,
    PRIMARY KEY (operation_id, surface)
);
"#,
    // MCP servers' pinned identities (see `pins.rs`): one row per server and state, one
    // per tool and state; `approved` is what a human approved, `seen` a changed
    // definition waiting for approval.
    r#"
CREATE TABLE mcp_servers (
    name        TEXT    NOT NULL CHECK (length(name) > 0),
    state       TEXT    NOT NULL CHECK (state IN ('approved', 'seen')),
    command     TEXT    NOT NULL,
    at_ms       INTEGER NOT NULL,
    PRIMARY KEY (name, state)
);
CREATE TABLE mcp_tools (
    server      TEXT    NOT NULL CHECK (length(server) > 0),
    tool        TEXT    NOT NULL CHECK (length(tool) > 0),
    state       TEXT    NOT NULL CHECK (state IN ('approved', 'seen')),
    hash        TEXT    NOT NULL CHECK (length(hash) > 0),
    definition  TEXT    NOT NULL,
    at_ms       INTEGER NOT NULL,
    PRIMARY KEY (server, tool, state)
);
"#,
    // Sandbox slots' records (see `slots.rs`).
    r#"
CREATE TABLE slots (
    scope        TEXT    NOT NULL CHECK (scope IN ('session', 'user', 'agent', 'global')),
    scope_id     TEXT    NOT NULL CHECK (length(scope_id) > 0),
    key          TEXT    NOT NULL CHECK (length(key) > 0),
    dir          TEXT    NOT NULL,
    created_ms   INTEGER NOT NULL,
    last_used_ms INTEGER NOT NULL,
    runs         INTEGER NOT NULL DEFAULT 0,
    last_run     TEXT,
    last_status  INTEGER,
    size_bytes   INTEGER,
    PRIMARY KEY (scope, scope_id, key)
);
"#,
    // Sessions (see `sessions.rs`): one row per session, one per written path and one
    // per trifecta leg (the first call that added it; `key` is empty for legs).
    r#"
CREATE TABLE sessions (
    id            TEXT    PRIMARY KEY CHECK (length(id) > 0),
    started_ms    INTEGER NOT NULL,
    last_ms       INTEGER NOT NULL,
    writes        INTEGER NOT NULL DEFAULT 0,
    overflowed_ms INTEGER
);
CREATE INDEX sessions_by_last ON sessions (last_ms);
CREATE TABLE session_events (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    session      TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    kind         TEXT    NOT NULL
                 CHECK (kind IN ('write', 'private', 'untrusted', 'external')),
    key          TEXT    NOT NULL,
    target       TEXT    NOT NULL,
    hash         TEXT,
    at_ms        INTEGER NOT NULL,
    tool         TEXT    NOT NULL,
    call         TEXT    NOT NULL,
    operation_id TEXT,
    UNIQUE (session, kind, key)
);
"#,
    // Sessions remember directories a call filled (`tree`, keyed `DIR/`) beside files.
    // SQLite cannot change a CHECK in place: the table is rebuilt.
    r#"
CREATE TABLE session_events_next (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    session      TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    kind         TEXT    NOT NULL
                 CHECK (kind IN ('write', 'tree', 'private', 'untrusted', 'external')),
    key          TEXT    NOT NULL,
    target       TEXT    NOT NULL,
    hash         TEXT,
    at_ms        INTEGER NOT NULL,
    tool         TEXT    NOT NULL,
    call         TEXT    NOT NULL,
    operation_id TEXT,
    UNIQUE (session, kind, key)
);
INSERT INTO session_events_next
    SELECT seq, session, kind, key, target, hash, at_ms, tool, call, operation_id
    FROM session_events;
DROP TABLE session_events;
ALTER TABLE session_events_next RENAME TO session_events;
"#,
];

/// How long a lease made by approving a pending request stays usable by default.
pub(crate) const APPROVED_PENDING_TTL: Duration = Duration::from_secs(24 * 3600);

/// Options for [`Store::open_with`].
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// How long to wait for another process's lock before failing with
    /// [`StoreErrorKind::Locked`].
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LeaseId(pub i64);

impl std::fmt::Display for LeaseId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Identifier of a pending approval (never reused within one store).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
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
    /// The narrow rule "always allow" would save, if any.
    pub suggestion: Option<String>,
    /// When it was recorded.
    pub created: SystemTime,
    /// The harness's id of the call, if it had one: approving binds the once-lease to it.
    pub operation_id: Option<String>,
    /// The input a human put in place of the call's own when approving it, if any.
    pub edited_input: Option<serde_json::Map<String, serde_json::Value>>,
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
    /// Allow it once.
    Approve,
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

/// The store. One SQLite connection; open one per thread.
#[derive(Debug)]
pub struct Store {
    pub(crate) conn: Connection,
    pub(crate) path: PathBuf,
}

impl Drop for Store {
    fn drop(&mut self) {
        let mut wal = self.path.clone().into_os_string();
        wal.push("-wal");
        let long = std::fs::symlink_metadata(&wal).is_ok_and(|m| m.len() > WAL_TRIM_PAGES * 4096);
        if long {
            // Never wait for another process's readers here: the next close trims it.
            let _ = self.conn.busy_timeout(Duration::ZERO);
            let _ = self
                .conn
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
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

fn whoami() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_else(|_| format!("uid {}", rustix::process::geteuid().as_raw()))
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
            paths::ensure_dir(dir)?;
            paths::tighten_dir(dir)?;
        }
        Store::open(&path)
    }

    /// Open (creating if needed) the store at `path`.
    ///
    /// Fails, naming the file, when it is locked past the busy timeout, corrupt, not a
    /// cordon store, of a newer schema, or unsafe (a symlink, another user's file).
    pub fn open_with(path: &Path, options: &StoreOptions) -> Result<Store, StoreError> {
        // Create the file ourselves so that its mode is 0600 from the first byte on.
        drop(paths::open_private(path, false)?);
        let err = |e| StoreError::sqlite(path, e);
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(err)?;
        conn.busy_timeout(options.busy_timeout).map_err(err)?;
        let store = Store {
            conn,
            path: path.to_path_buf(),
        };
        let found = store.check_identity()?;
        let mode: String = store
            .conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
            .map_err(err)?;
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
        store
            .conn
            .set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)
            .map_err(err)?;
        store
            .conn
            .execute_batch("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;")
            .map_err(err)?;
        store.migrate(found)?;
        Ok(store)
    }

    /// The file this store lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn err(&self, e: rusqlite::Error) -> StoreError {
        StoreError::sqlite(&self.path, e)
    }

    fn versions(&self) -> Result<(i64, i64), StoreError> {
        // One statement for both: every open runs this, and each statement is parsed.
        self.conn
            .query_row(
                "SELECT (SELECT user_version FROM pragma_user_version()), \
                        (SELECT application_id FROM pragma_application_id())",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(|e| self.err(e))
    }

    /// Refuse another program's database and a schema newer than ours; the versions
    /// read.
    fn check_identity(&self) -> Result<(i64, i64), StoreError> {
        let (version, app) = self.versions()?;
        if version > SCHEMA_VERSION {
            return Err(StoreError::new(
                &self.path,
                StoreErrorKind::NewerSchema {
                    found: version,
                    supported: SCHEMA_VERSION,
                },
            ));
        }
        if version == 0 {
            let tables: i64 = self
                .conn
                .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
                .map_err(|e| self.err(e))?;
            if tables > 0 {
                return Err(StoreError::new(
                    &self.path,
                    StoreErrorKind::Corrupt(
                        "it is an SQLite database but not a cordon store".into(),
                    ),
                ));
            }
        } else if app != APPLICATION_ID {
            return Err(StoreError::new(
                &self.path,
                StoreErrorKind::Corrupt("it is an SQLite database but not a cordon store".into()),
            ));
        }
        Ok((version, app))
    }

    /// Bring the schema up to date; `found` is what [`Store::check_identity`] read.
    fn migrate(&self, found: (i64, i64)) -> Result<(), StoreError> {
        if found == (SCHEMA_VERSION, APPLICATION_ID) {
            // Up to date: opening needs no write lock.
            return Ok(());
        }
        let tx = self.immediate()?;
        // Read again under the write lock: another process may have migrated meanwhile.
        let (version, _) = self.versions()?;
        if version > SCHEMA_VERSION {
            return Err(StoreError::new(
                &self.path,
                StoreErrorKind::NewerSchema {
                    found: version,
                    supported: SCHEMA_VERSION,
                },
            ));
        }
        let start = usize::try_from(version).unwrap_or(usize::MAX);
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(start) {
            tx.execute_batch(sql).map_err(|e| self.err(e))?;
            tx.pragma_update(
                None,
                "user_version",
                i64::try_from(i + 1).unwrap_or(i64::MAX),
            )
            .map_err(|e| self.err(e))?;
        }
        tx.pragma_update(None, "application_id", APPLICATION_ID)
            .map_err(|e| self.err(e))?;
        tx.commit().map_err(|e| self.err(e))
    }

    pub(crate) fn immediate(&self) -> Result<Transaction<'_>, StoreError> {
        Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)
            .map_err(|e| self.err(e))
    }

    pub(crate) fn invalid(&self, why: &str) -> StoreError {
        StoreError::new(&self.path, StoreErrorKind::Invalid(why.to_string()))
    }

    /// Record an approval for the invocation with this fingerprint.
    ///
    /// `ttl` bounds its life (`None`: until revoked). `answer_note` records what the
    /// human answered, for the audit trail.
    pub fn grant(
        &self,
        fingerprint: &str,
        scope: Scope,
        ttl: Option<Duration>,
        answer_note: &str,
    ) -> Result<LeaseId, StoreError> {
        let tx = self.immediate()?;
        let id = self.insert_lease(&tx, fingerprint, &scope, ttl, answer_note, false)?;
        tx.commit().map_err(|e| self.err(e))?;
        Ok(id)
    }

    /// Record a once-lease that is spent at the moment it is made (an "allow once"
    /// answered at the terminal), so that the use has a lease id in the audit log.
    pub(crate) fn grant_spent(
        &self,
        fingerprint: &str,
        answer_note: &str,
    ) -> Result<LeaseId, StoreError> {
        let tx = self.immediate()?;
        let id = self.insert_lease(&tx, fingerprint, &Scope::Once, None, answer_note, true)?;
        tx.commit().map_err(|e| self.err(e))?;
        Ok(id)
    }

    fn insert_lease(
        &self,
        tx: &Transaction<'_>,
        fingerprint: &str,
        scope: &Scope,
        ttl: Option<Duration>,
        answer_note: &str,
        spent: bool,
    ) -> Result<LeaseId, StoreError> {
        if fingerprint.is_empty() {
            return Err(self.invalid("a lease needs a non-empty fingerprint"));
        }
        let session = match scope {
            Scope::Session(s) if s.is_empty() => {
                return Err(self.invalid("a session lease needs a non-empty session id"));
            }
            Scope::Session(s) => Some(s.as_str()),
            _ => None,
        };
        let now = now_ms();
        let expires = ttl.map(|t| now.saturating_add(ttl_ms(t)));
        let (used, uses) = if spent { (Some(now), 1) } else { (None, 0) };
        tx.execute(
            "INSERT INTO leases (fingerprint, scope, session, created_ms, expires_ms, used_at_ms, uses, answer)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![fingerprint, scope.as_str(), session, now, expires, used, uses, answer_note],
        )
        .map_err(|e| self.err(e))?;
        Ok(LeaseId(tx.last_insert_rowid()))
    }

    /// Find a valid lease for this fingerprint and record its use, in one transaction.
    ///
    /// Valid means: not revoked, not expired, and either unused `Once`, `Always`, or
    /// `Session` of the same (non-empty) session. A `Once` lease is spent here: of two
    /// concurrent callers exactly one gets it. The check holds the write lock even when
    /// nothing is spent, so a store locked by another writer grants nothing. Session and always leases are preferred
    /// over once-leases so that the latter are not spent needlessly.
    pub fn consume(
        &self,
        fingerprint: &str,
        session: Option<&str>,
    ) -> Result<Option<LeaseUse>, StoreError> {
        self.consume_for(fingerprint, session, None)
    }

    /// [`consume`](Store::consume) for a call that carries the harness's operation id: a
    /// once-lease bound to an operation id (an approved pending request that had one)
    /// matches only a call with that same id.
    pub fn consume_for(
        &self,
        fingerprint: &str,
        session: Option<&str>,
        operation_id: Option<&str>,
    ) -> Result<Option<LeaseUse>, StoreError> {
        let session = session.filter(|s| !s.is_empty());
        let tx = self.immediate()?;
        let now = now_ms();
        let found = tx
            .query_row(
                "SELECT id, scope, session, answer FROM leases
                 WHERE fingerprint = ?1 AND revoked = 0
                   AND (expires_ms IS NULL OR expires_ms > ?2)
                   AND ((scope = 'once' AND used_at_ms IS NULL
                         AND (operation_id IS NULL OR operation_id = ?4))
                        OR scope = 'always'
                        OR (scope = 'session' AND ?3 IS NOT NULL AND session = ?3))
                 ORDER BY CASE scope WHEN 'session' THEN 0 WHEN 'always' THEN 1 ELSE 2 END, id
                 LIMIT 1",
                params![fingerprint, now, session, operation_id],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, Option<String>>(2)?,
                        r.get::<_, String>(3)?,
                    ))
                },
            )
            .optional()
            .map_err(|e| self.err(e))?;
        let Some((id, scope, lease_session, answer)) = found else {
            tx.commit().map_err(|e| self.err(e))?;
            return Ok(None);
        };
        let Some(scope) = Scope::from_row(&scope, lease_session) else {
            return Err(StoreError::new(
                &self.path,
                StoreErrorKind::Corrupt(format!("lease {id} has an unknown scope")),
            ));
        };
        // Only a once-lease changes state when used; recording every use of the others
        // would cost a synced write on the hot path, and the audit log has the use.
        if scope == Scope::Once {
            let changed = tx
                .execute(
                    "UPDATE leases SET used_at_ms = ?2, uses = uses + 1 WHERE id = ?1 AND used_at_ms IS NULL",
                    params![id, now],
                )
                .map_err(|e| self.err(e))?;
            if changed != 1 {
                // Impossible under the write lock; refuse rather than grant twice.
                return Ok(None);
            }
        }
        tx.commit().map_err(|e| self.err(e))?;
        Ok(Some(LeaseUse {
            lease: LeaseId(id),
            scope,
            answer,
        }))
    }

    /// Revoke a lease; returns whether it existed and was active.
    pub fn revoke(&self, lease: LeaseId) -> Result<bool, StoreError> {
        let n = self
            .conn
            .execute(
                "UPDATE leases SET revoked = 1 WHERE id = ?1 AND revoked = 0",
                [lease.0],
            )
            .map_err(|e| self.err(e))?;
        Ok(n == 1)
    }

    /// Leases that can still be used (not revoked, not expired, not spent).
    pub fn leases(&self) -> Result<Vec<Lease>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id, fingerprint, scope, session, created_ms, expires_ms, used_at_ms, uses, answer
                 FROM leases WHERE revoked = 0 AND (expires_ms IS NULL OR expires_ms > ?1)
                   AND NOT (scope = 'once' AND used_at_ms IS NOT NULL)
                 ORDER BY id",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([now_ms()], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, i64>(4)?,
                    r.get::<_, Option<i64>>(5)?,
                    r.get::<_, Option<i64>>(6)?,
                    r.get::<_, i64>(7)?,
                    r.get::<_, String>(8)?,
                ))
            })
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for row in rows {
            let (id, fingerprint, scope, session, created, expires, used, uses, answer) =
                row.map_err(|e| self.err(e))?;
            let scope = Scope::from_row(&scope, session).ok_or_else(|| {
                StoreError::new(
                    &self.path,
                    StoreErrorKind::Corrupt(format!("lease {id} has an unknown scope")),
                )
            })?;
            out.push(Lease {
                id: LeaseId(id),
                fingerprint,
                scope,
                created: from_ms(created),
                expires: expires.map(from_ms),
                used_at: used.map(from_ms),
                uses,
                answer,
            });
        }
        Ok(out)
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
        self.conn
            .execute(
                "INSERT OR IGNORE INTO rules (rule, tool_kind, created_ms, created_by) VALUES (?1, ?2, ?3, ?4)",
                params![rule, tool_kind, now_ms(), by],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Remove a remembered rule; returns whether it existed.
    pub fn forget_rule(&self, rule: &str) -> Result<bool, StoreError> {
        let n = self
            .conn
            .execute("DELETE FROM rules WHERE rule = ?1", [rule])
            .map_err(|e| self.err(e))?;
        Ok(n > 0)
    }

    /// Every remembered rule, oldest first.
    pub fn rules(&self) -> Result<Vec<RememberedRule>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT rule, tool_kind, created_ms, created_by FROM rules ORDER BY id")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(RememberedRule {
                    rule: r.get(0)?,
                    tool_kind: r.get(1)?,
                    created: from_ms(r.get(2)?),
                    created_by: r.get(3)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }

    /// Record a request that could not be put to a human now.
    pub fn add_pending(
        &self,
        fingerprint: &str,
        session: Option<&str>,
        request: &serde_json::Value,
        verdict: &serde_json::Value,
        suggestion: Option<&str>,
    ) -> Result<PendingId, StoreError> {
        self.add_pending_for(fingerprint, session, None, request, verdict, suggestion)
    }

    /// [`add_pending`](Store::add_pending) for a call that carries the harness's
    /// operation id: approving it makes a once-lease bound to that id.
    pub fn add_pending_for(
        &self,
        fingerprint: &str,
        session: Option<&str>,
        operation_id: Option<&str>,
        request: &serde_json::Value,
        verdict: &serde_json::Value,
        suggestion: Option<&str>,
    ) -> Result<PendingId, StoreError> {
        if fingerprint.is_empty() {
            return Err(self.invalid("a pending approval needs a non-empty fingerprint"));
        }
        let request = serde_json::to_string(request).map_err(|e| self.invalid(&e.to_string()))?;
        let verdict = serde_json::to_string(verdict).map_err(|e| self.invalid(&e.to_string()))?;
        self.conn
            .execute(
                "INSERT INTO pending (fingerprint, session, request, verdict, suggestion, created_ms, operation_id)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![fingerprint, session, request, verdict, suggestion, now_ms(), operation_id],
            )
            .map_err(|e| self.err(e))?;
        Ok(PendingId(self.conn.last_insert_rowid()))
    }

    const PENDING_COLUMNS: &'static str = "id, fingerprint, session, request, verdict, suggestion, created_ms, state, operation_id, edited_input";

    fn pending_from_row(&self, r: &rusqlite::Row<'_>) -> rusqlite::Result<(Pending, String)> {
        let request: String = r.get(3)?;
        let verdict: String = r.get(4)?;
        Ok((
            Pending {
                id: PendingId(r.get(0)?),
                fingerprint: r.get(1)?,
                session: r.get(2)?,
                request: serde_json::from_str(&request)
                    .unwrap_or(serde_json::Value::String(request)),
                verdict: serde_json::from_str(&verdict)
                    .unwrap_or(serde_json::Value::String(verdict)),
                suggestion: r.get(5)?,
                created: from_ms(r.get(6)?),
                operation_id: r.get(8)?,
                edited_input: r
                    .get::<_, Option<String>>(9)?
                    .and_then(|t| serde_json::from_str(&t).ok()),
            },
            r.get(7)?,
        ))
    }

    /// Requests still waiting for a human, oldest first.
    pub fn pending(&self) -> Result<Vec<Pending>, StoreError> {
        let sql = format!(
            "SELECT {} FROM pending WHERE state = 'pending' ORDER BY id",
            Self::PENDING_COLUMNS
        );
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| self.pending_from_row(r))
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for row in rows {
            out.push(row.map_err(|e| self.err(e))?.0);
        }
        Ok(out)
    }

    /// One recorded request in any state, with that state.
    pub fn approval(&self, id: PendingId) -> Result<(Pending, PendingState), StoreError> {
        let sql = format!(
            "SELECT {} FROM pending WHERE id = ?1",
            Self::PENDING_COLUMNS
        );
        let row = self
            .conn
            .query_row(&sql, [id.0], |r| self.pending_from_row(r))
            .optional()
            .map_err(|e| self.err(e))?;
        let Some((p, state)) = row else {
            return Err(StoreError::new(
                &self.path,
                StoreErrorKind::NoSuchPending(id.0),
            ));
        };
        let state = PendingState::parse(&state).ok_or_else(|| {
            StoreError::new(
                &self.path,
                StoreErrorKind::Corrupt(format!("approval {} has an unknown state", id.0)),
            )
        })?;
        Ok((p, state))
    }

    /// The request with this id, if it is still waiting for a human.
    pub fn get_pending(&self, id: PendingId) -> Result<Pending, StoreError> {
        match self.approval(id)? {
            (p, PendingState::Pending) => Ok(p),
            (_, state) => Err(StoreError::new(
                &self.path,
                StoreErrorKind::AlreadyAnswered {
                    id: id.0,
                    state: state.as_str().to_string(),
                },
            )),
        }
    }

    /// Answer a pending request by id.
    pub fn answer(&self, id: PendingId, answer: Answer) -> Result<Answered, StoreError> {
        let pending = self.get_pending(id)?;
        match answer {
            Answer::Approve => pending.approve(self).map(Answered::Approved),
            Answer::Deny => pending.deny(self).map(Answered::Denied),
        }
    }

    /// Move a pending row to its final state, creating the lease when approving; one
    /// transaction, and only if it is still pending (a second answer fails).
    fn settle(
        &self,
        pending: &Pending,
        approve: bool,
        ttl: Duration,
        edit: Option<&crate::operations::Edit>,
    ) -> Result<Option<LeaseId>, StoreError> {
        let tx = self.immediate()?;
        let lease = if approve {
            let note = match edit {
                Some(_) => format!(
                    "approved pending request {} with an edited input",
                    pending.id
                ),
                None => format!("approved pending request {}", pending.id),
            };
            let fingerprint = edit.map_or(pending.fingerprint.as_str(), |e| e.fingerprint.as_str());
            let id = self.insert_lease(&tx, fingerprint, &Scope::Once, Some(ttl), &note, false)?;
            self.bind_lease(&tx, id, pending, edit)?;
            Some(id)
        } else {
            None
        };
        let edited = edit
            .map(|e| serde_json::to_string(&e.input))
            .transpose()
            .map_err(|e| self.invalid(&e.to_string()))?;
        let n = tx
            .execute(
                "UPDATE pending SET state = ?2, answered_ms = ?3, lease_id = ?4, edited_input = ?5 WHERE id = ?1 AND state = 'pending'",
                params![
                    pending.id.0,
                    if approve { "approved" } else { "denied" },
                    now_ms(),
                    lease.map(|l| l.0),
                    edited
                ],
            )
            .map_err(|e| self.err(e))?;
        if n != 1 {
            // Dropping the transaction rolls the lease back.
            let state = self
                .approval(pending.id)
                .map(|(_, s)| s.as_str().to_string());
            return Err(StoreError::new(
                &self.path,
                StoreErrorKind::AlreadyAnswered {
                    id: pending.id.0,
                    state: state.unwrap_or_else(|_| "unknown".into()),
                },
            ));
        }
        tx.commit().map_err(|e| self.err(e))?;
        Ok(lease)
    }
}

impl Pending {
    /// Approve: the request becomes `approved` and a once-lease for its fingerprint is
    /// created (valid for 24 hours), so the resumed call gets through exactly once.
    pub fn approve(self, store: &Store) -> Result<Approved, StoreError> {
        self.approve_for(store, APPROVED_PENDING_TTL)
    }

    /// Approve with a chosen lifetime for the once-lease.
    pub fn approve_for(self, store: &Store, ttl: Duration) -> Result<Approved, StoreError> {
        match store.settle(&self, true, ttl, None)? {
            Some(lease) => Ok(Approved {
                pending: self,
                lease,
            }),
            None => Err(store.invalid("approving created no lease")),
        }
    }

    /// Approve with the input a human put in its place: the once-lease is for the edited
    /// call (`edit.fingerprint`, computed by the policy, which has judged it), and the
    /// call's next arrival (same operation id, or same fingerprint without one) is
    /// turned into the edited one.
    pub fn approve_edited(
        self,
        store: &Store,
        edit: &crate::operations::Edit,
    ) -> Result<Approved, StoreError> {
        match store.settle(&self, true, APPROVED_PENDING_TTL, Some(edit))? {
            Some(lease) => Ok(Approved {
                pending: self,
                lease,
            }),
            None => Err(store.invalid("approving created no lease")),
        }
    }

    /// Deny: the request becomes `denied`; nothing is granted.
    pub fn deny(self, store: &Store) -> Result<Denied, StoreError> {
        store.settle(&self, false, Duration::ZERO, None)?;
        Ok(Denied { pending: self })
    }
}
