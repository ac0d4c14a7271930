//! `cordon mcp-gateway`: an MCP server behind cordon's gate, on stdio.

use crate::exit::{Code, Exit};
use crate::setup::{ApprovalArgs, PolicyArgs, load};
use cordon_mcp::{Ended, GatewayOptions};
use cordon_policy::terminal::sanitize_for_terminal as clean;

/// Put an MCP server (stdio) behind cordon: every tool call judged, the server pinned.
#[derive(clap::Args)]
pub struct McpGatewayArgs {
    /// The server's name: its tools are `mcp__NAME__TOOL` to rules and approvals, and its
    /// pins are kept under it (default: the program's file name).
    #[arg(long)]
    name: Option<String>,
    /// Run the server inside `cordon exec` (workspace writable, HOME hidden, network only
    /// to the allowlist).
    #[arg(long)]
    contain: bool,
    /// With `--contain`: let the server reach `HOST[:PORT]` through the egress proxy
    /// (repeatable; added to `[network] allow`).
    #[arg(long = "allow-net", value_name = "HOST[:PORT]", requires = "contain")]
    allow_net: Vec<String>,
    /// Join the calls to the agent's session ID (the session id its hooks report), so
    /// they count in that session's rule of two; default: a session of this run.
    #[arg(long, value_name = "ID", value_parser = non_empty)]
    session: Option<String>,
    #[command(flatten)]
    policy: PolicyArgs,
    #[command(flatten)]
    approvals: ApprovalArgs,
    /// The MCP server's command and arguments.
    #[arg(last = true, required = true, value_name = "SERVER_CMD")]
    command: Vec<String>,
}

fn non_empty(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        Err("a session id must not be empty".into())
    } else {
        Ok(s.to_string())
    }
}

/// Run `cordon mcp-gateway`.
pub fn run(args: McpGatewayArgs) -> anyhow::Result<u8> {
    let name = match &args.name {
        Some(n) => n.clone(),
        None => default_name(&args.command),
    };
    cordon_mcp::check_name(&name).map_err(|e| Exit::new(Code::Invalid, e.to_string()))?;
    let mut opts = args.policy.options()?;
    let mut remembered = args.approvals.remembered(&opts)?;
    opts.remembered_rules = std::mem::take(&mut remembered.rules);
    // Each call's record is written before it is forwarded, without waiting for the disk
    // (see `Gate::with_unsynced_audit`).
    let gate = remembered
        .gate(args.approvals.gate(
            load(&opts, Code::Invalid)?,
            cordon_gate::Surface::McpGateway,
        ))
        .with_unsynced_audit();
    let spawn = if args.contain {
        contained(&args, &opts.workspace)?
    } else {
        args.command.clone()
    };
    let options = GatewayOptions {
        name: name.clone(),
        identity: args.command.clone(),
        spawn,
        interactive: args.approvals.interactive,
        session: args.session.clone(),
    };
    let ended = cordon_mcp::run(
        gate,
        options,
        Box::new(std::io::BufReader::new(std::io::stdin())),
        Box::new(std::io::stdout()),
    )
    .map_err(|e| Exit::new(Code::Internal, e.to_string()))?;
    match ended {
        Ended::ClientClosed => Ok(0),
        Ended::ServerClosed | Ended::ServerExited(_) => {
            let status = match ended {
                Ended::ServerExited(Some(s)) => s.to_string(),
                _ => "status unknown".into(),
            };
            eprintln!(
                "cordon: MCP server `{}` ended ({}); the gateway stops",
                clean(&name),
                clean(&status)
            );
            Ok(1)
        }
        _ => Ok(1),
    }
}

/// `cordon exec` around the server: this binary, the same policy flags.
fn contained(args: &McpGatewayArgs, workspace: &std::path::Path) -> anyhow::Result<Vec<String>> {
    let exe = std::env::current_exe().map_err(|e| {
        Exit::new(
            Code::Internal,
            format!("cannot find cordon's own executable to contain the server: {e}"),
        )
    })?;
    let mut argv = vec![
        exe.display().to_string(),
        "exec".into(),
        "--workspace".into(),
        workspace.display().to_string(),
    ];
    for c in &args.policy.config {
        argv.extend(["--config".into(), c.display().to_string()]);
    }
    if args.policy.isolated {
        argv.push("--isolated".into());
    }
    if let Some(m) = args
        .policy
        .mode
        .and_then(|m| clap::ValueEnum::to_possible_value(&m).map(|v| v.get_name().to_string()))
    {
        argv.extend(["--mode".into(), m]);
    }
    if let Some(s) = &args.approvals.store {
        argv.extend(["--store".into(), s.display().to_string()]);
    }
    if let Some(a) = &args.approvals.audit_file {
        argv.extend(["--audit-file".into(), a.display().to_string()]);
    }
    if args.approvals.no_audit {
        argv.push("--no-audit".into());
    }
    // The sandbox shows the workspace, not necessarily the directory the gateway was
    // started in (a harness may start it anywhere, `/tmp` included): from outside the
    // workspace the server starts in it.
    let inside = std::env::current_dir().is_ok_and(|here| here.starts_with(workspace));
    if !inside {
        argv.extend(["--cwd".into(), workspace.display().to_string()]);
    }
    for h in &args.allow_net {
        argv.extend(["--allow-net".into(), h.clone()]);
    }
    argv.push("--".into());
    argv.extend(args.command.iter().cloned());
    Ok(argv)
}

/// The program's file name, reduced to the characters a server name may hold.
fn default_name(command: &[String]) -> String {
    let program = command.first().map(String::as_str).unwrap_or("");
    let base = std::path::Path::new(program)
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut name: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    while name.contains("--") {
        name = name.replace("--", "-");
    }
    name.trim_matches('-').to_string()
}
