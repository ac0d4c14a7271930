//! The database schema: the migrations in order, and the identity and version checks
//! made when a store is opened.

use super::{APPLICATION_ID, SCHEMA_VERSION, Store};
use crate::error::{StoreError, StoreErrorKind};

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
    // Operation claims keyed by their primary key alone (`WITHOUT ROWID`): a claim, which
    // every permitted hook call makes, writes one page instead of a row and an index entry,
    // so the WAL grows half as fast (see `WAL_TRIM_PAGES`).
    r#"
CREATE TABLE operations_next (
    operation_id TEXT    NOT NULL CHECK (length(operation_id) > 0),
    surface      TEXT    NOT NULL,
    fingerprint  TEXT    NOT NULL,
    at_ms        INTEGER NOT NULL,
    PRIMARY KEY (operation_id, surface)
) WITHOUT ROWID;
INSERT INTO operations_next SELECT operation_id, surface, fingerprint, at_ms FROM operations;
DROP TABLE operations;
ALTER TABLE operations_next RENAME TO operations;
"#,
    // Once-leases carry the session they were asked in (`bound_session`; NULL: asked
    // without one) and whether a human widened them to any session. A once-lease made
    // before this version takes the session of the pending approval it answers.
    r#"
ALTER TABLE leases ADD COLUMN bound_session TEXT;
ALTER TABLE leases ADD COLUMN any_session INTEGER NOT NULL DEFAULT 0;
UPDATE leases SET bound_session =
    (SELECT pending.session FROM pending WHERE pending.lease_id = leases.id)
    WHERE scope = 'once';
"#,
    // When operation claims were last pruned, and how large the store was then: a claim
    // prunes when an hour has passed or the store grew 1 MiB since (see
    // `Store::claim_operation`).
    r#"
CREATE TABLE operations_pruned (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    at_ms  INTEGER NOT NULL,
    bytes  INTEGER NOT NULL
);
INSERT INTO operations_pruned (id, at_ms, bytes) VALUES (1, 0, 0);
"#,
    // The rules "always allow" may save, narrowest first (a JSON array of
    // `{rule, example}`); `suggestion` stays the first of them. A request still waiting
    // that an earlier version offered a prefix rule (`Bash(git push:*)`, wider than the
    // call shown) offers none now: it can be approved once or for the session.
    r#"
ALTER TABLE pending ADD COLUMN suggestions TEXT;
UPDATE pending SET suggestion = NULL WHERE state = 'pending' AND suggestion LIKE '%:*)';
"#,
    // The head of each audit log this store's writers append to (see `anchor.rs`): the
    // log's canonical path, the hash of its header line (which log it is), and the
    // sequence number and hash of its last record, updated under the log's lock with
    // each append; `finding` is the first sentence a writer found the file at odds with
    // that head (cut, rolled back, replaced), kept until a human re-anchors the log.
    // `audit_export` is how far each log was shipped to the OpenTelemetry collector (the
    // record's seq and the byte offset just past it): the log from there on is the queue.
    r#"
CREATE TABLE audit_heads (
    log     TEXT    PRIMARY KEY CHECK (length(log) > 0),
    log_id  TEXT    NOT NULL CHECK (length(log_id) = 64),
    seq     INTEGER NOT NULL CHECK (seq >= 0),
    hash    TEXT    NOT NULL CHECK (length(hash) = 64),
    at_ms   INTEGER NOT NULL,
    finding TEXT
) WITHOUT ROWID;
CREATE TABLE audit_export (
    log     TEXT    PRIMARY KEY CHECK (length(log) > 0),
    log_id  TEXT    NOT NULL,
    seq     INTEGER NOT NULL CHECK (seq >= 0),
    offset  INTEGER NOT NULL CHECK (offset >= 0),
    at_ms   INTEGER NOT NULL
) WITHOUT ROWID;
"#,
    // Where the anchored head's line ends in the file (the byte offset just past its
    // newline; 0: not known), so that a writer checks that the anchored record is still
    // there, and the chain from it to the end intact, before it appends.
    r#"
ALTER TABLE audit_heads ADD COLUMN offset INTEGER NOT NULL DEFAULT 0 CHECK (offset >= 0);
"#,
    // The machine that asked for each pending approval, and decisions shipped from each
    // machine's audit log for the console (see `decisions.rs`), as in a shared store.
    r#"
ALTER TABLE pending ADD COLUMN machine TEXT;
CREATE TABLE decisions (
    machine TEXT    NOT NULL CHECK (length(machine) > 0),
    log     TEXT    NOT NULL,
    seq     INTEGER NOT NULL CHECK (seq >= 0),
    at_ms   INTEGER NOT NULL,
    record  TEXT    NOT NULL,
    PRIMARY KEY (machine, log, seq)
) WITHOUT ROWID;
CREATE INDEX decisions_by_at ON decisions (at_ms);
"#,
];

impl Store {
    fn versions(&self) -> Result<(i64, i64), StoreError> {
        // One statement for both: every open runs this, and each statement is parsed.
        self.lite("schema versions")?
            .query_row(
                "SELECT (SELECT user_version FROM pragma_user_version()), \
                        (SELECT application_id FROM pragma_application_id())",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(|e| self.err(e))
    }

    /// The versions and how many schema objects the file holds, read by one statement,
    /// so from one snapshot: read apart, a process creating the schema between the two
    /// reads made a fresh store look like another program's database.
    fn identity_snapshot(&self) -> Result<(i64, i64, i64), StoreError> {
        self.lite("schema versions")?
            .query_row(
                "SELECT (SELECT user_version FROM pragma_user_version()), \
                        (SELECT application_id FROM pragma_application_id()), \
                        (SELECT count(*) FROM sqlite_master)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .map_err(|e| self.err(e))
    }

    /// Refuse another program's database and a schema newer than ours; the versions
    /// read.
    pub(super) fn check_identity(&self) -> Result<(i64, i64), StoreError> {
        let (version, app, tables) = self.identity_snapshot()?;
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
    pub(super) fn migrate(&self, found: (i64, i64)) -> Result<(), StoreError> {
        if found == (SCHEMA_VERSION, APPLICATION_ID) {
            // Up to date: opening needs no write lock.
            return Ok(());
        }
        let tx = self.write()?;
        let conn = self.lite("schema versions")?;
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
            conn.execute_batch(sql).map_err(|e| self.err(e))?;
            conn.pragma_update(
                None,
                "user_version",
                i64::try_from(i + 1).unwrap_or(i64::MAX),
            )
            .map_err(|e| self.err(e))?;
        }
        conn.pragma_update(None, "application_id", APPLICATION_ID)
            .map_err(|e| self.err(e))?;
        tx.commit()
    }
}
