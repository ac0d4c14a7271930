//! The `cordon` binary: argument parsing and wiring only. Every decision and every
//! mechanism lives in the library crates; this file maps their results to exit codes.

mod cmd;
mod exit;
mod explain;
mod pipe;
mod setup;

use clap::{Parser, Subcommand};

/// cordon: a permission-policy engine and Linux sandbox for AI agents that call tools.
#[derive(Parser)]
#[command(name = "cordon", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Each subcommand's arguments are built only when that subcommand is the one run:
// building all of them took 0.3 ms of every `cordon exec` and `cordon check`.
#[derive(Subcommand)]
#[command(defer = true)]
// A line here is what `cordon --help` lists; `cordon SUB --help` shows the doc comment of
// the subcommand's arguments struct, which says the same for users (a test holds them
// together).
enum Command {
    /// Judge one tool call and print the verdict as JSON.
    Check(cmd::check::CheckArgs),
    /// Serve decisions to a harness: JSON-RPC 2.0, one object per line, on stdio or a
    /// Unix socket.
    Serve(cmd::serve::ServeArgs),
    /// Run a command inside the sandbox, after the policy has judged it.
    Exec(cmd::exec::ExecArgs),
    /// Answer a harness's hook event (stdin JSON) in the harness's terms.
    Hook(cmd::hook::HookArgs),
    /// Report what containment this machine can give, and whether each harness on PATH
    /// runs cordon's hook.
    Doctor(cmd::doctor::DoctorArgs),
    /// Set cordon up for a harness (merge its hook entries into the harness's settings), or
    /// install the AppArmor profile that gives this binary the full tier on Ubuntu.
    Setup(cmd::setup::SetupArgs),
    /// Put an MCP server (stdio) behind cordon: every tool call judged, the server pinned.
    McpGateway(cmd::mcp_gateway::McpGatewayArgs),
    /// Pinned MCP servers: list them, approve their changes, forget them.
    #[command(subcommand)]
    Mcp(cmd::mcp::McpCommand),
    /// Wrap stdin as untrusted content for a model (secrets redacted with --redact).
    Label(cmd::label::LabelArgs),
    /// Run the allowlisting egress proxy on its own.
    Proxy(cmd::proxy::ProxyArgs),
    /// Inspect and verify the audit log.
    #[command(subcommand)]
    Audit(cmd::audit::AuditCommand),
    /// List and answer pending approvals.
    #[command(subcommand)]
    Approvals(cmd::approvals::ApprovalsCommand),
    /// Show, merge or discard the changes of runs that ended without being merged.
    #[command(subcommand)]
    Changes(cmd::changes::ChangesCommand),
    /// Persistent sandbox slots: list, show, remove, snapshot and restore them.
    #[command(subcommand)]
    Slots(cmd::slots::SlotsCommand),
    /// What sessions remember (files written, trifecta legs): list, show, end.
    #[command(subcommand)]
    Sessions(cmd::sessions::SessionsCommand),
    /// Report which combinations of an agent's tools reach the lethal trifecta.
    ReviewToolset(cmd::review_toolset::ReviewToolsetArgs),
    /// Convert Claude Code or Codex permission settings into cordon's TOML config.
    #[command(subcommand)]
    Import(cmd::import::ImportCommand),
    /// Vet a skill package before it is installed, and install it atomically.
    #[command(subcommand)]
    Skill(cmd::skill::SkillCommand),
    /// Review a structured action request against an action policy; runs nothing.
    ReviewAction(cmd::action::ReviewArgs),
    /// Run an allowed (or approved) action request contained, with a sandbox derived
    /// from the request.
    RunAction(Box<cmd::action::RunArgs>),
    /// Serve the local web console: live decisions, pending approvals, leases and rules.
    Ui(cmd::ui::UiArgs),
    /// Print the completion script of a shell (bash, zsh, fish, …).
    Completions(cmd::docs::CompletionsArgs),
    /// Write man pages for cordon and every subcommand into a directory.
    Man(cmd::docs::ManArgs),
}

/// `cordon hook`, parsed on its own. A harness spawns the hook for every tool call, and
/// building the parser of every subcommand took a tenth of the hook's time (before the
/// subcommands' arguments were deferred; this parser still skips the outline of all of
/// them).
#[derive(Parser)]
#[command(
    name = "cordon hook",
    version,
    about = "Answer a harness's hook event (stdin JSON) in the harness's terms."
)]
struct HookCli {
    #[command(flatten)]
    args: cmd::hook::HookArgs,
}

fn main() -> std::process::ExitCode {
    // The sandbox helper is re-executed from `cordon exec`; it must stay single-threaded
    // and never reach argument parsing meant for humans.
    if std::env::args_os().nth(1).as_deref() == Some(cordon_sandbox::HELPER_ARG.as_ref()) {
        cordon_sandbox::helper_main();
    }
    // ssh's ProxyCommand inside the sandbox: a relay to the egress proxy, nothing else.
    if std::env::args_os().nth(1).as_deref() == Some(cordon_sandbox::SSH_RELAY_ARG.as_ref()) {
        cordon_sandbox::ssh_relay_main();
    }
    pipe::install();
    if std::env::args_os().nth(1).as_deref() == Some("hook".as_ref()) {
        let argv = std::iter::once(std::ffi::OsString::from("cordon hook"))
            .chain(std::env::args_os().skip(2));
        let cli = HookCli::parse_from(argv);
        return exit::to_exit_code(cmd::hook::run(cli.args));
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check(args) => cmd::check::run(args),
        Command::Serve(args) => cmd::serve::run(args),
        Command::Exec(args) => cmd::exec::run(args),
        Command::Hook(args) => cmd::hook::run(args),
        Command::Doctor(args) => cmd::doctor::run(args),
        Command::Setup(args) => cmd::setup::run(args),
        Command::Label(args) => cmd::label::run(args),
        Command::Proxy(args) => cmd::proxy::run(args),
        Command::McpGateway(args) => cmd::mcp_gateway::run(args),
        Command::Mcp(c) => cmd::mcp::run(c),
        Command::Audit(c) => cmd::audit::run(c),
        Command::Approvals(c) => cmd::approvals::run(c),
        Command::Changes(c) => cmd::changes::run(c),
        Command::Import(c) => cmd::import::run(c),
        Command::Skill(c) => cmd::skill::run(c),
        Command::ReviewAction(a) => cmd::action::run_review(a),
        Command::RunAction(a) => cmd::action::run_action(*a),
        Command::Slots(c) => cmd::slots::run(c),
        Command::Ui(args) => cmd::ui::run(args),
        Command::Sessions(c) => cmd::sessions::run(c),
        Command::ReviewToolset(args) => cmd::review_toolset::run(args),
        Command::Completions(args) => cmd::docs::run_completions(args),
        Command::Man(args) => cmd::docs::run_man(args),
    };
    exit::to_exit_code(result)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every subcommand's definition is valid, deferred parts included (clap checks
    /// them only when they are built).
    #[test]
    fn the_command_line_definitions_are_valid() {
        super::Cli::command().debug_assert();
        super::HookCli::command().debug_assert();
    }
}
