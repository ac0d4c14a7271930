//! Following the audit log as other processes append to it.
//!
//! `check`, `exec`, `hook`, `serve` and the gateway all append to one file under an
//! exclusive lock, a complete line at a time. The follower polls the file's length, reads
//! whatever complete lines were added, and hands each record to every open page. It keeps
//! only the last [`BACKLOG`] records in memory, so the console's size does not grow with
//! the log. It never writes to the log and never trusts a line to be well formed: a line
//! that is not a JSON object is skipped.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::broadcast;

/// How many recent records a newly opened page is sent.
pub const BACKLOG: usize = 1000;
/// How often the file is looked at.
const POLL: Duration = Duration::from_millis(20);
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

/// Recent records and the channel new ones are announced on.
#[derive(Debug)]
pub struct Feed {
    recent: Mutex<VecDeque<Line>>,
    tx: broadcast::Sender<Line>,
}

impl Feed {
    /// The recent records and a receiver for everything after them, taken together so
    /// that nothing falls between the two.
    pub fn subscribe(&self) -> (Vec<Line>, broadcast::Receiver<Line>) {
        let recent = match self.recent.lock() {
            Ok(r) => r,
            Err(poisoned) => poisoned.into_inner(),
        };
        (recent.iter().cloned().collect(), self.tx.subscribe())
    }

    fn push(&self, line: Line) {
        let mut recent = match self.recent.lock() {
            Ok(r) => r,
            Err(poisoned) => poisoned.into_inner(),
        };
        if recent.len() == BACKLOG {
            recent.pop_front();
        }
        recent.push_back(line.clone());
        // No page listening is not an error.
        let _ = self.tx.send(line);
    }
}

/// Start following `path` on a thread of its own; the file may not exist yet.
pub fn follow(path: PathBuf) -> Arc<Feed> {
    let (tx, _) = broadcast::channel(4096);
    let feed = Arc::new(Feed {
        recent: Mutex::new(VecDeque::with_capacity(BACKLOG)),
        tx,
    });
    let out = Arc::clone(&feed);
    std::thread::Builder::new()
        .name("cordon-ui-follow".into())
        .spawn(move || run(&path, &out))
        .map(drop)
        .unwrap_or_else(|e| eprintln!("cordon ui: cannot follow the audit log: {e}"));
    feed
}

fn run(path: &Path, feed: &Feed) {
    let mut reader = Reader::default();
    loop {
        reader.poll(path, |line| feed.push(line));
        std::thread::sleep(POLL);
    }
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
        let Ok(mut file) = File::open(path) else {
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
        let mut f = File::create(&path).unwrap();
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
