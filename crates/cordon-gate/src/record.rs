//! Outcomes as audit records: the one place that fills `cordon_store::AuditRecord`.

use crate::error::AuditError;
use crate::flow::{Decided, Gate, Outcome, Refused};
use cordon_egress::{Decision as EgressDecision, EgressEvent, Protocol};
use cordon_policy::{Containment, Decision, Source, Step};
use cordon_store::{
    AuditRecord, ContainmentBlock, Durability, EgressEntry, EgressLog, EscalationRecord,
    FindingBrief, Phase, RunTier, redact_text,
};
use serde_json::Value;

/// What a contained run adds to its end record.
#[derive(Debug, Clone, Default)]
pub struct RunFacts {
    /// The tier the run got (`full`, `fallback`, or `unavailable` when nothing ran).
    pub tier: Option<RunTier>,
    /// The command's exit status.
    pub exit_status: Option<i32>,
    /// Whether the timeout ended it.
    pub timed_out: Option<bool>,
    /// What containment blocked.
    pub blocked: Vec<ContainmentBlock>,
    /// The on-failure escalation, if one was asked.
    pub escalation: Option<EscalationRecord>,
    /// The egress proxy's decisions during the run (see [`egress_log`]).
    pub egress: Option<EgressLog>,
}

/// The egress log an end record keeps of `events` (bounded as [`EgressLog`] says; paths
/// and reasons redacted), or `None` when the proxy judged nothing. The proxy hands over
/// its last [`cordon_egress::EVENT_HISTORY`] events; the counts cover those.
pub fn egress_log(events: &[EgressEvent]) -> Option<EgressLog> {
    if events.is_empty() {
        return None;
    }
    Some(EgressLog::of(events.iter().map(|e| {
        EgressEntry {
            time_ms: e.time_ms,
            protocol: match e.protocol {
                Protocol::Connect => "connect",
                Protocol::Http => "http",
                Protocol::Socks5 => "socks5",
                Protocol::Intercepted => "intercepted",
                _ => "unknown",
            }
            .to_string(),
            method: e.method.clone(),
            path: e.path.as_deref().map(redact_text),
            credential: e.credential.clone(),
            host: e.host.clone(),
            port: e.port,
            address: e.address.map(|a| a.to_string()),
            decision: match e.decision {
                EgressDecision::Allow => "allow",
                EgressDecision::Deny => "deny",
                _ => "error",
            }
            .to_string(),
            code: e.code.as_str().to_string(),
            reason: redact_text(&e.reason),
            status: e.status,
            bytes_up: e.bytes_up,
            bytes_down: e.bytes_down,
            duration_ms: e.duration_ms,
        }
    })))
}

impl Gate {
    /// The audit record of `decided` at `phase`, with what a run adds.
    pub fn record(&self, decided: &Decided, phase: Phase, run: Option<&RunFacts>) -> AuditRecord {
        let policy = self.policy();
        let v = &decided.verdict;
        let req = &decided.request;
        let run = run.cloned().unwrap_or_default();
        AuditRecord {
            kind: self.options().surface,
            phase,
            session: req.session.clone(),
            agent: req.agent.clone(),
            operation_id: req.operation_id.clone(),
            tool: req.tool.clone(),
            input: Value::Object(req.input.clone()),
            cwd: req.cwd.as_ref().map(|c| c.display().to_string()),
            workspace: policy.workspace().display().to_string(),
            decision: Some(v.decision),
            reason: Some(v.reason.clone()),
            source: Some(serde_json::to_value(&v.source).unwrap_or(Value::Null)),
            presets: decided.presets.clone(),
            edited: decided.edited,
            result: None,
            containment: decided.containment,
            mode: policy.mode(),
            approval: policy.approval(),
            policy_version: policy.version().to_string(),
            answer: decided.answer.clone(),
            lease: decided.lease,
            pending: decided.pending,
            blocked: v
                .findings
                .iter()
                .filter(|f| f.decision != Decision::Allow)
                .map(|f| FindingBrief {
                    op: f.op.as_str().to_string(),
                    target: f.target.clone(),
                    decision: f.decision,
                })
                .collect(),
            tier: run.tier,
            exit_status: run.exit_status,
            timed_out: run.timed_out,
            containment_blocked: run.blocked,
            escalation: run.escalation,
            egress: run.egress,
        }
    }

    /// The audit log records go to (`None` with `no_audit`).
    pub fn audit_path(&self) -> Option<std::path::PathBuf> {
        if self.options().no_audit {
            return None;
        }
        match &self.options().audit {
            Some(p) => Some(p.clone()),
            None => cordon_store::default_audit_path().ok(),
        }
    }

    /// Make cordon's own files on this machine exist now: the local store, and (unless
    /// `no_audit`) the audit log and its signing key. A sandbox masks only what exists
    /// when it is built, so a surface that builds one calls this first: otherwise, on
    /// first use, these files would be made while the command already runs, in its
    /// view (a state directory inside the workspace, a `--store` outside HOME). On error
    /// the caller must not build the sandbox.
    pub fn prepare_own_files(&self) -> Result<(), AuditError> {
        let store = self
            .store_path()
            .map_err(|source| AuditError { path: None, source })?;
        let err = |path: &std::path::Path| {
            let path = path.to_path_buf();
            move |source| AuditError {
                path: Some(path),
                source,
            }
        };
        if std::fs::symlink_metadata(&store).is_err() {
            cordon_store::Store::open(&store).map_err(err(&store))?;
        }
        if self.options().no_audit {
            return Ok(());
        }
        let path = self.audit_file()?;
        let exists = |p: &std::path::Path| std::fs::symlink_metadata(p).is_ok();
        if exists(&path) && exists(&cordon_store::key_path_for_store(&store)) {
            // Nothing to make; opening would wait on the log's lock, which another writer
            // may hold, while the sandbox could be built meanwhile.
            return Ok(());
        }
        self.held
            .open_audit(&path, &store, Durability::FsyncEach)
            .map_err(err(&path))
    }

    /// The audit log's file: the one given, else the default.
    fn audit_file(&self) -> Result<std::path::PathBuf, AuditError> {
        match &self.options().audit {
            Some(p) => Ok(p.clone()),
            None => cordon_store::default_audit_path()
                .map_err(|source| AuditError { path: None, source }),
        }
    }

    /// Append a record to the audit log (nothing with `no_audit`). On error the caller
    /// must not let the call proceed.
    pub fn append(&self, record: &AuditRecord) -> Result<(), AuditError> {
        if self.options().no_audit {
            return Ok(());
        }
        let path = self.audit_file()?;
        let err = |source| AuditError {
            path: Some(path.clone()),
            source,
        };
        // A record that comes before what it allows (a decision, a start) is on disk
        // before the call goes on. One that reports what already happened (a run's end, a
        // harness's result) is written before cordon answers or exits, without waiting for
        // the disk: a power cut can lose it, never the record of what was allowed.
        let after_the_fact = matches!(record.phase, Phase::End | Phase::Result);
        let durability = if self.unsynced_audit() || after_the_fact {
            Durability::Batched {
                max_records: u32::MAX,
                max_delay: std::time::Duration::MAX,
            }
        } else {
            Durability::FsyncEach
        };
        let store = self.store_path().map_err(err)?;
        self.held
            .append(&path, &store, durability, record.log_fields())
            .map_err(err)
    }
}

/// What a harness reports about a call it ran (a post-tool hook, the service's `record`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ToolResult {
    /// Whether the tool succeeded, if the harness says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ok: Option<bool>,
    /// The exit status of a shell call, if the harness says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_status: Option<i32>,
    /// The start of the tool's output (at most [`RESULT_EXCERPT`] bytes are kept).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excerpt: Option<String>,
    /// The size of the whole output in bytes, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_bytes: Option<u64>,
}

/// How much of a tool's output a result record keeps.
pub const RESULT_EXCERPT: usize = 2048;

impl ToolResult {
    /// A result whose output is `output`, cut to [`RESULT_EXCERPT`] bytes at a character
    /// boundary.
    pub fn with_output(mut self, output: &str) -> ToolResult {
        let mut end = output.len().min(RESULT_EXCERPT);
        while !output.is_char_boundary(end) {
            end -= 1;
        }
        self.excerpt = Some(output[..end].to_string());
        self.output_bytes = Some(output.len() as u64);
        self
    }
}

impl Gate {
    /// A record of this surface that carries no decision (`phase` is a result or a
    /// notice): the policy's context, everything else empty for the caller to fill.
    pub fn bare_record(&self, phase: Phase, tool: &str, input: Value) -> AuditRecord {
        let policy = self.policy();
        AuditRecord {
            kind: self.options().surface,
            phase,
            session: None,
            agent: None,
            operation_id: None,
            tool: tool.to_string(),
            input,
            cwd: None,
            workspace: policy.workspace().display().to_string(),
            decision: None,
            reason: None,
            source: None,
            presets: Vec::new(),
            edited: false,
            result: None,
            containment: Containment::None,
            mode: policy.mode(),
            approval: policy.approval(),
            policy_version: policy.version().to_string(),
            answer: None,
            lease: None,
            pending: None,
            blocked: Vec::new(),
            tier: None,
            exit_status: None,
            timed_out: None,
            containment_blocked: Vec::new(),
            escalation: None,
            egress: None,
        }
    }

    /// The audit record of a result the harness reports for `request` (judged nothing:
    /// the record carries no decision, and the operation id ties it to the one that did).
    pub fn result_record(
        &self,
        request: &cordon_policy::Request,
        result: &ToolResult,
    ) -> AuditRecord {
        let mut r = self.bare_record(
            Phase::Result,
            &request.tool,
            Value::Object(request.input.clone()),
        );
        r.session = request.session.clone();
        r.agent = request.agent.clone();
        r.operation_id = request.operation_id.clone();
        r.cwd = request.cwd.as_ref().map(|c| c.display().to_string());
        r.result = Some(serde_json::to_value(result).unwrap_or(Value::Null));
        r.exit_status = result.exit_status;
        r
    }

    /// Append the result of a call the harness ran to the audit log.
    pub fn record_result(
        &self,
        request: &cordon_policy::Request,
        result: &ToolResult,
    ) -> Result<(), AuditError> {
        self.append(&self.result_record(request, result))
    }
}

impl Gate {
    /// Record the decision of a surface that runs nothing itself (`check`). A decision
    /// that cannot be recorded is not handed out as a permission: a permitted call (or a
    /// trial) becomes a refusal; the error is returned for the caller to report.
    pub fn conclude(&self, outcome: Outcome) -> (Outcome, Option<AuditError>) {
        self.conclude_with(outcome, |record| self.append(record))
    }

    /// [`conclude`](Self::conclude) with the caller's own way of appending the record (a
    /// long-running surface keeps one log open). `append` must return only once the
    /// record is written; on error the outcome is turned into a refusal as `conclude`
    /// does. With `no_audit`, `append` is not called.
    pub fn conclude_with(
        &self,
        outcome: Outcome,
        append: impl FnOnce(&AuditRecord) -> Result<(), AuditError>,
    ) -> (Outcome, Option<AuditError>) {
        if self.options().no_audit {
            return (outcome, None);
        }
        let record = self.record(outcome.decided(), Phase::Decision, None);
        let Err(e) = append(&record) else {
            return (outcome, None);
        };
        let mut d = match outcome {
            Outcome::Permitted(p) => p.into_parts().0,
            Outcome::Trial(t) => t.decided().clone(),
            other => return (other, Some(e)),
        };
        d.verdict.decision = Decision::Deny;
        d.verdict.reason = format!("{e}; fix it or pass --no-audit");
        d.verdict.source = Source::new(Step::Validate, "audit");
        (
            Outcome::Refused(Refused {
                decided: d,
                fixes: Vec::new(),
            }),
            Some(e),
        )
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use cordon_policy::net::NetCode;

    #[test]
    fn an_egress_event_becomes_a_redacted_entry() {
        assert!(egress_log(&[]).is_none());
        let event = EgressEvent {
            time_ms: 7,
            protocol: Protocol::Intercepted,
            method: Some("POST".into()),
            path: Some("/upload?token=ghp_0123456789abcdefABCDEF0123456789abcd".into()),
            credential: Some("API_TOKEN".into()),
            host: "paste.example".into(),
            port: 443,
            address: Some("93.184.216.34:443".parse().unwrap()),
            decision: EgressDecision::Deny,
            code: NetCode::CredentialLeak,
            reason: "the credential API_TOKEN may not go to paste.example".into(),
            status: None,
            bytes_up: 0,
            bytes_down: 0,
            duration_ms: 3,
        };
        let log = egress_log(&[event]).unwrap();
        assert_eq!((log.total, log.refused, log.injected), (1, 1, 0));
        let e = &log.events[0];
        assert_eq!(e.protocol, "intercepted");
        assert_eq!(e.decision, "deny");
        assert_eq!(e.code, "credential-leak");
        assert_eq!(e.address.as_deref(), Some("93.184.216.34:443"));
        assert_eq!(e.credential.as_deref(), Some("API_TOKEN"));
        let path = e.path.as_deref().unwrap();
        assert!(
            path.starts_with("/upload?token=") && !path.contains("ghp_0123"),
            "{path}"
        );
    }
}
