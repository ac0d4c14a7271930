//! A structured action request carried out: reviewed, approved by a human through the
//! approval store, reviewed again right before launch, and run contained by a sandbox
//! derived from the request itself.
//!
//! The review is `cordon-action`'s pure function. An `ask` is answered only by an
//! approval recorded for exactly this request: the request's hash is the approval
//! fingerprint, a pending approval is recorded under it, `cordon approvals approve`
//! turns it into a once-lease, and the run consumes that lease. No name typed on the
//! command line approves anything. The run goes through [`contained::execute`] (the
//! gate's policy judges the argv too), can write only in the directories of its
//! declared paths, and only the declared paths are merged back to the host: whatever
//! else it wrote stays in its change set for `cordon changes`. Approval never widens
//! the sandbox. The approval is bound to the content of the request's inputs too
//! ([`inputs`]): read at review, read again before launch, small ones pinned.

mod inputs;

use crate::contained::{self, Executed, Ran, RunOptions};
use crate::error::GateError;
use crate::flow::{Absent, Gate, Human};
use crate::record::ToolResult;
use cordon_action::{ActionPolicy, ActionRequest, Review, review};
use cordon_policy::{Containment, Decision, FileFacts, Request, SandboxMode};
use cordon_sandbox::{EnvPolicy, HomeView, Limits, Network, Require, SandboxBuilder};
use cordon_store::{AskContext, Phase, Resolution};
use inputs::{Inputs, Pins};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use inputs::{PIN_FILE_MAX, PIN_TOTAL_MAX};

/// The fingerprint approvals of `req` are bound to: a hash of the whole request
/// (actor, argv, paths, origins, credentials, side effect, reason, key).
pub fn request_fingerprint(req: &ActionRequest) -> String {
    let mut h = blake3::Hasher::new();
    h.update(b"cordon-action-request\0");
    // Field order is the struct's; the same request always hashes the same.
    h.update(&serde_json::to_vec(req).unwrap_or_default());
    format!("action:{}", h.finalize().to_hex())
}

/// A request and its first review, before anything else happens.
#[derive(Debug, Clone)]
pub struct ActionRun {
    request: ActionRequest,
    policy: ActionPolicy,
    review: Review,
    fingerprint: String,
    inputs: Inputs,
}

/// What became of a request.
#[derive(Debug)]
#[non_exhaustive]
pub enum ActionOutcome {
    /// Nothing ran; the sentence says why and what to do.
    Refused(String),
    /// Nothing ran: a human must approve the pending approval `id` first.
    Pending {
        /// The pending approval (`cordon approvals approve ID`).
        id: i64,
        /// What must be approved, and how.
        message: String,
    },
    /// It ran.
    Ran {
        /// The contained run.
        ran: Box<Ran>,
        /// Paths the run changed without declaring them: kept out of the host's tree.
        kept: Vec<String>,
    },
}

impl ActionRun {
    /// Review `request` against `policy`, reading file facts through `fs`.
    pub fn new(request: ActionRequest, policy: ActionPolicy, fs: &dyn FileFacts) -> ActionRun {
        let review = review(&request, &policy, fs);
        let inputs = Inputs::read(&request);
        let mut fingerprint = request_fingerprint(&request);
        if let Some(digest) = inputs.digest() {
            // The approval answers this request with these inputs only.
            let mut h = blake3::Hasher::new();
            h.update(b"cordon-action-inputs\0");
            h.update(fingerprint.as_bytes());
            h.update(b"\0");
            h.update(digest.as_bytes());
            fingerprint = format!("action:{}", h.finalize().to_hex());
        }
        ActionRun {
            request,
            policy,
            review,
            fingerprint,
            inputs,
        }
    }

    /// The review.
    pub fn review(&self) -> &Review {
        &self.review
    }

    /// The fingerprint an approval of this request is recorded under: the request's
    /// hash, bound to the content of its inputs as they were read at review.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// The action policy's workspace: the gate's policy is loaded for it.
    pub fn workspace(&self) -> &Path {
        &self.policy.workspace
    }

    /// `host:port` of every declared origin that the review accepted: the only network
    /// allowlist the gate's policy may have for this run.
    pub fn network_allow(&self) -> &[String] {
        &self.review.profile.network
    }

    /// Where the run sees its inputs: the directories it may write, else the workspace.
    fn visible_dirs(&self) -> Vec<PathBuf> {
        match self.review.profile.writable_dirs.is_empty() {
            true => vec![self.policy.workspace.clone()],
            false => self.review.profile.writable_dirs.clone(),
        }
    }

    /// The notice that records the request, its review and its approval (the lease
    /// consumed or the pending approval made).
    fn notice(&self, gate: &Gate, approval: &Approval) -> cordon_store::AuditRecord {
        let first = &self.review;
        let (lease, pending) = match approval {
            Approval::Granted(l) => (Some(*l), None),
            Approval::Pending(id, _) => (None, Some(*id)),
            _ => (None, None),
        };
        let mut notice = gate.bare_record(
            Phase::Notice,
            "action",
            json!({"request": &self.request, "review": first,
               "fingerprint": &self.fingerprint, "lease": lease, "pending": pending}),
        );
        notice.agent = Some(self.request.actor.clone());
        notice.lease = lease.map(cordon_store::LeaseId);
        notice.pending = pending.map(cordon_store::PendingId);
        notice.reason = Some(
            format!(
                "action {} reviewed: {:?}",
                self.request.capability, first.verdict
            )
            .to_lowercase(),
        );
        notice
    }

    /// Record the request, approve it (or not), review it again and run it contained.
    /// `home` is the user's home (hidden from the run). An `ask` is answered by a lease
    /// for this request, else by `human`'s prompter when there is one (the answer is
    /// recorded in the store), else by a pending approval for `cordon approvals`.
    /// Errors are failures of cordon's own (the sandbox, the egress proxy); refusals are
    /// outcomes.
    pub fn run(
        self,
        gate: &Gate,
        fs: &dyn FileFacts,
        home: &Path,
        human: Human<'_>,
    ) -> Result<ActionOutcome, GateError> {
        let first = &self.review;
        let approval = match first.verdict {
            Decision::Deny => Approval::Refused(first.reasons.join("; ")),
            Decision::Ask => self.approval(gate, human),
            Decision::Allow => Approval::NotNeeded,
        };
        // The request, the review and the approval go into the audit log before
        // anything runs; a run whose request cannot be recorded does not start.
        let notice = self.notice(gate, &approval);
        if !gate.options().no_audit
            && let Err(e) = gate.append(&notice)
        {
            return Ok(ActionOutcome::Refused(format!(
                "the action request cannot be recorded ({e})"
            )));
        }
        match approval {
            Approval::Refused(why) => return Ok(ActionOutcome::Refused(why)),
            Approval::Pending(id, message) => return Ok(ActionOutcome::Pending { id, message }),
            Approval::Granted(_) | Approval::NotNeeded => {}
        }
        // cordon's own files exist before the sandbox is planned, so its masks cover them.
        if let Err(e) = gate.prepare_own_files() {
            return Ok(ActionOutcome::Refused(format!(
                "cordon's own files cannot be made ready ({e}), so nothing ran"
            )));
        }
        // Revalidate every normalized target immediately before launch: a path that
        // became a link, appeared or vanished since the review stops the run.
        let again = review(&self.request, &self.policy, fs);
        if again.verdict > first.verdict || again.profile != first.profile {
            return Ok(ActionOutcome::Refused(format!(
                "the action's targets changed between the review and the launch: {}",
                again.reasons.join("; ")
            )));
        }
        // Its inputs too: the approval was for the files as they were read at review.
        let now = Inputs::read(&self.request);
        if let Some(why) = self.inputs.changed(&now) {
            return Ok(ActionOutcome::Refused(format!(
                "{why}; the approval was for the files as they were, so nothing ran: run the request again to have it reviewed (and approved) as it is now"
            )));
        }
        // The bytes just read (and hashed) are what the run sees: pinned read-only.
        let visible = self.visible_dirs();
        let (shown, pins) = match pin_inputs(gate, now.binds(&visible)) {
            Ok(pinned) => pinned,
            Err(why) => return Ok(ActionOutcome::Refused(why)),
        };
        let mut request = Request::argv(&self.request.argv, Some(self.request.cwd.clone()));
        request.agent = Some(self.request.actor.clone());
        // Only the full tier keeps undeclared writes off the host (copy-on-write); a
        // read-only action follows the user's `[sandbox] require` like `cordon exec`.
        let require_full = !self.review.profile.writable_dirs.is_empty()
            || !matches!(
                gate.policy().sandbox().required_tier(),
                cordon_policy::RequiredTier::Any
            );
        let mut builder = self.sandbox(home, require_full);
        for (src, dst) in shown {
            builder = builder.read_only_bind(src, dst);
        }
        let run = RunOptions {
            builder,
            network: Network::None,
            verbose: false,
            require_full,
            upstream_roots: Vec::new(),
            credentials: Vec::new(),
        };
        let executed = contained::execute(
            gate,
            &request,
            fs,
            Containment::Full,
            Human::nobody(),
            None,
            &run,
            false,
        )?;
        drop(pins);
        let ran = match executed {
            Executed::Ran(ran) => ran,
            Executed::Refused(r) => return Ok(ActionOutcome::Refused(r.decided.verdict.reason)),
            Executed::Pending(d) => return Ok(ActionOutcome::Refused(d.verdict.reason)),
        };
        let kept: Vec<String> = ran
            .outcome
            .report
            .blocked
            .iter()
            .filter(|b| b.kind == cordon_sandbox::BlockedKind::NotMerged)
            .map(|b| b.target.clone())
            .collect();
        let mut result = ToolResult {
            ok: Some(ran.outcome.status == 0 && kept.is_empty()),
            exit_status: Some(i32::from(ran.outcome.status)),
            ..Default::default()
        };
        if !kept.is_empty() {
            result = result.with_output(&format!(
                "the action changed paths its request did not declare; they were not merged: {}",
                kept.join(", ")
            ));
        }
        // The run happened: a result that cannot be recorded is reported, not undone.
        let _ = gate.record_result(&request, &result);
        Ok(ActionOutcome::Ran { ran, kept })
    }

    /// The sandbox of the run: writable only in the directories of the declared paths
    /// (copy-on-write, merged back for the declared paths alone), HOME hidden, the
    /// environment holding only the declared credentials besides the harmless basics,
    /// limits from the policy. The network is the gate's (its egress proxy allows the
    /// declared origins only).
    fn sandbox(&self, home: &Path, require_full: bool) -> SandboxBuilder {
        let p = &self.review.profile;
        let (workspace, mode) = match p.writable_dirs.first() {
            Some(d) => (d.clone(), SandboxMode::WorkspaceWrite),
            None => (self.policy.workspace.clone(), SandboxMode::ReadOnly),
        };
        let mut b = SandboxBuilder::new(self.request.argv.iter().map(std::ffi::OsString::from))
            .workspace(&workspace)
            .home(home)
            .mode(mode)
            .home_view(HomeView::Hidden)
            .timeout(self.policy.limits.timeout_seconds.map(Duration::from_secs))
            .require(if require_full {
                Require::Full
            } else {
                Require::Any
            })
            .env_policy(EnvPolicy {
                allow: p.env.clone(),
                allow_secret: p.env.clone(),
            })
            .limits(Limits {
                address_space: self.policy.limits.memory_bytes,
                ..Limits::default()
            })
            .cwd(&self.request.cwd);
        for d in p.writable_dirs.iter().skip(1) {
            b = b.writable_root(d);
        }
        if !p.writable_dirs.is_empty() {
            b = b.merge_only(p.writable_paths.iter().cloned());
        }
        b
    }

    /// An approval for exactly this request: a once-lease made by approving its pending
    /// record, consumed now; else the pending record (made now, or the one already
    /// waiting).
    fn approval(&self, gate: &Gate, human: Human<'_>) -> Approval {
        let store = match gate.open_store() {
            Ok(s) => s,
            Err(e) => {
                return Approval::Refused(format!(
                    "approval required, and the approval store cannot be used ({e})"
                ));
            }
        };
        let needed: Vec<String> = self
            .review
            .required_approvals
            .iter()
            .map(|a| format!("{}: {} ({})", a.kind, a.target, a.consequence))
            .collect();
        let ctx = AskContext {
            fingerprint: self.fingerprint.clone(),
            tool: "run-action".into(),
            tool_kind: "action".into(),
            target: needed.join("; "),
            consequence: self
                .review
                .required_approvals
                .iter()
                .map(|a| a.consequence.clone())
                .collect::<Vec<_>>()
                .join(" "),
            reason: self.review.reasons.join("; "),
            request: cordon_store::redact(&json!({
                "tool": "run-action",
                "input": {
                    "command": cordon_policy::request::quote_argv(&self.request.argv),
                    "capability": &self.request.capability,
                    "action": &self.request,
                },
                "cwd": &self.request.cwd,
                "agent": &self.request.actor,
            })),
            verdict: json!({
                "decision": "ask",
                "reason": format!("the action needs approval: {}", needed.join("; ")),
                "review": &self.review,
                "workspace": &self.policy.workspace,
                "inputs": self.inputs.to_json(),
            }),
            ..AskContext::default()
        };
        match cordon_store::resolve_lease(&store, &ctx) {
            Ok(Some(grant)) => return Approval::Granted(grant.lease().0),
            Ok(None) => {}
            Err(e) => {
                return Approval::Refused(format!(
                    "approval required, and the approval store cannot be read ({e})"
                ));
            }
        }
        let pending = |id: i64| {
            Approval::Pending(
                id,
                format!(
                    "approval required: {}; a human approves it with `cordon approvals approve {id}` (or refuses it with `cordon approvals deny {id}`), then the same request runs once",
                    needed.join("; ")
                ),
            )
        };
        if human.prompter.is_some() {
            // A human at hand answers now; the store records the answer (or, when
            // nobody answers, the pending approval).
            let human = Human {
                prompter: human.prompter,
                absent: Absent::Pending,
            };
            return match human.resolve(&store, &ctx) {
                Ok(Resolution::Allow(grant)) => Approval::Granted(grant.lease().0),
                Ok(Resolution::Pending(id)) => pending(id.0),
                Ok(Resolution::Deny(r)) => Approval::Refused(format!("approval refused: {r}")),
                Ok(_) => Approval::Refused(
                    "approval refused: an action request cannot be edited; write a new request"
                        .into(),
                ),
                Err(e) => Approval::Refused(format!(
                    "approval required, and the approval store cannot be used ({e})"
                )),
            };
        }
        let waiting = store.pending().map(|all| {
            all.into_iter()
                .find(|p| p.fingerprint == self.fingerprint)
                .map(|p| p.id)
        });
        let id = match waiting {
            Ok(Some(id)) => Ok(id),
            Ok(None) => store.add_pending(&ctx.fingerprint, None, &ctx.request, &ctx.verdict, None),
            Err(e) => Err(e),
        };
        match id {
            Ok(id) => pending(id.0),
            Err(e) => Approval::Refused(format!(
                "approval required, and it cannot be recorded as pending ({e})"
            )),
        }
    }
}

/// Where the approval of an `ask` stands.
enum Approval {
    NotNeeded,
    /// The lease consumed.
    Granted(i64),
    Pending(i64, String),
    Refused(String),
}

/// An input as the run sees it: the file bound, and where.
type Shown = (PathBuf, PathBuf);

/// Where the run sees each input (`binds`: the bytes read at review, if any, and where
/// the run sees them): bytes pinned in a copy in the state directory, else the path
/// itself. The pins are kept while the run lasts. `Err` says why nothing may run.
fn pin_inputs(
    gate: &Gate,
    binds: Vec<(Option<&[u8]>, PathBuf)>,
) -> Result<(Vec<Shown>, Option<Pins>), String> {
    let mut pins: Option<Pins> = None;
    let mut shown: Vec<Shown> = Vec::new();
    for (bytes, dst) in binds {
        let src = match bytes {
            None => dst.clone(),
            Some(bytes) => {
                if pins.is_none() {
                    pins = Some(new_pins(gate).map_err(|e| {
                        format!(
                            "the action's inputs cannot be pinned for the run ({e}), so nothing ran"
                        )
                    })?);
                }
                let Some(p) = pins.as_mut() else {
                    continue;
                };
                p.pin(bytes).map_err(|e| {
                    format!(
                        "the action's input {} cannot be pinned for the run ({e}), so nothing ran",
                        dst.display()
                    )
                })?
            }
        };
        shown.push((src, dst));
    }
    Ok((shown, pins))
}

/// Pins in the state directory (beside the store).
fn new_pins(gate: &Gate) -> Result<Pins, String> {
    let state = gate
        .store_path()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf));
    state
        .ok_or_else(|| "no state directory".to_string())
        .and_then(|s| Pins::new(&s).map_err(|e| e.to_string()))
}
