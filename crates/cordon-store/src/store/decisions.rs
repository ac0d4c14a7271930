//! Decisions shipped from each machine's audit log, so that a console shows every
//! machine's decisions. The log on each machine stays the record (its chain, its anchor,
//! its signature); these rows are a copy for reading, and prove nothing by themselves.

use std::time::SystemTime;

use super::{Store, db::args, from_ms, now_ms};

use crate::error::StoreError;

/// One decision shipped from a machine's audit log.
#[derive(Debug, Clone, PartialEq)]
pub struct DecisionRow {
    /// The machine whose log it came from.
    pub machine: String,
    /// The log's identity (its path or its header's hash).
    pub log: String,
    /// The record's sequence number in that log.
    pub seq: u64,
    /// When it was decided (the record's `time`, else when it was shipped).
    pub at: SystemTime,
    /// The record as the log holds it.
    pub record: serde_json::Value,
}

impl Store {
    /// Add records shipped from `machine`'s log `log`: `(seq, the JSON line)`. Idempotent
    /// on (machine, log, seq): shipping twice stores once. Returns how many were new. A
    /// line that is not a JSON object is refused, and nothing of the batch is stored.
    pub fn add_decisions(
        &self,
        machine: &str,
        log: &str,
        records: &[(u64, &str)],
    ) -> Result<usize, StoreError> {
        if machine.is_empty() {
            return Err(self.invalid("a shipped decision needs a machine name"));
        }
        let mut parsed = Vec::with_capacity(records.len());
        for (seq, line) in records {
            let value: serde_json::Value = serde_json::from_str(line)
                .map_err(|e| self.invalid(&format!("decision {seq} of {log} is not JSON ({e})")))?;
            if !value.is_object() {
                return Err(self.invalid(&format!("decision {seq} of {log} is not an object")));
            }
            let at = value
                .get("time")
                .and_then(serde_json::Value::as_str)
                .and_then(|t| humantime::parse_rfc3339_weak(t).ok())
                .map_or_else(now_ms, super::to_ms);
            let seq = i64::try_from(*seq)
                .map_err(|_| self.invalid(&format!("decision {seq} of {log} is out of range")))?;
            parsed.push((seq, at, value.to_string()));
        }
        let tx = self.write()?;
        let mut added = 0;
        for (seq, at, record) in parsed {
            added += tx.exec(
                "INSERT INTO decisions (machine, log, seq, at_ms, record) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT DO NOTHING",
                args![machine, log, seq, at, record],
            )?;
        }
        tx.commit()?;
        Ok(usize::try_from(added).unwrap_or(usize::MAX))
    }

    /// Shipped decisions, newest first, at most `limit`, optionally only `machine`'s.
    pub fn decisions(
        &self,
        machine: Option<&str>,
        limit: usize,
    ) -> Result<Vec<DecisionRow>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self.rows(
            "SELECT machine, log, seq, at_ms, record FROM decisions
             WHERE CAST(?1 AS TEXT) IS NULL OR machine = CAST(?1 AS TEXT)
             ORDER BY at_ms DESC, machine, log, seq DESC LIMIT ?2",
            args![machine, limit],
        )?;
        rows.iter()
            .map(|r| {
                let record = r.text(4)?;
                Ok(DecisionRow {
                    machine: r.text(0)?,
                    log: r.text(1)?,
                    seq: u64::try_from(r.i64(2)?).unwrap_or(0),
                    at: from_ms(r.i64(3)?),
                    record: serde_json::from_str(&record)
                        .unwrap_or(serde_json::Value::String(record)),
                })
            })
            .collect()
    }
}
