//! `cordon hook claude-code|codex|gemini`: answer one harness hook event (stdin JSON) in
//! the harness's terms. Every failure blocks the call: exit 2 with one sentence on stderr.

use crate::exit::Code;
use crate::setup::{ApprovalArgs, PolicyArgs, load};
use cordon_hook::{Containing, ExecLine, Harness, Reply};
use cordon_policy::RealFs;
use std::io::{Read, Write};
use std::path::PathBuf;

/// `cordon hook HARNESS`.
#[derive(clap::ValueEnum, Debug, Clone, Copy)]
pub enum HarnessArg {
    /// Claude Code (`PreToolUse`, `PermissionRequest`, `PostToolUse`).
    ClaudeCode,
    /// Codex (`PreToolUse`, `PermissionRequest`, `PostToolUse`).
    Codex,
    /// Gemini CLI (`BeforeTool`, `AfterTool`).
    Gemini,
}

impl From<HarnessArg> for Harness {
    fn from(h: HarnessArg) -> Harness {
        match h {
            HarnessArg::ClaudeCode => Harness::ClaudeCode,
            HarnessArg::Codex => Harness::Codex,
            HarnessArg::Gemini => Harness::Gemini,
        }
    }
}

/// Arguments of `cordon hook`.
#[derive(clap::Args)]
#[command(
    after_help = "Exit status: 0 with the harness's JSON on stdout (or nothing); \
2 blocks the call, with the reason on stderr. The workspace defaults to the payload's cwd."
)]
pub struct HookArgs {
    /// The harness whose protocol the payload follows.
    #[arg(value_enum)]
    harness: HarnessArg,
    #[command(flatten)]
    policy: PolicyArgs,
    /// Run shell calls that cordon allows under containment inside `cordon exec` (the
    /// harness runs the rewritten command); `[hook] contain = true` in the config does
    /// the same. Claude Code and Gemini CLI only: Codex hooks cannot rewrite a call.
    #[arg(long)]
    contain: bool,
    /// The approval store (default: `store.sqlite3` in cordon's state directory).
    #[arg(long, value_name = "FILE")]
    store: Option<PathBuf>,
    /// The audit log (default: `audit.jsonl` in cordon's state directory).
    #[arg(long, value_name = "FILE")]
    audit_file: Option<PathBuf>,
    /// Write no audit records.
    #[arg(long)]
    no_audit: bool,
}

/// Run `cordon hook`: the status is the reply's; nothing here returns an error, since
/// an exit code other than 0 or 2 lets the call proceed in some harnesses.
pub fn run(args: HookArgs) -> anyhow::Result<u8> {
    // A panic must block too (its default status, 101, is "proceed" for Claude Code).
    std::panic::set_hook(Box::new(|info| {
        let _ = writeln!(
            std::io::stderr(),
            "cordon: internal error while judging the call ({info}); the call is blocked"
        );
        std::process::exit(i32::from(cordon_hook::BLOCK_EXIT));
    }));
    let reply = reply(&args).unwrap_or_else(Reply::block);
    let _ = std::io::stdout().write_all(reply.stdout.as_bytes());
    let _ = std::io::stderr().write_all(reply.stderr.as_bytes());
    Ok(reply.status)
}

fn reply(args: &HookArgs) -> Result<Reply, String> {
    let harness = Harness::from(args.harness);
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(cordon_hook::payload::MAX_PAYLOAD_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read the hook payload from stdin: {e}"))?;
    let call = cordon_hook::parse(harness, &bytes).map_err(|e| e.to_string())?;
    let mut policy_args = args.policy.clone();
    if policy_args.workspace.is_none() {
        policy_args.workspace = call.cwd().map(|p| p.to_path_buf());
    }
    let approvals = ApprovalArgs {
        store: args.store.clone(),
        audit_file: args.audit_file.clone(),
        no_audit: args.no_audit,
        ..Default::default()
    };
    let mut opts = policy_args.options().map_err(|e| format!("{e:#}"))?;
    let mut remembered = approvals.remembered();
    opts.remembered_rules = std::mem::take(&mut remembered.rules);
    let policy = load(&opts, Code::Invalid).map_err(|e| format!("{e:#}"))?;
    let contain = args.contain || policy.hook_contain();
    let policy = cordon_hook::narrow(policy, call.mode.as_ref())?;
    let containing = Containing {
        exec: if contain && harness.can_rewrite() {
            Some(exec_line(args, &policy_args)?)
        } else {
            None
        },
    };
    // A harness spawns the hook for every tool call: the record is written before the
    // answer, without waiting for the disk (see `Gate::with_unsynced_audit`).
    let gate = remembered
        .gate(approvals.gate(policy, harness.surface()))
        .with_unsynced_audit();
    Ok(cordon_hook::answer(&gate, &call, &RealFs, &containing))
}

/// `cordon exec` as the rewritten command calls it: this binary, with the flags that
/// chose this policy and its records.
fn exec_line(args: &HookArgs, policy: &PolicyArgs) -> Result<ExecLine, String> {
    let program = std::env::current_exe()
        .map_err(|e| format!("cannot find the cordon binary for contained runs: {e}"))?;
    let here =
        std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    let abs = |p: &PathBuf| here.join(p).to_string_lossy().into_owned();
    let mut flags = Vec::new();
    for c in &policy.config {
        flags.extend(["--config".to_string(), abs(c)]);
    }
    if policy.isolated {
        flags.push("--isolated".into());
    }
    if let Some(m) = policy.mode {
        let name = clap::ValueEnum::to_possible_value(&m)
            .map(|v| v.get_name().to_string())
            .ok_or("the --mode value has no name")?;
        flags.extend(["--mode".to_string(), name]);
    }
    if let Some(s) = &args.store {
        flags.extend(["--store".to_string(), abs(s)]);
    }
    if let Some(a) = &args.audit_file {
        flags.extend(["--audit-file".to_string(), abs(a)]);
    }
    if args.no_audit {
        flags.push("--no-audit".into());
    }
    let shell_dir = cordon_store::state_dir()
        .map_err(|e| format!("cannot find cordon's state directory for contained runs: {e}"))?
        .join("hook-shell");
    Ok(ExecLine {
        program,
        flags,
        shell_dir,
    })
}
