//! The `on-failure` approval policy as a state machine whose states consume themselves:
//! [`Trial`] (run contained without asking) → [`TrialRun`] (the run's result) →
//! [`Blocked`] (containment blocked something the failed command needed) →
//! [`Escalated`] (a human, a lease or a pending record answered whether to re-run with
//! exactly one more permission).
//!
//! A re-run is offered only when the command failed *and* containment blocked a write
//! or a connection it could be given; a command that exited 0 is never offered one. A
//! write is offered only as the [`WriteGrant`] that `offer.rs` decides (never a
//! directory on `PATH`, a system directory, HOME, the workspace or what holds them, or
//! anything the guards protect), and a blocked write it refuses is reported with the
//! reason instead ([`AfterTrial::NotOffered`]). The re-run's permit comes only from a
//! store grant, never from this module.

use crate::flow::{Decided, Gate, Human};
use crate::offer::{HostPlaces, NoOffer, WriteGrant, offer_write};
use cordon_egress::{Decision as EgressDecision, EgressEvent};
use cordon_policy::Judgement;
use cordon_sandbox::{BlockedKind, DenialReport, Permit};
use cordon_store::{AskContext, Resolution};
use std::path::Path;

/// The first state: the call may run contained without asking.
#[derive(Debug)]
pub struct Trial {
    decided: Decided,
    permit: Permit,
}

impl Trial {
    /// A trial for an ask judged under containment with the `on-failure` policy.
    pub(crate) fn new(mut decided: Decided, judgement: &Judgement) -> Option<Trial> {
        let permit = Permit::on_failure_trial(judgement)?;
        decided.answer = Some("deferred (on-failure)".into());
        Some(Trial { decided, permit })
    }

    /// What was decided.
    pub fn decided(&self) -> &Decided {
        &self.decided
    }

    /// Start the contained run: its permit, and the state that waits for its result.
    pub fn begin(self) -> (TrialRun, Permit) {
        (
            TrialRun {
                decided: self.decided,
            },
            self.permit,
        )
    }
}

/// A contained run under `on-failure` whose result is awaited.
#[derive(Debug)]
pub struct TrialRun {
    decided: Decided,
}

impl TrialRun {
    /// Watch a permitted run under `on-failure` as well: a command the policy allowed
    /// may still fail on what containment blocked (a write outside the workspace).
    pub fn of_permitted(decided: Decided) -> TrialRun {
        TrialRun { decided }
    }

    /// What was decided.
    pub fn decided(&self) -> &Decided {
        &self.decided
    }

    /// The run ended with `status`: offer one extra permission only if it failed and
    /// containment blocked a write or a connection that can be given. Writes are judged
    /// against `places`.
    pub fn after_run(
        self,
        status: u8,
        report: &DenialReport,
        events: &[EgressEvent],
        places: &HostPlaces,
    ) -> AfterTrial {
        if status == 0 {
            return AfterTrial::Done(self.decided);
        }
        match Escalation::from_run(report, events, places) {
            Ok(escalation) => AfterTrial::Blocked(Blocked {
                decided: self.decided,
                escalation,
            }),
            Err(Some(refused)) => AfterTrial::NotOffered(self.decided, refused),
            Err(None) => AfterTrial::Done(self.decided),
        }
    }
}

/// After a trial run.
#[derive(Debug)]
pub enum AfterTrial {
    /// Nothing to offer: the command succeeded, or nothing it needed was blocked.
    Done(Decided),
    /// It failed, and containment blocked something that can be given.
    Blocked(Blocked),
    /// It failed after containment blocked a write that may not be offered (the first
    /// such, and why); the failure stands.
    NotOffered(Decided, NoOffer),
}

/// A failed run and the one extra permission that may let it succeed.
#[derive(Debug)]
pub struct Blocked {
    decided: Decided,
    escalation: Escalation,
}

impl Blocked {
    /// The permission on offer.
    pub fn escalation(&self) -> &Escalation {
        &self.escalation
    }

    /// Ask whether to re-run with it: an existing approval of exactly this escalation,
    /// the human at hand, or (with `Absent::Pending`) a pending record.
    pub fn escalate(self, gate: &Gate, human: Human<'_>) -> Escalated {
        let Blocked {
            decided,
            escalation,
        } = self;
        let d = &decided;
        let ctx = AskContext {
            fingerprint: format!("{}+{}", d.fingerprint, escalation.key()),
            session: d.request.session.clone(),
            tool: d.request.tool.clone(),
            tool_kind: "Bash".into(),
            target: escalation.describe(),
            consequence: "The command runs again with this one extra permission.".into(),
            reason: format!(
                "containment blocked the command; re-run with {}?",
                escalation.describe()
            ),
            suggestion: None,
            suggestions: Vec::new(),
            request: cordon_store::redact(&d.request.canonical_json()),
            verdict: serde_json::json!({"escalation": escalation.describe()}),
            operation_id: d.request.operation_id.clone(),
            editable_input: None,
        };
        let declined = |answer: String, pending: Option<i64>| Escalated::Declined {
            decided: decided.clone(),
            escalation: escalation.clone(),
            answer,
            pending,
        };
        let store = match gate.open_store() {
            Ok(s) => s,
            Err(e) => {
                return declined(
                    format!("not asked: the approval store cannot be used ({e})"),
                    None,
                );
            }
        };
        match human.resolve(&store, &ctx) {
            Ok(Resolution::Allow(grant)) => Escalated::Rerun {
                answer: grant.answer().to_string(),
                permit: Permit::from_grant(grant),
                decided,
                escalation,
            },
            Ok(Resolution::Pending(id)) => declined(format!("pending {}", id.0), Some(id.0)),
            Ok(Resolution::Deny(r)) => declined(r.to_string(), None),
            // Not offered for an escalation: an edit here is no answer.
            Ok(Resolution::Edited(_)) => {
                declined("an edit is not an answer to a re-run".into(), None)
            }
            Err(e) => declined(format!("not asked: {e}"), None),
        }
    }
}

/// The answer to an escalation.
#[derive(Debug)]
pub enum Escalated {
    /// Approved: re-run with exactly this permission.
    Rerun {
        /// What was decided for the call.
        decided: Decided,
        /// The permission granted.
        escalation: Escalation,
        /// The permit for the re-run (from the approval's grant).
        permit: Permit,
        /// How it was approved.
        answer: String,
    },
    /// Not approved (denied, nobody to ask, or left pending).
    Declined {
        /// What was decided for the call.
        decided: Decided,
        /// The permission that was asked for.
        escalation: Escalation,
        /// The answer, in words.
        answer: String,
        /// The pending approval, when one was recorded.
        pending: Option<i64>,
    },
}

/// The one extra permission an `on-failure` run may ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Escalation {
    /// Make this file or directory writable: only what [`offer_write`] found narrow and
    /// safe for the refused write.
    Write(WriteGrant),
    /// Allow this host and port through the proxy.
    Host(String),
    /// Widen a host's request rules by exactly the refused request: this method on this
    /// path (and, for a refused push, `git_push`).
    Request(cordon_policy::net::RequestRuleSpec),
}

impl Escalation {
    /// The first blocked write that may be offered, or else the first refused but not
    /// forbidden connection, of a run. With neither: the first blocked write that was
    /// refused an offer and why (`Err(Some)`), or nothing that could be offered at all.
    pub fn from_run(
        report: &DenialReport,
        events: &[EgressEvent],
        places: &HostPlaces,
    ) -> Result<Escalation, Option<NoOffer>> {
        let mut refused = None;
        for b in &report.blocked {
            if b.kind != BlockedKind::Write {
                continue;
            }
            match offer_write(Path::new(&b.target), places) {
                Ok(grant) => return Ok(Escalation::Write(grant)),
                Err(why) => {
                    refused.get_or_insert(why);
                }
            }
        }
        Self::connection(events).ok_or(refused)
    }

    /// The first refused but not forbidden connection.
    fn connection(events: &[EgressEvent]) -> Option<Escalation> {
        events
            .iter()
            .find(|e| {
                e.decision == EgressDecision::Deny
                    && (e.code.is_not_listed() || e.code.is_request_rule())
            })
            .and_then(|e| {
                let host = format!("{}:{}", e.host, e.port);
                if !e.code.is_request_rule() {
                    return Some(Escalation::Host(host));
                }
                // The rule offered is the refused request itself, no wider; a path that
                // rules cannot judge is never offered.
                let path = e.path.as_deref()?.split('?').next()?.to_owned();
                let spec = cordon_policy::net::RequestRuleSpec {
                    host,
                    methods: vec![e.method.clone()?],
                    paths: vec![path],
                    read_only: false,
                    git_push: e.code == cordon_policy::net::NetCode::GitPush,
                };
                cordon_policy::net::RequestRule::parse(&spec).ok()?;
                Some(Escalation::Request(spec))
            })
    }

    /// The key that binds an approval to exactly this permission.
    pub fn key(&self) -> String {
        match self {
            Escalation::Write(g) => g.key(),
            Escalation::Host(h) => format!("net:{h}"),
            Escalation::Request(r) => format!(
                "net-rule:{} {} {}{}",
                r.host,
                r.methods.join(","),
                r.paths.join(","),
                if r.git_push { " git-push" } else { "" }
            ),
        }
    }

    /// One phrase for humans.
    pub fn describe(&self) -> String {
        match self {
            Escalation::Write(g) => g.describe(),
            Escalation::Host(h) => format!("network access to {h}"),
            Escalation::Request(r) if r.git_push => {
                format!("git push to {}{}", r.host, r.paths.join(", "))
            }
            Escalation::Request(r) => format!(
                "{} requests to {}{}",
                r.methods.join(", "),
                r.host,
                r.paths.join(", ")
            ),
        }
    }
}
