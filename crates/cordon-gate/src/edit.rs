//! Approvals with an edited input.
//!
//! A human may answer an ask by approving the call as it is, by approving a *replaced*
//! input, or by refusing it. The edited call is judged again, by the same policy, under the
//! same containment, with the presets applied over it, and must itself be allowed or
//! approved: an edit never escalates. A guard or a deny rule refuses an edited call exactly
//! as it would refuse the call typed that way.
//!
//! Two ways in:
//! * at the terminal, the prompter's "edit" answer ([`Gate::edited`]): the edited call is
//!   settled at once (allowed, asked again, or refused);
//! * for a pending approval ([`Gate::answer_pending`]): the edit is judged when it is
//!   approved (a denied edit is not recorded) and a once-lease is made for the edited
//!   call; when the original call arrives again (same operation id, or the same call
//!   without one) the gate turns it into the edited call, judges it again and spends the
//!   lease ([`Gate::use_edited_lease`]).

use crate::error::GateError;
use crate::flow::{Decided, Gate, How, Human, Outcome};
use cordon_policy::{Containment, Decision, RealFs, Request, Source, Step, Verdict};
use cordon_sandbox::Permit;
use cordon_store::{Answer, Answered, Edit, EditedLease, LeaseId, PendingId, Store};
use serde_json::{Map, Value};

/// How many times a human may edit one call before the ask is refused.
const MAX_EDITS: u8 = 3;

/// A human's answer to a pending approval.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum PendingAnswer {
    /// Approve the call as it is (once, in the session it was asked in).
    Approve,
    /// Approve the call as it is, once, in any session or none.
    ApproveAnySession,
    /// Approve the same call for the rest of the session it was asked in.
    ApproveForSession,
    /// Approve the call with this input in place of its own (once); the edited call is
    /// judged and must not be denied.
    ApproveEdited(Map<String, Value>),
    /// Refuse it.
    Deny,
}

/// What answering a pending approval did.
#[derive(Debug, Clone)]
pub struct PendingAnswered {
    /// The pending approval.
    pub id: PendingId,
    /// Whether it was approved.
    pub approved: bool,
    /// The once-lease that lets the call through, when approved.
    pub lease: Option<LeaseId>,
    /// The call that will run: the original one, or the edit, as judged now.
    pub request: Value,
    /// The edited call's verdict when the answer was an edit.
    pub edited: Option<Verdict>,
}

impl Gate {
    /// The human replaced the input of an asked call at the prompt: judge the edited call
    /// and settle it with the same human.
    pub(crate) fn edited(
        &self,
        d: Decided,
        input: Map<String, Value>,
        human: Human<'_>,
        edits: u8,
    ) -> Outcome {
        if edits >= MAX_EDITS {
            let mut d = d;
            let why = format!("the input was edited {MAX_EDITS} times without an answer");
            d.verdict.decision = Decision::Deny;
            d.verdict.reason = format!("{} (denied: {why})", d.verdict.reason);
            d.verdict.source = Source::new(Step::Approval, "edit");
            return self.refuse(d);
        }
        let mut request = d.request.clone();
        request.input = input;
        let presets = self.policy().apply_presets(&mut request);
        let ops = self.policy().operations(&request, &RealFs);
        let judgement = self.policy().judge_with(&ops, d.containment, false);
        let runs = self.bind_runs(
            &request,
            &ops,
            &RealFs,
            &judgement,
            None,
            &crate::bound::SessionRuns::default(),
        );
        let how = How {
            presets,
            runs,
            edited: true,
            edits: edits + 1,
        };
        self.settle_how(request, ops, judgement, human, how)
    }

    /// The call arrived again after a human approved an edit of it: run the edit instead,
    /// judged again now.
    pub(crate) fn use_edited_lease(
        &self,
        d: Decided,
        lease: EditedLease,
        store: &Store,
    ) -> Outcome {
        let mut request = d.request.clone();
        request.input = lease.input.clone();
        let presets = self.policy().apply_presets(&mut request);
        let ops = self.policy().operations(&request, &RealFs);
        let judgement = self.policy().judge_with(&ops, d.containment, false);
        let edited = Decided {
            fingerprint: self.policy().fingerprint(&request),
            request,
            ops,
            verdict: judgement.verdict().clone(),
            containment: d.containment,
            answer: Some("approved-edit".into()),
            lease: Some(lease.lease),
            pending: None,
            presets,
            edited: true,
            runs: d.runs.clone(),
        };
        let judgement = match judgement.allowed() {
            Ok(allowed) => {
                // Allowed as it stands; the edit is used up all the same.
                if let Err(e) = store.spend_once(lease.lease) {
                    return self.refuse(store_refusal(edited, &e));
                }
                return self.permit(edited, Permit::from_allowed(allowed));
            }
            Err(j) => j,
        };
        if judgement.decision() == Decision::Deny {
            return self.refuse(edited);
        }
        match cordon_store::resolve_edited(store, &lease, &edited.fingerprint) {
            Ok(Some(grant)) => self.granted(edited, grant),
            Ok(None) => {
                let mut edited = edited;
                let why = "the approved edit no longer matches: the policy changed since it was approved, or it was used; answer it again";
                edited.verdict.decision = Decision::Deny;
                edited.verdict.reason = format!("{} ({why})", edited.verdict.reason);
                edited.verdict.source = Source::new(Step::Approval, "edit");
                self.refuse(edited)
            }
            Err(e) => self.refuse(store_refusal(edited, &e)),
        }
    }

    /// Answer pending approval `id`. An edited approval is judged first: when the policy
    /// denies the edited call, nothing is recorded and the approval stays pending.
    pub fn answer_pending(
        &self,
        id: PendingId,
        answer: PendingAnswer,
    ) -> Result<PendingAnswered, GateError> {
        let store = self.open_store().map_err(GateError::Store)?;
        let pending = store.get_pending(id).map_err(GateError::Store)?;
        let input = match answer {
            PendingAnswer::Deny => {
                let request = pending.request.clone();
                store.answer(id, Answer::Deny).map_err(GateError::Store)?;
                return Ok(PendingAnswered {
                    id,
                    approved: false,
                    lease: None,
                    request,
                    edited: None,
                });
            }
            PendingAnswer::Approve
            | PendingAnswer::ApproveAnySession
            | PendingAnswer::ApproveForSession => {
                let request = pending.request.clone();
                let how = match answer {
                    PendingAnswer::ApproveAnySession => Answer::ApproveAnySession,
                    PendingAnswer::ApproveForSession => Answer::ApproveForSession,
                    _ => Answer::Approve,
                };
                let lease = match store.answer(id, how).map_err(GateError::Store)? {
                    Answered::Approved(a) => Some(a.lease()),
                    Answered::Denied(_) => None,
                };
                return Ok(PendingAnswered {
                    id,
                    approved: lease.is_some(),
                    lease,
                    request,
                    edited: None,
                });
            }
            PendingAnswer::ApproveEdited(input) => input,
        };
        // The recorded request is redacted, but its tool, cwd, session and operation id
        // are what they were; the input is the human's.
        let mut request = Request::from_value(pending.request.clone()).map_err(|e| {
            GateError::Edit(format!("the pending request cannot be read back: {e}"))
        })?;
        request.input = input;
        self.policy().apply_presets(&mut request);
        request.action().map_err(|e| {
            GateError::Edit(format!(
                "the edited input is not valid for `{}`: {e}",
                request.tool
            ))
        })?;
        let ops = self.policy().operations(&request, &RealFs);
        let verdict = self
            .policy()
            .judge_with(&ops, Containment::None, false)
            .into_verdict();
        if verdict.decision == Decision::Deny {
            return Err(GateError::Edit(format!(
                "the edited call is denied, so it cannot be approved: {}",
                verdict.reason
            )));
        }
        let edit = Edit {
            input: request.input.clone(),
        };
        let approved = pending
            .approve_edited(&store, &edit)
            .map_err(GateError::Store)?;
        Ok(PendingAnswered {
            id,
            approved: true,
            lease: Some(approved.lease()),
            request: cordon_store::redact(&request.canonical_json()),
            edited: Some(verdict),
        })
    }
}

fn store_refusal(mut d: Decided, e: &cordon_store::StoreError) -> Decided {
    let why = format!("the approval store cannot be used ({e})");
    d.verdict.decision = Decision::Deny;
    d.verdict.reason = format!("{} ({why})", d.verdict.reason);
    d.verdict.source = Source::new(Step::NoHuman, why);
    d
}
