//! cordon-hook: cordon's gate in front of every tool call of Claude Code, Codex and
//! Gemini CLI, through the command hooks each harness runs.
//!
//! A harness spawns `cordon hook HARNESS` for each tool event and writes a JSON payload
//! on its stdin. This crate reads that payload into a [`cordon_policy::Request`]
//! ([`payload::parse`]: tool name and input, cwd, session, agent, and the harness's
//! tool-call id as the operation id), narrows the policy by the harness's permission
//! mode ([`narrow`]: `plan` and `dontAsk` narrow, nothing widens), takes the call through
//! [`cordon_gate::Gate::decide`] and [`cordon_gate::Gate::conclude`] (one audit record),
//! and answers in the harness's own terms ([`answer`] → [`Reply`]):
//!
//! | cordon      | Claude Code                    | Codex                      | Gemini CLI                 |
//! |-------------|--------------------------------|----------------------------|----------------------------|
//! | allow       | `permissionDecision: "allow"`  | silence (its own approval) | `decision: "allow"`        |
//! | contained   | `allow` + `updatedInput`       | (no rewrite in Codex)      | `allow` + `tool_input`     |
//! | ask         | `permissionDecision: "ask"`    | blocked, pending approval  | `decision: "ask"`          |
//! | deny, error | exit 2, reason on stderr       | exit 2, reason on stderr   | exit 2, reason on stderr   |
//!
//! Post-tool events append a `phase: result` record tied to the decision by operation id
//! ([`cordon_gate::Gate::record_result`]). With containment on, a shell call that cordon
//! allows only because it will run contained is rewritten ([`rewrite`]) into
//! `cordon exec … --bash --shell=TEXT`, carrying the same workspace, session, operation id
//! and config, so the harness's own shell starts the sandbox.
//!
//! The workspace is pinned by the user, never read from a payload ([`workspace`]);
//! [`setup`] writes cordon's entries into each harness's settings and [`doctor`] checks
//! that the harness will run them.
//!
//! This crate never turns an error into a permission: every failure (malformed or
//! oversize payload, unknown event, missing field, a policy that does not load, an audit
//! log that cannot be written) is a [`Reply::block`] with that harness's blocking exit
//! code and one sentence on stderr. It decides nothing itself (the policy does) and runs
//! nothing itself (`cordon exec` does).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod doctor;
pub mod payload;
mod ran;
pub mod rewrite;
pub mod setup;
pub mod workspace;

pub use payload::{Call, Event, HarnessMode, PayloadError, parse};
pub use rewrite::{ExecLine, RewriteError};
pub use workspace::WorkspaceError;

use cordon_gate::{Absent, Containment, Gate, Human, Outcome};
use cordon_policy::{Action, FileFacts, Mode, Policy};
use serde_json::{Value, json};

/// The exit code every supported harness reads as "block this call" (Claude Code, Codex
/// and Gemini CLI all use 2; any other non-zero code lets the call proceed in at least
/// one of them).
pub const BLOCK_EXIT: u8 = 2;

/// How long a hook's judgement may take before the call is blocked: under the shortest
/// default hook timeout of the harnesses cordon serves (Gemini CLI's, 60 s), since a
/// harness that times a hook out lets the call proceed, and past any judgement that works
/// (milliseconds; seconds for the largest commands).
pub const JUDGE_DEADLINE: std::time::Duration = std::time::Duration::from_secs(45);

/// The harnesses cordon answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Harness {
    /// Anthropic's Claude Code.
    ClaudeCode,
    /// OpenAI's Codex CLI.
    Codex,
    /// Google's Gemini CLI.
    Gemini,
}

impl Harness {
    /// Every harness cordon answers.
    pub const ALL: [Harness; 3] = [Harness::ClaudeCode, Harness::Codex, Harness::Gemini];

    /// The harness of a command-line name ([`Harness::name`]).
    pub fn named(name: &str) -> Option<Harness> {
        Harness::ALL.into_iter().find(|h| h.name() == name)
    }

    /// The name used on the command line (`cordon hook NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Harness::ClaudeCode => "claude-code",
            Harness::Codex => "codex",
            Harness::Gemini => "gemini",
        }
    }

    /// The audit log's surface name of this harness's hook.
    pub fn surface(self) -> cordon_gate::Surface {
        match self {
            Harness::ClaudeCode => cordon_gate::Surface::HookClaudeCode,
            Harness::Codex => cordon_gate::Surface::HookCodex,
            Harness::Gemini => cordon_gate::Surface::HookGemini,
        }
    }

    /// The events cordon answers for this harness, as the harness names them.
    pub fn events(self) -> &'static [&'static str] {
        match self {
            Harness::Gemini => &["BeforeTool", "AfterTool"],
            _ => &["PreToolUse", "PermissionRequest", "PostToolUse"],
        }
    }

    /// Whether the harness applies a rewritten tool input from a pre-tool hook (Codex
    /// refuses `updatedInput` as unsupported and runs the original call).
    pub fn can_rewrite(self) -> bool {
        !matches!(self, Harness::Codex)
    }

    /// Whether the harness takes an "ask" back from a pre-tool hook (Codex refuses it
    /// as unsupported and runs the call).
    pub fn can_ask(self) -> bool {
        !matches!(self, Harness::Codex)
    }
}

/// What the hook process prints and how it exits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The exit status.
    pub status: u8,
    /// Printed on stdout (JSON or nothing).
    pub stdout: String,
    /// Printed on stderr (one sentence or nothing).
    pub stderr: String,
}

impl Reply {
    /// Block the call: exit 2 and `why` on stderr, which every supported harness shows
    /// as the reason (to the model, and to the user where it displays hook errors).
    pub fn block(why: impl AsRef<str>) -> Reply {
        let why = cordon_policy::terminal::sanitize_for_terminal(why.as_ref());
        Reply {
            status: BLOCK_EXIT,
            stdout: String::new(),
            stderr: format!("cordon: {why}\n"),
        }
    }

    fn quiet() -> Reply {
        Reply {
            status: 0,
            stdout: String::new(),
            stderr: String::new(),
        }
    }

    fn json(v: Value) -> Reply {
        Reply {
            status: 0,
            stdout: format!("{v}\n"),
            stderr: String::new(),
        }
    }

    /// The reply as bytes, to hand from the process that judged to the one that answers:
    /// the status, the length of stdout (4 bytes, little-endian), stdout, stderr.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(5 + self.stdout.len() + self.stderr.len());
        out.push(self.status);
        out.extend_from_slice(
            &u32::try_from(self.stdout.len())
                .unwrap_or(u32::MAX)
                .to_le_bytes(),
        );
        out.extend_from_slice(self.stdout.as_bytes());
        out.extend_from_slice(self.stderr.as_bytes());
        out
    }

    /// A reply from [`Reply::encode`]'s bytes; anything else (cut short, not UTF-8) is
    /// `None`, which the caller answers with a block.
    pub fn decode(bytes: &[u8]) -> Option<Reply> {
        let (&status, rest) = bytes.split_first()?;
        let (len, rest) = rest.split_first_chunk::<4>()?;
        let len = usize::try_from(u32::from_le_bytes(*len)).ok()?;
        if len > rest.len() {
            return None;
        }
        let (stdout, stderr) = rest.split_at(len);
        Some(Reply {
            status,
            stdout: String::from_utf8(stdout.to_vec()).ok()?,
            stderr: String::from_utf8(stderr.to_vec()).ok()?,
        })
    }
}

/// Narrow `policy` by the harness's permission mode. `plan` and `dontAsk` narrow it;
/// every other mode (`default`, `acceptEdits`, `bypassPermissions`, or one cordon does
/// not know) leaves cordon's configured mode as it is: a harness never widens it, except
/// `acceptEdits` where the user opted in (`[hook] accept_edits = true`, see
/// [`Policy::accepting_harness_edits`]).
pub fn narrow(policy: Policy, mode: Option<&HarnessMode>) -> Result<Policy, NarrowError> {
    let configured = policy.mode();
    let (target, deny_asks) = match mode {
        Some(HarnessMode::Plan) => (Some(Mode::Plan), configured == Mode::DontAsk),
        Some(HarnessMode::DontAsk) => (Some(Mode::DontAsk), true),
        Some(HarnessMode::AcceptEdits) => {
            return Ok(policy.accepting_harness_edits().unwrap_or(policy));
        }
        _ => return Ok(policy),
    };
    let mut narrowed = policy
        .attenuate(&cordon_policy::Attenuation {
            mode: target,
            ..Default::default()
        })
        .map_err(NarrowError::ModeNotApplied)?;
    if deny_asks {
        // `plan` replaced `dont-ask`: asks still become denies.
        narrowed.set_no_human(true);
    }
    Ok(narrowed)
}

/// Why the harness's permission mode could not narrow the policy ([`narrow`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NarrowError {
    /// The policy refused the narrower mode.
    ModeNotApplied(cordon_policy::AttenuationError),
}

impl std::fmt::Display for NarrowError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NarrowError::ModeNotApplied(e) => {
                write!(f, "the harness's permission mode cannot be applied: {e}")
            }
        }
    }
}

impl std::error::Error for NarrowError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            NarrowError::ModeNotApplied(e) => Some(e),
        }
    }
}

/// How [`answer`] treats shell calls.
#[derive(Debug, Clone, Default)]
pub struct Containing {
    /// Rewrite shell calls allowed under containment to run in `cordon exec` (only for
    /// harnesses that [`Harness::can_rewrite`]).
    pub exec: Option<ExecLine>,
}

/// Answer one hook call through `gate`.
pub fn answer(gate: &Gate, call: &Call, fs: &dyn FileFacts, containing: &Containing) -> Reply {
    match call.event {
        Event::PostTool => post_tool(gate, call, fs, containing),
        Event::PermissionRequest => permission_request(gate, call, fs),
        Event::PreTool => pre_tool(gate, call, fs, containing),
    }
}

fn post_tool(gate: &Gate, call: &Call, fs: &dyn FileFacts, containing: &Containing) -> Reply {
    let result = call.result.clone().unwrap_or_default();
    if let Err(e) = gate.record_result(&as_the_agent_wrote_it(call, containing), &result) {
        return Reply::block(format!(
            "the result of {} was not recorded: {e}; fix the audit log or pass --no-audit",
            call.request.tool
        ));
    }
    // What ran is what the session remembers, whoever approved it (the harness's own
    // human included): the file it wrote, the trifecta legs it added. A contained run
    // this hook made recorded what it landed itself.
    if let (Some(line), Some(session), Ok(Action::Shell { command, .. })) = (
        &containing.exec,
        call.request.session.as_deref(),
        call.request.action(),
    ) && ran::recorded_by_exec(line, gate.policy().workspace(), session, &command)
    {
        return Reply::quiet();
    }
    match gate.record_session_call(&call.request, fs) {
        Ok(()) => Reply::quiet(),
        Err(e) => Reply::block(format!(
            "what {} did was not recorded in its session: {e}; later calls of the session cannot be checked against it",
            call.request.tool
        )),
    }
}

/// The call as the agent wrote it: a harness reports a contained call with the
/// rewritten `cordon exec …` line as its input, and the result record keeps the agent's
/// command ([`rewrite::original`]; only a line this hook's own rewrite could have made).
fn as_the_agent_wrote_it(call: &Call, containing: &Containing) -> cordon_policy::Request {
    let mut request = call.request.clone();
    if let (Some(line), Some(Value::String(command))) =
        (&containing.exec, request.input.get("command"))
        && let Some(text) = rewrite::original(line, command)
    {
        request.input.insert("command".into(), Value::String(text));
    }
    request
}

/// The human a pre-tool hook of `harness` hands asks to.
fn human<'a>(harness: Harness) -> Human<'a> {
    if harness.can_ask() {
        Human::caller()
    } else {
        // Codex cannot be asked from a hook: leave a pending approval for
        // `cordon approvals`, whose lease lets the call through when it is retried.
        Human {
            prompter: None,
            absent: Absent::Pending,
        }
    }
}

/// Decide and record (one audit record), reporting an audit failure as a refusal.
fn decide(gate: &Gate, call: &Call, fs: &dyn FileFacts, c: Containment, h: Human<'_>) -> Outcome {
    let outcome = gate.decide(&call.request, fs, c, h, false);
    gate.conclude(outcome).0
}

fn pre_tool(gate: &Gate, call: &Call, fs: &dyn FileFacts, containing: &Containing) -> Reply {
    let shell = match call.request.action() {
        Ok(Action::Shell { command, .. }) => Some(command),
        _ => None,
    };
    if let (Some(text), Some(line)) = (&shell, &containing.exec)
        && call.harness.can_rewrite()
    {
        // Judge the contained run first; if containment does not make it an allow, the
        // call is judged as the harness would run it (and an ask is about that run).
        let contained = gate.decide(
            &call.request,
            fs,
            Containment::Full,
            human(call.harness),
            false,
        );
        if matches!(contained, Outcome::Permitted(_)) {
            let outcome = gate.conclude(contained).0;
            return match outcome {
                Outcome::Permitted(p) => {
                    let reason = p.decided.verdict.reason.clone();
                    match rewrite::contained_command(
                        line,
                        gate.policy().workspace(),
                        &call.request,
                        text,
                    ) {
                        Ok(command) => allow(call, &reason, Some(command)),
                        Err(e) => Reply::block(format!("the contained command was not made: {e}")),
                    }
                }
                other => refuse(&other),
            };
        }
    }
    match decide(gate, call, fs, Containment::None, human(call.harness)) {
        Outcome::Permitted(p) => allow(call, &p.decided.verdict.reason, None),
        o @ (Outcome::Ask(_) | Outcome::Trial(_)) if call.harness.can_ask() => {
            ask(call, &o.decided().verdict.reason)
        }
        other => refuse(&other),
    }
}

fn permission_request(gate: &Gate, call: &Call, fs: &dyn FileFacts) -> Reply {
    // The harness is about to ask its human. cordon never answers "allow" here (that
    // would answer the harness's own ask); it only refuses what it denies.
    match decide(gate, call, fs, Containment::None, Human::caller()) {
        o @ (Outcome::Refused(_) | Outcome::Pending(_)) => Reply::json(json!({
            "hookSpecificOutput": {
                "hookEventName": "PermissionRequest",
                "decision": {"behavior": "deny", "message": refusal_text(&o)},
            }
        })),
        _ => Reply::quiet(),
    }
}

/// The tool input with the shell text replaced by the contained command.
fn rewritten_input(call: &Call, command: String) -> Value {
    let mut input = call.request.input.clone();
    input.insert("command".into(), Value::String(command));
    Value::Object(input)
}

fn allow(call: &Call, reason: &str, rewrite: Option<String>) -> Reply {
    let reason = format!("cordon: {reason}");
    match call.harness {
        Harness::ClaudeCode => {
            let mut out = json!({
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "permissionDecisionReason": reason,
            });
            if let Some(c) = rewrite {
                out["updatedInput"] = rewritten_input(call, c);
            }
            Reply::json(json!({ "hookSpecificOutput": out }))
        }
        Harness::Gemini => {
            let mut out = json!({"decision": "allow", "reason": reason});
            if let Some(c) = rewrite {
                out["hookSpecificOutput"] = json!({"tool_input": rewritten_input(call, c)});
            }
            Reply::json(out)
        }
        // Codex accepts no allow from a hook: silence leaves its own approval in force.
        Harness::Codex => Reply::quiet(),
    }
}

fn ask(call: &Call, reason: &str) -> Reply {
    let reason = format!("cordon asks: {reason}");
    match call.harness {
        Harness::Gemini => Reply::json(json!({
            "decision": "ask",
            "reason": reason,
            "systemMessage": reason,
        })),
        _ => Reply::json(json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "ask",
                "permissionDecisionReason": reason,
            }
        })),
    }
}

fn refuse(outcome: &Outcome) -> Reply {
    Reply::block(refusal_text(outcome))
}

/// One sentence for a call that may not run, with what would let it.
fn refusal_text(outcome: &Outcome) -> String {
    let d = outcome.decided();
    let tool = &d.request.tool;
    match outcome {
        Outcome::Pending(_) => {
            let id = d.pending.map_or_else(|| "?".to_string(), |p| p.to_string());
            format!(
                "{tool} needs approval: {} (pending approval {id}: answer it with `cordon approvals approve {id}`, then retry)",
                d.verdict.reason
            )
        }
        Outcome::Refused(r) => match r.fixes.first() {
            // Each fix is a sentence of its own: the rule to add, or that nothing can.
            Some(fix) => format!("denied {tool}: {} ({fix})", d.verdict.reason),
            None => format!("denied {tool}: {}", d.verdict.reason),
        },
        _ => format!(
            "denied {tool}: {} (approval needed and this harness cannot ask from a hook)",
            d.verdict.reason
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mode_that_cannot_narrow_says_so_in_one_sentence() {
        let e = NarrowError::ModeNotApplied(cordon_policy::AttenuationError::Mode(Mode::Bypass));
        assert_eq!(
            e.to_string(),
            "the harness's permission mode cannot be applied: an attenuation cannot switch to \
             mode Bypass: only plan or dont-ask narrow a policy"
        );
    }
}
