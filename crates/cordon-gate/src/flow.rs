//! The decision flow: judgement → approval policy → lease / human / pending → outcome.
//!
//! Owns the one place where an ask is answered. It must never turn anything into an
//! allow except an unedited allow judgement or a store grant, and every failure to read
//! the store ends in "nothing was granted".

use crate::bound::{self, Runs, SessionRuns};
use crate::fix::{self, Fix};
use crate::held::Held;
use crate::onfailure::Trial;
use cordon_policy::ops::Operations;
use cordon_policy::{
    ApprovalPolicy, Containment, Decision, FileFacts, Judgement, Policy, Request, Source, Step,
    Verdict,
};
use cordon_sandbox::Permit;
use cordon_store::{
    AskContext, Grant, NoHuman, NoPrompter, Prompter, Refusal, Resolution, Store, redact,
};
use std::path::PathBuf;

/// Where the gate keeps its state, and which surface it serves.
#[derive(Debug, Clone, Default)]
pub struct GateOptions {
    /// The surface the gate serves (named in the audit log).
    pub surface: crate::Surface,
    /// The approval store; `None` is the default one in the state directory.
    pub store: Option<PathBuf>,
    /// The audit log; `None` is the default one in the state directory.
    pub audit: Option<PathBuf>,
    /// Write no audit records.
    pub no_audit: bool,
    /// The surface hands `Decided::request` back to its caller (or runs it), so a human
    /// may answer an ask by replacing the input ("edit"). Off for surfaces that run what
    /// they were given.
    pub edits: bool,
}

/// What to do with an ask that no human at hand answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Absent {
    /// The caller has a human of its own: hand the ask back ([`Outcome::Ask`]).
    Caller,
    /// Record a pending approval for `cordon approvals`.
    Pending,
    /// Deny.
    Deny,
}

/// Who can answer an ask.
pub struct Human<'a> {
    /// A person who can be asked now (a terminal), if there is one.
    pub prompter: Option<&'a mut dyn Prompter>,
    /// What happens when nobody here answered.
    pub absent: Absent,
}

impl Human<'_> {
    /// Nobody can be asked and the caller has no human either: an ask is a deny.
    pub fn nobody<'a>() -> Human<'a> {
        Human {
            prompter: None,
            absent: Absent::Deny,
        }
    }

    /// The same human, lent for one more question.
    pub fn reborrow(&mut self) -> Human<'_> {
        Human {
            prompter: match &mut self.prompter {
                Some(p) => Some(&mut **p),
                None => None,
            },
            absent: self.absent,
        }
    }

    /// Run the store's approval flow with this human: a lease, the prompter, else deny
    /// or a pending record as `absent` says ([`Absent::Caller`] counts as deny here).
    pub(crate) fn resolve(
        self,
        store: &Store,
        ctx: &AskContext,
    ) -> Result<Resolution, cordon_store::StoreError> {
        let mut nobody = NoPrompter;
        let p: &mut dyn Prompter = match self.prompter {
            Some(p) => p,
            None => &mut nobody,
        };
        let mode = match self.absent {
            Absent::Pending => NoHuman::Pending,
            Absent::Caller | Absent::Deny => NoHuman::Deny,
        };
        cordon_store::resolve_ask(store, ctx, p, mode)
    }

    /// The caller asks its own human: an ask is handed back.
    pub fn caller<'a>() -> Human<'a> {
        Human {
            prompter: None,
            absent: Absent::Caller,
        }
    }
}

/// What every outcome carries: the call, its final verdict, and how it got there.
#[derive(Debug, Clone)]
pub struct Decided {
    /// The request.
    pub request: Request,
    /// Its operations (with the shell analysis, for `--explain`).
    pub ops: Operations,
    /// The final verdict (an approved ask reads `allow`, with the approval as source).
    pub verdict: Verdict,
    /// The containment the call was judged under.
    pub containment: Containment,
    /// How an ask was answered (`lease`, `allow-once`, `pending`, …).
    pub answer: Option<String>,
    /// The lease that granted the call.
    pub lease: Option<cordon_store::LeaseId>,
    /// The pending approval recorded for the call.
    pub pending: Option<cordon_store::PendingId>,
    /// The fingerprint approvals of this call are bound to.
    pub fingerprint: String,
    /// The input fields a configured preset set over the model's input (`request.input`
    /// already holds them).
    pub presets: Vec<String>,
    /// Whether a human replaced the input before approving (`request.input` is the
    /// replacement, judged again).
    pub edited: bool,
    /// The files an asked call runs, as they were when it was asked (its fingerprint is
    /// bound to them).
    pub runs: Runs,
}

/// A call that may proceed, with the permit that lets the sandbox run it.
#[derive(Debug)]
pub struct Permitted {
    /// What was decided.
    pub decided: Decided,
    permit: Permit,
}

impl Permitted {
    /// The permit, for the sandbox (a surface that runs nothing just drops it).
    pub fn into_parts(self) -> (Decided, Permit) {
        (self.decided, self.permit)
    }
}

/// A call that may not proceed, and what would let it.
#[derive(Debug, Clone)]
pub struct Refused {
    /// What was decided.
    pub decided: Decided,
    /// The fixes that apply, most specific first.
    pub fixes: Vec<Fix>,
}

/// The outcome of one call.
#[derive(Debug)]
#[must_use]
pub enum Outcome {
    /// Allowed, by the policy or by an approval.
    Permitted(Permitted),
    /// `on-failure`: run contained first, ask only if containment blocked what it needed.
    Trial(Trial),
    /// An ask for the caller's own human (only with [`Absent::Caller`]).
    Ask(Decided),
    /// Left pending for a human (`cordon approvals approve ID`).
    Pending(Decided),
    /// Refused.
    Refused(Refused),
}

impl Outcome {
    /// What was decided, whatever the outcome.
    pub fn decided(&self) -> &Decided {
        match self {
            Outcome::Permitted(p) => &p.decided,
            Outcome::Trial(t) => t.decided(),
            Outcome::Ask(d) | Outcome::Pending(d) => d,
            Outcome::Refused(r) => &r.decided,
        }
    }

    /// A short name of the outcome (`permitted`, `trial`, `ask`, `pending`, `refused`).
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Permitted(_) => "permitted",
            Outcome::Trial(_) => "trial",
            Outcome::Ask(_) => "ask",
            Outcome::Pending(_) => "pending",
            Outcome::Refused(_) => "refused",
        }
    }
}

/// The decision flow for one loaded policy.
#[derive(Debug, Clone)]
pub struct Gate {
    policy: Policy,
    options: GateOptions,
    unsynced_audit: bool,
    /// The shared store, when it is not the local file (`[store]`).
    shared: Option<std::sync::Arc<cordon_store::StoreAt>>,
    pub(crate) held: Held,
}

impl Gate {
    /// A gate over `policy`.
    pub fn new(policy: Policy, options: GateOptions) -> Gate {
        Gate {
            policy,
            options,
            unsynced_audit: false,
            shared: None,
            held: Held::default(),
        }
    }

    /// The same gate, keeping its shared state (leases, remembered rules, pending
    /// approvals, sessions, operation ids) where `location` says ([`crate::locate`]);
    /// the audit anchor stays in the local store its options name. The store is opened
    /// only when a call needs it: a guard deny or a plain allow never waits for it.
    pub fn with_location(mut self, location: &crate::StoreLocation) -> Gate {
        if self.options.store.is_none() {
            self.options.store = Some(location.local.clone());
        }
        self.shared = location
            .is_shared()
            .then(|| std::sync::Arc::clone(&location.shared));
        self
    }

    /// The same gate, keeping its shared state where `base` keeps its own (for a gate
    /// made from another one's policy and options).
    pub fn sharing_store_of(mut self, base: &Gate) -> Gate {
        self.shared = base.shared.clone();
        self
    }

    /// Where the shared state is, for messages (never a password).
    pub fn shared_store(&self) -> Option<&cordon_store::StoreAt> {
        self.shared.as_deref()
    }

    /// The same gate, using `store` (a connection to the approval store its options
    /// name, opened by the caller: the one its remembered rules were read from) instead
    /// of opening its own. A one-shot surface then opens the store once per process:
    /// each open reads the schema, and closing the last connection checkpoints the WAL.
    pub fn with_store(self, store: Store) -> Gate {
        self.held.keep_store(store);
        self
    }

    /// Write each audit record before the call proceeds but do not wait for the disk
    /// (`fdatasync`) before answering: a killed process loses nothing, a power cut or a
    /// kernel crash may lose the newest records. For a one-shot surface that a harness
    /// spawns for every tool call (`cordon hook`), where a sync per call costs more than
    /// the decision. Records stay hash-chained either way.
    pub fn with_unsynced_audit(mut self) -> Gate {
        self.unsynced_audit = true;
        self
    }

    /// Whether audit records are written without waiting for the disk.
    pub fn unsynced_audit(&self) -> bool {
        self.unsynced_audit
    }

    /// The policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The options.
    pub fn options(&self) -> &GateOptions {
        &self.options
    }

    /// The approval store file.
    pub fn store_path(&self) -> Result<PathBuf, cordon_store::StoreError> {
        match &self.options.store {
            Some(p) => Ok(p.clone()),
            None => cordon_store::default_store_path(),
        }
    }

    /// The store holding the shared state: the `[store]` database, else the local file.
    pub fn open_store(&self) -> Result<Store, cordon_store::StoreError> {
        match &self.shared {
            Some(at) => Store::open_at(at),
            None => Store::open(&self.store_path()?),
        }
    }

    /// Decide one call that will run under `containment` (say [`Containment::None`] for
    /// a call cordon does not run itself). `trace` records the evaluation trail.
    pub fn decide(
        &self,
        request: &Request,
        fs: &dyn FileFacts,
        containment: Containment,
        human: Human<'_>,
        trace: bool,
    ) -> Outcome {
        let mut request = request.clone();
        let presets = self.policy.apply_presets(&mut request);
        let ops = self.policy.operations(&request, fs);
        let judgement = self.policy.judge_with(&ops, containment, trace);
        let (judgement, facts, session_runs) = self.judge_session(&request, &ops, fs, judgement);
        let runs = self.bind_runs(
            &request,
            &ops,
            fs,
            &judgement,
            facts.as_ref(),
            &session_runs,
        );
        let how = How {
            presets,
            runs,
            ..How::default()
        };
        let outcome = self.settle_how(request, ops, judgement, human, how);
        self.remember_session(outcome, facts)
    }

    /// The files an asked call runs (see [`Runs`]); nothing for a call that is not asked.
    pub(crate) fn bind_runs(
        &self,
        request: &Request,
        ops: &Operations,
        fs: &dyn FileFacts,
        judgement: &Judgement,
        facts: Option<&cordon_policy::session::SessionFacts>,
        session: &SessionRuns,
    ) -> Runs {
        let asks = match judgement.decision() {
            Decision::Ask => true,
            Decision::Allow => judgement.approval() == ApprovalPolicy::Untrusted,
            Decision::Deny => false,
        };
        if !asks {
            return Runs::default();
        }
        match facts {
            Some(f) => bound::bind(&f.executes, session),
            None => {
                let f = self.policy.session_facts(request, ops, fs);
                bound::bind(&f.executes, session)
            }
        }
    }

    /// Take a judgement through the approval policy and the approval flow.
    pub fn settle(
        &self,
        request: Request,
        ops: Operations,
        judgement: Judgement,
        human: Human<'_>,
    ) -> Outcome {
        self.settle_how(request, ops, judgement, human, How::default())
    }

    /// [`settle`](Gate::settle) for a call that presets or a human's edit shaped.
    pub(crate) fn settle_how(
        &self,
        request: Request,
        ops: Operations,
        judgement: Judgement,
        human: Human<'_>,
        how: How,
    ) -> Outcome {
        let approval = judgement.approval();
        let containment = judgement.containment();
        let decided = |verdict: Verdict| Decided {
            fingerprint: self.fingerprint(&request, &verdict, &how.runs),
            runs: how.runs.clone(),
            request: request.clone(),
            ops: ops.clone(),
            verdict,
            containment,
            answer: how.edited.then(|| "edited".to_string()),
            lease: None,
            pending: None,
            presets: how.presets.clone(),
            edited: how.edited,
        };
        let judgement = match judgement.allowed() {
            Ok(allowed) => {
                let untrusted_ask =
                    approval == ApprovalPolicy::Untrusted && !reads_only(allowed.verdict());
                if !untrusted_ask {
                    let d = decided(allowed.verdict().clone());
                    return self.permit(d, Permit::from_allowed(allowed));
                }
                let mut v = allowed.verdict().clone();
                v.decision = Decision::Ask;
                v.reason = format!(
                    "the untrusted approval policy runs only known read-only commands without asking ({})",
                    v.reason
                );
                v.source = Source::new(Step::Approval, "untrusted");
                return self.ask(decided(v), human, how.edits);
            }
            Err(j) => j,
        };
        match judgement.decision() {
            Decision::Deny => self.refuse(decided(judgement.into_verdict())),
            Decision::Allow | Decision::Ask => {
                if approval == ApprovalPolicy::Never {
                    let mut v = judgement.into_verdict();
                    no_human(&mut v, "the approval policy is never");
                    return self.refuse(decided(v));
                }
                if approval == ApprovalPolicy::OnFailure
                    && let Some(trial) =
                        Trial::new(decided(judgement.verdict().clone()), &judgement)
                {
                    if let Some(refused) = self.claim(trial.decided()) {
                        return refused;
                    }
                    return Outcome::Trial(trial);
                }
                let v = judgement.verdict().clone();
                self.ask(decided(v), human, how.edits)
            }
        }
    }

    /// An ask: an approved edit of this call, a lease, the human at hand, or what
    /// `absent` says. `edits` counts the human's edits so far.
    fn ask(&self, mut d: Decided, mut human: Human<'_>, edits: u8) -> Outcome {
        // The gate's kept connection, taken out: granting goes on to claim the operation
        // through the kept one, and a human may take minutes to answer.
        let store = match self.held.take_store(|| self.open_store()) {
            Ok(s) => s,
            Err(e) => {
                return self.unanswered(
                    d,
                    human.absent,
                    format!("the approval store cannot be used ({e})"),
                );
            }
        };
        match store.edited_lease(
            &d.fingerprint,
            d.request.session.as_deref(),
            d.request.operation_id.as_deref(),
        ) {
            Ok(Some(lease)) => return self.use_edited_lease(d, lease, &store),
            Ok(None) => {}
            Err(e) => {
                return self.unanswered(
                    d,
                    human.absent,
                    format!("the approval store cannot be used ({e})"),
                );
            }
        }
        let ctx = self.ask_context(&d);
        let absent = human.absent;
        let resolution = match (&human.prompter, absent) {
            (None, Absent::Caller) => match cordon_store::resolve_lease(&store, &ctx) {
                Ok(Some(grant)) => Ok(Resolution::Allow(grant)),
                Ok(None) => {
                    self.held.give_back(store);
                    return Outcome::Ask(d);
                }
                Err(e) => {
                    d.answer = Some(format!("store error: {e}"));
                    return Outcome::Ask(d);
                }
            },
            _ => human.reborrow().resolve(&store, &ctx),
        };
        // A connection that failed is not kept.
        if resolution.is_ok() {
            self.held.give_back(store);
        }
        match resolution {
            Ok(Resolution::Allow(grant)) => self.granted(d, grant),
            Ok(Resolution::Edited(input)) => self.edited(d, input, human, edits),
            Ok(Resolution::Pending(id)) => {
                d.pending = Some(id);
                d.answer = Some("pending".into());
                Outcome::Pending(d)
            }
            Ok(Resolution::Deny(Refusal::NoHuman)) => {
                no_human(&mut d.verdict, "approval needed and no human can be asked");
                d.answer = Some(Refusal::NoHuman.to_string());
                self.refuse(d)
            }
            Ok(Resolution::Deny(r)) => {
                let why = r.to_string();
                d.verdict.decision = Decision::Deny;
                d.verdict.reason = format!("{} ({why})", d.verdict.reason);
                d.verdict.source = Source::new(Step::Approval, why.clone());
                d.answer = Some(why);
                self.refuse(d)
            }
            Err(e) => self.unanswered(
                d,
                absent,
                format!("the approval store cannot be used ({e})"),
            ),
        }
    }

    /// Nothing could be granted: the caller's human may still be asked, else deny.
    fn unanswered(&self, mut d: Decided, absent: Absent, why: String) -> Outcome {
        if absent == Absent::Caller {
            d.answer = Some(why);
            return Outcome::Ask(d);
        }
        d.verdict.decision = Decision::Deny;
        d.verdict.reason = format!("{} ({why})", d.verdict.reason);
        d.verdict.source = Source::new(Step::NoHuman, why);
        self.refuse(d)
    }

    pub(crate) fn granted(&self, mut d: Decided, grant: Grant) -> Outcome {
        let mut reason = format!("approved ({}): {}", grant.answer(), d.verdict.reason);
        if let Some(rule) = grant.saved_rule() {
            reason.push_str(&format!(" Saved rule `{rule}`."));
        }
        d.answer = Some(grant.answer().to_string());
        d.lease = Some(grant.lease());
        d.verdict.decision = Decision::Allow;
        d.verdict.reason = reason;
        d.verdict.source = Source::new(Step::Approval, grant.answer());
        self.permit(d, Permit::from_grant(grant))
    }

    /// The approval fingerprint of a call: the policy's, and, when the session step made
    /// it ask (write-then-run, the rule of two), bound to what the session did that made
    /// it ask (the reason names the file and the earlier call). A lease given for the
    /// same call before that history (for the session, or always) then cannot answer
    /// it; a lease given for this ask answers the same call with the same history only.
    ///
    /// An asked call's fingerprint is also bound to the files it runs, as they were when
    /// it was asked ([`Runs`]): a changed, created or removed file makes it a new question.
    ///
    /// It is [`approval_fingerprint`](cordon_policy::fingerprint::approval_fingerprint)
    /// of the request and verdict a pending approval records, so whoever answers one
    /// computes it again from what the human is shown.
    fn fingerprint(&self, request: &Request, verdict: &Verdict, runs: &Runs) -> String {
        // Only the keys the function reads, with the values `recorded_verdict` records
        // (every decision is fingerprinted; its findings need not be serialized for it).
        let mut bound = self.policy.fingerprint_verdict();
        if let Some(obj) = bound.as_object_mut() {
            obj.insert(
                "source".into(),
                serde_json::json!({"step": verdict.source.step}),
            );
            obj.insert("reason".into(), verdict.reason.clone().into());
            if !runs.is_empty() {
                obj.insert("runs".into(), runs.to_json());
            }
        }
        cordon_policy::fingerprint::approval_fingerprint(&request.canonical_json(), &bound)
            .unwrap_or_default()
    }

    /// The verdict as a pending approval records it: with the workspace and the policy
    /// version it was judged under (an edited approval is judged, and every approval
    /// fingerprinted, against the same ones), and the files the call runs.
    pub(crate) fn recorded_verdict(&self, verdict: &Verdict, runs: &Runs) -> serde_json::Value {
        let mut v = serde_json::to_value(verdict).unwrap_or(serde_json::Value::Null);
        if let (Some(obj), serde_json::Value::Object(bound)) =
            (v.as_object_mut(), self.policy.fingerprint_verdict())
        {
            obj.extend(bound);
            if !runs.is_empty() {
                obj.insert("runs".into(), runs.to_json());
            }
        }
        v
    }

    /// Let a call proceed, once per operation id and surface: a second permit of the
    /// same id is a duplicate confirmation or a replay, and is refused.
    pub(crate) fn permit(&self, d: Decided, permit: Permit) -> Outcome {
        match self.claim(&d) {
            None => Outcome::Permitted(Permitted { decided: d, permit }),
            Some(refused) => refused,
        }
    }

    /// Claim the call's operation id for this surface (nothing to do without one); the
    /// refusal when it cannot be claimed.
    fn claim(&self, d: &Decided) -> Option<Outcome> {
        let op = d.request.operation_id.as_deref()?;
        let surface = self.options.surface;
        let claimed = self.held.with_store(
            || self.open_store(),
            |s| s.claim_operation(op, surface.as_str(), &d.fingerprint),
        );
        let why = match claimed {
            Ok(true) => return None,
            Ok(false) => format!(
                "operation `{op}` was already permitted once by `{surface}`; a repeated confirmation or a replay is refused"
            ),
            Err(e) => format!(
                "operation `{op}` cannot be recorded in the approval store ({e}), so it is not permitted"
            ),
        };
        let mut d = d.clone();
        d.verdict.decision = Decision::Deny;
        d.verdict.reason = why.clone();
        d.verdict.source = Source::new(Step::Validate, "operation-id");
        d.answer = Some(why);
        Some(Outcome::Refused(Refused {
            decided: d,
            fixes: Vec::new(),
        }))
    }

    /// An ask that nobody will answer, as a refusal (for surfaces that cannot hand an
    /// ask back).
    pub fn refuse_unanswered(&self, mut d: Decided) -> Refused {
        no_human(&mut d.verdict, "approval needed and no human can be asked");
        let fixes = fix::fixes(&self.policy, &d, self.options.surface);
        Refused { decided: d, fixes }
    }

    pub(crate) fn refuse(&self, decided: Decided) -> Outcome {
        let fixes = fix::fixes(&self.policy, &decided, self.options.surface);
        Outcome::Refused(Refused { decided, fixes })
    }

    /// What the human (or a pending record) is shown for the call.
    pub(crate) fn ask_context(&self, d: &Decided) -> AskContext {
        let suggestions = self.policy.suggestions(&d.ops, &d.verdict);
        AskContext {
            fingerprint: d.fingerprint.clone(),
            session: d.request.session.clone(),
            tool: d.request.tool.clone(),
            tool_kind: format!("{:?}", d.request.kind()),
            target: targets(&d.verdict),
            consequence: consequence(&d.verdict),
            reason: d.verdict.reason.clone(),
            suggestion: suggestions.first().map(|o| o.rule.clone()),
            suggestions,
            request: redact(&d.request.canonical_json()),
            verdict: self.recorded_verdict(&d.verdict, &d.runs),
            operation_id: d.request.operation_id.clone(),
            editable_input: self.options.edits.then(|| d.request.input.clone()),
        }
    }
}

/// How a call came to be what is judged: presets set over the model's input, or a
/// human's edit (and how many edits so far).
#[derive(Debug, Clone, Default)]
pub(crate) struct How {
    pub(crate) presets: Vec<String>,
    pub(crate) runs: Runs,
    pub(crate) edited: bool,
    pub(crate) edits: u8,
}

/// Every operation a known read-only one, and allowed (what `untrusted` runs unasked)?
fn reads_only(v: &Verdict) -> bool {
    v.findings
        .iter()
        .all(|f| f.op.reads_only() && f.decision == Decision::Allow)
}

/// Turn an ask into a deny because nobody can answer it.
fn no_human(v: &mut Verdict, why: &str) {
    v.decision = Decision::Deny;
    v.reason = format!("{} (denied: {why})", v.reason);
    v.source = Source::new(Step::NoHuman, why.to_owned());
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
    use cordon_policy::OpKind;
    let asked: Vec<OpKind> = v
        .findings
        .iter()
        .filter(|f| f.decision == Decision::Ask)
        .map(|f| f.op)
        .collect();
    let has = |o: OpKind| asked.contains(&o);
    if has(OpKind::Opaque) {
        "It runs code whose effects cordon cannot see in advance.".into()
    } else if has(OpKind::Write) || has(OpKind::Delete) {
        "It changes files on disk.".into()
    } else if has(OpKind::Network) || has(OpKind::Search) {
        "It sends data to a network destination.".into()
    } else if has(OpKind::Exec) {
        "It runs a program that may change things.".into()
    } else if has(OpKind::Mcp) {
        "It calls a tool on an MCP server.".into()
    } else {
        "It reads data outside what is allowed by default.".into()
    }
}
