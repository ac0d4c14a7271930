//! Sessions: what a session's permitted calls did.
//!
//! One row per session (when it started, when it was last used, how many distinct
//! files it wrote, whether it ran past its cap) and one per event: a file written (one
//! row per path, updated by later writes of the same path) or the first call that gave
//! the session a leg of the lethal trifecta (private data, untrusted input, external
//! communication; later calls of the same leg add nothing).
//!
//! Bounded: a session remembers at most `max_writes` distinct written files. Past the
//! cap nothing is forgotten silently: the session is marked overflowed, and the gate
//! then treats every file a call executes as possibly written by the session. Idle
//! sessions expire: a session not used for `expire_after` is deleted on the next
//! record and ignored by every read before that.
//!
//! A directory beneath which a call may have written anything it did not name (code
//! cordon does not follow, a git command that rewrites the work tree) is kept as a
//! `tree` row whose `hash` column holds [`UNSEEN`]: read back as [`EventKind::Unseen`],
//! matched as a filled directory is (no schema change; a later fill of the same
//! directory relabels the row, and both mean that anything beneath may be new).
//!
//! This module stores and reads; the policy says what a call wrote or touched, and the
//! gate decides what a match means.

use std::time::{Duration, SystemTime};

use cordon_policy::session::Leg;

use crate::error::StoreError;
use crate::store::db::{Row, args};
use crate::store::{Store, from_ms, now_ms};

/// What a session event records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EventKind {
    /// A file was written or created.
    Write,
    /// A directory was filled with files the call named itself (`cp x pkg/`,
    /// `tar -x -C d`): anything beneath it may be new.
    Tree,
    /// Code whose writes cannot be read off the call ran in a directory: anything
    /// beneath it may have changed (matched as [`EventKind::Tree`] is).
    Unseen,
    /// A leg of the trifecta was added.
    Leg(Leg),
}

/// The `hash` of a `tree` row that records [`EventKind::Unseen`].
const UNSEEN: &str = "unseen";

impl EventKind {
    fn as_str(self) -> &'static str {
        match self {
            EventKind::Write => "write",
            EventKind::Tree => "tree",
            EventKind::Unseen => "unseen",
            EventKind::Leg(l) => l.as_str(),
        }
    }

    /// The `kind` column it is stored under.
    fn column(self) -> &'static str {
        match self {
            EventKind::Unseen => "tree",
            k => k.as_str(),
        }
    }

    fn parse(s: &str) -> Option<EventKind> {
        match s {
            "write" => Some(EventKind::Write),
            "tree" => Some(EventKind::Tree),
            other => Leg::parse(other).map(EventKind::Leg),
        }
    }
}

impl std::fmt::Display for EventKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The call an event came from, as reasons name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRef {
    /// The tool name.
    pub tool: String,
    /// A short rendering of the call (a command, a path, a URL).
    pub call: String,
    /// The harness's id of the call, if it had one.
    pub operation_id: Option<String>,
}

/// One recorded event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionEvent {
    /// Its sequence number (never reused within one store).
    pub seq: i64,
    /// What it records.
    pub kind: EventKind,
    /// The file written, or what the leg's call touched.
    pub target: String,
    /// The blake3 hash of the written content, when it was known.
    pub hash: Option<String>,
    /// When (for a write: the latest write of that path).
    pub at: SystemTime,
    /// The call that did it (for a write: the latest).
    pub by: CallRef,
}

/// What one permitted call adds to its session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionRecord {
    /// Files written, with their content hash when known.
    pub writes: Vec<(String, Option<String>)>,
    /// Directories filled (see [`EventKind::Tree`]).
    pub trees: Vec<String>,
    /// Directories where code whose writes cannot be read ran (see
    /// [`EventKind::Unseen`]).
    pub unseen: Vec<String>,
    /// Legs added, with what they touched.
    pub legs: Vec<(Leg, String)>,
}

impl SessionRecord {
    /// Whether there is nothing to record.
    pub fn is_empty(&self) -> bool {
        self.writes.is_empty()
            && self.trees.is_empty()
            && self.unseen.is_empty()
            && self.legs.is_empty()
    }
}

/// How much a session may hold, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    /// Distinct written files remembered per session.
    pub max_writes: u64,
    /// A session idle this long is forgotten.
    pub expire_after: Duration,
}

/// A session as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSummary {
    /// Its id (the harness's).
    pub id: String,
    /// Its first recorded call.
    pub started: SystemTime,
    /// Its latest recorded call.
    pub last: SystemTime,
    /// Distinct files it wrote (that it remembers).
    pub writes: u64,
    /// The legs it holds.
    pub legs: Vec<Leg>,
    /// When it ran past its cap of remembered writes, if it did.
    pub overflowed: Option<SystemTime>,
}

/// What the gate needs to judge one call of a session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionView {
    /// The legs the session holds, first call of each.
    pub legs: Vec<SessionEvent>,
    /// Writes beneath the asked prefixes, and filled directories at or above them.
    pub writes: Vec<SessionEvent>,
    /// When the session ran past its cap of remembered writes, if it did.
    pub overflowed: Option<SystemTime>,
}

fn event_from_row(r: &Row) -> Result<Option<SessionEvent>, StoreError> {
    let kind = r.text(1)?;
    let Some(kind) = EventKind::parse(&kind) else {
        return Ok(None);
    };
    let hash = r.opt_text(3)?;
    let (kind, hash) = match (kind, hash) {
        (EventKind::Tree, Some(h)) if h == UNSEEN => (EventKind::Unseen, None),
        other => other,
    };
    Ok(Some(SessionEvent {
        seq: r.i64(0)?,
        kind,
        target: r.text(2)?,
        hash,
        at: from_ms(r.i64(4)?),
        by: CallRef {
            tool: r.text(5)?,
            call: r.text(6)?,
            operation_id: r.opt_text(7)?,
        },
    }))
}

/// The largest key that starts with `prefix`: a range scan `prefix <= key < upper`.
fn upper(prefix: &str) -> String {
    format!("{prefix}\u{10FFFF}")
}

fn cutoff(expire_after: Duration) -> i64 {
    now_ms().saturating_sub(i64::try_from(expire_after.as_millis()).unwrap_or(i64::MAX))
}

impl Store {
    /// Record what a permitted call of `session` did, in one transaction; first
    /// deletes every session idle past `limits.expire_after`.
    pub fn record_session(
        &self,
        session: &str,
        by: &CallRef,
        rec: &SessionRecord,
        limits: SessionLimits,
    ) -> Result<(), StoreError> {
        if session.is_empty() {
            return Err(self.invalid("a session id must not be empty"));
        }
        let tx = self.write()?;
        let now = now_ms();
        if self.pg() {
            // Through the store's function: a machine's role may not delete sessions
            // itself (see pg_roles.sql), and for such a role the function deletes only
            // sessions idle for a day, whatever cut-off it is given.
            tx.row(
                "SELECT public.cordon_expire_sessions(?1)",
                args![cutoff(limits.expire_after)],
            )?;
        } else {
            tx.exec(
                "DELETE FROM sessions WHERE last_ms < ?1",
                args![cutoff(limits.expire_after)],
            )?;
        }
        tx.exec(
            "INSERT INTO sessions (id, started_ms, last_ms) VALUES (?1, ?2, ?2)
             ON CONFLICT (id) DO UPDATE SET last_ms = ?2",
            args![session, now],
        )?;
        let mut writes: u64 =
            match tx.row("SELECT writes FROM sessions WHERE id = ?1", args![session])? {
                Some(r) => u64::try_from(r.i64(0)?).unwrap_or(0),
                None => 0,
            };
        // A filled directory is keyed `DIR/`, so a prefix scan beneath the directory
        // finds it as well as the files written in it.
        let key = |t: &str| format!("{}/", t.trim_end_matches('/'));
        let trees = rec
            .trees
            .iter()
            .map(|t| (EventKind::Tree, key(t), t.clone(), None))
            .chain(rec.unseen.iter().map(|t| {
                (
                    EventKind::Unseen,
                    key(t),
                    t.clone(),
                    Some(UNSEEN.to_string()),
                )
            }));
        let files = rec
            .writes
            .iter()
            .map(|(p, h)| (EventKind::Write, p.clone(), p.clone(), h.clone()));
        let op = by.operation_id.as_deref();
        for (kind, key, target, hash) in files.chain(trees) {
            let updated = tx.exec(
                "UPDATE session_events SET hash = ?4, at_ms = ?5, tool = ?6, call = ?7, operation_id = ?8
                 WHERE session = ?1 AND kind = ?2 AND key = ?3",
                args![session, kind.column(), key.as_str(), hash.as_deref(), now, by.tool.as_str(), by.call.as_str(), op],
            )?;
            if updated > 0 {
                continue;
            }
            if writes >= limits.max_writes {
                tx.exec(
                    "UPDATE sessions SET overflowed_ms = ?2 WHERE id = ?1 AND overflowed_ms IS NULL",
                    args![session, now],
                )?;
                continue;
            }
            tx.exec(
                "INSERT INTO session_events (session, kind, key, target, hash, at_ms, tool, call, operation_id)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                args![session, kind.column(), key, target, hash, now, by.tool.as_str(), by.call.as_str(), op],
            )?;
            writes += 1;
        }
        tx.exec(
            "UPDATE sessions SET writes = ?2 WHERE id = ?1",
            args![session, i64::try_from(writes).unwrap_or(i64::MAX)],
        )?;
        for (leg, target) in &rec.legs {
            tx.exec(
                "INSERT INTO session_events (session, kind, key, target, at_ms, tool, call, operation_id)
                 VALUES (?1, ?2, '', ?3, ?4, ?5, ?6, ?7) ON CONFLICT DO NOTHING",
                args![session, leg.as_str(), target, now, by.tool.as_str(), by.call.as_str(), op],
            )?;
        }
        tx.commit()
    }

    /// The session's legs, its writes beneath any of `prefixes` (paths or directory
    /// prefixes ending in `/`), and the directories it filled at or above any of them.
    /// An unknown or expired session holds nothing.
    pub fn session_view(
        &self,
        session: &str,
        prefixes: &[&str],
        expire_after: Duration,
    ) -> Result<SessionView, StoreError> {
        let tx = self.read()?;
        let Some(row) = tx.row(
            "SELECT overflowed_ms FROM sessions WHERE id = ?1 AND last_ms >= ?2",
            args![session, cutoff(expire_after)],
        )?
        else {
            return Ok(SessionView::default());
        };
        let mut view = SessionView {
            overflowed: row.opt_i64(0)?.map(from_ms),
            ..SessionView::default()
        };
        for r in tx.rows(
            "SELECT seq, kind, target, hash, at_ms, tool, call, operation_id FROM session_events
             WHERE session = ?1 AND kind IN ('private', 'untrusted', 'external') ORDER BY seq",
            args![session],
        )? {
            view.legs.extend(event_from_row(&r)?);
        }
        // Each key range once: a prefix that starts with another prefix selects only keys
        // that one already selects (a module-wide pattern and the package's own share it).
        let mut ranges: Vec<&str> = prefixes.to_vec();
        ranges.sort_unstable();
        ranges.dedup();
        let ranges: Vec<&str> = ranges
            .iter()
            .enumerate()
            .filter(|(i, p)| !ranges[..*i].iter().any(|q| p.starts_with(q)))
            .map(|(_, p)| *p)
            .collect();
        let mut seen = std::collections::BTreeSet::new();
        for p in &ranges {
            for r in tx.rows(
                "SELECT seq, kind, target, hash, at_ms, tool, call, operation_id FROM session_events
                 WHERE session = ?1 AND kind IN ('write', 'tree') AND key >= ?2 AND key < ?3
                 ORDER BY seq",
                args![session, *p, upper(p)],
            )? {
                if let Some(ev) = event_from_row(&r)?
                    && seen.insert(ev.seq)
                {
                    view.writes.push(ev);
                }
            }
        }
        // Directories filled above a prefix: one lookup per ancestor.
        let mut asked = std::collections::BTreeSet::new();
        for p in prefixes {
            for (i, _) in p.match_indices('/') {
                let dir = &p[..=i];
                if !asked.insert(dir) {
                    continue;
                }
                for r in tx.rows(
                    "SELECT seq, kind, target, hash, at_ms, tool, call, operation_id
                     FROM session_events WHERE session = ?1 AND kind = 'tree' AND key = ?2",
                    args![session, dir],
                )? {
                    if let Some(ev) = event_from_row(&r)?
                        && seen.insert(ev.seq)
                    {
                        view.writes.push(ev);
                    }
                }
            }
        }
        // In the session's order, whatever the ranges.
        view.writes.sort_by_key(|ev| ev.seq);
        tx.commit()?;
        Ok(view)
    }

    /// Every session not idle past `expire_after`, most recently used first.
    pub fn sessions(&self, expire_after: Duration) -> Result<Vec<SessionSummary>, StoreError> {
        // The legs in one column: SQLite's group_concat is PostgreSQL's string_agg.
        let sql = if self.pg() {
            "SELECT s.id, s.started_ms, s.last_ms, s.writes, s.overflowed_ms,
                    (SELECT string_agg(kind, ',') FROM session_events
                     WHERE session = s.id AND kind NOT IN ('write', 'tree'))
             FROM sessions s WHERE s.last_ms >= ?1 ORDER BY s.last_ms DESC"
        } else {
            "SELECT s.id, s.started_ms, s.last_ms, s.writes, s.overflowed_ms,
                    (SELECT group_concat(kind) FROM session_events
                     WHERE session = s.id AND kind NOT IN ('write', 'tree'))
             FROM sessions s WHERE s.last_ms >= ?1 ORDER BY s.last_ms DESC"
        };
        self.rows(sql, args![cutoff(expire_after)])?
            .iter()
            .map(|r| {
                Ok(SessionSummary {
                    id: r.text(0)?,
                    started: from_ms(r.i64(1)?),
                    last: from_ms(r.i64(2)?),
                    writes: u64::try_from(r.i64(3)?).unwrap_or(0),
                    overflowed: r.opt_i64(4)?.map(from_ms),
                    legs: r
                        .opt_text(5)?
                        .unwrap_or_default()
                        .split(',')
                        .filter_map(Leg::parse)
                        .collect(),
                })
            })
            .collect()
    }

    /// One session and its events in order; `None` for an unknown or expired session.
    pub fn session(
        &self,
        id: &str,
        expire_after: Duration,
    ) -> Result<Option<(SessionSummary, Vec<SessionEvent>)>, StoreError> {
        let Some(summary) = self
            .sessions(expire_after)?
            .into_iter()
            .find(|s| s.id == id)
        else {
            return Ok(None);
        };
        let mut events = Vec::new();
        for r in self.rows(
            "SELECT seq, kind, target, hash, at_ms, tool, call, operation_id FROM session_events
             WHERE session = ?1 ORDER BY seq",
            args![id],
        )? {
            events.extend(event_from_row(&r)?);
        }
        Ok(Some((summary, events)))
    }

    /// Forget a session and everything it recorded; whether it existed.
    pub fn end_session(&self, id: &str) -> Result<bool, StoreError> {
        let tx = self.write()?;
        tx.exec("DELETE FROM session_events WHERE session = ?1", args![id])?;
        let n = tx.exec("DELETE FROM sessions WHERE id = ?1", args![id])?;
        tx.commit()?;
        Ok(n > 0)
    }
}
