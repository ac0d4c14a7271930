//! The audit log: append-only JSON lines, each chained to the one before it.
//!
//! Line 1 is a header `{"cordon_audit":1,"seed":HEX,"created":TIME}` with a random
//! per-file seed. Every later line is a record
//! `{"seq":N,"time":TIME,"prev":HEX,…fields}` where `prev` is the blake3 hash (hex) of the
//! bytes of the line before it (without its newline); record 1 therefore chains to the
//! header and so to the seed. `seq`, `time` and `prev` belong to the log; the caller
//! supplies every other field (and should pass input through [`redact`](crate::redact)).
//!
//! Writers take an exclusive `flock` on the file around "read the last line, append
//! one", so several processes can append to one log. A log opened with
//! [`AuditLog::open_anchored`] also, inside that same critical section, signs the last
//! record of every batch it writes (`"sig"`, see `audit_key.rs`) and moves the head
//! anchored in the store (see `anchor.rs`) once the batch is in the file. A writer killed mid-write leaves at
//! most one partial line without its newline: [`verify`] reports it as a torn tail, and
//! the next append cuts it off and continues from the last complete line.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;

use crate::anchor::{AuditHead, anchor_key};
use crate::audit_key::{AuditKey, key_path_for_store};
use crate::error::{StoreError, StoreErrorKind};
use crate::paths;
use crate::record::LogFields;
use crate::store::Store;

mod guard;
mod lines;
mod ship;
mod verify;
use guard::Guard;
use lines::read_last_line;
pub(crate) use lines::{LastLine, LineRead, MAX_LINE, open_regular, read_line};
pub use ship::{Backlog, QueuedRecord, Unshipped, backlog, records_after};
pub use verify::{Reanchored, Verification, VerifyOptions, reanchor, verify, verify_with};

pub(crate) const HEADER_KEY: &str = "cordon_audit";
const FORMAT_VERSION: u64 = 1;

/// When appended records reach the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// Write and `fdatasync` every record before `append` returns: nothing accepted is
    /// lost to a crash or a power cut. Slower.
    FsyncEach,
    /// Queue records in memory; write, chain and `fdatasync` them together when
    /// `max_records` are queued or the oldest has waited `max_delay` (checked at each
    /// append), on `flush`, and on drop. A process killed (or a machine failing)
    /// loses at most the queued records; what was written stays intact.
    Batched {
        /// Records between syncs.
        max_records: u32,
        /// Longest time between syncs while appending.
        max_delay: Duration,
    },
}

/// What [`AuditLog::append`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppendReceipt {
    /// Sequence number of the record (the header is 0).
    pub seq: u64,
    /// blake3 hex of the line written: the `prev` of the next record.
    pub hash: String,
}

/// Where the chain breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Break {
    /// A line's bytes no longer match the hash recorded by the line after it, or a line
    /// is not a well-formed record.
    Edit,
    /// Records are missing.
    Deletion,
    /// Records are out of order.
    Reorder,
    /// The last line is incomplete (a crash mid-write, or the file was cut mid-line).
    TornTail,
    /// The first line is not a header (the file is empty or its header was removed).
    MissingHeader,
    /// The log ends before the head anchored in the store: records were cut from its
    /// end, or an older copy was put back.
    Truncation,
    /// The record at the anchored head is not the one the store anchored.
    HeadMismatch,
    /// The file is not the log the store anchored at this path.
    Replaced,
    /// A record's signature does not verify with the key given.
    BadSignature,
    /// Records at the end carry no signature after them.
    Unsigned,
    /// A writer found the file at odds with the anchored head before appending (the
    /// store kept what it found).
    Anchor,
}

impl Break {
    /// One word for reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Break::Edit => "edit",
            Break::Deletion => "deletion",
            Break::Reorder => "reorder",
            Break::TornTail => "torn tail",
            Break::MissingHeader => "missing header",
            Break::Truncation => "truncation",
            Break::HeadMismatch => "head mismatch",
            Break::Replaced => "replaced",
            Break::BadSignature => "bad signature",
            Break::Unsigned => "unsigned",
            Break::Anchor => "anchor",
        }
    }
}

/// The result of [`verify`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VerifyReport {
    /// The chain is intact.
    Ok {
        /// Number of records (header excluded).
        records: u64,
        /// Hash of the last line; record it elsewhere to detect a rewrite of the whole file.
        head: String,
    },
    /// The chain breaks.
    Broken {
        /// First line (1-based) found wrong.
        line: u64,
        /// What kind of break.
        why: Break,
        /// One sentence for a human.
        detail: String,
        /// Records verified before the break.
        records_ok: u64,
    },
}

pub(crate) fn hash_hex(line: &[u8]) -> String {
    blake3::hash(line).to_hex().to_string()
}

fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

/// The last complete line as the chain sees it.
#[derive(Debug, Clone)]
struct Tail {
    len: u64,
    hash: String,
    seq: u64,
    /// Why the writer cannot continue from this line (longer than [`MAX_LINE`], not a
    /// record, or a seq with no successor): `hash` and `seq` are then not the line's.
    problem: Option<String>,
}

/// An open audit log. Appends from several handles or processes are serialized by an
/// exclusive `flock`.
#[derive(Debug)]
pub struct AuditLog {
    path: PathBuf,
    file: File,
    durability: Durability,
    /// Records accepted but not yet written (batched mode), oldest first.
    queue: Vec<Queued>,
    /// When the oldest queued record was accepted.
    queued_since: Option<Instant>,
    tail: Option<Tail>,
    /// blake3 hex of the header line (which log this is), read with the tail.
    log_id: Option<String>,
    /// The store anchoring the head and the key signing batches, when anchored.
    guard: Option<Guard>,
}

/// A record waiting to be chained and written: everything but `seq` and `prev`.
#[derive(Debug)]
struct Queued {
    time: String,
    fields: LogFields,
}

impl AuditLog {
    /// Open (creating with a fresh header if needed) the log at `path`.
    pub fn open(path: &Path, durability: Durability) -> Result<AuditLog, StoreError> {
        let file = paths::open_private(path, true)?;
        let mut log = AuditLog {
            path: path.to_path_buf(),
            file,
            durability,
            queue: Vec::new(),
            queued_since: None,
            tail: None,
            log_id: None,
            guard: None,
        };
        log.locked(|log| {
            log.check_header()?;
            log.load_tail()
        })?;
        Ok(log)
    }

    /// Open the log at `path` anchored in the store at `store`: every batch written ends
    /// in a record signed with the key beside the store (`audit.key`, created 0600 when
    /// missing), and the log's head in the store moves with every write, under the log's
    /// lock. A store that cannot be written fails the append (the records stay written
    /// and chained; the head moves with the next append that succeeds).
    pub fn open_anchored(
        path: &Path,
        durability: Durability,
        store: &Path,
    ) -> Result<AuditLog, StoreError> {
        let key = AuditKey::load_or_create(&key_path_for_store(store))?;
        let mut log = AuditLog::open(path, durability)?;
        log.guard = Some(Guard::new(store, key, anchor_key(path)));
        Ok(log)
    }

    /// Lend this anchored log `store`, a connection to the store it anchors in, to use
    /// instead of opening one of its own (each open reads the store's schema again):
    /// `None` when taken; the connection back when the log is not anchored, is anchored
    /// in another file, or already holds a connection.
    /// [`take_store`](Self::take_store) gives it back.
    pub fn lend_store(&mut self, store: Store) -> Option<Store> {
        match &mut self.guard {
            Some(guard) => guard.lend(store),
            None => Some(store),
        }
    }

    /// The store connection this anchored log holds (lent, or opened by an append), for
    /// the caller to keep; the next append opens or is lent another.
    pub fn take_store(&mut self) -> Option<Store> {
        self.guard.as_mut().and_then(Guard::take_store)
    }

    /// Open the log at [`default_audit_path`](crate::default_audit_path).
    pub fn open_default(durability: Durability) -> Result<AuditLog, StoreError> {
        let path = paths::default_audit_path()?;
        if let Some(dir) = path.parent() {
            paths::tighten_dir(&paths::ensure_dir(dir)?)?;
        }
        AuditLog::open(&path, durability)
    }

    /// The file this log lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn io(&self, e: std::io::Error) -> StoreError {
        StoreError::io(&self.path, &e)
    }

    /// Run `f` holding the exclusive `flock`, released whatever `f` returns.
    fn locked<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        rustix::fs::flock(&self.file, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|e| StoreError::io(&self.path, &e.into()))?;
        let result = f(self);
        // Closing the descriptor would release the lock too; an unlock error leaves
        // nothing to repair.
        let _ = rustix::fs::flock(&self.file, rustix::fs::FlockOperation::Unlock);
        result
    }

    /// Refuse to append to a non-empty file whose first line is not an audit header:
    /// a mistyped path must not turn someone's file into a log.
    fn check_header(&mut self) -> Result<(), StoreError> {
        let len = self.file.metadata().map_err(|e| self.io(e))?.len();
        if len == 0 {
            return Ok(());
        }
        self.file.seek(SeekFrom::Start(0)).map_err(|e| self.io(e))?;
        let mut first = Vec::new();
        let mut reader = BufReader::new((&self.file).take(64 * 1024));
        reader
            .read_until(b'\n', &mut first)
            .map_err(|e| self.io(e))?;
        let is_header = if first.ends_with(b"\n") {
            serde_json::from_slice::<Value>(&first)
                .ok()
                .is_some_and(|v| v.get(HEADER_KEY).is_some())
        } else {
            // A header torn before its newline (the file holds no record yet; the
            // next write replaces it) — but only if it really starts like one.
            const START: &[u8] = b"{\"cordon_audit\"";
            first.starts_with(START) || START.starts_with(&first)
        };
        if is_header {
            Ok(())
        } else {
            Err(StoreError::new(
                &self.path,
                StoreErrorKind::Corrupt(
                    "its first line is not a cordon audit header, so nothing was appended; point cordon at another file".into(),
                ),
            ))
        }
    }

    /// Under the lock: find the last complete line, cut a torn tail, write a header
    /// into an empty file. Leaves `self.tail` set (with a `problem` when the writer cannot
    /// continue from the file's last line).
    fn load_tail(&mut self) -> Result<(), StoreError> {
        let len = self.file.metadata().map_err(|e| self.io(e))?.len();
        // An anchored log reads its tail afresh each time: the file may have been
        // rewritten to the same length.
        if self.guard.is_none()
            && let Some(t) = &self.tail
            && t.len == len
        {
            return Ok(());
        }
        let last = read_last_line(&mut self.file, len).map_err(|e| self.io(e))?;
        let LastLine::Found(complete_len, last_line) = last else {
            self.log_id = read_first_line(&mut self.file)
                .map_err(|e| self.io(e))?
                .map(|l| hash_hex(&l));
            self.tail = Some(Tail {
                len,
                hash: String::new(),
                seq: 0,
                problem: Some(format!(
                    "the log's last line is longer than {} bytes (or the file ends in a hole): it is not a record cordon wrote",
                    MAX_LINE
                )),
            });
            return Ok(());
        };
        if complete_len != len {
            // A torn tail: drop the partial line, keep every complete one.
            self.file.set_len(complete_len).map_err(|e| self.io(e))?;
        }
        let Some(last) = last_line else {
            return self.write_header();
        };
        self.log_id = read_first_line(&mut self.file)
            .map_err(|e| self.io(e))?
            .map(|l| hash_hex(&l));
        let parsed = serde_json::from_slice::<Value>(&last).ok();
        let seq = parsed.as_ref().and_then(|v| {
            if v.get(HEADER_KEY).is_some() {
                Some(0)
            } else {
                v.get("seq").and_then(Value::as_u64)
            }
        });
        let problem = match seq {
            None => Some("the log's last line is not a record (no seq)".to_string()),
            Some(s) if s.checked_add(1).is_none() => Some(format!(
                "the log's last record has seq {s}, which has no successor: it is not a record cordon wrote"
            )),
            Some(_) => None,
        };
        self.tail = Some(Tail {
            len: complete_len,
            hash: hash_hex(&last),
            seq: seq.unwrap_or(0),
            problem,
        });
        Ok(())
    }

    fn write_header(&mut self) -> Result<(), StoreError> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|e| {
            StoreError::new(
                &self.path,
                StoreErrorKind::Io(format!("no randomness for the seed: {e}")),
            )
        })?;
        let seed_hex: String = seed.iter().map(|b| format!("{b:02x}")).collect();
        let header = serde_json::json!({
            HEADER_KEY: FORMAT_VERSION,
            "seed": seed_hex,
            "created": now_rfc3339(),
        });
        let line = header.to_string();
        let mut bytes = line.clone().into_bytes();
        bytes.push(b'\n');
        self.file.write_all(&bytes).map_err(|e| self.io(e))?;
        self.file.sync_data().map_err(|e| self.io(e))?;
        self.log_id = Some(hash_hex(line.as_bytes()));
        self.tail = Some(Tail {
            len: bytes.len() as u64,
            hash: hash_hex(line.as_bytes()),
            seq: 0,
            problem: None,
        });
        Ok(())
    }

    /// Append one record. `record` must be a JSON object; its `seq`, `time` and `prev`
    /// fields, if any, are replaced by the log's own (`time` is the moment of this call).
    ///
    /// With [`Durability::FsyncEach`] the record is on disk when this returns. With
    /// [`Durability::Batched`] it is queued in memory and written, chained and synced
    /// together with the others when the batch is full, when the oldest queued record
    /// has waited `max_delay` (checked here), on [`flush`](Self::flush), and on drop.
    pub fn append(&mut self, record: &Value) -> Result<(), StoreError> {
        self.append_fields(self.fields_of(record)?)
    }

    /// [`append`](Self::append) for a record already serialized ([`AuditRecord::log_fields`]).
    ///
    /// [`AuditRecord::log_fields`]: crate::AuditRecord::log_fields
    pub fn append_fields(&mut self, fields: LogFields) -> Result<(), StoreError> {
        self.enqueue(fields);
        let since = *self.queued_since.get_or_insert_with(Instant::now);
        let due = match self.durability {
            Durability::FsyncEach => true,
            Durability::Batched {
                max_records,
                max_delay,
            } => self.queue.len() >= max_records.max(1) as usize || since.elapsed() >= max_delay,
        };
        if due {
            self.flush()?;
        }
        Ok(())
    }

    /// Append one record and write it (with any queued before it) to the file now, without
    /// waiting for the disk, whatever this log's [`Durability`]: it survives this process
    /// being killed, and reaches the disk with the next sync (or the kernel's writeback).
    pub fn append_unsynced(&mut self, record: &Value) -> Result<(), StoreError> {
        self.append_fields_unsynced(self.fields_of(record)?)
    }

    /// [`append_unsynced`](Self::append_unsynced) for a record already serialized.
    pub fn append_fields_unsynced(&mut self, fields: LogFields) -> Result<(), StoreError> {
        self.enqueue(fields);
        self.flush_unsynced().map(|_| ())
    }

    fn fields_of(&self, record: &Value) -> Result<LogFields, StoreError> {
        LogFields::from_value(record).ok_or_else(|| {
            StoreError::new(
                &self.path,
                StoreErrorKind::Invalid("an audit record must be a JSON object".into()),
            )
        })
    }

    /// Queue a record with the time of this call.
    fn enqueue(&mut self, fields: LogFields) {
        self.queue.push(Queued {
            time: now_rfc3339(),
            fields,
        });
    }

    /// Append one record and write it (with any queued before it) to disk now; returns
    /// its sequence number and hash.
    pub fn append_now(&mut self, record: &Value) -> Result<AppendReceipt, StoreError> {
        self.append(record)?;
        match self.flush()? {
            Some(receipt) => Ok(receipt),
            None => Ok(self
                .tail
                .as_ref()
                .map(|t| AppendReceipt {
                    seq: t.seq,
                    hash: t.hash.clone(),
                })
                .unwrap_or(AppendReceipt {
                    seq: 0,
                    hash: String::new(),
                })),
        }
    }

    /// Chain, write and sync every queued record, under the file lock, in one write.
    /// Returns the receipt of the last record written, or `None` if none was queued.
    /// On error the queued records are dropped (the error says the log failed) and a
    /// partly written batch is a torn tail that the next write cuts off.
    pub fn flush(&mut self) -> Result<Option<AppendReceipt>, StoreError> {
        self.write_queue(true)
    }

    /// Chain and write every queued record, under the file lock, in one write, without
    /// syncing: when this returns the records are in the file (they survive this
    /// process being killed) but reach the disk only with a later [`flush`](Self::flush),
    /// [`sync`](Self::sync) or [`SyncHandle::sync`]. For a writer that syncs in batches of
    /// its own (group commit).
    pub fn flush_unsynced(&mut self) -> Result<Option<AppendReceipt>, StoreError> {
        self.write_queue(false)
    }

    /// A handle that `fdatasync`s this log's file from another thread, so that a writer
    /// never waits for the disk between its writes.
    pub fn sync_handle(&self) -> Result<SyncHandle, StoreError> {
        Ok(SyncHandle {
            file: self.file.try_clone().map_err(|e| self.io(e))?,
            path: self.path.clone(),
        })
    }

    fn write_queue(&mut self, sync: bool) -> Result<Option<AppendReceipt>, StoreError> {
        if self.queue.is_empty() {
            return Ok(None);
        }
        let mut queue = std::mem::take(&mut self.queue);
        self.queued_since = None;
        self.locked(|log| {
            log.load_tail()?;
            let Some(tail) = log.tail.clone() else {
                return Err(StoreError::new(
                    &log.path,
                    StoreErrorKind::Io("the log has no header".into()),
                ));
            };
            let log_id = log.log_id.clone().unwrap_or_default();
            let (mut seq, mut hash) = (tail.seq, tail.hash.clone());
            let mut finding = tail.problem.clone();
            match &mut log.guard {
                Some(guard) => {
                    let anchor = guard.anchor()?;
                    if finding.is_none()
                        && let Some(a) = &anchor
                    {
                        finding = guard::check(&mut log.file, a, &log_id, &tail)
                            .map_err(|e| StoreError::io(&log.path, &e))?;
                    }
                    if tail.problem.is_some() {
                        // The file's last line cannot be continued: continue from the
                        // last record the store vouches for (the break stays visible).
                        (seq, hash) = match &anchor {
                            Some(a) if a.head.log_id == log_id => (a.head.seq, a.head.hash.clone()),
                            _ => (0, log_id.clone()),
                        };
                    }
                }
                None => {
                    if let Some(problem) = &tail.problem {
                        return Err(StoreError::new(
                            &log.path,
                            StoreErrorKind::Corrupt(format!("{problem}, so nothing was appended")),
                        ));
                    }
                }
            }
            if let Some(found) = &finding {
                // Say what was found, in the log itself, before the records that follow.
                let note = serde_json::json!({
                    "kind": "audit",
                    "event": "break",
                    "finding": found,
                });
                if let Some(fields) = LogFields::from_value(&note) {
                    queue.insert(
                        0,
                        Queued {
                            time: now_rfc3339(),
                            fields,
                        },
                    );
                }
            }
            let mut bytes =
                Vec::with_capacity(queue.iter().map(|q| q.fields.as_str().len() + 360).sum());
            if tail.len > 0 && tail.problem.is_some() && tail.hash.is_empty() {
                // A last line too long to read ends here, so that the records after it
                // are lines of their own.
                bytes.push(b'\n');
            }
            let overflow = || {
                StoreError::new(
                    &log.path,
                    StoreErrorKind::Corrupt("the log's sequence numbers are exhausted".into()),
                )
            };
            let first = seq.checked_add(1).ok_or_else(overflow)?;
            for (i, q) in queue.iter().enumerate() {
                seq = seq.checked_add(1).ok_or_else(overflow)?;
                let start = bytes.len();
                build_body(&mut bytes, seq, &q.time, &hash, q.fields.as_str());
                // The batch's last record carries the signature. It vouches for the
                // batch's records, `signed_from` to itself (chained to the record before
                // them): never for records it did not write.
                if i + 1 == queue.len()
                    && let Some(guard) = &log.guard
                {
                    bytes.extend_from_slice(b",\"signed_from\":");
                    bytes.extend_from_slice(first.to_string().as_bytes());
                    let sig = guard.key().sign(&bytes[start..]);
                    bytes.extend_from_slice(b",\"sig\":\"");
                    bytes.extend_from_slice(sig.as_bytes());
                    bytes.push(b'"');
                }
                bytes.push(b'}');
                hash = hash_hex(&bytes[start..]);
                bytes.push(b'\n');
            }
            let written = log.file.write_all(&bytes);
            if let Err(e) = written.and_then(|()| if sync { log.file.sync_data() } else { Ok(()) })
            {
                // Whatever part was written is a torn tail the next write will cut.
                log.tail = None;
                return Err(log.io(e));
            }
            let end = tail.len + bytes.len() as u64;
            log.tail = Some(Tail {
                len: end,
                hash: hash.clone(),
                seq,
                problem: None,
            });
            if let Some(guard) = &mut log.guard {
                let new = AuditHead {
                    log_id,
                    seq,
                    hash: hash.clone(),
                };
                guard.advance(&new, end, finding.as_deref())?;
            }
            Ok(Some(AppendReceipt { seq, hash }))
        })
    }

    /// Write and sync everything queued (same as [`flush`](Self::flush)).
    pub fn sync(&mut self) -> Result<(), StoreError> {
        self.flush().map(drop)
    }
}

/// A second descriptor of an audit log's file, for `fdatasync` from another thread
/// ([`AuditLog::sync_handle`]).
#[derive(Debug)]
pub struct SyncHandle {
    file: File,
    path: PathBuf,
}

impl SyncHandle {
    /// `fdatasync` the log: every record written before this call is on disk when it
    /// returns `Ok`.
    pub fn sync(&self) -> Result<(), StoreError> {
        self.file
            .sync_data()
            .map_err(|e| StoreError::io(&self.path, &e))
    }
}

impl Drop for AuditLog {
    fn drop(&mut self) {
        // Nothing can be reported from a destructor; callers wanting the error call flush().
        let _ = self.flush();
    }
}

/// Append `{"seq":N,"time":T,"prev":H<fields>` to `out`: a record without its closing
/// brace (and its signature, if any, before that). `fields` are the caller's, as
/// `,"k":v…` (without `seq`, `time`, `prev`, `sig`, which the log owns).
fn build_body(out: &mut Vec<u8>, seq: u64, time: &str, prev: &str, fields: &str) {
    out.extend_from_slice(b"{\"seq\":");
    out.extend_from_slice(seq.to_string().as_bytes());
    out.extend_from_slice(b",\"time\":\"");
    out.extend_from_slice(time.as_bytes());
    out.extend_from_slice(b"\",\"prev\":\"");
    out.extend_from_slice(prev.as_bytes());
    out.push(b'"');
    out.extend_from_slice(fields.as_bytes());
}

/// The first line of the file, if complete (at most 64 KiB read).
fn read_first_line(file: &mut File) -> std::io::Result<Option<Vec<u8>>> {
    file.seek(SeekFrom::Start(0))?;
    let mut first = Vec::new();
    BufReader::new((&*file).take(64 * 1024)).read_until(b'\n', &mut first)?;
    Ok(first.strip_suffix(b"\n").map(<[u8]>::to_vec))
}

pub(crate) type Snapshot = BufReader<std::io::Take<File>>;

/// Open the log for reading, limited to the bytes that were complete at this moment:
/// the length is read under a shared lock, which no writer holds while appending, so
/// a write in progress is not mistaken for a torn tail.
pub(crate) fn open_read(path: &Path) -> Result<Snapshot, StoreError> {
    let file = open_regular(path).map_err(|e| StoreError::io(path, &e))?;
    rustix::fs::flock(&file, rustix::fs::FlockOperation::LockShared)
        .map_err(|e| StoreError::io(path, &e.into()))?;
    let len = file.metadata().map(|m| m.len());
    // Unlocking cannot meaningfully fail; closing the file would release it anyway.
    let _ = rustix::fs::flock(&file, rustix::fs::FlockOperation::Unlock);
    let len = len.map_err(|e| StoreError::io(path, &e))?;
    Ok(BufReader::with_capacity(1 << 16, file.take(len)))
}

/// Visit every complete record line (header and torn tail skipped) in file order.
pub(crate) fn for_each_record(
    path: &Path,
    mut f: impl FnMut(&[u8], Value) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let mut reader = open_read(path)?;
    let mut buf = Vec::new();
    loop {
        match read_line(&mut reader, &mut buf).map_err(|e| StoreError::io(path, &e))? {
            LineRead::Complete(_) => {}
            LineRead::Eof | LineRead::Partial => return Ok(()),
            LineRead::TooLong => {
                return Err(StoreError::new(
                    path,
                    StoreErrorKind::Corrupt(format!(
                        "a line of the log is longer than {MAX_LINE} bytes: it is not a record cordon wrote; `cordon audit verify` says where"
                    )),
                ));
            }
        }
        let line = &buf[..buf.len() - 1];
        if let Ok(v) = serde_json::from_slice::<Value>(line)
            && v.is_object()
            && v.get(HEADER_KEY).is_none()
        {
            f(line, v)?;
        }
    }
}

/// The last `n` records of the log, oldest first.
pub fn tail(path: &Path, n: usize) -> Result<Vec<Value>, StoreError> {
    let mut out = std::collections::VecDeque::with_capacity(n.min(4096));
    if n == 0 {
        return Ok(Vec::new());
    }
    for_each_record(path, |_, v| {
        if out.len() == n {
            out.pop_front();
        }
        out.push_back(v);
        Ok(())
    })?;
    Ok(out.into())
}
