//! The audit log's head, anchored in the store.
//!
//! The chain alone proves that no line was changed *relative to the last one*: cutting
//! records off the end, or putting back an older copy of the file, leaves a chain that
//! verifies. So every append also writes, under the log's lock and after the records
//! are in the file, the (sequence, hash) of the log's last record into the store, keyed
//! by the log's canonical path, together with the hash of its header line (which log
//! it is). [`verify_with`](crate::verify_with) then holds the file to that head.
//!
//! Before appending, a writer checks the file against the head: the anchored record
//! must still end at the anchored offset with the anchored hash, and the chain from it to
//! the file's end must hold (see `audit/guard.rs`). What it finds otherwise is kept here
//! as the anchor's finding until a human re-anchors.
//!
//! The anchor is written after the records, never before: a writer killed in between
//! leaves the anchor behind the log (a few records past the head, which verify
//! accepts), never ahead of it (which verify reports as a cut).

use std::path::{Path, PathBuf};

use rusqlite::{OptionalExtension, params};

use crate::error::StoreError;
use crate::store::{Store, now_ms};

/// The head of one audit log as the store last saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditHead {
    /// blake3 hex of the log's header line: which log this is.
    pub log_id: String,
    /// Sequence number of the last record written (0: the header only).
    pub seq: u64,
    /// blake3 hex of that record's line.
    pub hash: String,
}

/// A log's anchored head and what its writers found (see [`Store::audit_anchor`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditAnchor {
    /// The newest head written.
    pub head: AuditHead,
    /// The first time a writer found the file at odds with the head before appending
    /// (cut, an older copy, another log): one sentence, kept until a human re-anchors.
    pub finding: Option<String>,
    /// Byte offset just past the head's line in the file (0: not known, a head written
    /// before offsets were kept).
    pub offset: u64,
}

/// The key under which a log's head is kept: its canonical path (the directory
/// resolved, the file name as given, so that a log not yet created has one too).
pub fn anchor_key(log: &Path) -> PathBuf {
    let dir = crate::paths::parent_of(log);
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    match log.file_name() {
        Some(name) => dir.join(name),
        None => dir,
    }
}

/// What [`Store::lite`] names when a shared store is asked for audit heads.
const HEADS: &str = "audit logs' anchored heads";

/// What [`Store::lite`] names when a shared store is asked for export cursors.
const CURSORS: &str = "export cursors";

impl Store {
    /// Move the anchored head of the log `log` (see [`anchor_key`]) to `new`, whose line
    /// ends at byte `offset` of the file. `finding`: what the writer found at odds with
    /// the previous head before this append (the writer checked, under the log's lock);
    /// it is kept until a human re-anchors, the first one winning.
    ///
    /// The commit never waits for the disk (`synchronous = NORMAL`), whether the records
    /// were synced or not. After synced records (a run's start) the head is written once
    /// they are on disk, so whatever a power cut keeps of it is at or behind them (which
    /// verify accepts), never ahead; a synced commit here would only narrow, after a power
    /// cut, the records a cut of the file could take unnoticed, and it cost every `cordon
    /// exec` one more `fsync` before its command started. After records written without
    /// waiting (a hook's, a run's end) a power cut may keep the head and lose the records,
    /// as it always could (docs/guide/audit.md): verify then reports them as cut.
    pub fn advance_audit_head(
        &self,
        log: &Path,
        new: &AuditHead,
        offset: u64,
        finding: Option<&str>,
    ) -> Result<(), StoreError> {
        let key = log.to_string_lossy();
        let seq = i64::try_from(new.seq).unwrap_or(i64::MAX);
        let offset = i64::try_from(offset).unwrap_or(0);
        let write = || -> Result<(), StoreError> {
            let tx = self.write()?;
            let before = self.audit_anchor(log)?;
            let note = before
                .and_then(|a| a.finding)
                .or_else(|| finding.map(str::to_string));
            self.lite(HEADS)?
                .prepare_cached(
                    "INSERT INTO audit_heads (log, log_id, seq, hash, at_ms, finding, offset) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) \
                     ON CONFLICT (log) DO UPDATE SET log_id = excluded.log_id, \
                     seq = excluded.seq, hash = excluded.hash, at_ms = excluded.at_ms, \
                     finding = excluded.finding, offset = excluded.offset",
                )
                .and_then(|mut s| {
                    s.execute(params![
                        key,
                        new.log_id,
                        seq,
                        new.hash,
                        now_ms(),
                        note,
                        offset
                    ])
                })
                .map_err(|e| self.err(e))?;
            tx.commit()
        };
        // As `claim_operation` does: this commit need not wait for the disk.
        let conn = self.lite(HEADS)?;
        let run = |sql: &str| conn.execute_batch(sql);
        run("PRAGMA synchronous = NORMAL").map_err(|e| self.err(e))?;
        let result = write();
        let restored = run("PRAGMA synchronous = FULL").map_err(|e| self.err(e));
        result.and(restored)
    }

    /// Set the anchored head of the log `log` to `head` and forget any finding: for a
    /// human who has looked at what verify reported and starts trusting the file as it
    /// is.
    /// `offset`: where the head's line ends in the file.
    pub fn reanchor_audit(
        &self,
        log: &Path,
        head: &AuditHead,
        offset: u64,
    ) -> Result<(), StoreError> {
        let seq = i64::try_from(head.seq).unwrap_or(i64::MAX);
        let offset = i64::try_from(offset).unwrap_or(0);
        self.lite(HEADS)?
            .execute(
                "INSERT INTO audit_heads (log, log_id, seq, hash, at_ms, finding, offset) \
                 VALUES (?1, ?2, ?3, ?4, ?5, NULL, ?6) \
                 ON CONFLICT (log) DO UPDATE SET log_id = excluded.log_id, seq = excluded.seq, \
                 hash = excluded.hash, at_ms = excluded.at_ms, finding = NULL, \
                 offset = excluded.offset",
                params![
                    log.to_string_lossy(),
                    head.log_id,
                    seq,
                    head.hash,
                    now_ms(),
                    offset
                ],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// The head anchored for the log `log` (see [`anchor_key`]), if any.
    pub fn audit_anchor(&self, log: &Path) -> Result<Option<AuditAnchor>, StoreError> {
        let key = log.to_string_lossy();
        self.lite(HEADS)?
            .prepare_cached(
                "SELECT log_id, seq, hash, finding, offset FROM audit_heads WHERE log = ?1",
            )
            .and_then(|mut s| {
                s.query_row(params![key], |r| {
                    Ok(AuditAnchor {
                        head: AuditHead {
                            log_id: r.get(0)?,
                            seq: u64::try_from(r.get::<_, i64>(1)?).unwrap_or(0),
                            hash: r.get(2)?,
                        },
                        finding: r.get(3)?,
                        offset: u64::try_from(r.get::<_, i64>(4)?).unwrap_or(0),
                    })
                })
                .optional()
            })
            .map_err(|e| self.err(e))
    }
}

/// How far a log was exported: the last record shipped and the byte offset just past
/// its line (see [`Store::export_cursor`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ExportCursor {
    /// blake3 hex of the header line of the log the cursor is in.
    pub log_id: String,
    /// The last record shipped (0: none).
    pub seq: u64,
    /// Byte offset just past that record's line.
    pub offset: u64,
}

impl Store {
    /// How far the log `log` (see [`anchor_key`]) was exported, if ever.
    pub fn export_cursor(&self, log: &Path) -> Result<Option<ExportCursor>, StoreError> {
        self.lite(CURSORS)?
            .prepare_cached("SELECT log_id, seq, offset FROM audit_export WHERE log = ?1")
            .and_then(|mut s| {
                s.query_row(params![log.to_string_lossy()], |r| {
                    Ok(ExportCursor {
                        log_id: r.get(0)?,
                        seq: u64::try_from(r.get::<_, i64>(1)?).unwrap_or(0),
                        offset: u64::try_from(r.get::<_, i64>(2)?).unwrap_or(0),
                    })
                })
                .optional()
            })
            .map_err(|e| self.err(e))
    }

    /// Record that the log `log` was exported through `cursor`.
    pub fn set_export_cursor(&self, log: &Path, cursor: &ExportCursor) -> Result<(), StoreError> {
        let int = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        self.lite(CURSORS)?
            .prepare_cached(
                "INSERT INTO audit_export (log, log_id, seq, offset, at_ms) \
                 VALUES (?1, ?2, ?3, ?4, ?5) \
                 ON CONFLICT (log) DO UPDATE SET log_id = excluded.log_id, seq = excluded.seq, \
                 offset = excluded.offset, at_ms = excluded.at_ms",
            )
            .and_then(|mut s| {
                s.execute(params![
                    log.to_string_lossy(),
                    cursor.log_id,
                    int(cursor.seq),
                    int(cursor.offset),
                    now_ms()
                ])
            })
            .map(drop)
            .map_err(|e| self.err(e))
    }
}
