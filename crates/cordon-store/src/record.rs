//! The shape of one audit record, so that every writer (check, exec, serve, the hook,
//! approvals) fills the same fields. `AuditLog::append` takes any JSON object; this
//! struct is the common case.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::approval::Grant;

/// One decision or execution, as recorded in the audit log. Fields left `None` are
/// omitted; `extra` carries anything else (flattened into the record).
#[derive(Debug, Clone, Default, Serialize)]
pub struct AuditRecord {
    /// What happened: `decision`, `execution`, `approval-answered`, …
    pub event: String,
    /// Session id, if the caller has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Agent id, if the caller has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Tool name as called.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Normalized input; secrets are redacted when the record is built with [`AuditRecord::to_value`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    /// `allow`, `ask` or `deny` (after the approval flow, the final one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    /// The verdict JSON (`decision`, `reason`, `source`, `findings`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Value>,
    /// The rule or step that decided, with config file and line where one applies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Permission mode (`default`, `plan`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Approval policy (`untrusted`, `on-request`, `on-failure`, `never`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval_policy: Option<String>,
    /// The human's answer (`allow-once`, `allow-session`, `always-allow`, `deny`, `lease`, `pending`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub human_answer: Option<String>,
    /// The lease that allowed the call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease: Option<i64>,
    /// Sandbox tier actually applied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// Exit status of the command, if it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_status: Option<i32>,
    /// Operations the sandbox blocked.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub blocked: Vec<Value>,
    /// Anything else.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl AuditRecord {
    /// Fill `human_answer` and `lease` from a grant of the approval flow.
    pub fn with_grant(mut self, grant: &Grant) -> Self {
        self.human_answer = Some(grant.answer().to_string());
        self.lease = Some(grant.lease().0);
        self
    }

    /// The record as JSON, with secrets in `input`, `verdict` and `extra` redacted.
    pub fn to_value(&self) -> Value {
        let mut value = serde_json::to_value(self).unwrap_or_else(|_| Value::Object(Map::new()));
        if let Value::Object(map) = &mut value {
            for (key, field) in map.iter_mut() {
                if !matches!(
                    key.as_str(),
                    "event" | "decision" | "mode" | "approval_policy" | "sandbox"
                ) {
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
            event: "decision".into(),
            tool: Some("Bash".into()),
            input: Some(json!({"command": "curl -H 'Authorization: Bearer s3cr3t' https://x"})),
            decision: Some("deny".into()),
            extra: [("cwd".to_string(), json!("/w"))].into_iter().collect(),
            ..Default::default()
        };
        let v = r.to_value();
        assert_eq!(
            v["input"]["command"],
            "curl -H 'Authorization: Bearer [REDACTED]' https://x"
        );
        assert_eq!(v["cwd"], "/w");
        assert!(v.get("session").is_none() && v.get("blocked").is_none());
    }
}
