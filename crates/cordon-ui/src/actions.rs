//! What the console reads and changes: the same store and audit log `cordon approvals`
//! and `cordon audit` use, so a harness waiting on a pending approval sees an answer
//! given here exactly as one given at the terminal.
//!
//! Every change is recorded in the audit log with the console as its source, and the log
//! is opened before the store is touched: an answer that cannot be recorded is not given.

use std::path::{Path, PathBuf};
use std::time::Duration;

use cordon_gate::{Gate, GateError, GateOptions, PendingAnswer};
use cordon_policy::Policy;
use cordon_store::{
    Answer, AnswerKind, Answered, AnsweredBy, AnsweredRecord, AuditLog, Durability, LeaseId,
    PendingId, RulePick, Scope, Store, StoreError, StoreErrorKind, VerifyReport, format_time,
};
use serde_json::{Map, Value, json};

use crate::changes::ChangePlaces;

/// Loads the policy an edited approval is judged by, for the pending call's workspace.
pub type PolicyLoader = dyn Fn(Option<PathBuf>) -> Result<Policy, String> + Send + Sync;

/// Who the audit log names as the source of the console's answers.
pub const SOURCE: &str = "console";
/// Life of an "approve for the session" lease given in the console, as at the terminal.
const SESSION_TTL: Duration = Duration::from_secs(12 * 3600);

/// Where the console's state lives.
#[derive(Debug, Clone)]
pub struct Places {
    /// The local approval store (SQLite): the audit log's anchor, and everything else
    /// unless `shared` says otherwise.
    pub store: PathBuf,
    /// Where the shared state is when `[store]` names a database ([`cordon_gate::locate`]);
    /// `None`: the local store holds it.
    pub shared: Option<cordon_gate::StoreLocation>,
    /// The audit log.
    pub audit: PathBuf,
    /// Where change sets wait for review.
    pub changes: ChangePlaces,
}

/// A refused or failed action: an HTTP status and one sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionError {
    /// 400 bad request, 404 unknown id, 409 already answered, 422 refused by the
    /// policy, 500 the store or log could not be used.
    pub status: u16,
    /// What was wrong and what to do.
    pub message: String,
}

impl ActionError {
    fn bad(message: impl Into<String>) -> ActionError {
        ActionError {
            status: 400,
            message: message.into(),
        }
    }
}

impl From<StoreError> for ActionError {
    fn from(e: StoreError) -> ActionError {
        let status = match e.kind() {
            StoreErrorKind::NoSuchPending(_) => 404,
            StoreErrorKind::AlreadyAnswered { .. } => 409,
            // A rule that was not offered, a request offered none.
            StoreErrorKind::Invalid(_) => 400,
            _ => 500,
        };
        ActionError {
            status,
            message: e.to_string(),
        }
    }
}

/// How a human answered a pending approval in the console.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ConsoleAnswer {
    /// Let the call through once.
    Once,
    /// Let this exact call through for the rest of its session.
    Session,
    /// Save the suggested rule (the exact call) and let this exact call through from now
    /// on.
    Always,
    /// Save this one of the rules offered with the request (`{"answer": "always",
    /// "rule": N | "RULE"}`; 1 is the exact call) and let the exact call through from now
    /// on. A rule that was not offered is refused.
    AlwaysRule(RulePick),
    /// Let the call through once with this input in place of its own.
    Edited(Map<String, Value>),
    /// Refuse it.
    Deny,
}

impl ConsoleAnswer {
    /// Read an answer from a request body `{"answer": WORD, "input"?: {...}}`.
    pub fn from_json(body: &Value) -> Result<ConsoleAnswer, ActionError> {
        match body.get("answer").and_then(Value::as_str) {
            Some("once") => Ok(ConsoleAnswer::Once),
            Some("session") => Ok(ConsoleAnswer::Session),
            Some("always") => match body.get("rule") {
                None | Some(Value::Null) => Ok(ConsoleAnswer::Always),
                Some(Value::Number(n)) => n
                    .as_u64()
                    .and_then(|n| usize::try_from(n).ok())
                    .map(|n| ConsoleAnswer::AlwaysRule(RulePick::Number(n)))
                    .ok_or_else(|| ActionError::bad("\"rule\" must be a rule's number or text")),
                Some(Value::String(r)) => Ok(ConsoleAnswer::AlwaysRule(RulePick::parse(r))),
                Some(_) => Err(ActionError::bad("\"rule\" must be a rule's number or text")),
            },
            Some("deny") => Ok(ConsoleAnswer::Deny),
            Some("edited") => match body.get("input") {
                Some(Value::Object(m)) => Ok(ConsoleAnswer::Edited(m.clone())),
                _ => Err(ActionError::bad(
                    "an edited approval needs \"input\": the call's input as a JSON object",
                )),
            },
            _ => Err(ActionError::bad(
                "\"answer\" must be one of once, session, always, edited, deny",
            )),
        }
    }

    fn kind(&self) -> AnswerKind {
        match self {
            ConsoleAnswer::Once => AnswerKind::Approve,
            ConsoleAnswer::Session => AnswerKind::ApproveForSession,
            ConsoleAnswer::Always | ConsoleAnswer::AlwaysRule(_) => AnswerKind::AlwaysAllow,
            ConsoleAnswer::Edited(_) => AnswerKind::ApproveEdited,
            ConsoleAnswer::Deny => AnswerKind::Deny,
        }
    }
}

/// The store holding pending approvals, leases and rules.
pub(crate) fn open_store(places: &Places) -> Result<Store, StoreError> {
    match &places.shared {
        Some(l) => Store::open_at(&l.shared),
        None => Store::open(&places.store),
    }
}

/// Most shipped decisions the console shows.
pub const DECISIONS_SHOWN: usize = 200;

pub(crate) fn open_log(places: &Places) -> Result<AuditLog, ActionError> {
    Ok(AuditLog::open_anchored(
        &places.audit,
        Durability::FsyncEach,
        &places.store,
    )?)
}

/// Pending approvals, live leases and remembered rules, as one JSON object.
pub fn state(places: &Places) -> Result<Value, ActionError> {
    let store = open_store(places)?;
    let pending: Vec<Value> = store
        .pending()?
        .into_iter()
        .map(|p| {
            json!({
                "id": p.id.0,
                "machine": p.machine,
                "created": format_time(p.created),
                "session": p.session,
                "operation_id": p.operation_id,
                "tool": p.request["tool"],
                "request": p.request,
                "verdict": p.verdict,
                "suggestion": p.suggestion,
                "suggestions": p.suggestions,
            })
        })
        .collect();
    let leases: Vec<Value> = store
        .leases()?
        .into_iter()
        .map(|l| {
            let session = match &l.scope {
                Scope::Session(s) => Some(s.clone()),
                _ => None,
            };
            json!({
                "id": l.id.0,
                "scope": l.scope.to_string(),
                "session": session,
                "fingerprint": l.fingerprint,
                "created": format_time(l.created),
                "expires": l.expires.map(format_time),
                "answer": l.answer,
            })
        })
        .collect();
    let rules: Vec<Value> = store
        .rules()?
        .into_iter()
        .map(|r| {
            json!({
                "rule": r.rule,
                "tool_kind": r.tool_kind,
                "created": format_time(r.created),
                "created_by": r.created_by,
            })
        })
        .collect();
    // With a shared store, every machine's decisions as shipped there (the local log is
    // only this machine's).
    let decisions: Option<Vec<Value>> = if store.is_shared() {
        Some(
            store
                .decisions(None, DECISIONS_SHOWN)?
                .into_iter()
                .map(|d| {
                    json!({
                        "machine": d.machine,
                        "seq": d.seq,
                        "at": format_time(d.at),
                        "record": d.record,
                    })
                })
                .collect(),
        )
    } else {
        None
    };
    Ok(json!({
        "store": store.location(),
        "shared": store.is_shared(),
        "machine": store.machine(),
        "decisions": decisions,
        "audit": places.audit.display().to_string(),
        "pending": pending,
        "leases": leases,
        "rules": rules,
    }))
}

/// The audit chain's verification, as JSON.
pub fn verify(path: &Path) -> Value {
    match cordon_store::verify(path) {
        Ok(VerifyReport::Ok { records, head }) => {
            json!({"status": "ok", "records": records, "head": head})
        }
        Ok(VerifyReport::Broken {
            line,
            why,
            detail,
            records_ok,
        }) => json!({
            "status": "broken",
            "line": line,
            "why": why.as_str(),
            "detail": detail,
            "records_ok": records_ok,
        }),
        Err(e) => json!({"status": "error", "detail": e.to_string()}),
    }
}

/// Answer pending approval `id`.
pub fn answer(
    places: &Places,
    loader: &PolicyLoader,
    id: i64,
    answer: ConsoleAnswer,
) -> Result<Value, ActionError> {
    let mut log = open_log(places)?;
    let store = open_store(places)?;
    let pending = store.get_pending(PendingId(id))?;
    let base = cordon_store::answered_record(
        &pending,
        answer.kind(),
        AnsweredBy::Console,
        &pending.request,
    );
    let record = AnsweredRecord::into_value;
    let session = pending.session.clone().filter(|s| !s.is_empty());
    let (record, message) = match &answer {
        ConsoleAnswer::Deny => {
            store.answer(PendingId(id), Answer::Deny)?;
            (record(base), format!("denied {id}"))
        }
        ConsoleAnswer::Once => {
            let lease = approve_once(&store, id)?;
            (
                record(base.lease(Some(lease))),
                format!(
                    "approved {id}: lease {lease} lets the same call through once within 24 hours"
                ),
            )
        }
        ConsoleAnswer::Session => {
            let Some(session) = session else {
                return Err(ActionError::bad(
                    "this call has no session, so it cannot be approved for one; approve it once",
                ));
            };
            let note = format!("allowed for the session in the console (pending request {id})");
            let scope = Scope::Session(session.clone());
            let lease = widen(
                &store,
                id,
                &pending.fingerprint,
                scope,
                Some(SESSION_TTL),
                &note,
            )?;
            (
                record(base.lease(Some(lease))),
                format!("approved {id} for session {session}: lease {lease}"),
            )
        }
        ConsoleAnswer::Always | ConsoleAnswer::AlwaysRule(_) => {
            let pick = match &answer {
                ConsoleAnswer::AlwaysRule(p) => p.clone(),
                _ => RulePick::Number(1),
            };
            let done = store.answer_always(PendingId(id), &pick, SOURCE)?;
            (
                record(base.lease(Some(done.lease)).rule(&done.rule)),
                format!(
                    "always allowed {id}: saved rule {}, lease {}",
                    done.rule, done.lease
                ),
            )
        }
        ConsoleAnswer::Edited(input) => {
            let workspace = pending.verdict["workspace"].as_str().map(PathBuf::from);
            drop(store);
            let policy = loader(workspace).map_err(|why| ActionError {
                status: 500,
                message: format!("cannot load the policy to judge the edit: {why}"),
            })?;
            let gate = Gate::new(
                policy,
                GateOptions {
                    surface: cordon_gate::Surface::Console,
                    store: Some(places.store.clone()),
                    audit: None,
                    no_audit: true,
                    edits: true,
                },
            );
            let gate = match &places.shared {
                Some(l) => gate.with_location(l),
                None => gate,
            };
            let done = gate
                .answer_pending(PendingId(id), PendingAnswer::ApproveEdited(input.clone()))
                .map_err(|e| match e {
                    GateError::Store(e) => ActionError::from(e),
                    GateError::Edit(why) => ActionError {
                        status: 422,
                        message: why,
                    },
                    other => ActionError {
                        status: 500,
                        message: other.to_string(),
                    },
                })?;
            let edited = cordon_store::answered_record(
                &pending,
                AnswerKind::ApproveEdited,
                AnsweredBy::Console,
                &done.request,
            )
            .lease(done.lease)
            .edited_verdict(done.edited.as_ref().map(|v| v.decision.as_str()));
            (
                record(edited),
                format!("approved {id} with an edited input"),
            )
        }
    };
    log.append(&record)?;
    Ok(json!({"message": message}))
}

/// Approve once: the pending row becomes approved with a once-lease bound to its call.
fn approve_once(store: &Store, id: i64) -> Result<LeaseId, ActionError> {
    match store.answer(PendingId(id), Answer::Approve)? {
        Answered::Approved(a) => Ok(a.lease()),
        Answered::Denied(_) => Err(ActionError {
            status: 500,
            message: format!("approving {id} created no lease"),
        }),
    }
}

/// Approve with a lease wider than once: settle the pending row, grant the wider lease,
/// and revoke the once-lease the settlement made (the wider one covers the same call).
fn widen(
    store: &Store,
    id: i64,
    fingerprint: &str,
    scope: Scope,
    ttl: Option<Duration>,
    note: &str,
) -> Result<LeaseId, ActionError> {
    let once = approve_once(store, id)?;
    let lease = store.grant(fingerprint, scope, ttl, note)?;
    store.revoke(once)?;
    Ok(lease)
}

/// Revoke lease `id`.
pub fn revoke(places: &Places, id: i64) -> Result<Value, ActionError> {
    let mut log = open_log(places)?;
    let store = open_store(places)?;
    if !store.revoke(LeaseId(id))? {
        return Err(ActionError {
            status: 404,
            message: format!("no active lease has id {id}; reload the list"),
        });
    }
    log.append(&json!({"event": "lease-revoked", "lease": id, "answered_by": SOURCE}))?;
    Ok(json!({"message": format!("revoked lease {id}")}))
}

/// Forget the remembered rule `rule`.
pub fn forget(places: &Places, rule: &str) -> Result<Value, ActionError> {
    let mut log = open_log(places)?;
    let store = open_store(places)?;
    if !store.forget_rule(rule)? {
        return Err(ActionError {
            status: 404,
            message: format!("no saved rule is exactly {rule:?}; reload the list"),
        });
    }
    log.append(&json!({"event": "rule-forgotten", "rule": rule, "answered_by": SOURCE}))?;
    Ok(json!({"message": format!("forgot {rule}")}))
}
