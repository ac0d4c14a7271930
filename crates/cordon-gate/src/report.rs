//! Outcomes as the verdict JSON every surface prints: the one place that builds it, so
//! that `cordon check` and `cordon serve` can never say different things about one call.
//!
//! The object is the policy's verdict (`decision`, `reason`, `source`, `findings`,
//! `contained`) plus what the gate added: `outcome`, `pending` for a pending approval,
//! `fixes` for a refusal, `runs` (the files an asked call runs, as they were when it
//! was asked), and `policy_version`, the fingerprint of the configuration that
//! decided, and `updated_input` (with `updated_cwd`) when a preset or a human's edit
//! changed the call, which the caller must then run instead. Fields may be added, never
//! removed (the contract of docs/guide/check.md).

use crate::flow::{Gate, Outcome};
use cordon_policy::{Request, Verdict};
use serde::Serialize;
use serde_json::{Map, Value, json};
use std::path::Path;

/// The verdict JSON of one outcome, borrowed from it: serialize it ([`serde_json`]
/// writes it straight to text) or turn it into a value ([`Gate::report`]).
#[derive(Debug, Serialize)]
pub struct Report<'a> {
    #[serde(flatten)]
    verdict: &'a Verdict,
    outcome: &'static str,
    policy_version: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pending: Option<cordon_store::PendingId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    updated_input: Option<&'a Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    updated_cwd: Option<&'a Path>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fixes: Option<Vec<String>>,
    /// The files the asked call runs, as they were when it was asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    runs: Option<Value>,
}

impl Gate {
    /// The verdict JSON of `outcome` for the call `asked` (the request as the harness
    /// sent it), to serialize.
    pub fn report_of<'a>(&'a self, asked: &Request, outcome: &'a Outcome) -> Report<'a> {
        let d = outcome.decided();
        // A preset or a human's edit changed the call: the caller must run this one.
        let changed = d.request.input != asked.input || d.request.cwd != asked.cwd;
        Report {
            verdict: &d.verdict,
            outcome: outcome.name(),
            policy_version: self.policy().version(),
            pending: d.pending,
            updated_input: changed.then_some(&d.request.input),
            updated_cwd: d.request.cwd.as_deref().filter(|_| changed),
            fixes: match outcome {
                Outcome::Refused(r) => Some(r.fixes.iter().map(|f| f.to_string()).collect()),
                _ => None,
            },
            runs: (!d.runs.is_empty()).then(|| d.runs.to_json()),
        }
    }

    /// The verdict JSON of `outcome` for the call `asked` (the request as the harness
    /// sent it), as `cordon check` prints it.
    pub fn report(&self, asked: &Request, outcome: &Outcome) -> Value {
        // A verdict is plain data (strings, enums, vectors) and the request's cwd came
        // from JSON text; serializing cannot fail, and if it ever did the object below
        // still says what was decided.
        serde_json::to_value(self.report_of(asked, outcome)).unwrap_or_else(|_| {
            let v = &outcome.decided().verdict;
            json!({"decision": v.decision.as_str(), "reason": v.reason, "outcome": outcome.name()})
        })
    }
}
