//! `cordon review-action` and `cordon run-action`: structured action requests, reviewed
//! without running anything, and run contained with a profile derived from the request.
//!
//! The review is `cordon-action`'s pure function; approving, revalidating and running
//! are `cordon_gate::action` (an `ask` runs only after a human approved the pending
//! approval recorded for exactly this request). This file parses and prints.

use crate::exit::{Code, Exit};
use crate::setup::{ApprovalArgs, PolicyArgs, load};
use cordon_action::{ActionPolicy, ActionRequest, review};
use cordon_gate::TerminalPrompter;
use cordon_gate::action::{ActionOutcome, ActionRun, request_fingerprint};
use cordon_gate::{Absent, Human};
use cordon_policy::terminal::sanitize_for_terminal as clean;
use cordon_policy::{Decision, RealFs};
use cordon_store::Prompter;
use std::path::PathBuf;

const REVIEW_CODES: &str = "Exit status: 0 allow, 3 ask (approvals required), 4 deny, \
2 invalid request or policy, 1 internal error.";

const RUN_CODES: &str = "Exit status: the action's own; 126 denied by the review or the \
policy, or approval required (a pending approval is recorded: `cordon approvals approve ID`, \
then run the same request again); 124 timeout; 125 cordon failed; 2 invalid request or policy.";

/// Review a structured action request against an action policy; runs nothing.
#[derive(clap::Args)]
#[command(after_help = REVIEW_CODES)]
pub struct ReviewArgs {
    /// The action request JSON file (`-` reads stdin).
    request: String,
    /// The action policy (TOML; default `$XDG_CONFIG_HOME/cordon/actions.toml`).
    #[arg(long, value_name = "POLICY.toml")]
    policy: Option<PathBuf>,
}

/// Run an allowed (or approved) action request contained, with a sandbox derived
/// from the request.
#[derive(clap::Args)]
#[command(after_help = RUN_CODES)]
pub struct RunArgs {
    /// The action request JSON file (`-` reads stdin).
    request: String,
    /// The action policy (TOML; default `$XDG_CONFIG_HOME/cordon/actions.toml`).
    #[arg(long, value_name = "POLICY.toml")]
    policy: Option<PathBuf>,
    #[command(flatten)]
    gate_policy: PolicyArgs,
    #[command(flatten)]
    approvals: ApprovalArgs,
}

fn invalid(msg: impl Into<String>) -> anyhow::Error {
    Exit::new(Code::Invalid, msg).into()
}

// The file the user named on the command line: a pipe or a FIFO there is meant.
#[allow(clippy::disallowed_methods)]
fn read_input(arg: &str) -> anyhow::Result<String> {
    use std::io::Read;
    let limit = cordon_action::MAX_REQUEST_BYTES as u64;
    let mut buf = Vec::new();
    let res = if arg == "-" {
        std::io::stdin().take(limit + 1).read_to_end(&mut buf)
    } else {
        std::fs::File::open(arg).and_then(|f| f.take(limit + 1).read_to_end(&mut buf))
    };
    res.map_err(|e| invalid(format!("cannot read the request {}: {e}", clean(arg))))?;
    String::from_utf8(buf).map_err(|_| invalid("the request is not valid UTF-8"))
}

/// The most the default action policy file may hold.
const MAX_POLICY: u64 = 4 * 1024 * 1024;

fn load_policy(path: Option<&PathBuf>) -> anyhow::Result<ActionPolicy> {
    let named = path.is_some();
    let path = match path {
        Some(p) => p.clone(),
        None => {
            let base = std::env::var_os("XDG_CONFIG_HOME")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
                .ok_or_else(|| invalid("no action policy: pass --policy POLICY.toml"))?;
            base.join("cordon/actions.toml")
        }
    };
    // A policy the user names is read as given, which may be a pipe (`<(…)`), the way
    // `cat` reads it; the default one only as a regular file (a FIFO would block).
    #[allow(clippy::disallowed_methods)]
    let read = if named {
        std::fs::read_to_string(&path).map_err(|e| e.to_string())
    } else {
        cordon_fs::read_regular_text(&path, MAX_POLICY).map_err(|e| e.to_string())
    };
    let text = read.map_err(|e| {
        invalid(format!(
            "cannot read the action policy {}: {e}; pass --policy POLICY.toml",
            clean(&path.display().to_string())
        ))
    })?;
    ActionPolicy::from_toml(&text)
        .map_err(|e| invalid(format!("{}: {e}", clean(&path.display().to_string()))))
}

/// Run `cordon review-action`.
pub fn run_review(args: ReviewArgs) -> anyhow::Result<u8> {
    let text = read_input(&args.request)?;
    let req = ActionRequest::from_json(&text).map_err(|e| invalid(e.to_string()))?;
    let policy = load_policy(args.policy.as_ref())?;
    let r = review(&req, &policy, &RealFs);
    // The hash is what an approval of this request is bound to.
    let mut out = serde_json::to_value(&r)?;
    out["request_hash"] = request_fingerprint(&req).into();
    println!("{out}");
    Ok(match r.verdict {
        Decision::Allow => Code::Allow,
        Decision::Ask => Code::Ask,
        Decision::Deny => Code::Deny,
    }
    .get())
}

/// Run `cordon run-action`.
pub fn run_action(args: RunArgs) -> anyhow::Result<u8> {
    let text = read_input(&args.request)?;
    let req = ActionRequest::from_json(&text).map_err(|e| invalid(e.to_string()))?;
    let policy = load_policy(args.policy.as_ref())?;
    let action = ActionRun::new(req, policy, &RealFs);
    // The gate's policy is loaded for the action's workspace, and its egress allowlist
    // is the request's own origins.
    let mut opts = args.gate_policy.options()?;
    opts.workspace = action.workspace().to_path_buf();
    opts.network_allow = action.network_allow().to_vec();
    let home = opts.home.clone();
    // Leases, pending approvals and operation ids where every surface keeps them.
    let location = args.approvals.location(&opts)?;
    let gate = args
        .approvals
        .gate(load(&opts, Code::Invalid)?, cordon_gate::Surface::RunAction)
        .with_location(&location);
    let refuse = |why: &str| {
        eprintln!("cordon: action refused: {}", clean(why));
        Ok(Code::Denied.get())
    };
    // A human at this terminal (stdin and stderr both one) can answer an ask now, as
    // with `cordon exec`; otherwise the ask becomes a pending approval.
    let mut terminal = TerminalPrompter::from_stdio();
    let human = Human {
        prompter: terminal.as_mut().map(|t| t as &mut dyn Prompter),
        absent: Absent::Pending,
    };
    match action.run(&gate, &RealFs, &home, human) {
        Ok(ActionOutcome::Refused(why)) => refuse(&why),
        Ok(ActionOutcome::Pending { message, .. }) => refuse(&message),
        Ok(ActionOutcome::Ran { ran, kept }) => {
            if !kept.is_empty() {
                eprintln!(
                    "cordon: the action changed paths its request did not declare; they were not merged (see `cordon changes`): {}",
                    clean(&kept.join(", "))
                );
            }
            if let Some(b) = ran.blocked().iter().find(|b| b.kind != "not-merged") {
                eprintln!(
                    "cordon: containment blocked {} {}",
                    clean(&b.target),
                    clean(&b.detail)
                );
            }
            Ok(ran.outcome.status)
        }
        Ok(_) => Err(Exit::new(Code::Failed, "the action ended in an unknown way").into()),
        Err(e) => Err(Exit::new(Code::Failed, e.to_string()).into()),
    }
}
