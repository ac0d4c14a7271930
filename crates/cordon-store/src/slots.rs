//! What the store remembers of sandbox slots: one row per slot (scope, scope id, key)
//! with when it was made and last used, how many runs used it, the last run's command
//! and exit status, and its size when last measured.
//!
//! The slot's files and its execution guard live on disk (`cordon-sandbox`'s `slot`
//! module); this is only their record, for `cordon slots list|show`. A row never grants
//! anything, and a missing row only means the slot was made by an older cordon.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use rusqlite::{OptionalExtension, params};

use crate::error::StoreError;
use crate::store::{Store, from_ms, now_ms};

pub use cordon_policy::settings::SlotScope;

/// One slot as the store knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotRecord {
    /// The scope.
    pub scope: SlotScope,
    /// The session id, uid, agent name, or `all`.
    pub scope_id: String,
    /// The key.
    pub key: String,
    /// The slot's directory.
    pub dir: PathBuf,
    /// When it was first used.
    pub created: SystemTime,
    /// When a run last took it.
    pub last_used: SystemTime,
    /// How many runs took it.
    pub runs: u64,
    /// The last run's command (display text).
    pub last_run: Option<String>,
    /// The last run's exit status, once it ended.
    pub last_status: Option<i32>,
    /// Bytes of its files when last measured.
    pub size: Option<u64>,
}

/// What [`Store::lite`] names when a shared store is asked for slots' records.
const SLOTS: &str = "sandbox slots' records";

const COLUMNS: &str =
    "scope, scope_id, key, dir, created_ms, last_used_ms, runs, last_run, last_status, size_bytes";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SlotRecord> {
    let scope: String = r.get(0)?;
    let dir: String = r.get(3)?;
    Ok(SlotRecord {
        scope: SlotScope::parse(&scope).unwrap_or_default(),
        scope_id: r.get(1)?,
        key: r.get(2)?,
        dir: PathBuf::from(dir),
        created: from_ms(r.get(4)?),
        last_used: from_ms(r.get(5)?),
        runs: u64::try_from(r.get::<_, i64>(6)?).unwrap_or(0),
        last_run: r.get(7)?,
        last_status: r.get(8)?,
        size: r
            .get::<_, Option<i64>>(9)?
            .and_then(|n| u64::try_from(n).ok()),
    })
}

impl Store {
    /// Record a run on the slot that ended with `status` (the record is made on first
    /// use). One write per run: cordon calls this once, when the run ends.
    pub fn slot_ran(
        &self,
        scope: SlotScope,
        scope_id: &str,
        key: &str,
        dir: &Path,
        command: &str,
        status: i32,
    ) -> Result<(), StoreError> {
        let now = now_ms();
        self.lite(SLOTS)?
            .execute(
                "INSERT INTO slots (scope, scope_id, key, dir, created_ms, last_used_ms, runs, last_run, last_status)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5, 1, ?6, ?7)
                 ON CONFLICT (scope, scope_id, key) DO UPDATE SET
                    dir = excluded.dir, last_used_ms = excluded.last_used_ms,
                    runs = runs + 1, last_run = excluded.last_run,
                    last_status = excluded.last_status",
                params![
                    scope.as_str(),
                    scope_id,
                    key,
                    dir.to_string_lossy(),
                    now,
                    command,
                    status
                ],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Record the slot's size as just measured.
    pub fn slot_measured(
        &self,
        scope: SlotScope,
        scope_id: &str,
        key: &str,
        bytes: u64,
    ) -> Result<(), StoreError> {
        self.lite(SLOTS)?
            .execute(
                "UPDATE slots SET size_bytes = ?4 WHERE scope = ?1 AND scope_id = ?2 AND key = ?3",
                params![
                    scope.as_str(),
                    scope_id,
                    key,
                    i64::try_from(bytes).unwrap_or(i64::MAX)
                ],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Every slot recorded, most recently used first.
    pub fn slots(&self) -> Result<Vec<SlotRecord>, StoreError> {
        let mut stmt = self
            .lite(SLOTS)?
            .prepare(&format!(
                "SELECT {COLUMNS} FROM slots ORDER BY last_used_ms DESC, key"
            ))
            .map_err(|e| self.err(e))?;
        let rows = stmt.query_map([], row).map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }

    /// One slot's record.
    pub fn slot(
        &self,
        scope: SlotScope,
        scope_id: &str,
        key: &str,
    ) -> Result<Option<SlotRecord>, StoreError> {
        self.lite(SLOTS)?
            .query_row(
                &format!(
                    "SELECT {COLUMNS} FROM slots WHERE scope = ?1 AND scope_id = ?2 AND key = ?3"
                ),
                params![scope.as_str(), scope_id, key],
                row,
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Forget a slot's record (after its directory was removed); whether there was one.
    pub fn slot_forget(
        &self,
        scope: SlotScope,
        scope_id: &str,
        key: &str,
    ) -> Result<bool, StoreError> {
        let n = self
            .lite(SLOTS)?
            .execute(
                "DELETE FROM slots WHERE scope = ?1 AND scope_id = ?2 AND key = ?3",
                params![scope.as_str(), scope_id, key],
            )
            .map_err(|e| self.err(e))?;
        Ok(n > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_runs_sizes_and_forgets() {
        let t = tempfile::tempdir().unwrap();
        let store = Store::open(&t.path().join("s.sqlite3")).unwrap();
        let dir = Path::new("/state/slots/user/0/venv");
        store
            .slot_ran(SlotScope::User, "0", "venv", dir, "pip install x", 0)
            .unwrap();
        store
            .slot_ran(SlotScope::User, "0", "venv", dir, "python -c 1", 3)
            .unwrap();
        store
            .slot_measured(SlotScope::User, "0", "venv", 42)
            .unwrap();
        let r = store.slot(SlotScope::User, "0", "venv").unwrap().unwrap();
        assert_eq!(r.runs, 2);
        assert_eq!(r.last_run.as_deref(), Some("python -c 1"));
        assert_eq!(r.last_status, Some(3));
        assert_eq!(r.size, Some(42));
        assert!(store.slot(SlotScope::Agent, "0", "venv").unwrap().is_none());
        assert_eq!(store.slots().unwrap().len(), 1);
        assert!(store.slot_forget(SlotScope::User, "0", "venv").unwrap());
        assert!(store.slots().unwrap().is_empty());
    }
}
