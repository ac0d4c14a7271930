//! The methods: `check`, `pending.list`, `approve`, `deny`, `record`.
//!
//! Every decision goes through the gate and is recorded before it is answered; every
//! answer to a pending approval is recorded too. Params are strict: an unknown field is
//! an error, never ignored.

use crate::rpc::{self, RpcError};
use crate::service::{Connection, MAX_WAITING, Waiting};
use cordon_gate::{
    Absent, Containment, Decided, Gate, GateError, Human, Outcome, PendingAnswer, Refused,
    ToolResult,
};
use cordon_policy::{Decision, RealFs, Request, Source, Step};
use cordon_store::{AnswerKind, AnsweredBy, PendingId, PendingState, RulePick, StoreErrorKind};
use serde_json::{Map, Value, json};

type Params = Map<String, Value>;

fn take_bool(p: &mut Params, key: &str) -> Result<bool, RpcError> {
    match p.remove(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(b),
        Some(_) => Err(RpcError::params(format!("`{key}` must be true or false"))),
    }
}

fn take_id(p: &mut Params) -> Result<i64, RpcError> {
    match p.remove("id").as_ref().and_then(Value::as_i64) {
        Some(id) => Ok(id),
        None => Err(RpcError::params(
            "`id` must be the number of a pending approval (see pending.list)",
        )),
    }
}

fn no_more(p: &Params, expected: &str) -> Result<(), RpcError> {
    match p.keys().next() {
        Some(k) => Err(RpcError::params(format!(
            "unknown parameter `{}`: expected {expected}",
            cordon_policy::terminal::sanitize_for_terminal(k)
        ))),
        None => Ok(()),
    }
}

fn request(v: Value) -> Result<Request, RpcError> {
    Request::from_value(v).map_err(|e| RpcError::params(format!("invalid request: {e}")))
}

fn store_failed(e: cordon_store::StoreError) -> RpcError {
    let code = match e.kind() {
        StoreErrorKind::NoSuchPending(_) => rpc::NO_SUCH_PENDING,
        StoreErrorKind::AlreadyAnswered { .. } => rpc::ALREADY_ANSWERED,
        // A rule that was not offered, a request offered none.
        StoreErrorKind::Invalid(_) => rpc::INVALID_PARAMS,
        _ => rpc::SERVER_ERROR,
    };
    RpcError::new(code, e.to_string())
}

impl Connection<'_> {
    /// `check`: the request object plus `contained` and `on_ask`; the verdict JSON of
    /// `cordon check`, as text.
    pub(crate) fn check(&mut self, mut params: Params) -> Result<String, RpcError> {
        let contained = take_bool(&mut params, "contained")?;
        let absent = match params.remove("on_ask") {
            None | Some(Value::Null) => Absent::Pending,
            Some(Value::String(s)) if s == "pending" => Absent::Pending,
            Some(Value::String(s)) if s == "caller" => Absent::Caller,
            Some(Value::String(s)) if s == "deny" => Absent::Deny,
            Some(_) => {
                return Err(RpcError::params(
                    "`on_ask` must be \"pending\", \"caller\" or \"deny\"",
                ));
            }
        };
        let req = request(Value::Object(params))?;
        let gate = self.service.policy.gate();
        let containment = if contained {
            Containment::Full
        } else {
            Containment::None
        };
        let outcome = self.decide(&gate, &req, containment, absent);
        let (outcome, audit_error) =
            gate.conclude_with(outcome, |r| self.write_record(r.log_fields()));
        if let Some(e) = audit_error {
            eprintln!("cordon serve: {e}");
        }
        if let (Outcome::Pending(d), Some(op)) = (&outcome, &req.operation_id)
            && let Some(id) = d.pending
            && let Ok(mut w) = self.service.waiting.lock()
            && (w.len() < MAX_WAITING || w.contains_key(op))
        {
            w.insert(
                op.clone(),
                Waiting {
                    id,
                    // The policy's fingerprint of the call as sent, which a re-sent call
                    // is matched by (the approval's own is also bound to the session's
                    // history and the files the call runs, judged again when it comes).
                    fingerprint: gate.policy().fingerprint(&req),
                },
            );
        }
        rpc::result_text(&gate.report_of(&req, &outcome))
    }

    /// The gate's decision; a call re-sent under the operation id of a pending approval
    /// collects that approval's answer instead of recording another one.
    fn decide(
        &mut self,
        gate: &Gate,
        req: &Request,
        containment: Containment,
        absent: Absent,
    ) -> Outcome {
        let human = |absent| Human {
            prompter: None,
            absent,
        };
        let waiting = match (&req.operation_id, absent) {
            (Some(op), Absent::Pending) => self
                .service
                .waiting
                .lock()
                .ok()
                .and_then(|w| w.get(op).cloned())
                .filter(|w| w.fingerprint == gate.policy().fingerprint(req))
                .map(|w| (op.clone(), w.id)),
            _ => None,
        };
        let Some((op, id)) = waiting else {
            return gate.decide(req, &RealFs, containment, human(absent), false);
        };
        let state = self
            .store()
            .ok()
            .and_then(|s| s.approval(id).ok())
            .map(|(_, s)| s);
        if state != Some(PendingState::Pending) {
            self.forget(&op);
        }
        match state {
            Some(PendingState::Pending) => {
                match gate.decide(req, &RealFs, containment, human(Absent::Caller), false) {
                    Outcome::Ask(mut d) => {
                        d.pending = Some(id);
                        d.answer = Some("pending".into());
                        Outcome::Pending(d)
                    }
                    other => other,
                }
            }
            Some(PendingState::Denied) => {
                match gate.decide(req, &RealFs, containment, human(Absent::Caller), false) {
                    Outcome::Ask(d) => Outcome::Refused(denied(d, id)),
                    other => other,
                }
            }
            // Approved: the once-lease it made lets this call through (consumed here).
            _ => gate.decide(req, &RealFs, containment, human(Absent::Pending), false),
        }
    }

    fn forget(&self, op: &str) {
        if let Ok(mut w) = self.service.waiting.lock() {
            w.remove(op);
        }
    }

    /// `pending.list`: the approvals waiting for a human, oldest first.
    pub(crate) fn pending_list(&mut self, params: Params) -> Result<Value, RpcError> {
        no_more(&params, "no parameters")?;
        let pending = self.store()?.pending().map_err(store_failed)?;
        let list: Vec<Value> = pending
            .iter()
            .map(|p| {
                json!({
                    "id": p.id.0,
                    "machine": p.machine,
                    "tool": p.request["tool"],
                    "target": target(&p.request),
                    "reason": p.verdict["reason"],
                    "created": cordon_store::format_time(p.created),
                    "session": p.session,
                    "request": p.request,
                    "suggestion": p.suggestion,
                    "suggestions": p.suggestions,
                })
            })
            .collect();
        Ok(json!({ "pending": list }))
    }

    /// `approve`: `{"id", "input"?, "any_session"?, "for_session"?}`; the call (or, with
    /// `input`, the edited call, which is judged again and must not be denied) is then
    /// permitted once in the session it was asked in; `any_session` in any session,
    /// `for_session` for the rest of that session (12 hours). With `"always": true` (and
    /// `"rule"`: a number in `suggestions`, 1 the exact call, or a rule's text), one of the
    /// rules offered with it is saved and the exact call is allowed from now on; a rule
    /// that was not offered is refused.
    pub(crate) fn approve(&mut self, mut params: Params) -> Result<Value, RpcError> {
        let id = take_id(&mut params)?;
        match params.remove("always") {
            None | Some(Value::Bool(false)) => {
                if params.contains_key("rule") {
                    return Err(RpcError::params("`rule` goes with `\"always\": true`"));
                }
            }
            Some(Value::Bool(true)) => {
                let pick = match params.remove("rule") {
                    None | Some(Value::Null) => RulePick::Number(1),
                    Some(Value::Number(n)) => n
                        .as_u64()
                        .and_then(|n| usize::try_from(n).ok())
                        .map(RulePick::Number)
                        .ok_or_else(|| RpcError::params("`rule` must be a number or a rule"))?,
                    Some(Value::String(r)) => RulePick::parse(&r),
                    Some(_) => return Err(RpcError::params("`rule` must be a number or a rule")),
                };
                no_more(&params, "id, always and rule")?;
                return self.approve_always(id, &pick);
            }
            Some(_) => return Err(RpcError::params("`always` must be true or false")),
        }
        let flag = |params: &mut Params, name: &str| match params.remove(name) {
            None | Some(Value::Null) | Some(Value::Bool(false)) => Ok(false),
            Some(Value::Bool(true)) => Ok(true),
            Some(_) => Err(RpcError::params(format!("`{name}` must be a boolean"))),
        };
        let any_session = flag(&mut params, "any_session")?;
        let for_session = flag(&mut params, "for_session")?;
        let answer = match params.remove("input") {
            None | Some(Value::Null) if any_session && for_session => {
                return Err(RpcError::params(
                    "`any_session` and `for_session` cannot both be given",
                ));
            }
            None | Some(Value::Null) if any_session => PendingAnswer::ApproveAnySession,
            None | Some(Value::Null) if for_session => PendingAnswer::ApproveForSession,
            None | Some(Value::Null) => PendingAnswer::Approve,
            Some(Value::Object(_)) if any_session || for_session => {
                return Err(RpcError::params(
                    "an edited approval is once, in the session it was asked in: drop `any_session` / `for_session`",
                ));
            }
            Some(Value::Object(input)) => PendingAnswer::ApproveEdited(input),
            Some(_) => {
                return Err(RpcError::params(
                    "`input` must be an object: the tool input to run in place of the call's own",
                ));
            }
        };
        no_more(&params, "id, input, any_session and for_session")?;
        self.answer(id, answer)
    }

    /// Approve pending `id` for good with the offered rule `pick`, and record it; an
    /// answer that cannot be recorded is reported as an error (the rule is forgotten and
    /// the lease revoked).
    fn approve_always(&mut self, id: i64, pick: &RulePick) -> Result<Value, RpcError> {
        let store = self.store()?;
        let before = store.rules().map_err(store_failed)?;
        let done = store
            .answer_always(PendingId(id), pick, "cordon serve")
            .map_err(store_failed)?;
        let request = &done.request;
        let record = cordon_store::answered_record(
            request,
            AnswerKind::AlwaysAllow,
            AnsweredBy::Service,
            &request.request,
        )
        .lease(Some(done.lease))
        .rule(&done.rule)
        .into_value();
        if let Err(e) = self.write_value(&record) {
            let store = self.store()?;
            let _ = store.revoke(done.lease);
            if !before.iter().any(|r| r.rule == done.rule) {
                let _ = store.forget_rule(&done.rule);
            }
            return Err(RpcError::new(
                rpc::SERVER_ERROR,
                format!("{e}; the answer was not recorded, so it was taken back"),
            ));
        }
        Ok(json!({"id": id, "answer": "always-allow", "lease": done.lease.0, "rule": done.rule}))
    }

    /// `deny`: `{"id"}`.
    pub(crate) fn deny(&mut self, mut params: Params) -> Result<Value, RpcError> {
        let id = take_id(&mut params)?;
        no_more(&params, "id")?;
        self.answer(id, PendingAnswer::Deny)
    }

    /// Answer a pending approval through the gate and record the answer; an answer that
    /// cannot be recorded is taken back (its lease revoked) and reported as an error.
    fn answer(&mut self, id: i64, answer: PendingAnswer) -> Result<Value, RpcError> {
        let (pending, _) = self
            .store()?
            .approval(PendingId(id))
            .map_err(store_failed)?;
        let kind = match &answer {
            PendingAnswer::ApproveEdited(_) => AnswerKind::ApproveEdited,
            PendingAnswer::Deny => AnswerKind::Deny,
            PendingAnswer::ApproveAnySession => AnswerKind::ApproveAnySession,
            PendingAnswer::ApproveForSession => AnswerKind::ApproveForSession,
            _ => AnswerKind::Approve,
        };
        let gate = self.service.policy.gate();
        let answered = gate
            .answer_pending(PendingId(id), answer)
            .map_err(|e| match e {
                GateError::Store(e) => store_failed(e),
                GateError::Edit(why) => RpcError::new(rpc::EDIT_REFUSED, why),
                other => RpcError::new(rpc::SERVER_ERROR, other.to_string()),
            })?;
        let record =
            cordon_store::answered_record(&pending, kind, AnsweredBy::Service, &answered.request)
                .lease(answered.lease)
                .edited_verdict(answered.edited.as_ref().map(|v| v.decision.as_str()))
                .into_value();
        if let Err(e) = self.write_value(&record) {
            if let Some(lease) = answered.lease {
                let _ = self.store()?.revoke(lease);
            }
            return Err(RpcError::new(
                rpc::SERVER_ERROR,
                format!("{e}; the answer was not recorded, so it was taken back"),
            ));
        }
        // What was answered, so that a client that sent the wrong id sees it at once.
        let mut result = json!({
            "id": id,
            "answer": kind.as_str(),
            "lease": answered.lease,
            "tool": answered.request["tool"],
            "session": pending.session,
            "call": cordon_store::redact(&pending.request["input"]),
        });
        if let Some(v) = &answered.edited {
            result["input"] = answered.request["input"].clone();
            result["edited_decision"] = json!(v.decision.as_str());
        }
        Ok(result)
    }

    /// `record`: `{"request", "result": {"ok"?, "exit_status"?, "output"?}}`, a tool's
    /// result for the audit log.
    pub(crate) fn record(&mut self, mut params: Params) -> Result<Value, RpcError> {
        let req = request(
            params
                .remove("request")
                .ok_or_else(|| RpcError::params("`record` needs `request`, the call that ran"))?,
        )?;
        let mut result = match params.remove("result") {
            Some(Value::Object(r)) => r,
            _ => {
                return Err(RpcError::params(
                    "`result` must be an object with ok, exit_status and output (each optional)",
                ));
            }
        };
        no_more(&params, "request and result")?;
        let ok = match result.remove("ok") {
            None | Some(Value::Null) => None,
            Some(Value::Bool(b)) => Some(b),
            Some(_) => return Err(RpcError::params("`result.ok` must be true or false")),
        };
        let exit_status = match result.remove("exit_status") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                v.as_i64()
                    .and_then(|n| i32::try_from(n).ok())
                    .ok_or_else(|| RpcError::params("`result.exit_status` must be an integer"))?,
            ),
        };
        let output = match result.remove("output") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s),
            Some(_) => return Err(RpcError::params("`result.output` must be a string")),
        };
        no_more(&result, "ok, exit_status and output in `result`")?;
        let mut tool = ToolResult {
            ok,
            exit_status,
            ..Default::default()
        };
        if let Some(out) = output {
            tool = tool.with_output(&out);
        }
        let gate = self.service.policy.gate();
        if gate.options().no_audit {
            return Ok(json!({"recorded": false}));
        }
        self.write_record(gate.result_record(&req, &tool).log_fields())
            .map_err(|e| RpcError::new(rpc::SERVER_ERROR, e.to_string()))?;
        Ok(json!({"recorded": true}))
    }
}

/// A re-sent call whose pending approval a human denied.
fn denied(mut d: Decided, id: PendingId) -> Refused {
    d.verdict.decision = Decision::Deny;
    d.verdict.reason = format!(
        "{} (denied by a human: pending approval {id})",
        d.verdict.reason
    );
    d.verdict.source = Source::new(Step::Approval, "pending-denied");
    d.answer = Some("deny".into());
    d.pending = Some(id);
    Refused {
        decided: d,
        fixes: Vec::new(),
    }
}

/// A one-line view of what a recorded request would do.
fn target(request: &Value) -> Value {
    let input = &request["input"];
    ["command", "path", "file_path", "url", "pattern"]
        .iter()
        .find_map(|k| input.get(*k).filter(|v| v.is_string()).cloned())
        .unwrap_or_else(|| Value::String(input.to_string()))
}

/// `label`: `{"source": NAME, "content": TEXT, "redact"?: bool}` → `{"labelled": TEXT}`,
/// the content wrapped as untrusted (with `redact`, secrets redacted as the label is written).
pub(crate) fn label(mut params: Params) -> Result<Value, RpcError> {
    let source = match params.remove("source") {
        Some(Value::String(s)) => cordon_policy::label::SourceName::new(&s)
            .map_err(|e| RpcError::params(format!("`source`: {e}")))?,
        _ => {
            return Err(RpcError::params(
                "`label` needs `source`, a string naming where the content came from",
            ));
        }
    };
    let content = match params.remove("content") {
        Some(Value::String(s)) => s,
        _ => {
            return Err(RpcError::params(
                "`label` needs `content`, the untrusted text",
            ));
        }
    };
    let redact = match params.remove("redact") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => b,
        Some(_) => return Err(RpcError::params("`redact` must be true or false")),
    };
    no_more(&params, "source, content and redact")?;
    let labelled = if redact {
        cordon_policy::label::label_redacted(&source, &content)
    } else {
        cordon_policy::label::label(&source, &content)
    };
    Ok(json!({ "labelled": labelled }))
}
