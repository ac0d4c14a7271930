//! cordon-serve: cordon's decisions as a long-running service, for harnesses in any
//! language that should not start a process per tool call.
//!
//! The protocol is JSON-RPC 2.0, one JSON object per line, over stdin/stdout or a Unix
//! socket ([`listen`]). The methods ([`Connection::handle`]) are `check` (the verdict JSON
//! of `cordon check`, built by the same [`cordon_gate::Gate::report`]), `pending.list`,
//! `approve`, `deny`, `record` (a tool's result for the audit log), `label` (untrusted
//! content wrapped in a trust label, secrets redacted on request) and `hook` (a harness's
//! hook payload answered as `cordon hook` answers it, for `cordon hook --server`: see
//! [`hook`]). The policy is reloaded when a config file it
//! was loaded from changes ([`PolicyHolder`]); a config with errors keeps the last good one.
//!
//! This crate decides nothing itself: every call goes through the gate. It owns framing,
//! dispatch, connections, reloads and the audit writer.
//!
//! # Concurrency: a thread per connection
//!
//! Each socket client gets a thread of its own, at most [`ServeOptions::max_connections`]
//! at once (a client past the limit is told so and closed). A decision is short,
//! CPU-bound, synchronous work (policy evaluation, at times a SQLite transaction), and
//! each connection holds its own blocking SQLite connection, so an async runtime would
//! only move the same work onto a blocking pool. Threads make a slow or vanished client
//! cost exactly its own thread: a client that stops reading blocks only its own writes,
//! for at most 30 s. A client that disconnects mid-request does not interrupt it: the
//! call is decided and recorded, and only the answer is lost (a pending approval stays
//! pending; a permission is never left without its audit record, because the record is
//! written before the answer exists on the wire).
//!
//! # Audit durability
//!
//! One audit log is kept open for the service's life ([`AuditWriter`]); each connection
//! writes its own record (chained, under the log's lock) and syncs to disk are shared
//! between records (group commit). The guarantee, per [`AuditSync`]:
//!
//! * `batched` (the default, every 10 ms): **the record of a decision (or of an answer to
//!   a pending approval, or of a reported result) is in the log file before the answer
//!   that depends on it is sent.** It survives cordon serve or its client being killed.
//!   It reaches the disk at most one interval later: a second thread `fdatasync`s
//!   everything written, at most once per interval. A power cut or kernel crash can lose
//!   the records of the last interval, answers already given among them. If a sync
//!   fails, the service refuses every later call (each `check` is a deny saying why).
//! * `each`: the answer is sent only once its record is written **and** synced; records
//!   of calls that arrive together share one `fdatasync`. Nothing answered is lost to a
//!   crash, at the cost of a sync (≈ 0.15 ms here) in every answer's latency.
//!
//! A record that cannot be written turns a permission into a refusal
//! ([`cordon_gate::Gate::conclude_with`]), and an approval whose record cannot be written
//! is taken back.
//!
//! # Approvals
//!
//! An ask is recorded as a pending approval (`"outcome":"pending","pending":ID`). A
//! client re-sends the same call with the same `operation_id` to collect the answer:
//! while it is unanswered the same id comes back (no second record); once approved the
//! call is permitted once; once denied it is refused. Without an `operation_id` each ask
//! records a pending approval of its own.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod audit;
pub mod hook;
pub mod listen;
mod methods;
mod reload;
pub mod rpc;
mod service;
mod shared_rules;

pub use audit::{AuditSync, AuditWriter};
pub use reload::PolicyHolder;
pub use service::{
    Connection, ENVELOPE_HEADROOM, MAX_LINE, ServeError, ServeOptions, Service, Slot,
};
