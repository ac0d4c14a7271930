//! `cordon hook claude-code|codex|gemini`: answer one harness hook event (stdin JSON) in
//! the harness's terms. Every failure blocks the call: exit 2 with one sentence on stderr.

use crate::exit::Code;
use crate::setup::{ApprovalArgs, PolicyArgs, load};
use cordon_hook::{Containing, ExecLine, Harness, Reply};
use cordon_policy::RealFs;
use cordon_sandbox::supervise::ChildEnded;
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

/// Answer a harness's hook event (stdin JSON) in the harness's terms.
#[derive(clap::Args)]
#[command(
    after_help = "Exit status: 0 with the harness's JSON on stdout (or nothing); \
2 blocks the call, with the reason on stderr. The workspace is --workspace, else \
$CLAUDE_PROJECT_DIR (claude-code) or $GEMINI_PROJECT_DIR (gemini); never the payload's cwd."
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
    /// Hand the call to the `cordon serve` listening on this socket, which decides it with
    /// its own policy, workspace, store and log (the call must run inside its workspace);
    /// if it does not answer, the call is blocked. Takes no other option.
    #[arg(
        long,
        value_name = "SOCKET",
        conflicts_with_all = ["config", "workspace", "mode", "isolated", "contain", "store", "audit_file", "no_audit"]
    )]
    server: Option<PathBuf>,
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
    let judge = || match &args.server {
        Some(socket) => read_payload()
            .map(|bytes| cordon_serve::hook::forward(socket, Harness::from(args.harness), &bytes))
            .unwrap_or_else(Reply::block),
        None => reply(&args).unwrap_or_else(Reply::block),
    };
    // Judged in a child: however it dies (an abort, a stack overflow, the OOM killer),
    // this process is still here to block the call.
    // Within a deadline: a harness that times a hook out lets the call proceed (Claude
    // Code does, unless the hook is marked to block on failure), so a judgement that
    // hangs (a parser's worst case, a store that never unlocks, a service that never
    // answers) must end here first, as a block.
    let deadline = judge_deadline();
    let reply =
        match cordon_sandbox::supervise::in_child(REPLY_LIMIT, deadline, || judge().encode()) {
            Ok(bytes) => Reply::decode(&bytes).unwrap_or_else(|| {
                Reply::block("the judgement process sent an unreadable answer; the call is blocked")
            }),
            Err(ChildEnded::Unavailable(why)) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "cordon: judging in this process: a separate one {why}"
                );
                // The same deadline, kept by a signal that ends this process with the block.
                let message = format!(
                    "cordon: the judgement had not answered after {} ms; the call is blocked\n",
                    deadline.as_millis()
                );
                match cordon_sandbox::supervise::exit_at_deadline(
                    deadline,
                    cordon_hook::BLOCK_EXIT,
                    &message,
                ) {
                    Ok(pending) => {
                        let reply = judge();
                        pending.cancel();
                        reply
                    }
                    Err(e) => Reply::block(format!(
                        "the call cannot be judged within a deadline ({e}); the call is blocked"
                    )),
                }
            }
            Err(e) => Reply::block(format!("the judgement process {e}; the call is blocked")),
        };
    let _ = std::io::stdout().write_all(reply.stdout.as_bytes());
    let _ = std::io::stderr().write_all(reply.stderr.as_bytes());
    Ok(reply.status)
}

/// [`cordon_hook::JUDGE_DEADLINE`], or the shorter one `CORDON_HOOK_DEADLINE_MS` names
/// (tests use it; it can only shorten the wait, never lengthen it).
fn judge_deadline() -> std::time::Duration {
    let most = cordon_hook::JUDGE_DEADLINE;
    std::env::var("CORDON_HOOK_DEADLINE_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map(std::time::Duration::from_millis)
        .map_or(most, |d| d.min(most))
}

/// The most a reply may hold (the verdict JSON a harness reads back, with room to spare).
const REPLY_LIMIT: usize = 16 << 20;

/// The payload on stdin (one byte past the limit at most, for the parser to refuse).
fn read_payload() -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(cordon_hook::payload::MAX_PAYLOAD_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read the hook payload from stdin: {e}"))?;
    Ok(bytes)
}

fn reply(args: &HookArgs) -> Result<Reply, String> {
    let harness = Harness::from(args.harness);
    let bytes = read_payload()?;
    let call = cordon_hook::parse(harness, &bytes).map_err(|e| e.to_string())?;
    let mut policy_args = args.policy.clone();
    policy_args.workspace = Some(pinned_workspace(harness, &policy_args)?);
    let approvals = ApprovalArgs {
        store: args.store.clone(),
        audit_file: args.audit_file.clone(),
        no_audit: args.no_audit,
        ..Default::default()
    };
    let mut opts = policy_args.options().map_err(|e| format!("{e:#}"))?;
    let mut remembered = approvals.remembered(&opts).map_err(|e| format!("{e:#}"))?;
    opts.remembered_rules = std::mem::take(&mut remembered.rules);
    let policy = load(&opts, Code::Invalid).map_err(|e| format!("{e:#}"))?;
    let contain = args.contain || policy.hook_contain();
    let policy = cordon_hook::narrow(policy, call.mode.as_ref()).map_err(|e| e.to_string())?;
    let containing = Containing {
        exec: if contain && harness.can_rewrite() {
            Some(exec_line(
                &policy_args,
                args.store.as_ref(),
                args.audit_file.as_ref(),
                args.no_audit,
            )?)
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

/// The workspace of this hook call: `--workspace`, else the harness's project-directory
/// variable; never the payload's cwd, never `/` or HOME (`cordon_hook::workspace`).
fn pinned_workspace(
    harness: Harness,
    policy: &crate::setup::PolicyArgs,
) -> Result<PathBuf, String> {
    let here =
        std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or("HOME is not set; set it to your home directory")?;
    cordon_hook::workspace::pin(
        harness,
        policy.workspace.as_deref(),
        |v| std::env::var_os(v),
        &here,
        &home,
    )
    .map_err(|e| e.to_string())
}

/// `cordon exec` as the rewritten command calls it: this binary, with the flags that
/// chose this policy and its records.
pub(crate) fn exec_line(
    policy: &PolicyArgs,
    store: Option<&PathBuf>,
    audit_file: Option<&PathBuf>,
    no_audit: bool,
) -> Result<ExecLine, String> {
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
    if let Some(s) = store {
        flags.extend(["--store".to_string(), abs(s)]);
    }
    if let Some(a) = audit_file {
        flags.extend(["--audit-file".to_string(), abs(a)]);
    }
    if no_audit {
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
