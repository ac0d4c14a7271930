//! `cordon check`: judge one tool call and print the verdict as JSON.
//!
//! Exit status: 0 allow, 3 ask, 4 deny, 2 invalid request or config, 1 internal error.

use crate::approve::{ApprovalArgs, PENDING, record};
use crate::exit::{Exit, INVALID};
use crate::setup::PolicyArgs;
use cordon_policy::{Decision, RealFs, Request};
use std::io::Read;

/// Arguments of `cordon check`.
#[derive(clap::Args)]
pub struct CheckArgs {
    #[command(flatten)]
    policy: PolicyArgs,
    #[command(flatten)]
    approvals: ApprovalArgs,
    /// Print the evaluation trail (and the parsed shell structure) on stderr.
    #[arg(long)]
    explain: bool,
    /// The request JSON; `-` or nothing reads it from stdin.
    request: Option<String>,
}

/// The exit status for a decision.
pub fn decision_code(d: Decision) -> u8 {
    match d {
        Decision::Allow => 0,
        Decision::Ask => 3,
        Decision::Deny => 4,
    }
}

/// Run `cordon check`.
pub fn run(args: CheckArgs) -> anyhow::Result<u8> {
    let text = match args.request.as_deref() {
        None | Some("-") => read_stdin()?,
        Some(t) => t.to_string(),
    };
    let req = Request::from_json(&text)
        .map_err(|e| Exit::new(INVALID, format!("invalid request: {e}")))?;
    let policy = args.policy.load_with(args.approvals.remembered_rules())?;
    let ops = policy.operations(&req, &RealFs);
    let verdict = policy.judge_traced(&ops, args.explain);
    let settled = args.approvals.settle(&policy, &req, &ops, verdict, false);
    let mut verdict = settled.verdict.clone();
    if let Err(e) = args.approvals.audit(record(
        "check",
        &policy,
        &req,
        &settled,
        serde_json::json!({}),
    )) {
        // A decision that cannot be recorded is not handed out as an allow.
        eprintln!("cordon: the audit log cannot be written: {e}");
        if verdict.decision == Decision::Allow {
            verdict.decision = Decision::Deny;
            verdict.reason =
                format!("the audit log cannot be written ({e}); fix it or pass --no-audit");
            verdict.source = cordon_policy::Source::new(cordon_policy::Step::Validate, "audit");
        }
    }
    if args.explain {
        eprintln!("workspace: {}", policy.workspace().display());
        for (layer, file) in policy.files() {
            eprintln!("config ({}): {}", layer.name(), file.display());
        }
        for n in policy.notes() {
            eprintln!("note: {n}");
        }
        eprintln!("mode: {:?}", policy.mode());
        if let Some(a) = &ops.analysis {
            eprintln!("parsed shell structure:");
            match serde_json::to_string_pretty(a) {
                Ok(s) => eprintln!("{s}"),
                Err(e) => eprintln!("(cannot render: {e})"),
            }
        }
        eprintln!("trail:");
        for t in &verdict.trail {
            eprintln!("  {t}");
        }
    }
    let mut json = serde_json::to_value(&verdict)?;
    if let Some(id) = settled.pending {
        json["pending"] = serde_json::json!(id);
    }
    println!("{json}");
    if settled.pending.is_some() {
        return Ok(PENDING);
    }
    Ok(decision_code(verdict.decision))
}

fn read_stdin() -> anyhow::Result<String> {
    let mut buf = Vec::new();
    std::io::stdin()
        .take(cordon_policy::request::MAX_REQUEST_BYTES as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(|e| Exit::new(INVALID, format!("cannot read the request from stdin: {e}")))?;
    if buf.len() > cordon_policy::request::MAX_REQUEST_BYTES {
        return Err(Exit::new(
            INVALID,
            format!(
                "the request is larger than the {}-byte limit",
                cordon_policy::request::MAX_REQUEST_BYTES
            ),
        )
        .into());
    }
    String::from_utf8(buf).map_err(|_| Exit::new(INVALID, "the request is not valid UTF-8").into())
}
