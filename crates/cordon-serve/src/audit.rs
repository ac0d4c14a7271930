//! The service's audit writer: one thread owns the open log and writes what every
//! connection hands it, in batches (group commit); another syncs the file to disk.
//!
//! It owns the promise the crate documents ([`AuditSync`]): a record is in the log file
//! before the answer that depends on it is sent. It must never report a record as
//! written when it was not, and once the disk has refused a sync it accepts nothing more.

use cordon_gate::AuditError;
use cordon_store::{AuditLog, Durability, StoreError, StoreErrorKind, SyncHandle};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// When the records the service writes reach the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditSync {
    /// Every answer waits until its record is written *and* `fdatasync`ed; records of
    /// concurrent calls share one sync.
    Each,
    /// Every answer waits until its record is written to the file; a second thread
    /// `fdatasync`s what was written at most `interval` later.
    Batched {
        /// The longest a written record waits for its sync.
        interval: Duration,
    },
}

impl Default for AuditSync {
    fn default() -> Self {
        AuditSync::Batched {
            interval: Duration::from_millis(10),
        }
    }
}

/// Most records written in one batch.
const MAX_BATCH: usize = 1024;

struct Job {
    record: Value,
    done: SyncSender<Result<(), String>>,
}

/// What the syncer knows: batches written, batches synced, and a failure that ends all.
#[derive(Default)]
struct SyncState {
    written: u64,
    synced: u64,
    failed: Option<String>,
    closing: bool,
}

struct Shared {
    state: Mutex<SyncState>,
    wake: Condvar,
}

/// A handle to the writer, shared by every connection.
pub struct AuditWriter {
    path: PathBuf,
    jobs: Mutex<Option<Sender<Job>>>,
    writer: Mutex<Option<JoinHandle<()>>>,
    syncer: Mutex<Option<JoinHandle<()>>>,
    shared: Arc<Shared>,
}

/// A connection's way back from the writer (one per connection, reused per record).
pub struct Reply {
    tx: SyncSender<Result<(), String>>,
    rx: Receiver<Result<(), String>>,
}

impl Default for Reply {
    fn default() -> Self {
        let (tx, rx) = mpsc::sync_channel(1);
        Reply { tx, rx }
    }
}

impl AuditWriter {
    /// Open the log at `path` and start the writer (and, batched, the syncer).
    pub fn start(path: &Path, sync: AuditSync) -> Result<AuditWriter, StoreError> {
        // The log never flushes by itself: the writer decides when.
        let mut log = AuditLog::open(
            path,
            Durability::Batched {
                max_records: u32::MAX,
                max_delay: Duration::MAX,
            },
        )?;
        let shared = Arc::new(Shared {
            state: Mutex::new(SyncState::default()),
            wake: Condvar::new(),
        });
        let (tx, rx) = mpsc::channel::<Job>();
        let syncer = match sync {
            AuditSync::Batched { interval } => {
                let handle = log.sync_handle()?;
                let shared = Arc::clone(&shared);
                Some(spawn("cordon-audit-sync", move || {
                    sync_loop(&handle, &shared, interval)
                })?)
            }
            AuditSync::Each => None,
        };
        let each = sync == AuditSync::Each;
        let shared_w = Arc::clone(&shared);
        let writer = spawn("cordon-audit", move || {
            write_loop(&mut log, &rx, &shared_w, each)
        })?;
        Ok(AuditWriter {
            path: path.to_path_buf(),
            jobs: Mutex::new(Some(tx)),
            writer: Mutex::new(Some(writer)),
            syncer: Mutex::new(syncer),
            shared,
        })
    }

    /// The log's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Hand `record` to the writer and wait until it is written (and synced, with
    /// [`AuditSync::Each`]). An error means the record is not in the log.
    pub fn write(&self, record: Value, reply: &Reply) -> Result<(), AuditError> {
        let err = |why: String| AuditError {
            path: Some(self.path.clone()),
            source: StoreError::new(&self.path, StoreErrorKind::Io(why)),
        };
        let sender = match self.jobs.lock() {
            Ok(g) => g.clone(),
            Err(_) => None,
        };
        let Some(sender) = sender else {
            return Err(err("the service is shutting down".into()));
        };
        let job = Job {
            record,
            done: reply.tx.clone(),
        };
        if sender.send(job).is_err() {
            return Err(err("the audit writer has stopped".into()));
        }
        match reply.rx.recv() {
            Ok(Ok(())) => Ok(()),
            Ok(Err(why)) => Err(err(why)),
            Err(_) => Err(err("the audit writer has stopped".into())),
        }
    }

    /// Stop taking records, write and sync what was taken, and wait for both threads.
    pub fn shutdown(&self) {
        if let Ok(mut g) = self.jobs.lock() {
            g.take();
        }
        if let Some(h) = self.writer.lock().ok().and_then(|mut g| g.take()) {
            let _ = h.join();
        }
        if let Ok(mut s) = self.shared.state.lock() {
            s.closing = true;
        }
        self.shared.wake.notify_all();
        if let Some(h) = self.syncer.lock().ok().and_then(|mut g| g.take()) {
            let _ = h.join();
        }
    }
}

impl Drop for AuditWriter {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> Result<JoinHandle<()>, StoreError> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(f)
        .map_err(|e| StoreError::new(Path::new(name), StoreErrorKind::Io(e.to_string())))
}

fn write_loop(log: &mut AuditLog, jobs: &Receiver<Job>, shared: &Shared, each: bool) {
    while let Ok(first) = jobs.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(j) => batch.push(j),
                Err(_) => break,
            }
        }
        let failed = shared.state.lock().ok().and_then(|s| s.failed.clone());
        let result = match failed {
            Some(why) => Err(why),
            None => write_batch(log, &batch, each),
        };
        if result.is_ok()
            && !each
            && let Ok(mut s) = shared.state.lock()
        {
            s.written += 1;
            shared.wake.notify_all();
        }
        for job in batch {
            // A connection that went away no longer waits; its record is written anyway.
            let _ = job.done.send(result.clone());
        }
    }
    // Every sender is gone: the final sync happens when the log is dropped.
    if let Err(e) = log.flush() {
        eprintln!("cordon serve: the audit log could not be synced at exit: {e}");
    }
}

fn write_batch(log: &mut AuditLog, batch: &[Job], each: bool) -> Result<(), String> {
    for job in batch {
        log.append(&job.record).map_err(|e| e.to_string())?;
    }
    let written = if each {
        log.flush()
    } else {
        log.flush_unsynced()
    };
    written.map(drop).map_err(|e| e.to_string())
}

fn sync_loop(handle: &SyncHandle, shared: &Shared, interval: Duration) {
    let mut last = Instant::now();
    loop {
        let target = {
            let Ok(mut s) = shared.state.lock() else {
                return;
            };
            while s.written == s.synced && !s.closing {
                s = match shared.wake.wait(s) {
                    Ok(s) => s,
                    Err(_) => return,
                };
            }
            if s.written == s.synced {
                return;
            }
            s.written
        };
        // At most one sync per interval: everything written meanwhile shares it.
        let since = last.elapsed();
        if since < interval {
            std::thread::sleep(interval - since);
        }
        let target = shared.state.lock().map(|s| s.written).unwrap_or(target);
        last = Instant::now();
        let result = handle.sync();
        let Ok(mut s) = shared.state.lock() else {
            return;
        };
        match result {
            Ok(()) => s.synced = target,
            Err(e) => {
                let why = format!(
                    "the audit log could not be synced to disk ({e}); cordon serve accepts no more calls until it is restarted"
                );
                eprintln!("cordon serve: {why}");
                s.failed = Some(why);
                return;
            }
        }
    }
}
