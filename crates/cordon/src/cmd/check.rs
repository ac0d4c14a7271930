//! `cordon check`: judge one tool call through the gate and print the verdict as JSON.

use crate::exit::{CHECK_CODES, Code, Exit};
use crate::setup::{ApprovalArgs, PolicyArgs, load};
use cordon_gate::TerminalPrompter;
use cordon_gate::{Absent, Containment, Human, Outcome};
use cordon_policy::terminal::sanitize_for_terminal as clean;
use cordon_policy::{RealFs, Request};
use cordon_store::Prompter;
use std::io::Read;

/// Judge one tool call and print the verdict as JSON.
#[derive(clap::Args)]
#[command(after_help = CHECK_CODES)]
pub struct CheckArgs {
    #[command(flatten)]
    policy: PolicyArgs,
    #[command(flatten)]
    approvals: ApprovalArgs,
    /// Judge the call as one the caller runs inside `cordon exec` at the full tier: what
    /// containment enforces is decided by the `[contained]` table.
    #[arg(long)]
    contained: bool,
    /// Print the evaluation trail (and the parsed shell structure) on stderr.
    #[arg(long)]
    explain: bool,
    /// The agent session the call belongs to (as the request's `session`): what the
    /// session already did is consulted and what a permitted call does is recorded.
    #[arg(long, value_name = "ID")]
    session: Option<String>,
    /// The request JSON; `-` or nothing reads it from stdin.
    request: Option<String>,
}

/// Run `cordon check`.
pub fn run(args: CheckArgs) -> anyhow::Result<u8> {
    let text = match args.request.as_deref() {
        None | Some("-") => read_stdin()?,
        Some(t) => t.to_string(),
    };
    let mut req = Request::from_json(&text)
        .map_err(|e| Exit::new(Code::Invalid, format!("invalid request: {e}")))?;
    if let Some(s) = args.session {
        match &req.session {
            Some(named) if *named != s => {
                return Err(Exit::new(
                    Code::Invalid,
                    format!(
                        "the request names session `{named}` and --session says `{s}`; give one"
                    ),
                )
                .into());
            }
            _ => req.session = Some(s),
        }
    }
    let mut opts = args.policy.options()?;
    let mut remembered = args.approvals.remembered(&opts)?;
    opts.remembered_rules = std::mem::take(&mut remembered.rules);
    let reached = remembered.reached();
    let gate = remembered.gate(
        args.approvals
            .gate_with_edits(load(&opts, Code::Invalid)?, cordon_gate::Surface::Check),
    );
    let mut terminal = args
        .approvals
        .interactive
        .then(TerminalPrompter::from_stdio)
        .flatten();
    let human = Human {
        prompter: terminal.as_mut().map(|t| t as &mut dyn Prompter),
        absent: match (args.approvals.pending, args.approvals.interactive) {
            (true, _) => Absent::Pending,
            (false, true) => Absent::Deny,
            (false, false) => Absent::Caller,
        },
    };
    let containment = if args.contained {
        Containment::Full
    } else {
        Containment::None
    };
    let outcome = gate.decide(&req, &RealFs, containment, human, args.explain);
    let (outcome, audit_error) = gate.conclude(outcome);
    if let Some(e) = audit_error {
        eprintln!("cordon: {}", clean(&e.to_string()));
    }
    if args.explain {
        crate::explain::print(gate.policy(), outcome.decided());
    }
    let json = gate.report(&req, &outcome);
    if let Outcome::Refused(r) = &outcome {
        crate::explain::print_fixes(&r.fixes);
    }
    println!("{json}");
    // The answer is out: what was written may go to the fleet's shared store now.
    let _ = std::io::Write::flush(&mut std::io::stdout());
    crate::setup::ship_after_answer(&gate, reached);
    Ok(match outcome {
        Outcome::Permitted(_) | Outcome::Trial(_) => Code::Allow,
        Outcome::Ask(_) => Code::Ask,
        Outcome::Pending(_) => Code::Pending,
        Outcome::Refused(_) => Code::Deny,
    }
    .get())
}

fn read_stdin() -> anyhow::Result<String> {
    let limit = cordon_policy::request::MAX_REQUEST_BYTES;
    let mut buf = Vec::new();
    std::io::stdin()
        .take(limit as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(|e| {
            Exit::new(
                Code::Invalid,
                format!("cannot read the request from stdin: {e}"),
            )
        })?;
    if buf.len() > limit {
        return Err(Exit::new(
            Code::Invalid,
            format!("the request is larger than the {limit}-byte limit"),
        )
        .into());
    }
    String::from_utf8(buf)
        .map_err(|_| Exit::new(Code::Invalid, "the request is not valid UTF-8").into())
}
