//! Checking a log: its chain alone ([`verify`]), or held to the head anchored in the
//! store and to the signatures of a key ([`verify_with`]).

use std::io::BufRead;
use std::path::Path;

use serde_json::Value;

use super::{Break, HEADER_KEY, Snapshot, VerifyReport, hash_hex, open_read};
use crate::anchor::{AuditAnchor, anchor_key};
use crate::audit_key::AuditPublicKey;
use crate::error::StoreError;
use crate::store::Store;

/// Walk the whole chain of the log at `path`: its lines, seqs and hashes (nothing
/// anchored, no signature checked; see [`verify_with`]).
pub fn verify(path: &Path) -> Result<VerifyReport, StoreError> {
    walk(path, &mut |_, _, _| None)
}

/// A check made on each line the chain vouches for: `(seq, line, parsed)` (seq 0 is the
/// header); a break to report there, or `None`.
type Visit<'a> = dyn FnMut(u64, &[u8], &Value) -> Option<(Break, String)> + 'a;

fn walk(path: &Path, visit: &mut Visit<'_>) -> Result<VerifyReport, StoreError> {
    let mut reader = open_read(path)?;
    let mut buf = Vec::new();
    let mut line_no = 0u64;
    let mut prev_hash = String::new();
    let mut prev_seq = 0u64;
    let mut records = 0u64;
    let broken = |line, why, detail: String, records_ok| {
        Ok(VerifyReport::Broken {
            line,
            why,
            detail,
            records_ok,
        })
    };
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| StoreError::io(path, &e))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        if buf.last() != Some(&b'\n') {
            return broken(
                line_no,
                Break::TornTail,
                format!(
                    "line {line_no} is incomplete (no newline): a write was cut short or the file was truncated"
                ),
                records,
            );
        }
        let line = &buf[..buf.len() - 1];
        let parsed = serde_json::from_slice::<Value>(line).ok();
        let is_header = parsed.as_ref().is_some_and(|v| v.get(HEADER_KEY).is_some());
        if line_no == 1 {
            let valid = parsed
                .as_ref()
                .filter(|_| is_header)
                .and_then(|v| v.get("seed"))
                .and_then(Value::as_str)
                .is_some_and(|s| s.len() == 64);
            if !valid {
                let detail = if is_header {
                    "the header has no valid seed".to_string()
                } else {
                    "the first line is not an audit header: the header was removed or this is not a cordon audit log".to_string()
                };
                return broken(
                    1,
                    if is_header {
                        Break::Edit
                    } else {
                        Break::MissingHeader
                    },
                    detail,
                    0,
                );
            }
            prev_hash = hash_hex(line);
            if let Some((why, detail)) = parsed.as_ref().and_then(|v| visit(0, line, v)) {
                return broken(1, why, detail, 0);
            }
            continue;
        }
        let Some(record) = parsed.filter(|v| v.is_object() && !is_header) else {
            return broken(
                line_no,
                Break::Edit,
                format!("line {line_no} is not a well-formed audit record"),
                records,
            );
        };
        let (Some(seq), Some(prev)) = (
            record.get("seq").and_then(Value::as_u64),
            record.get("prev").and_then(Value::as_str),
        ) else {
            return broken(
                line_no,
                Break::Edit,
                format!("line {line_no} lacks its seq or prev field"),
                records,
            );
        };
        let expected = prev_seq + 1;
        if seq < expected {
            return broken(
                line_no,
                Break::Reorder,
                format!(
                    "record {seq} appears after record {prev_seq}: records were reordered or duplicated"
                ),
                records,
            );
        }
        if seq > expected {
            let reordered = later_has_seq(&mut reader, expected, seq, path)?;
            let (why, detail) = if reordered {
                (
                    Break::Reorder,
                    format!(
                        "record {seq} appears where record {expected} was expected: records were reordered"
                    ),
                )
            } else {
                (
                    Break::Deletion,
                    format!(
                        "records {expected} to {} are missing before line {line_no}",
                        seq - 1
                    ),
                )
            };
            return broken(line_no, why, detail, records);
        }
        if prev != prev_hash {
            let edited = line_no - 1;
            return broken(
                edited,
                Break::Edit,
                format!(
                    "line {edited} does not match the hash recorded in line {line_no}: it was edited"
                ),
                records.saturating_sub(1),
            );
        }
        prev_hash = hash_hex(line);
        prev_seq = seq;
        if let Some((why, detail)) = visit(seq, line, &record) {
            return broken(line_no, why, detail, records);
        }
        records += 1;
    }
    if line_no == 0 {
        return broken(
            1,
            Break::MissingHeader,
            "the file is empty: its header and records are gone".into(),
            0,
        );
    }
    Ok(VerifyReport::Ok {
        records,
        head: prev_hash,
    })
}

/// Whether any later record carries a seq in `lo..hi` (distinguishes a reordering from a deletion).
fn later_has_seq(reader: &mut Snapshot, lo: u64, hi: u64, path: &Path) -> Result<bool, StoreError> {
    let mut buf = Vec::new();
    loop {
        buf.clear();
        if reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| StoreError::io(path, &e))?
            == 0
        {
            return Ok(false);
        }
        let seq = serde_json::from_slice::<Value>(&buf)
            .ok()
            .and_then(|v| v.get("seq").and_then(Value::as_u64));
        if seq.is_some_and(|s| s >= lo && s < hi) {
            return Ok(true);
        }
    }
}

/// What [`verify_with`] holds the log to besides its chain.
#[derive(Debug, Default)]
pub struct VerifyOptions<'a> {
    /// The store anchoring the log's head (the writers' store).
    pub store: Option<&'a Store>,
    /// The public key whose signatures must close the log.
    pub key: Option<&'a AuditPublicKey>,
}

/// The outcome of [`verify_with`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verification {
    /// The chain, anchor and signature checks together: `Broken` at the first failure.
    pub report: VerifyReport,
    /// The anchored head's seq when a store was given and holds one for this log.
    pub anchored: Option<u64>,
    /// The last record whose signature verified (when a key was given).
    pub signed_through: Option<u64>,
}

/// The body a record's signature covers and the signature, when the line ends in the
/// log's own `,"sig":"HEX"}`.
fn signed_parts<'l>(line: &'l [u8], record: &'l Value) -> Option<(&'l [u8], &'l str)> {
    let sig = record.get("sig")?.as_str()?;
    let suffix_len = sig.len() + 10; // ,"sig":"…"}
    let body_len = line.len().checked_sub(suffix_len)?;
    let (body, suffix) = line.split_at(body_len);
    let expected = format!(",\"sig\":\"{sig}\"}}");
    (suffix == expected.as_bytes()).then_some((body, sig))
}

/// Walk the chain of the log at `path` as [`verify`] does, and hold it to the head
/// the store anchored (its header, the record at the head, nothing cut after it, and no
/// finding kept by a writer) and, with a key, to signatures: every signature must
/// verify and the last record must carry one.
pub fn verify_with(path: &Path, opts: &VerifyOptions<'_>) -> Result<Verification, StoreError> {
    let anchor: Option<AuditAnchor> = match opts.store {
        Some(store) => store.audit_anchor(&anchor_key(path))?,
        None => None,
    };
    if let Some(a) = &anchor
        && std::fs::symlink_metadata(path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
    {
        return Ok(Verification {
            report: VerifyReport::Broken {
                line: 1,
                why: Break::Replaced,
                detail: format!(
                    "the log is gone, but the store anchored its record {}: it was deleted or moved",
                    a.head.seq
                ),
                records_ok: 0,
            },
            anchored: Some(a.head.seq),
            signed_through: None,
        });
    }
    let mut signed_through = opts.key.map(|_| 0u64);
    let mut visit = |seq: u64, line: &[u8], record: &Value| -> Option<(Break, String)> {
        if let Some(a) = &anchor {
            if seq == 0 && hash_hex(line) != a.head.log_id {
                return Some((
                    Break::Replaced,
                    format!(
                        "this is not the log the store anchored at this path (that one had reached record {}): the log was deleted or replaced by another file",
                        a.head.seq
                    ),
                ));
            }
            if seq == a.head.seq && hash_hex(line) != a.head.hash {
                return Some((
                    Break::HeadMismatch,
                    format!(
                        "record {seq} is not the head the store anchored: the log was rewritten from there on or replaced by another copy"
                    ),
                ));
            }
        }
        if let Some(key) = opts.key
            && seq > 0
            && record.get("sig").is_some()
        {
            let ok = signed_parts(line, record).is_some_and(|(body, sig)| key.verifies(body, sig));
            if !ok {
                return Some((
                    Break::BadSignature,
                    format!(
                        "record {seq}'s signature does not verify with this key: the log was rewritten up to it, or signed with another key"
                    ),
                ));
            }
            signed_through = Some(seq);
        }
        None
    };
    let report = walk(path, &mut visit)?;
    let anchored = anchor.as_ref().map(|a| a.head.seq);
    let done = |report| Verification {
        report,
        anchored,
        signed_through,
    };
    let VerifyReport::Ok { records, .. } = &report else {
        return Ok(done(report));
    };
    let records = *records;
    let broken = |line, why, detail| VerifyReport::Broken {
        line,
        why,
        detail,
        records_ok: records,
    };
    if let Some(a) = &anchor {
        if let Some(finding) = &a.finding {
            return Ok(done(broken(1, Break::Anchor, finding.clone())));
        }
        if a.head.seq > records {
            let cut = a.head.seq - records;
            return Ok(done(broken(
                records + 2,
                Break::Truncation,
                format!(
                    "the log ends at record {records} but the store anchored record {}: {cut} record{} were cut from its end, or an older copy of the log was put back",
                    a.head.seq,
                    if cut == 1 { "" } else { "s" }
                ),
            )));
        }
    }
    if let Some(through) = signed_through
        && through < records
    {
        return Ok(done(broken(
            through + 2,
            Break::Unsigned,
            format!(
                "records {} to {records} have no signature after them: they were added or rewritten without the key",
                through + 1
            ),
        )));
    }
    Ok(done(report))
}

/// Anchor the log at `path` in `store` as it is now, forgetting any finding: for a
/// human who has read what [`verify_with`] reported and trusts the file from here on.
/// Refused (the chain's break returned, nothing changed) unless the chain verifies.
pub fn reanchor(path: &Path, store: &Store) -> Result<VerifyReport, StoreError> {
    let mut log_id = String::new();
    let report = walk(path, &mut |seq, line, _| {
        if seq == 0 {
            log_id = hash_hex(line);
        }
        None
    })?;
    if let VerifyReport::Ok { records, head } = &report {
        let head = crate::anchor::AuditHead {
            log_id,
            seq: *records,
            hash: head.clone(),
        };
        store.reanchor_audit(&anchor_key(path), &head)?;
    }
    Ok(report)
}
