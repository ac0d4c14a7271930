//! Reading a log for shipping elsewhere: the records after a cursor, in order, with the
//! byte offsets a cursor resumes from. The log from the export cursor on is the export
//! queue (see `cordon-export`): nothing is copied on the way.
//!
//! Nothing here trusts a seq written in the file to measure the queue: how many records
//! wait is counted in lines from the cursor's byte offset ([`backlog`]), and each record
//! read is checked against the one before it, so that a record where the chain breaks
//! is shipped marked ([`QueuedRecord::chain_break`]) rather than as if it were valid.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::Value;

use super::{HEADER_KEY, LastLine, LineRead, hash_hex, read_last_line, read_line};
use crate::anchor::ExportCursor;
use crate::error::StoreError;

/// One record line to ship.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedRecord {
    /// Its sequence number.
    pub seq: u64,
    /// The line as stored, without its newline.
    pub line: Vec<u8>,
    /// Byte offset just past the line's newline: where a cursor after it resumes.
    pub end: u64,
    /// When this line does not chain to the one before it (its seq does not follow, or
    /// its `prev` is not that line's hash): one sentence saying so.
    pub chain_break: Option<String>,
}

/// What [`records_after`] read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Unshipped {
    /// blake3 hex of the log's header line (empty when the file has none yet).
    pub log_id: String,
    /// The records after the cursor, oldest first.
    pub records: Vec<QueuedRecord>,
}

/// The file opened for reading, its complete length (taken under a shared lock, so no
/// write in progress is included), and its header line.
struct Opened {
    file: File,
    complete: u64,
    header: Vec<u8>,
}

fn open(path: &Path) -> Result<Option<Opened>, StoreError> {
    let io = |e: std::io::Error| StoreError::io(path, &e);
    let mut file = match super::open_regular(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(e)),
    };
    rustix::fs::flock(&file, rustix::fs::FlockOperation::LockShared)
        .map_err(|e| StoreError::io(path, &e.into()))?;
    let len = file.metadata().map(|m| m.len());
    let _ = rustix::fs::flock(&file, rustix::fs::FlockOperation::Unlock);
    let len = len.map_err(io)?;
    let complete = match read_last_line(&mut file, len).map_err(io)? {
        LastLine::Found(complete, _) => complete,
        // A last line too long to be a record: ship up to where it starts, which the
        // reader below stops at.
        LastLine::TooLong => len,
    };
    file.seek(SeekFrom::Start(0)).map_err(io)?;
    let mut reader = BufReader::new((&file).take(complete));
    let mut header = Vec::new();
    if !matches!(
        read_line(&mut reader, &mut header).map_err(io)?,
        LineRead::Complete(_)
    ) {
        return Ok(None);
    }
    header.pop();
    Ok(Some(Opened {
        file,
        complete,
        header,
    }))
}

/// Where reading resumes after `cursor` in `o`: its offset, when the line ending there
/// is the record the cursor names; else `None` (the cursor is of another file or the
/// file changed under it).
fn resume(o: &mut Opened, cursor: &ExportCursor, log_id: &str) -> std::io::Result<Option<u64>> {
    let header_end = o.header.len() as u64 + 1;
    if cursor.log_id != log_id || cursor.offset < header_end || cursor.offset > o.complete {
        return Ok(None);
    }
    if cursor.offset == header_end {
        return Ok((cursor.seq == 0).then_some(header_end));
    }
    let LastLine::Found(end, Some(line)) = read_last_line(&mut o.file, cursor.offset)? else {
        return Ok(None);
    };
    let seq = serde_json::from_slice::<Value>(&line)
        .ok()
        .and_then(|v| v.get("seq").and_then(Value::as_u64));
    Ok((end == cursor.offset && seq == Some(cursor.seq)).then_some(end))
}

/// The records of the log at `path` after `cursor` (every record, the header first as
/// seq 0, when the cursor is of another log, or none is given), at most `max_records` of
/// them and about `max_bytes` (at least one). When the cursor's offset no longer holds
/// the record it names, reading starts at the header and records at or below the
/// cursor's seq are passed over.
pub fn records_after(
    path: &Path,
    cursor: Option<&ExportCursor>,
    max_records: usize,
    max_bytes: usize,
) -> Result<Unshipped, StoreError> {
    let io = |e: std::io::Error| StoreError::io(path, &e);
    let Some(mut o) = open(path)? else {
        return Ok(Unshipped::default());
    };
    let log_id = hash_hex(&o.header);
    let header_end = o.header.len() as u64 + 1;
    let ours = cursor.filter(|c| c.log_id == log_id);
    let resumed = match ours {
        Some(c) => resume(&mut o, c, &log_id).map_err(io)?,
        None => None,
    };
    // A log never shipped before goes from its header on, so that the collector's copy
    // verifies like the file (record 1 chains to the header).
    let header_first = ours.is_none();
    let (from, after) = match resumed {
        Some(at) => (at, 0),
        None => (header_end, ours.map_or(0, |c| c.seq)),
    };
    // The line before `from`: what the first record read must chain to.
    let (mut prev_seq, mut prev_hash) = if from == header_end {
        (0, log_id.clone())
    } else {
        match read_last_line(&mut o.file, from).map_err(io)? {
            LastLine::Found(_, Some(line)) => (ours.map_or(0, |c| c.seq), hash_hex(&line)),
            _ => (0, String::new()),
        }
    };
    o.file.seek(SeekFrom::Start(from)).map_err(io)?;
    let mut reader = BufReader::new((&o.file).take(o.complete - from));
    let mut out = Unshipped {
        log_id,
        records: Vec::new(),
    };
    if header_first {
        out.records.push(QueuedRecord {
            seq: 0,
            line: o.header.clone(),
            end: header_end,
            chain_break: None,
        });
    }
    let (mut offset, mut bytes, mut buf) = (from, 0usize, Vec::new());
    while out.records.len() < max_records && (bytes < max_bytes || out.records.is_empty()) {
        let LineRead::Complete(n) = read_line(&mut reader, &mut buf).map_err(io)? else {
            break;
        };
        offset += n as u64;
        let line = &buf[..n - 1];
        let parsed = serde_json::from_slice::<Value>(line)
            .ok()
            .filter(|v| v.get(HEADER_KEY).is_none());
        let seq = parsed
            .as_ref()
            .and_then(|v| v.get("seq").and_then(Value::as_u64));
        let prev = parsed
            .as_ref()
            .and_then(|v| v.get("prev").and_then(Value::as_str));
        let hash = hash_hex(line);
        let chained = seq.is_some() && seq == prev_seq.checked_add(1) && prev == Some(&prev_hash);
        let skip = seq.is_none_or(|s| s <= after);
        let expected = prev_seq.saturating_add(1);
        prev_hash = hash;
        prev_seq = seq.unwrap_or(expected);
        if skip {
            continue;
        }
        bytes += line.len();
        out.records.push(QueuedRecord {
            seq: prev_seq,
            line: line.to_vec(),
            end: offset,
            chain_break: (!chained).then(|| {
                format!(
                    "the chain breaks here: this line does not follow record {} of the log (record {expected} was expected, chained to it)",
                    expected - 1
                )
            }),
        });
    }
    Ok(out)
}

/// How much of a log waits after an export cursor, counted in lines from the cursor's
/// byte offset (never from a seq written in the file).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Backlog {
    /// Complete lines after the cursor.
    pub waiting: u64,
    /// When more than the bound wait: the cursor that leaves exactly the bound's newest
    /// lines, the seqs written in the first and last lines skipped (for the record of
    /// the drop), and how many lines are skipped.
    pub skip: Option<(ExportCursor, u64, u64, u64)>,
}

/// Count the lines of the log at `path` after `cursor` and, when more than `keep` wait,
/// where to move the cursor so that `keep` remain.
pub fn backlog(
    path: &Path,
    cursor: Option<&ExportCursor>,
    keep: u64,
) -> Result<Backlog, StoreError> {
    let io = |e: std::io::Error| StoreError::io(path, &e);
    let Some(mut o) = open(path)? else {
        return Ok(Backlog::default());
    };
    let log_id = hash_hex(&o.header);
    let header_end = o.header.len() as u64 + 1;
    let from = match cursor {
        Some(c) => resume(&mut o, c, &log_id).map_err(io)?,
        None => None,
    };
    // Without a cursor that holds, nothing is skipped: a cursor in doubt never costs
    // records.
    let Some(from) = from.or((cursor.is_none()).then_some(header_end)) else {
        return Ok(Backlog::default());
    };
    let count_from = |file: &File, stop_after: Option<u64>| -> std::io::Result<(u64, u64)> {
        let mut reader = BufReader::with_capacity(1 << 16, file.take(o.complete - from));
        let (mut lines, mut at) = (0u64, from);
        loop {
            let chunk = reader.fill_buf()?;
            if chunk.is_empty() {
                return Ok((lines, at));
            }
            let mut used = chunk.len();
            for (i, b) in chunk.iter().enumerate() {
                if *b == b'\n' {
                    lines += 1;
                    if stop_after == Some(lines) {
                        used = i + 1;
                        break;
                    }
                }
            }
            at += used as u64;
            reader.consume(used);
            if stop_after == Some(lines) {
                return Ok((lines, at));
            }
        }
    };
    o.file.seek(SeekFrom::Start(from)).map_err(io)?;
    let (waiting, _) = count_from(&o.file, None).map_err(io)?;
    let mut out = Backlog {
        waiting,
        skip: None,
    };
    if waiting <= keep {
        return Ok(out);
    }
    let skipped = waiting - keep;
    o.file.seek(SeekFrom::Start(from)).map_err(io)?;
    let (_, to) = count_from(&o.file, Some(skipped)).map_err(io)?;
    let seq_of = |line: Option<Vec<u8>>| {
        line.and_then(|l| serde_json::from_slice::<Value>(&l).ok())
            .and_then(|v| v.get("seq").and_then(Value::as_u64))
            .unwrap_or(0)
    };
    let last = match read_last_line(&mut o.file, to).map_err(io)? {
        LastLine::Found(_, l) => seq_of(l),
        LastLine::TooLong => 0,
    };
    o.file.seek(SeekFrom::Start(from)).map_err(io)?;
    let mut first_line = Vec::new();
    let first = match read_line(&mut BufReader::new(&o.file), &mut first_line).map_err(io)? {
        LineRead::Complete(n) => seq_of(Some(first_line[..n - 1].to_vec())),
        _ => 0,
    };
    out.skip = Some((
        ExportCursor {
            log_id,
            seq: last,
            offset: to,
        },
        first,
        last,
        skipped,
    ));
    Ok(out)
}
