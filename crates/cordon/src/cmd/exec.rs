//! `cordon exec`: judge a command through the gate, then run it inside the sandbox.

use crate::exit::{Code, EXEC_CODES, Exit};
use crate::setup::{ApprovalArg, ApprovalArgs, PolicyArgs, SandboxArg, load};
use cordon_gate::GateError;
use cordon_gate::TerminalPrompter;
use cordon_gate::contained::{self, Executed, RunOptions};
use cordon_gate::{Absent, Human};
use cordon_policy::terminal::sanitize_for_terminal as clean;
use cordon_policy::{RealFs, Request, RequiredTier};
use cordon_sandbox::{
    EnvPolicy, Helper, HelperHints, HomeView, Limits, Network, Require, SandboxBuilder,
    SandboxErrorKind,
};
use cordon_store::Prompter;
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::time::Duration;

/// `--home`.
#[derive(clap::ValueEnum, Debug, Clone, Copy, Default)]
pub enum HomeArg {
    /// Empty but for toolchains, bound back read-only.
    #[default]
    Hidden,
    /// Read-only, secrets still masked.
    Visible,
}

/// `--net`.
#[derive(clap::ValueEnum, Debug, Clone, Copy, Default)]
pub enum NetArg {
    /// An empty network namespace (the egress proxy when hosts are allowlisted).
    #[default]
    None,
    /// The host's network.
    Full,
}

/// `--require`.
#[derive(clap::ValueEnum, Debug, Clone, Copy, Default)]
pub enum RequireArg {
    /// Fall back to Landlock and seccomp when namespaces are unavailable, and print what
    /// that tier does not protect at every run.
    Any,
    /// Refuse to run without namespaces.
    #[default]
    Full,
}

impl From<RequireArg> for RequiredTier {
    fn from(r: RequireArg) -> RequiredTier {
        match r {
            RequireArg::Any => RequiredTier::Any,
            RequireArg::Full => RequiredTier::Full,
        }
    }
}

/// The tiers the run accepts: `--require` and `[sandbox] require` as the policy merged
/// them (the managed file above the flag), the full tier unless one says `any`.
fn required(policy: &cordon_policy::Policy) -> Require {
    match policy.sandbox().required_tier() {
        RequiredTier::Any => Require::Any,
        _ => Require::Full,
    }
}

// Boxed in the subcommand enum: the arguments are many.
/// Run a command inside the sandbox, after the policy has judged it.
#[derive(clap::Args)]
#[command(after_help = EXEC_CODES)]
pub struct ExecArgs {
    #[command(flatten)]
    options: Box<ExecOptions>,
}

/// The options of `cordon exec`.
#[derive(clap::Args)]
pub struct ExecOptions {
    #[command(flatten)]
    policy: PolicyArgs,
    #[command(flatten)]
    approvals: ApprovalArgs,
    /// Approval policy (overrides the config).
    #[arg(long, value_enum)]
    approval: Option<ApprovalArg>,
    /// Let the command reach `HOST[:PORT]` through cordon's egress proxy (repeatable;
    /// `*.example.com` for subdomains).
    #[arg(long = "allow-net", value_name = "HOST[:PORT]")]
    allow_net: Vec<String>,
    /// Exempt this CIDR from the proxy's refusal of private addresses (repeatable).
    #[arg(long = "allow-private", value_name = "CIDR")]
    allow_private: Vec<String>,
    /// Trust this PEM CA for upstreams the egress proxy inspects, besides the system's
    /// roots (a private CA; repeatable). The sandboxed command cannot widen this.
    #[arg(long = "upstream-ca", value_name = "FILE")]
    upstream_ca: Vec<PathBuf>,
    /// Take VAR from cordon's environment and keep it outside: the command sees a random
    /// placeholder of the same shape as VAR, HOST is allowlisted, and the proxy sends the
    /// real value as a bearer token to HOST only (repeatable). The shorthand of a
    /// `[[credential]]` config table, which also reads files and commands and applies
    /// basic auth, a header or a query parameter.
    #[arg(long = "credential", value_name = "VAR:HOST[:PORT]")]
    credential: Vec<String>,
    /// Print every egress decision as a JSON line on stderr.
    #[arg(long)]
    verbose: bool,
    /// Print the evaluation trail (and the parsed shell structure) on stderr.
    #[arg(long)]
    explain: bool,
    /// Sandbox mode (overrides the config).
    #[arg(long, value_enum)]
    sandbox: Option<SandboxArg>,
    /// Judge and run this shell text (`sh -c TEXT`) instead of an argv.
    #[arg(long, value_name = "TEXT", conflicts_with = "command")]
    shell: Option<String>,
    /// Judge and run the shell text of this file, written by `cordon hook` for text too
    /// long for one argument: named by the BLAKE3 hash of its content, which is checked
    /// before anything runs.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["command", "shell"])]
    shell_file: Option<PathBuf>,
    /// Run the shell text with bash (`bash -c TEXT`) rather than `/bin/sh`, as the
    /// harnesses' shell tools do.
    #[arg(long)]
    bash: bool,
    /// The agent session this run belongs to (recorded in its audit records).
    #[arg(long, value_name = "ID")]
    session: Option<String>,
    /// Run in the persistent slot KEY: a directory of cordon's state that becomes the
    /// sandbox's HOME (and its developer caches), kept across runs of the same scope and
    /// key. Runs that share a slot take turns.
    #[arg(long, value_name = "KEY")]
    slot: Option<String>,
    /// Who shares the slot [default: `[slots] scope`, else user].
    #[arg(long, value_enum, requires = "slot")]
    scope: Option<crate::cmd::slots::ScopeArg>,
    /// The agent this run belongs to (names the slot of `--scope agent`).
    #[arg(long, value_name = "NAME")]
    agent: Option<String>,
    /// The slot's `tmp` directory is /tmp too, kept across runs (also `[slots] tmp`).
    #[arg(long, requires = "slot")]
    slot_tmp: bool,
    /// Wait this long for a run that holds the slot, e.g. `30s`, `5m` [default:
    /// `[slots] wait_seconds`, else 5m].
    #[arg(long, value_name = "DURATION", value_parser = cordon_policy::duration::parse, requires = "slot")]
    slot_wait: Option<Duration>,
    /// Refuse at once when a run holds the slot.
    #[arg(long, requires = "slot", conflicts_with = "slot_wait")]
    no_wait: bool,
    /// Keep the start-up files (`.bashrc`, `~/.cargo/config.toml`, `*.pth` hooks…) that
    /// runs leave in the slot; by default they are reset before every run, so that no
    /// run plants code that a later one executes.
    #[arg(long, requires = "slot")]
    slot_keep_startup: bool,
    /// The harness's id of the tool call this run carries out (recorded in its audit
    /// records, tying them to the hook's decision).
    #[arg(long, value_name = "ID")]
    operation_id: Option<String>,
    /// Working directory of the command (default: the current directory). It never
    /// widens the writable roots.
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// An extra writable root (repeatable). A relative path is resolved against the
    /// current directory and must exist.
    #[arg(long = "writable-root", value_name = "DIR")]
    writable_root: Vec<PathBuf>,
    /// HOME inside the sandbox.
    #[arg(long, value_enum, default_value_t)]
    home: HomeArg,
    /// Network.
    #[arg(long, value_enum, default_value_t)]
    net: NetArg,
    /// Reach the network only through an egress proxy already listening on this Unix
    /// socket (e.g. `cordon proxy`): the sandbox gets a forwarder on 127.0.0.1 and the
    /// proxy variables point at it.
    #[arg(long, value_name = "SOCKET", conflicts_with = "net")]
    proxy_socket: Option<PathBuf>,
    /// Wall-clock limit, e.g. `30`, `30s`, `500ms`, `5m`: the whole tree is killed, exit 124.
    #[arg(long, value_name = "DURATION", value_parser = cordon_policy::duration::parse)]
    timeout: Option<Duration>,
    /// Tier required [default: `[sandbox] require` of the managed or user config, else
    /// full]. Without user namespaces only the fallback tier (Landlock and seccomp) is
    /// left, which does not keep code the command plants in the workspace (git hooks and
    /// config, editor and agent files) from running on the host: `any` accepts it, and
    /// each run prints what it does not protect.
    #[arg(long, value_enum)]
    require: Option<RequireArg>,
    /// Write the denial report (JSON) to this file. Its directory is opened before the
    /// command runs, and the report replaces whatever is at the name (a symlink is
    /// replaced, never written through).
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Keep the run's changes to its writable roots for review instead of merging them
    /// (also `[sandbox] hold = true`): `cordon changes show ID` lists and diffs them,
    /// `cordon changes apply ID` merges them, `discard` drops them.
    #[arg(long)]
    hold: bool,
    /// The most bytes the run's changes to its writable roots may take, e.g. `2G`
    /// (suffixes K, M, G, T); the run is stopped when they reach it [default:
    /// `[sandbox] changes_limit`, else all but a reserve of the free space].
    #[arg(long, value_name = "BYTES", value_parser = super::size::parse_size)]
    changes_limit: Option<u64>,
    /// Pass this environment variable (repeatable; secret-looking names are still dropped).
    #[arg(long = "env", value_name = "NAME")]
    env: Vec<String>,
    /// Pass this environment variable even though its name looks like a secret.
    #[arg(long = "env-secret", value_name = "NAME")]
    env_secret: Vec<String>,
    /// An extra path to mask (repeatable). A relative path is resolved against the
    /// current directory.
    #[arg(long, value_name = "PATH")]
    mask: Vec<PathBuf>,
    /// Let the command connect to this host Unix socket (repeatable): it is bound in,
    /// read-only, at its own path, even inside a directory the sandbox hides (`/run`,
    /// `/tmp`, HOME). Refused if PATH is not a socket.
    #[arg(long = "allow-unix-socket", value_name = "PATH")]
    allow_unix_socket: Vec<PathBuf>,
    /// Let ssh inside use the agent of cordon's `$SSH_AUTH_SOCK` (bound in, named by
    /// `SSH_AUTH_SOCK`). Without it no agent is reachable.
    #[arg(long)]
    ssh_agent: bool,
    /// Check ssh host keys inside against this file (read-only) instead of
    /// `~/.ssh/known_hosts`. Refused if FILE is not a file of public host keys, or when
    /// ssh inside would not read it (the host's network, `full-access`).
    #[arg(long = "ssh-known-hosts", value_name = "FILE")]
    ssh_known_hosts: Option<PathBuf>,
    /// Pass at most this many bytes of the command's stdout, and of its stderr; the rest
    /// is dropped (the command keeps running).
    #[arg(long, value_name = "BYTES")]
    max_output: Option<u64>,
    /// RLIMIT_CPU in seconds.
    #[arg(long, value_name = "SECONDS")]
    cpu_limit: Option<u64>,
    /// RLIMIT_AS in bytes (suffixes K, M, G, T: powers of 1024); also caps the default
    /// --tmp-size.
    #[arg(long, value_name = "BYTES", value_parser = super::size::parse_size)]
    memory_limit: Option<u64>,
    /// Processes and threads the command may have at once [default: 4096]. Held by a
    /// pids cgroup where cordon can make one, else by RLIMIT_NPROC (which does not
    /// limit root); refused where neither holds. `cordon doctor` says which.
    #[arg(long, value_name = "N")]
    process_limit: Option<u64>,
    /// Size of the tmpfs that /tmp, /var/tmp and /dev/shm share (suffixes K, M, G, T)
    /// [default: a quarter of RAM, at most 4G, at most --memory-limit].
    #[arg(long, value_name = "BYTES", value_parser = super::size::parse_size)]
    tmp_size: Option<u64>,
    /// RLIMIT_FSIZE in bytes (suffixes K, M, G, T).
    #[arg(long, value_name = "BYTES", value_parser = super::size::parse_size)]
    file_size_limit: Option<u64>,
    /// RLIMIT_NOFILE.
    #[arg(long, value_name = "N")]
    open_files_limit: Option<u64>,
    /// The command and its arguments (after `--`).
    #[arg(last = true, value_name = "CMD")]
    command: Vec<OsString>,
}

/// The credentials of `--credential VAR:HOST[:PORT]`, their values read from cordon's own
/// environment.
fn credentials(flags: &[String]) -> anyhow::Result<Vec<cordon_egress::Credential>> {
    let mut out = Vec::new();
    for flag in flags {
        let Some((var, host)) = flag.split_once(':') else {
            return Err(fail(format!(
                "--credential {flag}: write VAR:HOST or VAR:HOST:PORT"
            )));
        };
        let valid = !var.is_empty()
            && var.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && !var.as_bytes()[0].is_ascii_digit();
        if !valid {
            return Err(fail(format!(
                "--credential {flag}: `{var}` is not a variable name"
            )));
        }
        let value = std::env::var(var).map_err(|_| {
            fail(format!(
                "--credential {flag}: {var} is not set (or not UTF-8) in cordon's environment"
            ))
        })?;
        let cred = cordon_egress::Credential::bearer(var, value, &[host])
            .map_err(|e| fail(format!("--credential {flag}: {e}")))?;
        out.push(cred);
    }
    Ok(out)
}

/// The `[[credential]]` tables of the config, their values read from their sources, when
/// the run goes through cordon's egress proxy (with `--net full` or `--proxy-socket` they
/// are not used, and their sources are not read).
fn config_credentials(
    policy: &cordon_policy::Policy,
    network: &Network,
) -> anyhow::Result<Vec<cordon_egress::Credential>> {
    let specs = &policy.network().credentials;
    if specs.is_empty() {
        return Ok(Vec::new());
    }
    if !matches!(network, Network::None) {
        eprintln!(
            "cordon: the [[credential]] tables of the config are not used: this run does not go through cordon's egress proxy"
        );
        return Ok(Vec::new());
    }
    specs
        .iter()
        .map(|s| cordon_egress::Credential::from_spec(s).map_err(|e| fail(e.to_string())))
        .collect()
}

/// The certificates of `--upstream-ca` files.
fn upstream_roots(
    files: &[PathBuf],
) -> anyhow::Result<Vec<cordon_egress::CertificateDer<'static>>> {
    let mut out = Vec::new();
    for f in files {
        // A file the user names on the command line: read as given, which may be a pipe
        // (`<(…)`), the way `cat` reads it.
        #[allow(clippy::disallowed_methods)]
        let pem = std::fs::read(f)
            .map_err(|e| fail(format!("cannot read --upstream-ca {}: {e}", f.display())))?;
        let certs = cordon_egress::parse_pem_certs(&pem)
            .map_err(|e| fail(format!("--upstream-ca {}: {e}", f.display())))?;
        out.extend(certs);
    }
    Ok(out)
}

fn fail(msg: impl Into<String>) -> anyhow::Error {
    Exit::new(Code::Failed, msg).into()
}

/// Run `cordon exec`.
pub fn run(args: ExecArgs) -> anyhow::Result<u8> {
    let args = *args.options;
    // Anchored now, before anything runs: what the command does to the path meanwhile
    // (a symlink at its name, a renamed directory) cannot move where the report goes.
    let report_file = match &args.report {
        Some(path) => {
            Some(cordon_fs::OutputFile::prepare(path).map_err(|e| fail(format!("--report: {e}")))?)
        }
        None => None,
    };
    let from_file = match &args.shell_file {
        Some(path) => {
            Some(cordon_hook::rewrite::read_shell_file(path).map_err(|e| fail(e.to_string()))?)
        }
        None => None,
    };
    let shell = if args.bash { bash_path() } else { "/bin/sh" };
    let (argv, shell_text): (Vec<OsString>, Option<&String>) =
        match from_file.as_ref().or(args.shell.as_ref()) {
            Some(text) => (shell_argv(shell, text), Some(text)),
            None => (args.command.clone(), None),
        };
    if let Some(id) = &args.operation_id
        && (id.is_empty() || id.len() > cordon_policy::request::MAX_OPERATION_ID)
    {
        return Err(fail(format!(
            "--operation-id must be 1 to {} bytes",
            cordon_policy::request::MAX_OPERATION_ID
        )));
    }
    if argv.is_empty() {
        return Err(fail(
            "no command given: use `cordon exec -- CMD [ARG…]` or `--shell TEXT`",
        ));
    }
    let network = match (&args.proxy_socket, args.net) {
        (Some(socket), _) => Network::Proxy {
            socket: socket.clone(),
            port: cordon_sandbox::DEFAULT_PROXY_PORT,
        },
        (None, NetArg::None) => Network::None,
        (None, NetArg::Full) => Network::Full,
    };
    // Start the sandbox helper now, so that it loads while the policy is judged and the
    // audit record is written; it does nothing until an allow sends it a spec. `--net`
    // alone decides whether the command shares the host's network, so the helper can
    // make its namespaces right away.
    let helper = Helper::spawn(HelperHints {
        capture_output: args.max_output.is_some(),
        host_network: Some(matches!(network, Network::Full)),
    })
    .ok();

    let mut opts = args.policy.options().map_err(|e| fail(format!("{e:#}")))?;
    opts.sandbox_mode = args.sandbox.map(Into::into);
    opts.approval = args.approval.map(Into::into);
    opts.require = args.require.map(Into::into);
    let mut remembered = args.approvals.remembered(&opts)?;
    opts.remembered_rules = std::mem::take(&mut remembered.rules);
    // The shared store's password never reaches the command: its file is masked like the
    // store, and its variable is never passed, whatever the allowlists say.
    let guarded = args.approvals.guarded(&opts, &remembered.location)?;
    let store_secret_files = guarded.secret_files();
    let store_secret_env = guarded.secret_env().map(str::to_string);
    let store_socket_dirs = guarded.socket_dirs();
    opts.network_allow = args.allow_net.clone();
    let mut credentials = credentials(&args.credential)?;
    for c in &credentials {
        opts.network_allow
            .extend(c.destinations().iter().map(|d| d.authority.to_string()));
    }
    opts.network_allow_private = args.allow_private.clone();
    let policy = load(&opts, Code::Failed)?;
    // Nor its endpoint: the command runs as this user, whom the server may let in.
    guarded
        .check_sandbox_reach(
            &args.allow_unix_socket,
            policy.network_policy(),
            matches!(network, Network::Full),
        )
        .map_err(|e| fail(e.0))?;
    credentials.extend(config_credentials(&policy, &network)?);
    cordon_egress::check_unambiguous(&credentials).map_err(|e| fail(e.to_string()))?;
    let cwd = match &args.cwd {
        Some(c) if c.is_absolute() => c.clone(),
        Some(c) => policy.workspace().join(c),
        None => std::env::current_dir()
            .map_err(|e| fail(format!("cannot read the current directory: {e}")))?,
    };
    let mut request = match shell_text {
        Some(text) => Request::shell(text.clone(), Some(cwd.clone())),
        None => {
            let words: Vec<String> = argv
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            Request::argv(&words, Some(cwd.clone()))
        }
    };
    request.session = args.session.clone();
    request.agent = args.agent.clone();
    request.operation_id = args.operation_id.clone();
    // The slot is taken before the call is judged and held until the run ends, so a
    // run that waited finds the slot as the previous one left it.
    let slot = match &args.slot {
        Some(key) => Some(
            cordon_sandbox::slot::Turn::take(&slot_request(&args, key), policy.slots(), &argv)
                .map_err(|e| fail(e.message))?,
        ),
        None => None,
    };
    let containment = contained::expected_containment(
        policy.sandbox_mode(),
        &network,
        matches!(args.home, HomeArg::Visible),
    );
    let mut flag_paths = FlagPaths::resolve(&args)?;
    flag_paths.masks.extend(store_secret_files);
    flag_paths.masks.extend(store_socket_dirs);
    flag_paths.hidden_env = store_secret_env;
    let mut builder = builder(&args, &flag_paths, argv, &policy, &opts.home, &cwd);
    if let Some(turn) = &slot {
        builder = builder.slot(turn.mounts());
    }
    let run_options = RunOptions {
        builder,
        network,
        verbose: args.verbose,
        require_full: required(&policy) == Require::Full,
        upstream_roots: upstream_roots(&args.upstream_ca)?,
        credentials,
    };
    let gate = remembered.gate(args.approvals.gate(policy, cordon_gate::Surface::Exec));
    // exec asks on the terminal whenever there is one (stdin and stderr both a TTY).
    let mut terminal = TerminalPrompter::from_stdio();
    let human = Human {
        prompter: terminal.as_mut().map(|t| t as &mut dyn Prompter),
        absent: if args.approvals.pending {
            Absent::Pending
        } else {
            Absent::Deny
        },
    };
    let executed = contained::execute(
        &gate,
        &request,
        &RealFs,
        containment,
        human,
        helper,
        &run_options,
        args.explain,
    );
    // The command wrote to this terminal last: whatever attributes it left on (concealed
    // text among them) must not hide cordon's lines below.
    if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        eprint!("{}", cordon_policy::terminal::RESET_ATTRIBUTES);
    }
    let ran = match executed {
        Ok(Executed::Ran(ran)) => ran,
        Ok(Executed::Refused(r)) => {
            if args.explain {
                crate::explain::print(gate.policy(), &r.decided);
            }
            eprintln!(
                "cordon: denied by policy: {}",
                clean(&r.decided.verdict.reason)
            );
            crate::explain::print_fixes(&r.fixes);
            return Ok(Code::Denied.get());
        }
        Ok(Executed::Pending(d)) => {
            let id = d.pending.map_or_else(|| "?".to_string(), |p| p.to_string());
            eprintln!(
                "cordon: approval needed: {} (pending approval {id}; answer it with `cordon approvals approve {id}` and run again)",
                clean(&d.verdict.reason)
            );
            return Ok(Code::Pending.get());
        }
        Err(e) => return Err(gate_error(e)),
    };
    if args.explain {
        crate::explain::print(gate.policy(), &ran.decided);
    }
    if let Some(out) = &report_file {
        let json = serde_json::to_string_pretty(&ran.report_json())? + "\n";
        out.write(json.as_bytes(), 0o644)
            .map_err(|e| fail(format!("cannot write the report: {e}")))?;
    }
    crate::explain::print_changes(&ran.outcome.report.changes, &ran.outcome.report.blocked);
    let (lookups, blocked): (Vec<_>, Vec<_>) = ran
        .blocked()
        .into_iter()
        .filter(|b| !matches!(b.kind.as_str(), "held" | "conflict" | "host-kept"))
        .partition(|b| b.kind == "lookup");
    crate::explain::print_lookups(&lookups, args.report.is_some());
    if let Some(first) = blocked.first() {
        let n = blocked.len();
        eprintln!(
            "cordon: containment blocked {n} action{} (first: {} {}){}",
            if n == 1 { "" } else { "s" },
            clean(&first.target),
            clean(&first.detail),
            if args.report.is_some() {
                ""
            } else {
                "; --report FILE lists them"
            }
        );
    }
    if ran.outcome.output_truncated {
        eprintln!("cordon: output was cut at the --max-output limit");
    }
    if ran.outcome.timed_out {
        eprintln!("cordon: the command timed out; every process of the sandbox was killed");
    }
    if let Some(turn) = slot
        && let Err(e) = turn.end(
            i32::from(ran.outcome.status),
            &crate::cmd::slots::record_run,
        )
    {
        eprintln!("cordon: {e}");
    }
    if let Some(e) = ran.rerun_error {
        return Err(fail(format!("the re-run did not happen: {e}")));
    }
    if let Some(e) = &ran.session_error {
        return Err(fail(e.clone()));
    }
    if let Some(e) = &ran.outcome.merge_error {
        return Err(fail(format!(
            "the command exited with status {}, but its changes did not all reach the host: {e}",
            ran.outcome.status
        )));
    }
    Ok(ran.outcome.status)
}

/// The slot `--slot KEY` and its flags ask for.
fn slot_request(args: &ExecOptions, key: &str) -> cordon_sandbox::slot::SlotRequest {
    cordon_sandbox::slot::SlotRequest {
        key: key.to_string(),
        scope: args.scope.map(Into::into),
        session: args.session.clone(),
        agent: args.agent.clone(),
        no_wait: args.no_wait,
        wait: args.slot_wait,
        tmp: args.slot_tmp,
        keep_startup: args.slot_keep_startup,
    }
}

/// Longest piece of shell text passed as one argument: Linux refuses an argument over
/// 128 KiB (`MAX_ARG_STRLEN`).
const ARG_PIECE: usize = 96 * 1024;

/// `SHELL -c -- TEXT`; longer text is passed in pieces that the shell joins and evaluates
/// (its helper variables are unset before the text runs, and the positional parameters
/// are cleared, as under `-c TEXT`).
fn shell_argv(shell: &str, text: &str) -> Vec<OsString> {
    if text.len() <= ARG_PIECE {
        // `--`: text starting with `-` (`--version`) is the command, not an option.
        return vec![shell.into(), "-c".into(), "--".into(), text.into()];
    }
    const JOIN: &str = r#"__cordon_text=; for __cordon_piece do __cordon_text="$__cordon_text$__cordon_piece"; done; set --; eval "unset __cordon_text __cordon_piece; $__cordon_text""#;
    let mut argv: Vec<OsString> = vec![
        shell.into(),
        "-c".into(),
        "--".into(),
        JOIN.into(),
        shell.into(),
    ];
    let mut rest = text.as_bytes();
    while !rest.is_empty() {
        let (piece, tail) = rest.split_at(rest.len().min(ARG_PIECE));
        argv.push(std::ffi::OsStr::from_bytes(piece).to_os_string());
        rest = tail;
    }
    argv
}

/// bash where the system keeps it (the sandbox shows the host's `/` read-only).
fn bash_path() -> &'static str {
    ["/bin/bash", "/usr/bin/bash"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .unwrap_or("bash")
}

fn gate_error(e: GateError) -> anyhow::Error {
    match e {
        GateError::Sandbox(s) if s.kind == SandboxErrorKind::NotFound => {
            Exit::new(Code::NotFound, s.message).into()
        }
        e => fail(e.to_string()),
    }
}

/// `--writable-root` and `--mask`, with relative paths resolved against the current
/// directory (as any command-line path is), not against HOME or the workspace.
struct FlagPaths {
    writable_roots: Vec<PathBuf>,
    masks: Vec<PathBuf>,
    /// cordon's own files named on the command line (`--store`, `--audit-file`).
    own: Vec<PathBuf>,
    ssh_agent: Option<PathBuf>,
    ssh_known_hosts: Option<PathBuf>,
    /// A variable never passed, even when allowed: `[store] password_env`'s.
    hidden_env: Option<String>,
}

impl FlagPaths {
    fn resolve(args: &ExecOptions) -> anyhow::Result<FlagPaths> {
        let here = || {
            std::env::current_dir()
                .map_err(|e| fail(format!("cannot read the current directory: {e}")))
        };
        let mut writable_roots = Vec::new();
        for r in &args.writable_root {
            if r.is_absolute() || r.starts_with("~") {
                writable_roots.push(r.clone());
                continue;
            }
            let joined = here()?.join(r);
            let dir = std::fs::canonicalize(&joined).map_err(|e| {
                fail(format!(
                    "cannot use the writable root {} ({}): {e}",
                    clean(&r.to_string_lossy()),
                    clean(&joined.to_string_lossy())
                ))
            })?;
            writable_roots.push(dir);
        }
        let mut masks = Vec::new();
        for m in &args.mask {
            if m.is_absolute() || m.starts_with("~") {
                masks.push(m.clone());
            } else {
                masks.push(cordon_policy::paths::clean(&here()?.join(m)));
            }
        }
        // A store or log named on the command line may live outside the state directory
        // (which every sandbox masks): the store's files, its signing key and the audit
        // log are masked too, so that the command never reads the key or rewrites records.
        // Joined, not cleaned: `link/../store.sqlite3` is where the kernel resolves it.
        let store = match &args.approvals.store {
            Some(s) => Some(here()?.join(s)),
            None => None,
        };
        let log = match (&args.approvals.audit_file, &store) {
            (Some(f), _) => Some(here()?.join(f)),
            (None, Some(store)) => Some(store.with_file_name("audit.jsonl")),
            (None, None) => None,
        };
        let own = store
            .iter()
            .flat_map(|s| cordon_store::files_of_store(s))
            .chain(log);
        // Those that do not exist yet are made before the sandbox is built
        // (`Gate::prepare_own_files`); the plan masks what exists then, and refuses a
        // run that could write beside them.
        let own: Vec<PathBuf> = own.collect();
        let ssh_agent = match args.ssh_agent {
            true => Some(std::env::var_os("SSH_AUTH_SOCK").map(PathBuf::from).ok_or_else(|| {
                fail("--ssh-agent: SSH_AUTH_SOCK is not set in cordon's environment; start an agent and add the key (`eval $(ssh-agent)`, `ssh-add`), or drop --ssh-agent")
            })?),
            false => None,
        };
        let ssh_known_hosts = match &args.ssh_known_hosts {
            Some(f) if f.is_relative() => Some(here()?.join(f)),
            other => other.clone(),
        };
        Ok(FlagPaths {
            writable_roots,
            masks,
            own,
            ssh_agent,
            ssh_known_hosts,
            hidden_env: None,
        })
    }
}

/// The sandbox the flags and the policy's `[sandbox]` table describe (the gate adds the
/// network).
fn builder(
    args: &ExecOptions,
    flag_paths: &FlagPaths,
    argv: Vec<OsString>,
    policy: &cordon_policy::Policy,
    home: &std::path::Path,
    cwd: &std::path::Path,
) -> SandboxBuilder {
    let settings = policy.sandbox();
    let mut b = SandboxBuilder::new(argv)
        .workspace(policy.workspace())
        .home(home)
        .mode(policy.sandbox_mode())
        .home_view(match args.home {
            HomeArg::Hidden => HomeView::Hidden,
            HomeArg::Visible => HomeView::Visible,
        })
        .timeout(args.timeout)
        .output_limit(args.max_output)
        .require(required(policy))
        .env_policy(EnvPolicy {
            allow: settings
                .env_allow
                .iter()
                .chain(&args.env)
                .filter(|n| flag_paths.hidden_env.as_ref() != Some(*n))
                .cloned()
                .collect(),
            allow_secret: settings
                .env_allow_secret
                .iter()
                .chain(&args.env_secret)
                .filter(|n| flag_paths.hidden_env.as_ref() != Some(*n))
                .cloned()
                .collect(),
        })
        .limits(Limits {
            cpu_seconds: args.cpu_limit,
            address_space: args.memory_limit,
            processes: args.process_limit,
            file_size: args.file_size_limit,
            open_files: args.open_files_limit.or(Limits::default().open_files),
            tmp_size: args.tmp_size,
        })
        .hold(args.hold || settings.hold)
        .changes_limit(args.changes_limit.or(settings.changes_limit))
        .cwd(cwd);
    for r in settings
        .writable_roots
        .iter()
        .chain(&flag_paths.writable_roots)
    {
        b = b.writable_root(r);
    }
    for m in settings.mask.iter().chain(&flag_paths.masks) {
        b = b.mask(m);
    }
    for o in &flag_paths.own {
        b = b.own_file(o);
    }
    for s in &args.allow_unix_socket {
        b = b.allow_unix_socket(s);
    }
    if let Some(agent) = &flag_paths.ssh_agent {
        b = b.ssh_agent(agent);
    }
    if let Some(kh) = &flag_paths.ssh_known_hosts {
        b = b.ssh_known_hosts(kh);
    }
    if let Some(list) = &settings.home_readable {
        b = b.home_readable(list.clone());
    }
    b
}
