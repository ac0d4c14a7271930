//! Reading the audit log as other processes append to it: what `cordon audit tail
//! --follow` and the web console's feed share.
//!
//! `check`, `exec`, `hook`, `serve` and the gateway all append to one file under an
//! exclusive lock, a complete line at a time. The reader polls the file's length, reads
//! whatever complete lines were added and hands each record on. It never writes to the
//! log and never trusts a line to be well formed: a line that is not a JSON object is
//! skipped.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

/// Lines longer than this are skipped (the gate's records are a few KB).
const MAX_LINE: usize = 1 << 20;

/// One audit record as sent to pages: its sequence number and its line as stored.
#[derive(Debug, Clone)]
pub struct Line {
    /// The log's `seq` (0 when the record has none).
    pub seq: u64,
    /// The JSON text of the record.
    pub json: Arc<str>,
}

/// Where reading stopped, and the start of a line not yet complete.
#[derive(Debug, Default)]
pub struct Reader {
    offset: u64,
    partial: Vec<u8>,
    skipping: bool,
}

impl Reader {
    /// Read what was appended since the last call and pass each complete record on. A
    /// file that shrank (replaced or truncated) is read again from its start.
    pub fn poll(&mut self, path: &Path, mut emit: impl FnMut(Line)) {
        let Ok(mut file) = crate::audit::open_regular(path) else {
            return;
        };
        let Ok(len) = file.metadata().map(|m| m.len()) else {
            return;
        };
        if len < self.offset {
            *self = Reader::default();
        }
        if len == self.offset || file.seek(SeekFrom::Start(self.offset)).is_err() {
            return;
        }
        let mut buf = Vec::new();
        let Ok(n) = (&mut file).take(len - self.offset).read_to_end(&mut buf) else {
            return;
        };
        self.offset += n as u64;
        for chunk in buf.split_inclusive(|b| *b == b'\n') {
            let complete = chunk.last() == Some(&b'\n');
            let body = if complete {
                &chunk[..chunk.len() - 1]
            } else {
                chunk
            };
            if !self.skipping {
                self.partial.extend_from_slice(body);
            }
            if self.partial.len() > MAX_LINE {
                self.partial.clear();
                self.skipping = true;
            }
            if complete {
                if !self.skipping
                    && let Some(line) = parse(&self.partial)
                {
                    emit(line);
                }
                self.partial.clear();
                self.skipping = false;
            }
        }
    }
}

fn parse(bytes: &[u8]) -> Option<Line> {
    let value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let obj = value.as_object()?;
    if obj.contains_key("cordon_audit") {
        return None; // the file's header
    }
    let seq = obj
        .get("seq")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0);
    let json = std::str::from_utf8(bytes).ok()?;
    Some(Line {
        seq,
        json: Arc::from(json),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    #![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
    use super::*;
    use std::io::Write;

    #[test]
    fn reads_only_complete_records_and_restarts_on_truncation() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let mut f = std::fs::File::create(&path).unwrap();
        let mut r = Reader::default();
        let mut got = Vec::new();
        r.poll(&path, |l| got.push(l.seq));
        assert!(got.is_empty());
        f.write_all(b"{\"cordon_audit\":1}\n{\"seq\":1,\"tool\":\"bash\"}\nnot json\n{\"seq\":2,")
            .unwrap();
        r.poll(&path, |l| got.push(l.seq));
        assert_eq!(got, [1]);
        f.write_all(b"\"tool\":\"x\"}\n").unwrap();
        r.poll(&path, |l| got.push(l.seq));
        assert_eq!(got, [1, 2]);
        drop(f);
        std::fs::write(&path, b"{\"seq\":7}\n").unwrap();
        r.poll(&path, |l| got.push(l.seq));
        assert_eq!(got, [1, 2, 7]);
    }
}
