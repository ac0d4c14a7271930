//! Wiring between a verdict, the approval store and the audit log, shared by `check` and
//! `exec`. The decisions themselves live in `cordon-policy`; the store and the flow in
//! `cordon-store`. This module only connects them and fails closed when they fail.

use cordon_policy::ops::Operations;
use cordon_policy::{Decision, Policy, Request, Source, Step, Verdict};
use cordon_store::{
    AskContext, AuditLog, Durability, NoHuman, NoPrompter, Prompter, Resolution, Store,
    TerminalPrompter, redact,
};
use serde_json::{Value, json};
use std::path::PathBuf;

/// Flags about approvals and the audit log.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ApprovalArgs {
    /// Ask a human on this terminal when the policy says ask (needs stdin and stderr to
    /// be a terminal).
    #[arg(long)]
    pub interactive: bool,
    /// When the policy says ask and no human answers, record a pending approval (see
    /// `cordon approvals`) and exit 5.
    #[arg(long)]
    pub pending: bool,
    /// The approval store (default: `$CORDON_STATE_DIR`, `$XDG_STATE_HOME/cordon` or
    /// `~/.local/state/cordon`, file `store.sqlite3`).
    #[arg(long, value_name = "FILE")]
    pub store: Option<PathBuf>,
    /// The audit log (default: `audit.jsonl` in the same state directory).
    #[arg(long, value_name = "FILE")]
    pub audit_file: Option<PathBuf>,
    /// Do not append this decision to the audit log.
    #[arg(long)]
    pub no_audit: bool,
}

/// Exit status for a call left pending for a human.
pub const PENDING: u8 = 5;

/// The outcome after approvals were consulted.
pub struct Settled {
    /// The verdict to report (an approved ask becomes allow, with its source).
    pub verdict: Verdict,
    /// The pending approval id, when one was recorded.
    pub pending: Option<i64>,
    /// How a human or lease answered (`lease`, `allow-once`, …), for the audit record.
    pub answer: Option<String>,
    /// The lease that granted the call, if any.
    pub lease: Option<i64>,
}

impl ApprovalArgs {
    /// Open the approval store these flags name.
    pub fn open_store(&self) -> Result<Store, cordon_store::StoreError> {
        Store::open(&self.store_path()?)
    }

    /// The store file these flags name (or the default one).
    pub fn store_path(&self) -> Result<PathBuf, cordon_store::StoreError> {
        match &self.store {
            Some(p) => Ok(p.clone()),
            None => cordon_store::default_store_path(),
        }
    }

    /// Rules a human chose to remember, to be loaded as allow rules. A store that cannot
    /// be read contributes nothing (and says so on stderr): no approval comes from it.
    pub fn remembered_rules(&self) -> Vec<String> {
        let Some(path) = self.store_path_if_exists() else {
            return Vec::new();
        };
        match Store::open(&path).and_then(|s| s.rules()) {
            Ok(rules) => rules.into_iter().map(|r| r.rule).collect(),
            Err(e) => {
                eprintln!("cordon: remembered rules not loaded: {e}");
                Vec::new()
            }
        }
    }

    fn store_path_if_exists(&self) -> Option<PathBuf> {
        let p = match &self.store {
            Some(p) => p.clone(),
            None => cordon_store::default_store_path().ok()?,
        };
        p.exists().then_some(p)
    }

    /// Resolve an `ask` through leases, a human, or a pending record. Anything else passes
    /// through unchanged. `no_human_is_deny` turns an unanswered ask into deny (exec);
    /// `check` leaves it an ask for its caller.
    pub fn settle(
        &self,
        policy: &Policy,
        req: &Request,
        ops: &Operations,
        verdict: Verdict,
        no_human_is_deny: bool,
    ) -> Settled {
        let mut out = Settled {
            verdict,
            pending: None,
            answer: None,
            lease: None,
        };
        if out.verdict.decision != Decision::Ask {
            return out;
        }
        let store = match self.open_store() {
            Ok(s) => s,
            Err(e) => {
                eprintln!("cordon: no approval can be granted: {e}");
                if no_human_is_deny {
                    deny(
                        &mut out.verdict,
                        format!("the approval store cannot be used ({e})"),
                    );
                }
                return out;
            }
        };
        let ctx = AskContext {
            fingerprint: policy.fingerprint(req),
            session: req.session.clone(),
            tool: req.tool.clone(),
            tool_kind: format!("{:?}", req.kind()),
            target: targets(&out.verdict),
            consequence: consequence(&out.verdict),
            reason: out.verdict.reason.clone(),
            suggestion: policy.suggestion(ops, &out.verdict),
            request: redact(&req.canonical_json()),
            verdict: serde_json::to_value(&out.verdict).unwrap_or(Value::Null),
        };
        let wants_flow = self.interactive || self.pending || no_human_is_deny;
        if !wants_flow {
            // Only an existing lease may turn the ask into an allow; the caller asks.
            match store.consume(&ctx.fingerprint, ctx.session.as_deref()) {
                Ok(Some(used)) => {
                    out.answer = Some("lease".into());
                    out.lease = Some(used.lease.0);
                    approve(&mut out.verdict, "lease", None);
                }
                Ok(None) => {}
                Err(e) => eprintln!("cordon: no approval can be granted: {e}"),
            }
            return out;
        }
        match self.resolve(&store, &ctx) {
            Ok(Resolution::Allow(grant)) => {
                out.answer = Some(grant.answer().to_string());
                out.lease = Some(grant.lease().0);
                approve(&mut out.verdict, grant.answer(), grant.saved_rule());
            }
            Ok(Resolution::Pending(id)) => {
                out.pending = Some(id.0);
                out.answer = Some("pending".into());
            }
            Ok(Resolution::Deny(refusal)) => {
                out.answer = Some(refusal.to_string());
                deny(&mut out.verdict, refusal.to_string());
            }
            Err(e) => {
                eprintln!("cordon: no approval can be granted: {e}");
                deny(
                    &mut out.verdict,
                    format!("the approval store cannot be used ({e})"),
                );
            }
        }
        out
    }

    /// Run the approval flow for `ctx`: an existing lease, else the human on the terminal
    /// (with `--interactive`, when there is one), else deny or (with `--pending`) a pending
    /// record.
    pub fn resolve(
        &self,
        store: &Store,
        ctx: &AskContext,
    ) -> Result<Resolution, cordon_store::StoreError> {
        let mut terminal = if self.interactive {
            TerminalPrompter::from_stdio()
        } else {
            None
        };
        let prompter: &mut dyn Prompter = match terminal.as_mut() {
            Some(t) => t,
            None => &mut NoPrompter,
        };
        let mode = if self.pending {
            NoHuman::Pending
        } else {
            NoHuman::Deny
        };
        cordon_store::resolve_ask(store, ctx, prompter, mode)
    }

    /// Append one record to the audit log. On failure the caller must not allow.
    pub fn audit(&self, record: Value) -> Result<(), String> {
        if self.no_audit {
            return Ok(());
        }
        let path = match &self.audit_file {
            Some(p) => p.clone(),
            None => cordon_store::default_audit_path().map_err(|e| e.to_string())?,
        };
        let mut log = AuditLog::open(&path, Durability::FsyncEach).map_err(|e| e.to_string())?;
        log.append(&record).map(|_| ()).map_err(|e| e.to_string())
    }
}

fn approve(v: &mut Verdict, answer: &str, saved_rule: Option<&str>) {
    let mut reason = format!("approved ({answer}): {}", v.reason);
    if let Some(rule) = saved_rule {
        reason.push_str(&format!(" Saved rule `{rule}`."));
    }
    v.decision = Decision::Allow;
    v.reason = reason;
    v.source = Source::new(Step::Approval, answer.to_owned());
}

fn deny(v: &mut Verdict, why: String) {
    v.decision = Decision::Deny;
    v.reason = format!("{} ({why})", v.reason);
    v.source = Source::new(Step::NoHuman, why);
}

fn targets(v: &Verdict) -> String {
    v.findings
        .iter()
        .filter(|f| f.decision == Decision::Ask)
        .map(|f| match (&f.resolved, &f.command) {
            (Some(r), _) => format!("{} {} (resolves to {r})", f.op, f.target),
            (None, Some(c)) => format!("{} {} in `{c}`", f.op, f.target),
            (None, None) => format!("{} {}", f.op, f.target),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn consequence(v: &Verdict) -> String {
    let ops: Vec<&str> = v
        .findings
        .iter()
        .filter(|f| f.decision == Decision::Ask)
        .map(|f| f.op)
        .collect();
    let has = |o: &str| ops.contains(&o);
    if has("opaque") {
        "It runs code whose effects cordon cannot see in advance.".into()
    } else if has("write") || has("delete") {
        "It changes files on disk.".into()
    } else if has("network") || has("search") {
        "It sends data to a network destination.".into()
    } else if has("exec") {
        "It runs a program that may change things.".into()
    } else if has("mcp") {
        "It calls a tool on an MCP server.".into()
    } else {
        "It reads data outside what is allowed by default.".into()
    }
}

/// The audit record of one decision (input redacted).
pub fn record(
    kind: &str,
    policy: &Policy,
    req: &Request,
    settled: &Settled,
    extra: Value,
) -> Value {
    let v = &settled.verdict;
    let mut r = json!({
        "kind": kind,
        "session": req.session,
        "agent": req.agent,
        "tool": req.tool,
        "input": redact(&Value::Object(req.input.clone())),
        "cwd": req.cwd,
        "workspace": policy.workspace(),
        "decision": v.decision,
        "reason": v.reason,
        "source": v.source,
        "mode": policy.mode(),
        "approval": policy.approval(),
        "policy_version": policy.version(),
        "answer": settled.answer,
        "lease": settled.lease,
        "pending": settled.pending,
        "blocked": v.findings.iter().filter(|f| f.decision != Decision::Allow)
            .map(|f| json!({"op": f.op, "target": f.target, "decision": f.decision}))
            .collect::<Vec<_>>(),
    });
    if let (Value::Object(m), Value::Object(e)) = (&mut r, extra) {
        m.extend(e);
    }
    r
}
