//! cordon-store: what cordon remembers, and the record of what it did.
//!
//! This crate owns these things and nothing else:
//!
//! * the **store** ([`Store`]): leases (approvals bound to the exact fingerprint of one
//!   normalized tool call), rules a human chose to remember, approvals left pending for a
//!   human who was not there, operation ids already permitted, and decisions shipped from
//!   each machine's audit log ([`Store::add_decisions`]). It lives in an SQLite file (the
//!   default, one per user) or, for a fleet of machines, in one PostgreSQL database
//!   ([`StoreAt`], [`PgTarget`]): the same operations with the same semantics, each
//!   written once in SQL both engines accept (`store/db.rs`);
//! * the **approval flow** ([`resolve_ask`]): what happens when the policy says "ask" —
//!   an existing lease, else a human through a [`Prompter`], else deny or pending;
//! * **sessions** ([`Store::record_session`], [`Store::session_view`]): what each
//!   session's permitted calls wrote and which legs of the lethal trifecta they added;
//! * **pinned MCP servers** ([`Store::mcp_pins`]): the command and tool definitions a
//!   human approved for each MCP server, and changes seen since;
//! * **sandbox slots' records** ([`Store::slots`]): when each persistent slot was made
//!   and used, and by what (the slots' files themselves belong to `cordon-sandbox`);
//! * the **audit log** ([`AuditLog`]): append-only JSON lines, each carrying the blake3
//!   hash of the line before it, so that an edit, a deletion, a reordering or a torn tail
//!   is found by [`verify`]; opened with [`AuditLog::open_anchored`], its head is also
//!   anchored in the store and each batch signed ([`AuditKey`]), so that [`verify_with`]
//!   finds a cut end, an older copy, another file, and (with the public key) a rewrite.
//!
//! It never decides policy: fingerprints and suggested rules come from `cordon-policy`
//! and are opaque strings here. It never fails open: any error while reading the store
//! is returned, and the caller must treat it as "nothing was granted".
//!
//! # Threat notes
//!
//! * The store file is created `0600` in a `0700` directory; a lease is an authority,
//!   so other users must not be able to write one.
//! * A "once" lease is consumed inside one `BEGIN IMMEDIATE` transaction: two processes
//!   racing for the same lease cannot both win. On PostgreSQL every write transaction
//!   takes one transaction-level advisory lock first, so the fleet's writes run one at a
//!   time exactly as SQLite's do: a lease is spent once, an operation id claimed once, a
//!   pending approval answered once, across every machine.
//! * A shared store is an authority for every machine using it: whoever can write to the
//!   database can grant any of them anything. Its role must be cordon's alone, and the
//!   server must be reached over a Unix socket or loopback (TLS is not supported yet, so
//!   any other host is refused). The password comes from a file (not readable by other
//!   users) or the environment, never from the URL (a URL holding one is refused), and
//!   never appears in an error, a `Debug` rendering or a log.
//! * A shared store that is unreachable, or fails in the middle of a transaction, is an
//!   error ([`StoreErrorKind::Unavailable`]), so the caller grants nothing; connecting is
//!   retried with doubling pauses for at most 2.5 seconds (login included), every later
//!   round trip waits at most the busy timeout plus 2 seconds for the server's answer
//!   (a stalled server enforces none of its own timeouts, so these are the client's),
//!   and a connection that broke or missed a deadline is dropped and no longer
//!   [`Store::is_current`] (it reconnects before its next use). A transaction
//!   the store reported committed was committed (PostgreSQL commits synchronously); one
//!   that failed was rolled back by the server.
//! * What proves a machine's history stays on that machine, in its local SQLite store:
//!   the audit log's anchored head and signing key, export cursors, and sandbox slots'
//!   records. A shared store refuses them with one sentence. Decisions shipped to a
//!   shared store are a copy for the console, not evidence: the log is.
//! * The audit chain proves that the file was not edited *after* a line was written,
//!   relative to its head. Anyone able to rewrite the whole file can rebuild the chain:
//!   the head anchored in the store catches a cut or a rollback, and only the signing
//!   key (`audit.key`, 0600, beside the store, masked in the sandbox) can re-sign a
//!   rewrite. Whoever holds both the store and the key can rewrite undetected; an
//!   exported copy (`cordon-export`) is then the only witness.
//! * Text shown to the human is stripped of control characters so that a target cannot
//!   repaint the prompt with terminal escapes.
#![deny(missing_docs)]
#![deny(unsafe_code)]

mod anchor;
mod approval;
mod at;
mod audit;
mod audit_key;
mod error;
mod export;
mod follow;
mod operations;
mod paths;
#[cfg(any(test, feature = "test-support"))]
pub mod pg_test;
mod pins;
mod record;
mod redact;
mod sessions;
mod slots;
mod store;

pub use anchor::{AuditAnchor, AuditHead, ExportCursor, anchor_key};
pub use approval::{
    AnswerKind, AnsweredBy, AnsweredRecord, AskContext, Choice, FlowOptions, Grant, GrantSource,
    NoHuman, NoPrompter, PromptOutcome, Prompter, Question, Refusal, Resolution, RuleOption,
    answered_record, resolve_ask, resolve_ask_with, resolve_edited, resolve_lease,
};
pub use at::{MAX_CA_FILE, Password, PgTarget, StoreAt, StoreTls};

/// The SQL that makes the shared store's two database roles, `cordon_machine` and
/// `cordon_approver`, with their grants (see docs/operations/fleet.md); run by an
/// administrator in the store's database after the schema exists.
pub const PG_ROLES_SQL: &str = include_str!("store/pg_roles.sql");
pub use audit::{
    AppendReceipt, AuditLog, Backlog, Break, Durability, QueuedRecord, Reanchored, SyncHandle,
    Unshipped, Verification, VerifyOptions, VerifyReport, backlog, reanchor, records_after, tail,
    verify, verify_with,
};
pub use audit_key::{
    AuditKey, AuditPublicKey, KEY_FILE, PublicKeyError, files_of_store, key_path_for_store,
};
pub use error::{StoreError, StoreErrorKind};
pub use export::{
    ExportFilter, RunEnding, TimeError, export, format_time, parse_time, run_ending, summary_line,
};
pub use follow::{Line, Reader};
pub use operations::{CLAIM_KEEP, CLAIM_MAX_ROWS, Edit, EditedLease, PRUNE_EVERY, PRUNE_GROWTH};
pub use paths::{default_audit_path, default_store_path, state_dir};
pub use pins::{CommandPin, PinsApproved, ServerPins, ToolPin};
pub use record::{
    AuditRecord, ContainmentBlock, EgressDestination, EgressEntry, EgressLog, EscalationRecord,
    FindingBrief, LogFields, Phase, RunTier,
};
pub use redact::{REDACTED, redact, redact_text};
pub use sessions::{
    CallRef, EventKind, SessionEvent, SessionLimits, SessionRecord, SessionSummary, SessionView,
};
pub use slots::{SlotRecord, SlotScope};
pub use store::{
    AlwaysApproved, Answer, Answered, Approved, DecisionRow, Denied, GATEWAY_RUN_SESSION, Lease,
    LeaseId, LeaseUse, PG_SCHEMA_VERSION, Pending, PendingId, PendingState, Reach, RememberedRule,
    RulePick, SCHEMA_VERSION, SESSION_TTL, Scope, Store, StoreOptions,
};
