//! The one shape of an audit record. Every writer (`check`, `exec`, and every later
//! surface through the gate) fills this struct; `schemas/audit-record.schema.json` in the
//! repository describes the line it becomes, and a test checks records of every kind
//! against it. The log itself adds `seq`, `time` and `prev`.

use serde::Serialize;
use serde_json::{Map, Value};

/// Which moment of a call a record describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Phase {
    /// The decision, when nothing runs (a refusal, a pending approval, `check`).
    Decision,
    /// A contained run is about to start (written before the command may run).
    Start,
    /// An `on-failure` re-run with one more permission is about to start.
    Rerun,
    /// A contained run ended.
    End,
    /// The harness reported the result of a call it ran (a post-tool hook, the
    /// service's `record`); such a record carries no decision.
    Result,
    /// Something a surface noted that decides nothing by itself (an MCP server pinned on
    /// first use); its `reason` says what.
    Notice,
}

/// One policy finding that did not allow, in brief.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FindingBrief {
    /// The operation (`read`, `write`, `exec`, …).
    pub op: String,
    /// Its target.
    pub target: String,
    /// `ask` or `deny`.
    pub decision: String,
}

/// One thing containment blocked during a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContainmentBlock {
    /// `write`, `connect` or `syscall`.
    pub kind: String,
    /// The path, address or system call.
    pub target: String,
    /// What happened.
    pub detail: String,
}

/// The on-failure escalation of a run: what was asked and how it was answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EscalationRecord {
    /// The one extra permission asked for.
    pub asked: String,
    /// The answer (`allow-once`, `lease`, `pending 7`, `denied: …`).
    pub answer: String,
    /// Whether the re-run started, and if not, why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerun: Option<String>,
}

/// One audit record. `None` fields and empty lists are left out of the line.
#[derive(Debug, Clone, Serialize)]
pub struct AuditRecord {
    /// The surface that decided: `check`, `exec`, …
    pub kind: String,
    /// Which moment of the call this is.
    pub phase: Phase,
    /// The session id, if the caller gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The agent id, if the caller gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The harness's id of the call, which ties its decision, run and result together.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation_id: Option<String>,
    /// The tool name as called.
    pub tool: String,
    /// The tool input, secrets redacted.
    pub input: Value,
    /// The working directory of the call, if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The workspace.
    pub workspace: String,
    /// The final decision: `allow`, `ask` or `deny` (absent on a result record).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    /// One sentence (absent on a result record).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The step and rule that decided, the verdict's `source` (absent on a result record).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<Value>,
    /// The input fields a configured preset set over the model's input.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub presets: Vec<String>,
    /// Whether a human replaced the input before approving it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub edited: bool,
    /// What the harness reported about a call it ran (on a result record).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The containment the call was judged under: `none`, `fallback`, `full`,
    /// `full-host-network`, `full-home-visible`, `full-home-visible-host-network`.
    pub containment: String,
    /// The permission mode.
    pub mode: String,
    /// The approval policy.
    pub approval: String,
    /// The fingerprint of the config that decided.
    pub policy_version: String,
    /// How an ask was answered (`lease`, `allow-once`, `pending`, `deferred (on-failure)`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// The lease that granted the call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease: Option<i64>,
    /// The pending approval recorded for the call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending: Option<i64>,
    /// The policy's findings that did not allow.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub blocked: Vec<FindingBrief>,
    /// The tier the run actually got (`full`, `fallback`), at the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tier: Option<String>,
    /// The command's exit status, at the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_status: Option<i32>,
    /// Whether the timeout ended the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timed_out: Option<bool>,
    /// What containment blocked during the run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub containment_blocked: Vec<ContainmentBlock>,
    /// The on-failure escalation, if one was asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub escalation: Option<EscalationRecord>,
}

impl AuditRecord {
    /// The record as one JSON object, with secrets in `input` and `reason` redacted.
    pub fn to_value(&self) -> Value {
        let mut value = serde_json::to_value(self).unwrap_or_else(|_| Value::Object(Map::new()));
        if let Value::Object(map) = &mut value {
            for key in ["input", "reason", "result"] {
                if let Some(field) = map.get_mut(key) {
                    *field = crate::redact::redact(field);
                }
            }
        }
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn omits_empty_fields_and_redacts_input() {
        let r = AuditRecord {
            kind: "check".into(),
            phase: Phase::Decision,
            session: None,
            agent: None,
            operation_id: None,
            tool: "Bash".into(),
            input: json!({"command": "curl -H 'Authorization: Bearer s3cr3t' https://x"}),
            cwd: Some("/w".into()),
            workspace: "/w".into(),
            decision: Some("deny".into()),
            reason: Some("r".into()),
            source: Some(json!({"step": "guard"})),
            presets: Vec::new(),
            edited: false,
            result: None,
            containment: "none".into(),
            mode: "default".into(),
            approval: "on-request".into(),
            policy_version: "v".into(),
            answer: None,
            lease: None,
            pending: None,
            blocked: Vec::new(),
            tier: None,
            exit_status: None,
            timed_out: None,
            containment_blocked: Vec::new(),
            escalation: None,
        };
        let v = r.to_value();
        assert_eq!(
            v["input"]["command"],
            "curl -H 'Authorization: Bearer [REDACTED]' https://x"
        );
        assert_eq!(v["cwd"], "/w");
        assert_eq!(v["phase"], "decision");
        assert!(v.get("session").is_none() && v.get("blocked").is_none());
    }
}
