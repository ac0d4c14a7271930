//! The approval flow: what happens when the policy says "ask".
//!
//! Order (tested): (1) a valid lease for this exact fingerprint — once, this session, or
//! always; (2) a human, through a [`Prompter`], choosing allow once / allow for this
//! session / always allow (the exact rule to be saved is shown) / deny; (3) with no
//! human reachable, deny or record a pending approval, as the caller chose.
//!
//! Remembered rules are matched by the policy (they are allow rules once loaded), not
//! here: the store cannot evaluate rules, it only keeps them.

use std::time::Duration;

pub use cordon_policy::suggest::RuleOption;

use crate::error::StoreError;
use crate::store::{LeaseId, LeaseUse, PendingId, Scope, Store};

/// Everything the human must see to answer, plus what the store needs to remember it.
#[derive(Debug, Clone, Default)]
pub struct AskContext {
    /// Opaque fingerprint of the exact normalized invocation (computed by the policy).
    pub fingerprint: String,
    /// Session that asks, if any; "allow for this session" is offered only with one.
    pub session: Option<String>,
    /// The harness's id of the call, if any: a pending record and the lease approving it
    /// are bound to it, and a lease bound to another id does not match.
    pub operation_id: Option<String>,
    /// Tool name as the agent called it (`Bash`, `read_file`, `mcp__github__create_issue`).
    pub tool: String,
    /// Tool kind the remembered rule applies to (`bash`, `read`, `write`, `network`, `mcp`).
    pub tool_kind: String,
    /// The normalized target: resolved path, peeled command, normalized origin.
    pub target: String,
    /// What happens if allowed, in one sentence.
    pub consequence: String,
    /// Why the policy asks, in one sentence.
    pub reason: String,
    /// The narrow rule "always allow" would save (the exact call); without one, "always
    /// allow" is not offered.
    pub suggestion: Option<String>,
    /// Every rule "always allow" may save, the exact one (`suggestion`) first, then the
    /// generalisations the human may pick instead, each with an example of what else it
    /// allows. Empty means `suggestion` alone.
    pub suggestions: Vec<RuleOption>,
    /// The normalized request, recorded with a pending approval.
    pub request: serde_json::Value,
    /// The verdict that said "ask", recorded with a pending approval.
    pub verdict: serde_json::Value,
    /// The call's own input (not redacted) when the surface can take an edited input
    /// back; with it, "edit" is offered.
    pub editable_input: Option<serde_json::Map<String, serde_json::Value>>,
}

impl AskContext {
    /// The rules "always allow" may save, the default first; empty when none.
    pub fn rule_options(&self) -> Vec<RuleOption> {
        let suggestion = self.suggestion.as_deref().filter(|s| !s.trim().is_empty());
        if !self.suggestions.is_empty() && suggestion.is_none_or(|s| self.suggestions[0].rule == s)
        {
            return self
                .suggestions
                .iter()
                .filter(|o| !o.rule.trim().is_empty())
                .cloned()
                .collect();
        }
        suggestion.map(RuleOption::exact).into_iter().collect()
    }
}

/// An answer a human can give. Not `non_exhaustive`: every prompter must show every
/// choice, so a new one is a compile error where it is not handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// Allow this one call.
    AllowOnce,
    /// Allow this exact call for the rest of the session.
    AllowSession,
    /// Save the suggested rule (the exact call) and allow.
    AlwaysAllow,
    /// Save the offered rule at this index of [`AskContext::rule_options`] (1 or more: a
    /// generalisation the human picked) and allow.
    AlwaysAllowOption(usize),
    /// Replace the input; the edited call is judged again (answered with
    /// [`PromptOutcome::Edited`]).
    Edit,
    /// Refuse.
    Deny,
}

impl Choice {
    /// The answer in a word, as the audit record's `answer` and an MCP client's
    /// elicitation name it: `allow-once`, `allow-session`, `always-allow` (whichever rule
    /// it saves), `edit` or `deny`.
    pub fn word(self) -> &'static str {
        match self {
            Choice::AllowOnce => "allow-once",
            Choice::AllowSession => "allow-session",
            Choice::AlwaysAllow | Choice::AlwaysAllowOption(_) => "always-allow",
            Choice::Edit => "edit",
            Choice::Deny => "deny",
        }
    }
}

/// What the human is asked, and which answers are on offer.
#[derive(Debug, Clone)]
pub struct Question<'a> {
    /// The request being asked about.
    pub context: &'a AskContext,
    /// The answers offered, in display order; `Deny` is always among them.
    pub choices: Vec<Choice>,
}

/// What a [`Prompter`] came back with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptOutcome {
    /// A human answered.
    Answered(Choice),
    /// A human replaced the input (only when [`Choice::Edit`] was offered).
    Edited(serde_json::Map<String, serde_json::Value>),
    /// No human can be asked (no terminal, non-interactive run).
    NoHuman,
}

/// Something that can put a [`Question`] to a human.
pub trait Prompter {
    /// Ask. An error (the terminal went away mid-question) is treated as a denial.
    fn ask(&mut self, question: &Question<'_>) -> std::io::Result<PromptOutcome>;
}

/// A prompter for runs where nobody is there to answer.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoPrompter;

impl Prompter for NoPrompter {
    fn ask(&mut self, _question: &Question<'_>) -> std::io::Result<PromptOutcome> {
        Ok(PromptOutcome::NoHuman)
    }
}

/// What to do when no human can be asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoHuman {
    /// Deny.
    Deny,
    /// Record a pending approval, to be answered with `cordon approvals`.
    Pending,
}

/// Lifetimes of the leases the flow creates.
#[derive(Debug, Clone)]
pub struct FlowOptions {
    /// Life of an "allow for this session" lease.
    pub session_ttl: Option<Duration>,
    /// Life of the exact-fingerprint lease recorded with "always allow".
    pub always_ttl: Option<Duration>,
}

impl Default for FlowOptions {
    fn default() -> Self {
        FlowOptions {
            session_ttl: Some(Duration::from_secs(12 * 3600)),
            always_ttl: None,
        }
    }
}

/// How a [`Grant`] came about.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GrantSource {
    /// An earlier approval (lease) matched this exact invocation.
    Lease(LeaseUse),
    /// A human answered now.
    Human(Choice),
    /// A human approved a pending call with an edited input, and this is that edit.
    Edit,
}

/// Proof that the approval flow allowed this call. Only [`resolve_ask`] makes one, so
/// code that requires a `Grant` cannot be reached without going through the flow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    fingerprint: String,
    lease: LeaseId,
    scope: Scope,
    source: GrantSource,
    rule: Option<String>,
}

impl Grant {
    /// The fingerprint this grant is bound to.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }
    /// The lease that records it.
    pub fn lease(&self) -> LeaseId {
        self.lease
    }
    /// How far it reaches.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }
    /// Where it came from.
    pub fn source(&self) -> &GrantSource {
        &self.source
    }
    /// The rule saved by "always allow", if that was the answer.
    pub fn saved_rule(&self) -> Option<&str> {
        self.rule.as_deref()
    }
    /// The human's answer in a word, for the audit log.
    pub fn answer(&self) -> &'static str {
        match &self.source {
            GrantSource::Lease(_) => "lease",
            GrantSource::Human(c) => c.word(),
            GrantSource::Edit => "approved-edit",
        }
    }
}

impl cordon_policy::ApprovalProof for Grant {
    fn answer(&self) -> &'static str {
        Grant::answer(self)
    }
}

/// Why the flow refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// The human chose deny.
    Human,
    /// The human gave an answer that was not on offer.
    InvalidChoice,
    /// Nobody could be asked and the caller chose to deny in that case.
    NoHuman,
    /// The prompt failed (terminal closed, read error).
    PromptFailed(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Human => f.write_str("denied by the human at the terminal"),
            Refusal::InvalidChoice => {
                f.write_str("denied: the answer was not one of the choices offered")
            }
            Refusal::NoHuman => f.write_str("denied: approval needed and no human can be asked"),
            Refusal::PromptFailed(why) => write!(f, "denied: the prompt failed ({why})"),
        }
    }
}

/// The outcome of the flow.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub enum Resolution {
    /// Allowed, with proof.
    Allow(Grant),
    /// Refused.
    Deny(Refusal),
    /// Recorded for a human to answer later (`cordon approvals`).
    Pending(PendingId),
    /// The human replaced the input: nothing is granted yet; the caller must judge the
    /// edited call again.
    Edited(serde_json::Map<String, serde_json::Value>),
}

/// Only the first step of the flow: a valid lease for this exact fingerprint, consumed,
/// as a [`Grant`]; `None` when there is none (the caller's own human may then be asked).
pub fn resolve_lease(store: &Store, ctx: &AskContext) -> Result<Option<Grant>, StoreError> {
    let session = ctx.session.as_deref().filter(|s| !s.is_empty());
    let op = ctx.operation_id.as_deref();
    Ok(store
        .consume_for(&ctx.fingerprint, session, op)?
        .map(|used| Grant {
            fingerprint: ctx.fingerprint.clone(),
            lease: used.lease,
            scope: used.scope.clone(),
            source: GrantSource::Lease(used),
            rule: None,
        }))
}

/// Spend an approved edit for the edited call with `fingerprint`, as a [`Grant`]; `None`
/// when the edit was approved for another call (the policy changed since) or is spent.
pub fn resolve_edited(
    store: &Store,
    lease: &crate::operations::EditedLease,
    fingerprint: &str,
) -> Result<Option<Grant>, StoreError> {
    if lease.fingerprint != fingerprint || !store.spend_once(lease.lease)? {
        return Ok(None);
    }
    Ok(Some(Grant {
        fingerprint: fingerprint.to_string(),
        lease: lease.lease,
        scope: Scope::Once,
        source: GrantSource::Edit,
        rule: None,
    }))
}

/// [`resolve_ask_with`] with default lease lifetimes.
pub fn resolve_ask(
    store: &Store,
    ctx: &AskContext,
    prompter: &mut dyn Prompter,
    mode: NoHuman,
) -> Result<Resolution, StoreError> {
    resolve_ask_with(store, ctx, prompter, mode, &FlowOptions::default())
}

/// Run the approval flow for one "ask". A store error is returned as is and means
/// "nothing was granted": the caller must deny.
pub fn resolve_ask_with(
    store: &Store,
    ctx: &AskContext,
    prompter: &mut dyn Prompter,
    mode: NoHuman,
    options: &FlowOptions,
) -> Result<Resolution, StoreError> {
    let session = ctx.session.as_deref().filter(|s| !s.is_empty());
    if let Some(grant) = resolve_lease(store, ctx)? {
        return Ok(Resolution::Allow(grant));
    }

    let offered = ctx.rule_options();
    let mut choices = vec![Choice::AllowOnce];
    if session.is_some() {
        choices.push(Choice::AllowSession);
    }
    if !offered.is_empty() {
        choices.push(Choice::AlwaysAllow);
    }
    choices.extend((1..offered.len()).map(Choice::AlwaysAllowOption));
    if ctx.editable_input.is_some() {
        choices.push(Choice::Edit);
    }
    choices.push(Choice::Deny);
    let question = Question {
        context: ctx,
        choices,
    };
    let choice = match prompter.ask(&question) {
        Ok(PromptOutcome::Answered(c)) => c,
        Ok(PromptOutcome::Edited(input)) => {
            return Ok(if question.choices.contains(&Choice::Edit) {
                Resolution::Edited(input)
            } else {
                Resolution::Deny(Refusal::InvalidChoice)
            });
        }
        Ok(PromptOutcome::NoHuman) => {
            return match mode {
                NoHuman::Deny => Ok(Resolution::Deny(Refusal::NoHuman)),
                NoHuman::Pending => store
                    .add_pending_offering(
                        &ctx.fingerprint,
                        session,
                        ctx.operation_id.as_deref(),
                        &ctx.request,
                        &ctx.verdict,
                        &offered,
                    )
                    .map(Resolution::Pending),
            };
        }
        Err(e) => return Ok(Resolution::Deny(Refusal::PromptFailed(e.to_string()))),
    };
    if !question.choices.contains(&choice) {
        return Ok(Resolution::Deny(Refusal::InvalidChoice));
    }

    let grant = |lease, scope, rule| {
        Resolution::Allow(Grant {
            fingerprint: ctx.fingerprint.clone(),
            lease,
            scope,
            source: GrantSource::Human(choice),
            rule,
        })
    };
    let always = match choice {
        Choice::AlwaysAllow => offered.first(),
        Choice::AlwaysAllowOption(i) => offered.get(i),
        _ => None,
    }
    .map(|o| o.rule.as_str());
    match (choice, session, always) {
        (Choice::AllowOnce, _, _) => {
            let lease = store.grant_spent(&ctx.fingerprint, "allowed once at the terminal")?;
            Ok(grant(lease, Scope::Once, None))
        }
        (Choice::AllowSession, Some(s), _) => {
            let scope = Scope::Session(s.to_string());
            let lease = store.grant(
                &ctx.fingerprint,
                scope.clone(),
                options.session_ttl,
                "allowed for the session at the terminal",
            )?;
            Ok(grant(lease, scope, None))
        }
        (Choice::AlwaysAllow | Choice::AlwaysAllowOption(_), _, Some(rule)) => {
            store.remember_rule(rule, &ctx.tool_kind)?;
            let note = format!("always allowed at the terminal; saved rule {rule}");
            let lease = store.grant(&ctx.fingerprint, Scope::Always, options.always_ttl, &note)?;
            Ok(grant(lease, Scope::Always, Some(rule.to_string())))
        }
        (Choice::Deny, _, _) => Ok(Resolution::Deny(Refusal::Human)),
        _ => Ok(Resolution::Deny(Refusal::InvalidChoice)),
    }
}

/// The surface through which a human answered a pending approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnsweredBy {
    /// `cordon approvals …` in a terminal.
    Cli,
    /// A client of `cordon serve`.
    Service,
    /// The local console (`cordon ui`).
    Console,
}

impl AnsweredBy {
    /// The name in the audit record's `answered_by`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Cli => "cli",
            Self::Service => "serve",
            Self::Console => "console",
        }
    }
}

/// The answer a human gave to a pending approval, as the audit record names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerKind {
    /// Approved once, in the session it was asked in.
    Approve,
    /// Approved once, in any session or none.
    ApproveAnySession,
    /// Approved for the rest of the session.
    ApproveForSession,
    /// Approved once with an edited input.
    ApproveEdited,
    /// Approved and a rule remembered.
    AlwaysAllow,
    /// Refused.
    Deny,
}

impl AnswerKind {
    /// The name in the audit record's `answer`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Approve => "approve",
            Self::ApproveAnySession => "approve-any-session",
            Self::ApproveForSession => "approve-for-session",
            Self::ApproveEdited => "approve-edited",
            Self::AlwaysAllow => "always-allow",
            Self::Deny => "deny",
        }
    }
}

/// The audit record of a human's answer to a pending approval, built once for every
/// surface so that the records of the CLI, the service and the console carry the same
/// fields: `pending`, `answer`, `answered_by`, `lease`, `rule`, `edited_verdict`,
/// `session`, `tool`, `input` (redacted) and `fingerprint`; a field that does not apply
/// is null.
#[derive(Debug, Clone)]
pub struct AnsweredRecord {
    value: serde_json::Value,
}

/// Start the record of answer `answer` to pending approval `p`, given through `by`, for
/// the call `request` (the pending call's own, or the edited one).
pub fn answered_record(
    p: &crate::store::Pending,
    answer: AnswerKind,
    by: AnsweredBy,
    request: &serde_json::Value,
) -> AnsweredRecord {
    AnsweredRecord {
        value: serde_json::json!({
            "event": "approval-answered",
            "pending": p.id.0,
            "answer": answer.as_str(),
            "answered_by": by.as_str(),
            "lease": null,
            "rule": null,
            "edited_verdict": null,
            "session": p.session,
            "tool": request["tool"],
            "input": crate::redact(&request["input"]),
            "fingerprint": p.fingerprint,
        }),
    }
}

impl AnsweredRecord {
    /// The lease the answer made.
    #[must_use]
    pub fn lease(mut self, lease: Option<LeaseId>) -> Self {
        self.value["lease"] = serde_json::json!(lease.map(|l| l.0));
        self
    }

    /// The rule an always-allow remembered.
    #[must_use]
    pub fn rule(mut self, rule: &str) -> Self {
        self.value["rule"] = serde_json::json!(rule);
        self
    }

    /// The decision the edited call was given.
    #[must_use]
    pub fn edited_verdict(mut self, decision: Option<&str>) -> Self {
        self.value["edited_verdict"] = serde_json::json!(decision);
        self
    }

    /// The record, ready to append.
    pub fn into_value(self) -> serde_json::Value {
        self.value
    }
}
