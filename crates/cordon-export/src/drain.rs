//! Shipping the log: the records after the export cursor, in batches, each retried with
//! backoff until the collector takes it; the cursor moves (in the store) only after it
//! did, so a crash between the two sends a batch twice, with the same record ids
//! (at-least-once).
//!
//! The queue is the log itself from the cursor on: a process that writes a record (a
//! hook call) has queued it by writing it, and never waits for the collector. The queue
//! is bounded by [`ExportConfig::max_backlog`] records: when more wait, the oldest are
//! skipped, and a record saying which (`kind: "export"`, `event: "dropped"`) is appended
//! to the log, so the drop itself reaches the collector and the local log. The bound is
//! counted in lines from the cursor's byte offset, never from a seq written in the file.
//!
//! A record that does not chain to the one before it is shipped, marked with
//! `cordon.audit.chain_break`, rather than held back: stopping at a break would let
//! anyone who can write the log silence the collector for every later decision (the
//! writers keep appending after a break, and say so in a record of their own), while the
//! mark and the collector's own `verify` show exactly where the log was edited.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use cordon_store::{AuditLog, Durability, ExportCursor, Store, anchor_key, backlog, records_after};
use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceResponse;
use prost::Message;

use crate::ExportError;
use crate::config::ExportConfig;
use crate::encode::{Sender, request};
use crate::http::{Sent, post};

/// Records in one request at most.
pub const BATCH_RECORDS: usize = 512;
/// About this many bytes of records in one request at most.
pub const BATCH_BYTES: usize = 1 << 20;

/// How long [`Exporter::drain`] keeps retrying.
#[derive(Debug, Clone, Copy)]
pub struct DrainOptions {
    /// Give up (leaving the rest queued) after this long without the collector.
    pub give_up_after: Duration,
    /// The first retry's delay; each next one doubles, up to [`max_backoff`](Self::max_backoff).
    pub first_backoff: Duration,
    /// The longest delay between retries.
    pub max_backoff: Duration,
}

impl Default for DrainOptions {
    fn default() -> Self {
        DrainOptions {
            give_up_after: Duration::from_secs(60),
            first_backoff: Duration::from_millis(250),
            max_backoff: Duration::from_secs(30),
        }
    }
}

/// What a drain did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DrainReport {
    /// Records the collector took.
    pub sent: u64,
    /// Requests it took.
    pub batches: u64,
    /// Records skipped (the queue's bound, or refused for good by the collector).
    pub dropped: u64,
    /// Records still waiting.
    pub remaining: u64,
    /// Records shipped marked as breaking the chain (`cordon.audit.chain_break`): the
    /// log was edited there; the collector has them, flagged, and `verify` fails on them.
    pub breaks: u64,
}

/// Ships one log, anchored in one store, to one collector.
#[derive(Debug)]
pub struct Exporter {
    log: PathBuf,
    store: PathBuf,
    config: ExportConfig,
    sender: Sender,
}

/// The records a 2xx answer says were rejected, and why (OTLP partial success).
fn rejected(answer: &[u8]) -> Option<(u64, String)> {
    let response = ExportLogsServiceResponse::decode(answer).ok()?;
    let partial = response.partial_success?;
    (partial.rejected_log_records > 0).then(|| {
        (
            u64::try_from(partial.rejected_log_records).unwrap_or(0),
            partial.error_message,
        )
    })
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

impl Exporter {
    /// An exporter of the log at `log` whose cursor lives in the store at `store`.
    pub fn new(log: &Path, store: &Path, config: ExportConfig) -> Exporter {
        Exporter {
            log: log.to_path_buf(),
            store: store.to_path_buf(),
            config,
            sender: Sender::this_process(),
        }
    }

    /// The configuration in use.
    pub fn config(&self) -> &ExportConfig {
        &self.config
    }

    fn store_err(&self, e: cordon_store::StoreError) -> ExportError {
        ExportError::Store(e.to_string())
    }

    /// Append the record of a drop to the log (it is exported like any other).
    fn record_drop(&self, first: u64, last: u64, count: u64, why: &str) -> Result<(), ExportError> {
        let mut log = AuditLog::open_anchored(&self.log, Durability::FsyncEach, &self.store)
            .map_err(|e| self.store_err(e))?;
        log.append(&serde_json::json!({
            "kind": "export",
            "event": "dropped",
            "first": first,
            "last": last,
            "count": count,
            "reason": why,
            "endpoint": self.config.endpoint,
        }))
        .and_then(|()| log.flush().map(drop))
        .map_err(|e| self.store_err(e))
    }

    /// Ship every record after the cursor; return when none is left, when `stop` is set,
    /// or with [`ExportError::Unreachable`] when the collector stayed away longer than
    /// `opts.give_up_after` (what was not shipped stays queued).
    pub fn drain(
        &self,
        opts: &DrainOptions,
        stop: &AtomicBool,
    ) -> Result<DrainReport, ExportError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| ExportError::Io(e.to_string()))?;
        let store = Store::open(&self.store).map_err(|e| self.store_err(e))?;
        let key = anchor_key(&self.log);
        let mut report = DrainReport::default();
        // The queue's bound, counted in lines from the cursor's byte offset: a seq written
        // in the file never decides what is skipped.
        let cursor = store.export_cursor(&key).map_err(|e| self.store_err(e))?;
        let waiting = backlog(
            &self.log,
            cursor.as_ref(),
            self.config.max_backlog.saturating_sub(1),
        )
        .map_err(|e| self.store_err(e))?;
        if let Some((skipped, first, last, count)) = waiting.skip
            && waiting.waiting > self.config.max_backlog
        {
            // Room is left for the drop record itself, so the bound holds after it.
            let why = format!(
                "more than {} records waited for the collector (the export queue's bound); the oldest were skipped",
                self.config.max_backlog
            );
            // The cursor first: should the drop record fail, nothing is skipped twice.
            store
                .set_export_cursor(&key, &skipped)
                .map_err(|e| self.store_err(e))?;
            self.record_drop(first, last, count, &why)?;
            report.dropped += count;
        }
        let mut waiting = waiting.waiting.min(self.config.max_backlog);
        loop {
            let cursor = store.export_cursor(&key).map_err(|e| self.store_err(e))?;
            let queued = records_after(&self.log, cursor.as_ref(), BATCH_RECORDS, BATCH_BYTES)
                .map_err(|e| self.store_err(e))?;
            report.breaks += queued
                .records
                .iter()
                .filter(|r| r.chain_break.is_some())
                .count() as u64;
            let Some(last) = queued.records.last() else {
                report.remaining = 0;
                return Ok(report);
            };
            let body =
                request(&self.sender, &queued.log_id, &queued.records, now_ns()).encode_to_vec();
            let started = Instant::now();
            let mut backoff = opts.first_backoff;
            let outcome = loop {
                if stop.load(Ordering::Relaxed) {
                    report.remaining = waiting;
                    return Ok(report);
                }
                let sent = runtime.block_on(post(
                    &self.config.endpoint,
                    &self.config.headers,
                    body.clone(),
                    self.config.timeout,
                ));
                match sent {
                    Sent::Accepted(answer) => break Ok(rejected(&answer)),
                    Sent::Refused(why) => break Err(why),
                    Sent::Retry(why, asked) => {
                        if started.elapsed() >= opts.give_up_after {
                            report.remaining = waiting;
                            return Err(ExportError::Unreachable {
                                why,
                                report: report.clone(),
                            });
                        }
                        let wait = asked.unwrap_or(backoff).min(opts.max_backoff);
                        std::thread::sleep(wait);
                        backoff = (backoff * 2).min(opts.max_backoff);
                    }
                }
            };
            let first = queued.records.first().map_or(last.seq, |r| r.seq);
            let next = ExportCursor {
                log_id: queued.log_id.clone(),
                seq: last.seq,
                offset: last.end,
            };
            store
                .set_export_cursor(&key, &next)
                .map_err(|e| self.store_err(e))?;
            let n = queued.records.len() as u64;
            waiting = waiting.saturating_sub(n);
            match outcome {
                Ok(None) => {
                    report.sent += n;
                    report.batches += 1;
                }
                Ok(Some((count, why))) => {
                    // Partial success: the collector kept the rest, and must not be sent
                    // these again.
                    let why = format!("the collector rejected {count} of these records: {why}");
                    self.record_drop(first, last.seq, count.min(n), &why)?;
                    report.sent += n.saturating_sub(count);
                    report.dropped += count.min(n);
                    report.batches += 1;
                }
                Err(why) => {
                    // OTLP: a request refused for good is not sent again. Say so.
                    self.record_drop(first, last.seq, n, &why)?;
                    report.dropped += n;
                }
            }
        }
    }
}

/// An exporter draining in a thread of its own ([`Exporter::spawn`]).
#[derive(Debug)]
pub struct Background {
    stop: std::sync::Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Background {
    /// A thread started with `stop` as its flag.
    pub(crate) fn running(
        stop: std::sync::Arc<AtomicBool>,
        thread: std::thread::JoinHandle<()>,
    ) -> Background {
        Background {
            stop,
            thread: Some(thread),
        }
    }

    /// Ask the thread to stop (it stops between requests, within the request timeout);
    /// does not wait.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Stop and wait for the thread.
    pub fn join(mut self) {
        self.stop();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Exporter {
    /// Drain every `interval` in a background thread until stopped, retrying with
    /// backoff while the collector is away; each failure is reported once on stderr
    /// (again only when it changes), prefixed `who`.
    pub fn spawn(self, interval: Duration, who: &'static str) -> std::io::Result<Background> {
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let flag = std::sync::Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("cordon-audit-export".into())
            .spawn(move || {
                let opts = DrainOptions {
                    give_up_after: Duration::from_secs(30),
                    ..DrainOptions::default()
                };
                let mut last_error = String::new();
                while !flag.load(Ordering::Relaxed) {
                    match self.drain(&opts, &flag) {
                        Ok(_) => last_error.clear(),
                        Err(e) => {
                            let text = e.to_string();
                            if text != last_error {
                                eprintln!(
                                    "{who}: audit export to {}: {text}",
                                    self.config.endpoint
                                );
                                last_error = text;
                            }
                        }
                    }
                    let until = Instant::now() + interval;
                    while Instant::now() < until && !flag.load(Ordering::Relaxed) {
                        std::thread::sleep(Duration::from_millis(50).min(interval));
                    }
                }
            })?;
        Ok(Background {
            stop,
            thread: Some(thread),
        })
    }
}
