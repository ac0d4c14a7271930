//! Shipping this machine's audit log to the fleet's shared store, so that the console of
//! any machine shows every machine's decisions.
//!
//! The queue is the one the OTLP export reads ([`records_after`]): the log from a cursor
//! on, the cursor kept in the local store under a key of its own (the log's anchor key
//! with [`FLEET_CURSOR_SUFFIX`]), moved only after the shared store took the batch. The
//! shared table is idempotent on (machine, log, seq), so a crash between the two ships a
//! batch twice and stores it once. The log stays the record: the shared copy is for
//! watching, never what `cordon audit verify` checks. Nothing here runs in a decision's
//! path: `cordon serve` and the console ship in the background, and a one-shot process
//! ships what it wrote after answering, best effort.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use cordon_store::{ExportCursor, Store, StoreAt, anchor_key, records_after};

use crate::drain::{BATCH_BYTES, BATCH_RECORDS, Background};

/// Appended to the log's anchor key to name the fleet shipping cursor in the local store
/// (the OTLP export's cursor is the bare key).
pub const FLEET_CURSOR_SUFFIX: &str = "#fleet";

/// Ships one log to one shared store.
#[derive(Debug, Clone)]
pub struct Shipper {
    log: PathBuf,
    local: PathBuf,
    shared: Arc<StoreAt>,
}

impl Shipper {
    /// A shipper of the log at `log`, its cursor in the local store at `local`, to the
    /// shared store at `shared`.
    pub fn new(log: &Path, local: &Path, shared: Arc<StoreAt>) -> Shipper {
        Shipper {
            log: log.to_path_buf(),
            local: local.to_path_buf(),
            shared,
        }
    }

    fn cursor_key(&self) -> PathBuf {
        let mut key = anchor_key(&self.log).into_os_string();
        key.push(FLEET_CURSOR_SUFFIX);
        PathBuf::from(key)
    }

    /// Ship every record after the cursor through open stores; the number shipped.
    pub fn ship_with(&self, local: &Store, shared: &Store) -> Result<u64, String> {
        let key = self.cursor_key();
        let mut shipped = 0u64;
        loop {
            let cursor = local.export_cursor(&key).map_err(|e| e.to_string())?;
            let queued = records_after(&self.log, cursor.as_ref(), BATCH_RECORDS, BATCH_BYTES)
                .map_err(|e| e.to_string())?;
            let Some(last) = queued.records.last() else {
                return Ok(shipped);
            };
            // The header (seq 0) is no decision; a line that is not UTF-8 is not JSON
            // and is left to `verify`.
            let batch: Vec<(u64, &str)> = queued
                .records
                .iter()
                .filter(|r| r.seq > 0)
                .filter_map(|r| std::str::from_utf8(&r.line).ok().map(|l| (r.seq, l)))
                .collect();
            if !batch.is_empty() {
                shared
                    .add_decisions(shared.machine(), &queued.log_id, &batch)
                    .map_err(|e| e.to_string())?;
            }
            shipped += batch.len() as u64;
            let next = ExportCursor {
                log_id: queued.log_id.clone(),
                seq: last.seq,
                offset: last.end,
            };
            local
                .set_export_cursor(&key, &next)
                .map_err(|e| e.to_string())?;
        }
    }

    /// Open both stores and ship; the number shipped.
    pub fn ship(&self) -> Result<u64, String> {
        let local = Store::open(&self.local).map_err(|e| e.to_string())?;
        let shared = Store::open_at(&self.shared).map_err(|e| e.to_string())?;
        self.ship_with(&local, &shared)
    }

    /// Ship every `interval` in a background thread until stopped; while the shared
    /// store is away, retry with backoff (up to a minute), saying so on stderr once per
    /// change of failure, prefixed `who`.
    pub fn spawn(self, interval: Duration, who: &'static str) -> std::io::Result<Background> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("cordon-fleet-ship".into())
            .spawn(move || {
                let mut last_error = String::new();
                let mut stores: Option<(Store, Store)> = None;
                let mut wait = interval;
                while !flag.load(Ordering::Relaxed) {
                    let kept = stores
                        .take()
                        .filter(|(l, s)| l.is_current() && s.is_current());
                    let opened = match kept {
                        Some(s) => Ok(s),
                        None => Store::open(&self.local)
                            .and_then(|l| Store::open_at(&self.shared).map(|s| (l, s)))
                            .map_err(|e| e.to_string()),
                    };
                    let result = opened.and_then(|(l, s)| {
                        let n = self.ship_with(&l, &s);
                        if n.is_ok() {
                            stores = Some((l, s));
                        }
                        n
                    });
                    match result {
                        Ok(_) => {
                            if !last_error.is_empty() {
                                eprintln!("{who}: decisions reach the shared store again");
                            }
                            last_error.clear();
                            wait = interval;
                        }
                        Err(text) => {
                            if text != last_error {
                                eprintln!(
                                    "{who}: decisions not shipped to the shared store yet ({text}); they stay queued in the audit log"
                                );
                                last_error = text;
                            }
                            wait = (wait * 2).min(Duration::from_secs(60));
                        }
                    }
                    let until = Instant::now() + wait;
                    while Instant::now() < until && !flag.load(Ordering::Relaxed) {
                        std::thread::sleep(Duration::from_millis(50).min(wait));
                    }
                }
            })?;
        Ok(Background::running(stop, thread))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // test code
mod tests {
    use super::*;
    use cordon_store::{AuditLog, Durability};

    /// Shipping twice stores once, a lost cursor ships again without duplicates, and a
    /// record written later is shipped after the ones before it.
    #[test]
    fn shipping_is_idempotent_and_resumes_at_the_cursor() {
        let dir = tempfile::tempdir().unwrap();
        let (log, local) = (
            dir.path().join("audit.jsonl"),
            dir.path().join("store.sqlite3"),
        );
        let shared_path = dir.path().join("shared.sqlite3");
        let mut audit = AuditLog::open_anchored(&log, Durability::FsyncEach, &local).unwrap();
        for i in 0..3 {
            audit
                .append(&serde_json::json!({"kind": "decision", "decision": "allow", "n": i}))
                .unwrap();
        }
        let shipper = Shipper::new(&log, &local, Arc::new(StoreAt::File(shared_path.clone())));
        assert_eq!(shipper.ship().unwrap(), 3);
        assert_eq!(shipper.ship().unwrap(), 0, "nothing new after the cursor");
        let shared = Store::open(&shared_path).unwrap();
        let rows = shared.decisions(None, 100).unwrap();
        assert_eq!(rows.len(), 3);
        let mut seqs: Vec<u64> = rows.iter().map(|r| r.seq).collect();
        seqs.sort_unstable();
        assert_eq!(seqs, vec![1, 2, 3]);
        assert_eq!(rows[0].record["kind"], "decision");

        // The cursor lost (a new local store): everything is shipped again, stored once.
        let fresh = dir.path().join("fresh.sqlite3");
        let again = Shipper::new(&log, &fresh, Arc::new(StoreAt::File(shared_path.clone())));
        assert_eq!(again.ship().unwrap(), 3);
        assert_eq!(shared.decisions(None, 100).unwrap().len(), 3);

        audit
            .append(&serde_json::json!({"kind": "decision", "decision": "deny", "n": 3}))
            .unwrap();
        assert_eq!(shipper.ship().unwrap(), 1);
        let rows = shared.decisions(None, 100).unwrap();
        assert_eq!(rows.len(), 4);
        assert!(
            rows.iter()
                .any(|r| r.seq == 4 && r.record["decision"] == "deny")
        );
    }
}
