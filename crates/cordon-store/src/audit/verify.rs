//! Checking a log: its chain alone ([`verify`]), or held to the head anchored in the
//! store and to the signatures of a key ([`verify_with`]).

use std::path::Path;

use serde_json::Value;

use super::{
    Break, HEADER_KEY, LineRead, MAX_LINE, Snapshot, VerifyReport, hash_hex, open_read, read_line,
};
use crate::anchor::{AuditAnchor, AuditHead, anchor_key};
use crate::audit_key::AuditPublicKey;
use crate::error::StoreError;
use crate::store::Store;

/// Walk the whole chain of the log at `path`: its lines, seqs and hashes (nothing
/// anchored, no signature checked; see [`verify_with`]).
pub fn verify(path: &Path) -> Result<VerifyReport, StoreError> {
    walk(path, &mut |_, _, _| None).map(|(report, _)| report)
}

/// A check made on each line the chain vouches for: `(seq, line, parsed)` (seq 0 is the
/// header); a break to report there, or `None`.
type Visit<'a> = dyn FnMut(u64, &[u8], &Value) -> Option<(Break, String)> + 'a;

/// The report, and the byte offset just past the last line that verified.
fn walk(path: &Path, visit: &mut Visit<'_>) -> Result<(VerifyReport, u64), StoreError> {
    let mut reader = open_read(path)?;
    let mut buf = Vec::new();
    let mut line_no = 0u64;
    let mut prev_hash = String::new();
    let mut prev_seq = 0u64;
    let mut records = 0u64;
    let mut end = 0u64;
    let broken = |line, why, detail: String, records_ok| {
        Ok((
            VerifyReport::Broken {
                line,
                why,
                detail,
                records_ok,
            },
            0,
        ))
    };
    loop {
        let read = read_line(&mut reader, &mut buf).map_err(|e| StoreError::io(path, &e))?;
        if read == LineRead::Eof {
            break;
        }
        line_no += 1;
        if read == LineRead::TooLong {
            return broken(
                line_no,
                Break::Edit,
                format!(
                    "line {line_no} is longer than {MAX_LINE} bytes: it is not a record cordon wrote"
                ),
                records,
            );
        }
        if let LineRead::Complete(n) = read {
            end += n as u64;
        }
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
        let Some(expected) = prev_seq.checked_add(1) else {
            return broken(
                line_no,
                Break::Edit,
                format!("record {prev_seq} before line {line_no} has no successor: it was forged"),
                records,
            );
        };
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
    Ok((
        VerifyReport::Ok {
            records,
            head: prev_hash,
        },
        end,
    ))
}

/// Whether any later record carries a seq in `lo..hi` (distinguishes a reordering from a deletion).
fn later_has_seq(reader: &mut Snapshot, lo: u64, hi: u64, path: &Path) -> Result<bool, StoreError> {
    let mut buf = Vec::new();
    loop {
        if matches!(
            read_line(reader, &mut buf).map_err(|e| StoreError::io(path, &e))?,
            LineRead::Eof | LineRead::TooLong
        ) {
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
/// finding kept by a writer) and, with a key, to signatures: every record must be
/// covered by a signature made over exactly its batch (a signed record's `signed_from`
/// to itself, each batch starting right after the one before), every signature must
/// verify, and the last record must be signed. A record no signature covers is a break
/// wherever it is: a signature never vouches for records before its batch.
pub fn verify_with(path: &Path, opts: &VerifyOptions<'_>) -> Result<Verification, StoreError> {
    verify_full(path, opts).map(|(v, _)| v)
}

/// [`verify_with`], and what anchors the log as it is: its header's hash and where its
/// last verified line ends.
fn verify_full(
    path: &Path,
    opts: &VerifyOptions<'_>,
) -> Result<(Verification, (String, u64)), StoreError> {
    let anchor: Option<AuditAnchor> = match opts.store {
        Some(store) => store.audit_anchor(&anchor_key(path))?,
        None => None,
    };
    if let Some(a) = &anchor
        && std::fs::symlink_metadata(path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
    {
        let v = Verification {
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
        };
        return Ok((v, (String::new(), 0)));
    }
    let mut signed_through = opts.key.map(|_| 0u64);
    let mut log_id = String::new();
    let mut visit = |seq: u64, line: &[u8], record: &Value| -> Option<(Break, String)> {
        if seq == 0 {
            log_id = hash_hex(line);
        }
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
        if let (Some(key), Some(covered)) = (opts.key, signed_through)
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
            let from = record.get("signed_from").and_then(Value::as_u64);
            if from != covered.checked_add(1) {
                return Some((
                    Break::Unsigned,
                    format!(
                        "records {} to {} are covered by no signature of their own (record {seq}'s signature covers only its batch): they were added or rewritten without the key",
                        covered + 1,
                        from.map_or(seq, |f| f.saturating_sub(1).max(covered + 1))
                    ),
                ));
            }
            signed_through = Some(seq);
        }
        None
    };
    let (report, end) = walk(path, &mut visit)?;
    let anchored = anchor.as_ref().map(|a| a.head.seq);
    let done = |report| {
        (
            Verification {
                report,
                anchored,
                signed_through,
            },
            (log_id.clone(), end),
        )
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
                    "the log ends at record {records} but the store anchored record {}: {cut} {} cut from its end, or an older copy of the log was put back",
                    a.head.seq,
                    if cut == 1 {
                        "record was"
                    } else {
                        "records were"
                    }
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

/// What [`reanchor`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reanchored {
    /// The chain and signature check of the log as it is (`Broken`: nothing changed).
    pub report: VerifyReport,
    /// The head the store held before, with the finding it kept.
    pub old: Option<AuditAnchor>,
    /// The head anchored now; `None` when refused.
    pub new: Option<AuditHead>,
    /// Why the head was not moved although the chain verifies (one sentence).
    pub refused: Option<String>,
}

/// Anchor the log at `path` in `store` as it is now, forgetting any finding: for a
/// human who has read what [`verify_with`] reported and trusts the file from here on.
/// Refused (nothing changed) unless the chain verifies, and, with `key`, every record is
/// covered by a good signature; refused too when the head would move back (fewer records
/// than anchored) or to another log, unless `allow_rollback`.
pub fn reanchor(
    path: &Path,
    store: &Store,
    key: Option<&AuditPublicKey>,
    allow_rollback: bool,
) -> Result<Reanchored, StoreError> {
    let old = store.audit_anchor(&anchor_key(path))?;
    let opts = VerifyOptions { store: None, key };
    let (checked, (log_id, end)) = verify_full(path, &opts)?;
    let mut out = Reanchored {
        report: checked.report.clone(),
        old: old.clone(),
        new: None,
        refused: None,
    };
    let VerifyReport::Ok { records, head } = &checked.report else {
        return Ok(out);
    };
    let new = AuditHead {
        log_id,
        seq: *records,
        hash: head.clone(),
    };
    if let Some(o) = &old
        && !allow_rollback
    {
        if o.head.log_id != new.log_id {
            out.refused = Some(format!(
                "the file is not the log the store anchored (that one had reached record {}): anchoring it accepts a replaced log; pass --allow-rollback if that is what happened",
                o.head.seq
            ));
            return Ok(out);
        }
        if o.head.seq > new.seq {
            out.refused = Some(format!(
                "the log ends at record {} but the store anchored record {}: anchoring it moves the head back and accepts the records cut; pass --allow-rollback if that is what happened",
                new.seq, o.head.seq
            ));
            return Ok(out);
        }
    }
    store.reanchor_audit(&anchor_key(path), &new, end)?;
    out.new = Some(new);
    Ok(out)
}
