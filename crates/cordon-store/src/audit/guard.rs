//! What protects an anchored log beyond its chain: the store holding its head, the key
//! signing its batches, and the check a writer makes before it appends.
//!
//! Before appending, the writer holds the file to the head the store anchored: the
//! anchored record must still end at the anchored byte offset with the anchored hash,
//! and every line from there to the end must chain to it. Otherwise the log was cut,
//! rolled back, rewritten or replaced; the writer still appends (decisions do not stop),
//! but it says so in a record of its own and keeps the finding in the store, where
//! `verify` reports it until a human re-anchors. A writer never signs or anchors over a
//! divergence without recording it.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::PathBuf;

use serde_json::Value;

use super::{LastLine, LineRead, Tail, hash_hex, read_last_line, read_line};
use crate::anchor::{AuditAnchor, AuditHead};
use crate::audit_key::AuditKey;
use crate::error::StoreError;
use crate::store::Store;

/// The store anchoring a log's head and the key signing its batches.
pub(super) struct Guard {
    /// The store file holding the head.
    store_path: PathBuf,
    /// Its connection, opened at the first write.
    store: Option<Store>,
    /// Signs the last record of every batch.
    key: AuditKey,
    /// The log's canonical path: the anchor's key.
    anchor_key: PathBuf,
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Guard({})", self.store_path.display())
    }
}

impl Guard {
    pub(super) fn new(store: &std::path::Path, key: AuditKey, anchor_key: PathBuf) -> Guard {
        Guard {
            store_path: store.to_path_buf(),
            store: None,
            key,
            anchor_key,
        }
    }

    /// Use `store` instead of opening a connection, when it is one to this guard's store
    /// file and the guard holds none; else hand it back.
    pub(super) fn lend(&mut self, store: Store) -> Option<Store> {
        if self.store.is_none() && store.path() == self.store_path {
            self.store = Some(store);
            None
        } else {
            Some(store)
        }
    }

    /// The connection this guard holds, lent or opened by itself.
    pub(super) fn take_store(&mut self) -> Option<Store> {
        self.store.take()
    }

    pub(super) fn key(&self) -> &AuditKey {
        &self.key
    }

    fn store(&mut self) -> Result<&Store, StoreError> {
        let store = match self.store.take() {
            Some(s) => s,
            None => Store::open(&self.store_path)?,
        };
        Ok(self.store.insert(store))
    }

    /// The head the store anchored for this log, if any.
    pub(super) fn anchor(&mut self) -> Result<Option<AuditAnchor>, StoreError> {
        let key = self.anchor_key.clone();
        self.store()?.audit_anchor(&key)
    }

    /// Move the anchored head to `new`, ending at byte `offset`, keeping `finding`.
    pub(super) fn advance(
        &mut self,
        new: &AuditHead,
        offset: u64,
        finding: Option<&str>,
    ) -> Result<(), StoreError> {
        let key = self.anchor_key.clone();
        self.store()?.advance_audit_head(&key, new, offset, finding)
    }
}

/// Hold the file (whose complete part ends with `tail`) to the anchor `a`: `None` when
/// the anchored record is where the store put it and the chain from it to the end holds,
/// else one sentence saying what differs.
pub(super) fn check(
    file: &mut File,
    a: &AuditAnchor,
    log_id: &str,
    tail: &Tail,
) -> std::io::Result<Option<String>> {
    let next = tail.seq.saturating_add(1);
    let head = &a.head;
    if head.log_id != log_id {
        return Ok(Some(format!(
            "when record {next} was appended, the file was not the log the store had anchored \
             (which had reached record {}): the log was deleted or replaced by another file",
            head.seq
        )));
    }
    let cut = || {
        Some(format!(
            "when record {next} was appended, the log ended at record {} but the store had \
             anchored record {}: records were cut from its end or an older copy was put back",
            tail.seq, head.seq
        ))
    };
    let rewritten = || {
        Some(format!(
            "when record {next} was appended, the log's record {} was not the one the store had \
             anchored: the log was rewritten",
            head.seq
        ))
    };
    if a.offset == 0 {
        // A head kept before offsets were: compare with the last line only.
        return Ok(if head.seq > tail.seq {
            cut()
        } else if head.seq == tail.seq && head.hash != tail.hash {
            rewritten()
        } else {
            None
        });
    }
    if a.offset > tail.len {
        return Ok(if head.seq > tail.seq {
            cut()
        } else {
            rewritten()
        });
    }
    let at_anchor = if a.offset == tail.len {
        Some(tail.hash.clone())
    } else {
        match read_last_line(file, a.offset)? {
            LastLine::Found(end, Some(line)) if end == a.offset => Some(hash_hex(&line)),
            _ => None,
        }
    };
    if at_anchor.as_deref() != Some(head.hash.as_str()) {
        return Ok(if head.seq > tail.seq {
            cut()
        } else {
            rewritten()
        });
    }
    // From the anchored record to the end, every line must chain to the one before.
    file.seek(SeekFrom::Start(a.offset))?;
    let mut reader = BufReader::new((&*file).take(tail.len - a.offset));
    let (mut prev_seq, mut prev_hash) = (head.seq, head.hash.clone());
    let mut buf = Vec::new();
    loop {
        let line = match read_line(&mut reader, &mut buf)? {
            LineRead::Eof => return Ok(None),
            LineRead::Complete(n) => &buf[..n - 1],
            LineRead::Partial | LineRead::TooLong => &buf[..0],
        };
        let record = serde_json::from_slice::<Value>(line).ok();
        let seq = record
            .as_ref()
            .and_then(|r| r.get("seq"))
            .and_then(Value::as_u64);
        let prev = record
            .as_ref()
            .and_then(|r| r.get("prev"))
            .and_then(Value::as_str);
        let expected = prev_seq.checked_add(1);
        if seq.is_none() || seq != expected || prev != Some(prev_hash.as_str()) {
            return Ok(Some(format!(
                "when record {next} was appended, the lines after the anchored record {} did not \
                 chain to it (record {} expected): the log was edited after it",
                head.seq,
                expected.map_or_else(|| "none".into(), |e| e.to_string())
            )));
        }
        prev_seq = seq.unwrap_or(prev_seq);
        prev_hash = hash_hex(line);
    }
}
