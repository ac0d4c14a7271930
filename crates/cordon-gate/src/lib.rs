//! cordon-gate: the one flow from a tool call to an outcome, shared by every surface.
//!
//! `cordon check`, `cordon exec` and every later surface (hooks, the decision service,
//! the MCP gateway) call [`Gate::decide`]: the policy's [`Judgement`] under the
//! containment the call will run with, then the approval policy (`untrusted`,
//! `on-request`, `on-failure`, `never`), then a lease, a human, or a pending approval,
//! and out comes one typed [`Outcome`]:
//!
//! * [`Outcome::Permitted`] carries a sandbox [`Permit`], which only an unedited allow
//!   judgement or a store [`cordon_store::Grant`] can make;
//! * [`Outcome::Trial`] is the `on-failure` state machine's first state: run contained,
//!   then [`TrialRun::after_run`] offers one extra permission only when the command failed
//!   and containment blocked something it needed, and a write only as the narrow, safe
//!   [`WriteGrant`] that [`offer_write`] decides;
//! * [`Outcome::Ask`] hands an ask back to a caller that has its own human;
//! * [`Outcome::Pending`] and [`Outcome::Refused`] say what happened and, for a refusal,
//!   which [`Fix`] applies.
//!
//! Before a call is judged, the configured presets are merged over the model's input
//! (`Decided::request` is what was judged, and what a harness gets back). A permit is
//! given at most once per operation id and surface (a replay is refused). A human may
//! answer an ask with an edited input, which is judged again ([`PendingAnswer`]).
//!
//! When the request names a session, what the session already did is consulted after
//! the policy's order (a file it wrote that the call would execute, the third leg of the
//! lethal trifecta) and what a permitted call did is recorded (see `session.rs`).
//!
//! Every outcome becomes one [`cordon_store::AuditRecord`] ([`Gate::record`]) and one
//! verdict JSON object ([`Gate::report`]), the same for every surface.
//! [`contained`] runs a permitted call in the sandbox with the egress proxy beside it.
//! A human at a terminal is asked through [`TerminalPrompter`] (with `$VISUAL`/`$EDITOR`
//! for an edited input); the store only keeps what was asked and answered.
//!
//! This crate decides nothing itself (the policy does) and contains nothing itself (the
//! sandbox does); it connects them and fails closed when any of them fails: a store that
//! cannot be read grants nothing, an audit record that cannot be written runs nothing.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod action;
mod bound;
pub mod contained;
mod edit;
mod error;
mod fix;
mod flow;
mod held;
mod lookups;
mod offer;
mod onfailure;
mod prompt;
mod record;
mod report;
mod session;
mod shared;

pub use bound::{CONTENT_BUDGET, RunFile, Runs, WALK_LIMIT};
pub use cordon_policy::Surface;
pub use cordon_policy::{Containment, Judgement};
pub use cordon_sandbox::Permit;
pub use edit::{PendingAnswer, PendingAnswered};
pub use error::{AuditError, GateError};
pub use fix::Fix;
pub use flow::{Absent, Decided, Gate, GateOptions, Human, Outcome, Permitted, Refused};
pub use offer::{
    GrantKind, HostPlaces, MAX_CHECKED_ENTRIES, NoOffer, SYSTEM_TREES, WriteGrant, offer_write,
};
pub use onfailure::{AfterTrial, Blocked, Escalated, Escalation, Trial, TrialRun};
pub use prompt::TerminalPrompter;
pub use record::{RESULT_EXCERPT, RunFacts, ToolResult, egress_log};
pub use report::Report;
pub use shared::{
    LocateError, MACHINE_VAR, StoreLocation, locate, locate_for_protection, target_of,
};
