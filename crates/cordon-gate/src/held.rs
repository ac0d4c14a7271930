//! What a long-lived gate keeps open between calls: one approval-store connection for
//! claiming operation ids, and the audit log.
//!
//! A one-shot surface (`check`, a hook) makes one call and pays for opening either
//! once; a surface that judges many calls in one process (the MCP gateway, the decision
//! service) would otherwise open the store (identity check, WAL pragma, migration check)
//! and the log (a read of its last line) for every call. Keeping them open changes no
//! guarantee: the store is SQLite (other processes' writes are seen at the next
//! statement) and the log re-reads its last record under its file lock before each
//! append, so records written by other processes in between still chain.
//!
//! The log's anchor (its head, kept in the store after every append) borrows the kept
//! store connection for the append and gives it back, so that a one-shot surface opens
//! the store once, not once for its decisions and again for the anchor.
//!
//! A handle that fails once is dropped and opened afresh on the next call. A kept store
//! connection is also opened afresh when the store's path no longer names the file it
//! was opened on (deleted, restored from a backup): its leases must not outlive the file.
//! Clones of a gate do not share the handles.

use cordon_store::{AuditLog, Durability, LogFields, Store, StoreError};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Handles kept open by one gate.
#[derive(Default)]
pub(crate) struct Held {
    store: Mutex<Option<Store>>,
    audit: Mutex<Option<(PathBuf, AuditLog)>>,
}

impl Clone for Held {
    fn clone(&self) -> Held {
        Held::default()
    }
}

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Held")
    }
}

impl Held {
    /// Run `f` on the kept store connection, opening it with `open` first when there is
    /// none. A failure drops the connection.
    pub(crate) fn with_store<T>(
        &self,
        open: impl FnOnce() -> Result<Store, StoreError>,
        f: impl FnOnce(&Store) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let Ok(mut slot) = self.store.lock() else {
            // A thread panicked while holding it: use a connection of this call's own.
            return f(&open()?);
        };
        let store = match slot.take().filter(Store::is_current) {
            Some(s) => s,
            None => open()?,
        };
        let result = f(&store);
        if result.is_ok() {
            *slot = Some(store);
        }
        result
    }

    /// Take the kept store connection out (opening one with `open` when none is kept),
    /// for a caller that uses it across other calls of the gate, which would deadlock
    /// [`with_store`](Self::with_store)'s lock, or for as long as a human takes to
    /// answer. Meanwhile other calls open their own. [`give_back`](Self::give_back) it
    /// after a success; after a failure, drop it.
    pub(crate) fn take_store(
        &self,
        open: impl FnOnce() -> Result<Store, StoreError>,
    ) -> Result<Store, StoreError> {
        match self.take_kept_store() {
            Some(s) => Ok(s),
            None => open(),
        }
    }

    /// The kept store connection, if there is one and its path still names its file.
    fn take_kept_store(&self) -> Option<Store> {
        self.store
            .lock()
            .ok()
            .and_then(|mut slot| slot.take())
            .filter(Store::is_current)
    }

    /// Keep `store` (from [`take_store`](Self::take_store)) unless a connection was
    /// kept meanwhile.
    pub(crate) fn give_back(&self, store: Store) {
        if let Ok(mut slot) = self.store.lock()
            && slot.is_none()
        {
            *slot = Some(store);
        }
    }

    /// Keep `store` as the connection to use, replacing any kept one.
    pub(crate) fn keep_store(&self, store: Store) {
        if let Ok(mut slot) = self.store.lock() {
            *slot = Some(store);
        }
    }

    /// Open the log at `path` (anchored in the store at `store`) and keep it, unless it
    /// is kept already: the log and its signing key exist when this returns.
    pub(crate) fn open_audit(
        &self,
        path: &Path,
        store: &Path,
        durability: Durability,
    ) -> Result<(), StoreError> {
        self.with_log(path, store, durability, |_| Ok(()))
    }

    /// Append `record` to the log at `path` through the kept handle (opened with
    /// `durability`, anchored in the store at `store`, when there is none, or when the
    /// path changed), then make it durable
    /// as `durability` says: `FsyncEach` syncs before this returns; anything else is
    /// written without waiting for the disk. A failure drops the handle.
    pub(crate) fn append(
        &self,
        path: &Path,
        store: &Path,
        durability: Durability,
        record: LogFields,
    ) -> Result<(), StoreError> {
        self.with_log(path, store, durability, |log| {
            // One connection to the store for both: the log's anchor uses the kept one
            // (opening another reads the schema again), and what the log holds afterwards
            // is kept for the gate's next use.
            if let Some(back) = self.take_kept_store().and_then(|s| log.lend_store(s)) {
                self.give_back(back);
            }
            let result = match durability {
                Durability::FsyncEach => log.append_fields(record),
                // Also through a handle kept from a synced record: a run's start is
                // synced, its end is not.
                _ => log.append_fields_unsynced(record),
            };
            if let Some(store) = log.take_store() {
                self.give_back(store);
            }
            result
        })
    }

    /// Run `f` on the kept log when it is the one at `path`, else on the log opened there
    /// (with `durability`, anchored in the store at `store`), and keep that log after a
    /// success. A failure drops it; a poisoned lock leaves this call a log of its own.
    fn with_log(
        &self,
        path: &Path,
        store: &Path,
        durability: Durability,
        f: impl FnOnce(&mut AuditLog) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let Ok(mut slot) = self.audit.lock() else {
            return f(&mut AuditLog::open_anchored(path, durability, store)?);
        };
        let mut log = match slot.take() {
            Some((p, log)) if p == path => log,
            _ => AuditLog::open_anchored(path, durability, store)?,
        };
        let result = f(&mut log);
        if result.is_ok() {
            *slot = Some((path.to_path_buf(), log));
        }
        result
    }
}
