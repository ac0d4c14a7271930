//! `cordon review-action` and `cordon run-action`: structured action requests, reviewed
//! without running anything, and run contained with a profile derived from the request.
//!
//! The review is `cordon-action`'s pure function; the run goes through the gate
//! (`cordon_gate::contained::execute`, as `cordon exec` does) with a sandbox that can
//! write only the directories of the declared paths, reach only the declared origins and
//! see only the declared credentials. An approval never widens that sandbox.

use crate::exit::{Code, Exit};
use crate::setup::{ApprovalArgs, PolicyArgs, load};
use cordon_action::{ActionPolicy, ActionRequest, Review, Snapshot, Verdict, review};
use cordon_gate::contained::{self, Executed, RunOptions};
use cordon_gate::{Human, ToolResult};
use cordon_policy::terminal::sanitize_for_terminal as clean;
use cordon_policy::{Containment, RealFs, Request, SandboxMode};
use cordon_sandbox::{EnvPolicy, HomeView, Limits, Network, Require, SandboxBuilder};
use cordon_store::Phase;
use std::path::PathBuf;
use std::time::Duration;

const REVIEW_CODES: &str = "Exit status: 0 allow, 3 ask (approvals required), 4 deny, \
2 invalid request or policy, 1 internal error.";

const RUN_CODES: &str = "Exit status: the action's own; 126 denied by the review or the \
policy, or approval required and not given (--approved-by); 124 timeout; 125 cordon failed; \
2 invalid request or policy.";

/// Arguments of `cordon review-action`.
#[derive(clap::Args)]
#[command(after_help = REVIEW_CODES)]
pub struct ReviewArgs {
    /// The action request JSON file (`-` reads stdin).
    request: String,
    /// The action policy (TOML; default `$XDG_CONFIG_HOME/cordon/actions.toml`).
    #[arg(long, value_name = "POLICY.toml")]
    policy: Option<PathBuf>,
}

/// Arguments of `cordon run-action`.
#[derive(clap::Args)]
#[command(after_help = RUN_CODES)]
pub struct RunArgs {
    /// The action request JSON file (`-` reads stdin).
    request: String,
    /// The action policy (TOML; default `$XDG_CONFIG_HOME/cordon/actions.toml`).
    #[arg(long, value_name = "POLICY.toml")]
    policy: Option<PathBuf>,
    /// Who approved the action's required approvals (recorded in the audit log). Needed
    /// when the review says ask; never widens the sandbox.
    #[arg(long, value_name = "NAME")]
    approved_by: Option<String>,
    #[command(flatten)]
    gate_policy: PolicyArgs,
    #[command(flatten)]
    approvals: ApprovalArgs,
}

fn invalid(msg: impl Into<String>) -> anyhow::Error {
    Exit::new(Code::Invalid, msg).into()
}

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

fn load_policy(path: Option<&PathBuf>) -> anyhow::Result<ActionPolicy> {
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
    let text = std::fs::read_to_string(&path).map_err(|e| {
        invalid(format!(
            "cannot read the action policy {}: {e}; pass --policy POLICY.toml",
            clean(&path.display().to_string())
        ))
    })?;
    ActionPolicy::from_toml(&text)
        .map_err(|e| invalid(format!("{}: {e}", clean(&path.display().to_string()))))
}

fn reviewed(
    request: &str,
    policy: Option<&PathBuf>,
) -> anyhow::Result<(ActionRequest, ActionPolicy, Review)> {
    let text = read_input(request)?;
    let req = ActionRequest::from_json(&text).map_err(|e| invalid(e.to_string()))?;
    let policy = load_policy(policy)?;
    let r = review(&req, &policy, &RealFs);
    Ok((req, policy, r))
}

/// Run `cordon review-action`.
pub fn run_review(args: ReviewArgs) -> anyhow::Result<u8> {
    let (_, _, r) = reviewed(&args.request, args.policy.as_ref())?;
    println!("{}", serde_json::to_string(&r)?);
    Ok(match r.verdict {
        Verdict::Allow => Code::Allow,
        Verdict::Ask => Code::Ask,
        Verdict::Deny => Code::Deny,
    }
    .get())
}

/// Run `cordon run-action`.
pub fn run_action(args: RunArgs) -> anyhow::Result<u8> {
    let (req, policy, first) = reviewed(&args.request, args.policy.as_ref())?;
    let mut opts = args.gate_policy.options()?;
    opts.workspace = policy.workspace.clone();
    opts.network_allow = first.profile.network.clone();
    let gate = args
        .approvals
        .gate(load(&opts, Code::Invalid)?, "run-action");
    let refuse = |why: String| -> anyhow::Result<u8> {
        eprintln!("cordon: action refused: {}", clean(&why));
        Ok(Code::Denied.get())
    };
    // The request, the review and the approver go into the audit log before anything
    // runs; a run whose request cannot be recorded does not start.
    let approved_by = args.approved_by.clone().filter(|a| !a.trim().is_empty());
    let mut notice = gate.bare_record(
        Phase::Notice,
        "action",
        serde_json::json!({"request": &req, "review": &first, "approved_by": &approved_by}),
    );
    notice.agent = Some(req.actor.clone());
    notice.reason =
        Some(format!("action {} reviewed: {:?}", req.capability, first.verdict).to_lowercase());
    if !gate.options().no_audit
        && let Err(e) = gate.append(&notice)
    {
        return refuse(format!("the action request cannot be recorded ({e})"));
    }
    match (first.verdict, &approved_by) {
        (Verdict::Deny, _) => return refuse(first.reasons.join("; ")),
        (Verdict::Ask, None) => {
            let needed: Vec<String> = first
                .required_approvals
                .iter()
                .map(|a| format!("{}: {} ({})", a.kind, a.target, a.consequence))
                .collect();
            return refuse(format!(
                "approval required and not given (--approved-by NAME): {}",
                needed.join("; ")
            ));
        }
        _ => {}
    }
    // Revalidate every normalized target immediately before launch: a path that became
    // a link, appeared or vanished since the review stops the run.
    let again = review(&req, &policy, &RealFs);
    if again.verdict > first.verdict || again.profile != first.profile {
        return refuse(format!(
            "the action's targets changed between the review and the launch: {}",
            again.reasons.join("; ")
        ));
    }
    let p = &first.profile;
    let (workspace, mode) = match p.writable_dirs.first() {
        Some(d) => (d.clone(), SandboxMode::WorkspaceWrite),
        None => (policy.workspace.clone(), SandboxMode::ReadOnly),
    };
    let mut b = SandboxBuilder::new(
        req.argv
            .iter()
            .map(std::ffi::OsString::from)
            .collect::<Vec<_>>(),
    )
    .workspace(&workspace)
    .home(&opts.home)
    .mode(mode)
    .home_view(HomeView::Hidden)
    .timeout(policy.limits.timeout_seconds.map(Duration::from_secs))
    .require(Require::Any)
    .env_policy(EnvPolicy {
        allow: p.env.clone(),
        allow_secret: p.env.clone(),
    })
    .limits(Limits {
        address_space: policy.limits.memory_bytes,
        ..Limits::default()
    })
    .cwd(&req.cwd);
    for d in p.writable_dirs.iter().skip(1) {
        b = b.writable_root(d);
    }
    let mut request = Request::argv(&req.argv, Some(req.cwd.clone()));
    request.agent = Some(req.actor.clone());
    let run = RunOptions {
        builder: b,
        network: Network::None,
        verbose: false,
        require_full: false,
        upstream_roots: Vec::new(),
        credentials: Vec::new(),
    };
    let before = Snapshot::take(&p.writable_dirs);
    let executed = contained::execute(
        &gate,
        &request,
        &RealFs,
        Containment::Full,
        Human::nobody(),
        None,
        &run,
        false,
    );
    let ran = match executed {
        Ok(Executed::Ran(ran)) => ran,
        Ok(Executed::Refused(r)) => return refuse(r.decided.verdict.reason.clone()),
        Ok(Executed::Pending(d)) => return refuse(d.verdict.reason.clone()),
        Err(e) => return Err(Exit::new(Code::Failed, e.to_string()).into()),
    };
    // The sandbox makes whole directories writable: say (and record) what the run changed
    // beside the paths it declared.
    let after = Snapshot::take(&p.writable_dirs);
    let undeclared = before.undeclared_changes(&after, &p.writable_paths);
    let mut result = ToolResult {
        ok: Some(ran.outcome.status == 0 && undeclared.is_empty()),
        exit_status: Some(i32::from(ran.outcome.status)),
        ..Default::default()
    };
    if !undeclared.is_empty() || after.truncated {
        let list: Vec<String> = undeclared.iter().map(|p| p.display().to_string()).collect();
        let msg = format!(
            "the action changed files its request did not declare{}: {}",
            if after.truncated {
                " (the check was incomplete)"
            } else {
                ""
            },
            list.join(", ")
        );
        eprintln!("cordon: {}", clean(&msg));
        result = result.with_output(&msg);
    }
    if let Err(e) = gate.record_result(&request, &result) {
        eprintln!(
            "cordon: the action's result could not be recorded: {}",
            clean(&e.to_string())
        );
    }
    if let Some(first) = ran.blocked().first() {
        eprintln!(
            "cordon: containment blocked {} {}",
            clean(&first.target),
            clean(&first.detail)
        );
    }
    Ok(ran.outcome.status)
}
