//! Reading a log for shipping elsewhere: the records after a cursor, in order, with the
//! byte offsets a cursor resumes from. The log from the export cursor on is the export
//! queue (see `cordon-export`): nothing is copied on the way.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::Value;

use super::{HEADER_KEY, hash_hex, read_last_line};
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
}

/// What [`records_after`] read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Unshipped {
    /// blake3 hex of the log's header line (empty when the file has none yet).
    pub log_id: String,
    /// The records after the cursor, oldest first.
    pub records: Vec<QueuedRecord>,
    /// The seq of the log's last complete record (0: none).
    pub head: u64,
}

/// The records of the log at `path` after `cursor` (every record, the header first as
/// seq 0, when the cursor is of another log, or none is given), at most `max_records` of them and about `max_bytes`
/// (at least one). Records at or below `skip_to` are passed over too.
pub fn records_after(
    path: &Path,
    cursor: Option<&ExportCursor>,
    skip_to: u64,
    max_records: usize,
    max_bytes: usize,
) -> Result<Unshipped, StoreError> {
    let io = |e: std::io::Error| StoreError::io(path, &e);
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Unshipped::default()),
        Err(e) => return Err(io(e)),
    };
    rustix::fs::flock(&file, rustix::fs::FlockOperation::LockShared)
        .map_err(|e| StoreError::io(path, &e.into()))?;
    let len = file.metadata().map(|m| m.len());
    let _ = rustix::fs::flock(&file, rustix::fs::FlockOperation::Unlock);
    let len = len.map_err(io)?;
    let (complete, last) = read_last_line(&mut file, len).map_err(io)?;
    let head = last
        .and_then(|l| serde_json::from_slice::<Value>(&l).ok())
        .and_then(|v| v.get("seq").and_then(Value::as_u64))
        .unwrap_or(0);
    file.seek(SeekFrom::Start(0)).map_err(io)?;
    let mut reader = BufReader::new((&file).take(complete));
    let mut header = Vec::new();
    reader.read_until(b'\n', &mut header).map_err(io)?;
    let Some(header) = header.strip_suffix(b"\n") else {
        return Ok(Unshipped::default());
    };
    let log_id = hash_hex(header);
    let header_end = header.len() as u64 + 1;
    let mut from = header_end;
    // A log never shipped before goes from its header on, so that the collector's copy
    // verifies like the file (record 1 chains to the header).
    let header_first = skip_to == 0 && cursor.is_none_or(|c| c.log_id != log_id);
    let mut after = skip_to;
    if let Some(c) = cursor.filter(|c| c.log_id == log_id) {
        after = after.max(c.seq);
        // Resume at the cursor's offset when the line there is the one after it.
        if c.offset > from && c.offset <= complete && c.seq >= skip_to {
            file.seek(SeekFrom::Start(c.offset)).map_err(io)?;
            let mut probe = BufReader::new((&file).take(complete - c.offset));
            let mut line = Vec::new();
            probe.read_until(b'\n', &mut line).map_err(io)?;
            let next = serde_json::from_slice::<Value>(&line)
                .ok()
                .and_then(|v| v.get("seq").and_then(Value::as_u64));
            if line.is_empty() || next == Some(c.seq + 1) {
                from = c.offset;
            }
        }
    }
    file.seek(SeekFrom::Start(from)).map_err(io)?;
    let mut reader = BufReader::new((&file).take(complete - from));
    let mut out = Unshipped {
        log_id,
        records: Vec::new(),
        head,
    };
    if header_first {
        out.records.push(QueuedRecord {
            seq: 0,
            line: header.to_vec(),
            end: header_end,
        });
    }
    let (mut offset, mut bytes, mut buf) = (from, 0usize, Vec::new());
    while out.records.len() < max_records && (bytes < max_bytes || out.records.is_empty()) {
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf).map_err(io)?;
        if n == 0 || buf.last() != Some(&b'\n') {
            break;
        }
        offset += n as u64;
        let line = &buf[..n - 1];
        let Some(seq) = serde_json::from_slice::<Value>(line)
            .ok()
            .filter(|v| v.get(HEADER_KEY).is_none())
            .and_then(|v| v.get("seq").and_then(Value::as_u64))
        else {
            continue;
        };
        if seq <= after {
            continue;
        }
        bytes += line.len();
        out.records.push(QueuedRecord {
            seq,
            line: line.to_vec(),
            end: offset,
        });
    }
    Ok(out)
}
