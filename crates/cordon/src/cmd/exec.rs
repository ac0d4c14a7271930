//! `cordon exec`: judge a command with the policy, then run it inside the sandbox.
//!
//! Exit status: the command's; 124 timeout; 125 cordon itself failed; 126 denied by
//! policy; 127 command not found.

use crate::exit::Exit;
use crate::setup::PolicyArgs;
use cordon_egress::{Decision as EgressDecision, EgressEvent, EgressProxy, ProxyConfig};
use cordon_policy::net::NetworkPolicy;
use cordon_policy::{ApprovalPolicy, Decision, RealFs, Request, SandboxMode};
use cordon_sandbox::{
    EnvPolicy, Helper, HelperHints, HomeView, Limits, Network, Permit, Require, SandboxBuilder,
    SandboxErrorKind,
};
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// cordon failed (bad flags, config, sandbox setup).
const FAILED: u8 = 125;
/// The policy denied the command.
const DENIED: u8 = 126;
/// The command was not found.
const NOT_FOUND: u8 = 127;

/// Arguments of `cordon exec` (boxed: they are many, and the subcommand enum holds one).
#[derive(clap::Args)]
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
    approvals: crate::approve::ApprovalArgs,
    /// Approval policy: untrusted, on-request (default), on-failure or never (overrides the
    /// config).
    #[arg(long, value_name = "POLICY")]
    approval: Option<String>,
    /// Let the command reach HOST[:PORT] through cordon's egress proxy (repeatable;
    /// `*.example.com` for subdomains).
    #[arg(long = "allow-net", value_name = "HOST[:PORT]")]
    allow_net: Vec<String>,
    /// Exempt this CIDR from the proxy's refusal of private addresses (repeatable).
    #[arg(long = "allow-private", value_name = "CIDR")]
    allow_private: Vec<String>,
    /// Print every egress decision as a JSON line on stderr.
    #[arg(long)]
    verbose: bool,
    /// Sandbox mode: read-only, workspace-write or full-access (overrides the config).
    #[arg(long, value_name = "MODE")]
    sandbox: Option<String>,
    /// Judge and run this shell text (`sh -c TEXT`) instead of an argv.
    #[arg(long, value_name = "TEXT", conflicts_with = "command")]
    shell: Option<String>,
    /// Working directory of the command (default: the current directory). It never
    /// widens the writable roots.
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// An extra writable root (repeatable).
    #[arg(long = "writable-root", value_name = "DIR")]
    writable_root: Vec<PathBuf>,
    /// HOME inside the sandbox: hidden (default: empty but for toolchains) or visible
    /// (read-only, secrets still masked).
    #[arg(long, value_name = "VIEW", default_value = "hidden")]
    home: String,
    /// Network: none (default) or full.
    #[arg(long, value_name = "NET", default_value = "none")]
    net: String,
    /// Reach the network only through an egress proxy already listening on this Unix
    /// socket (e.g. `cordon proxy`): the sandbox gets a forwarder on 127.0.0.1 and the
    /// proxy variables point at it.
    #[arg(long, value_name = "SOCKET", conflicts_with = "net")]
    proxy_socket: Option<PathBuf>,
    /// Wall-clock limit, e.g. `30`, `30s`, `500ms`, `5m`: the whole tree is killed, exit 124.
    #[arg(long, value_name = "DURATION")]
    timeout: Option<String>,
    /// Tier required: any (default; falls back to Landlock + seccomp) or full.
    #[arg(long, value_name = "TIER", default_value = "any")]
    require: String,
    /// Write the denial report (JSON) to this file.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Pass this environment variable (repeatable; secret-looking names are still dropped).
    #[arg(long = "env", value_name = "NAME")]
    env: Vec<String>,
    /// Pass this environment variable even though its name looks like a secret.
    #[arg(long = "env-secret", value_name = "NAME")]
    env_secret: Vec<String>,
    /// An extra path to mask (repeatable).
    #[arg(long, value_name = "PATH")]
    mask: Vec<PathBuf>,
    /// Pass at most this many bytes of the command's stdout, and of its stderr; the rest
    /// is dropped (the command keeps running).
    #[arg(long, value_name = "BYTES")]
    max_output: Option<u64>,
    /// RLIMIT_CPU in seconds.
    #[arg(long, value_name = "SECONDS")]
    cpu_limit: Option<u64>,
    /// RLIMIT_AS in bytes.
    #[arg(long, value_name = "BYTES")]
    memory_limit: Option<u64>,
    /// RLIMIT_NPROC.
    #[arg(long, value_name = "N")]
    process_limit: Option<u64>,
    /// RLIMIT_FSIZE in bytes.
    #[arg(long, value_name = "BYTES")]
    file_size_limit: Option<u64>,
    /// RLIMIT_NOFILE.
    #[arg(long, value_name = "N")]
    open_files_limit: Option<u64>,
    /// The command and its arguments (after `--`).
    #[arg(last = true, value_name = "CMD")]
    command: Vec<OsString>,
}

fn fail(msg: impl Into<String>) -> anyhow::Error {
    Exit::new(FAILED, msg).into()
}

/// Parse `30`, `30s`, `500ms`, `5m`, `1h`.
fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = match s.find(|c: char| !c.is_ascii_digit() && c != '.') {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let n: f64 = num
        .parse()
        .map_err(|_| format!("invalid duration `{s}`: expected e.g. 30s, 500ms or 5m"))?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(format!("invalid duration unit in `{s}`: use ms, s, m or h")),
    };
    if !secs.is_finite() || secs <= 0.0 || secs > 1e9 {
        return Err(format!("invalid duration `{s}`: it must be positive"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Run `cordon exec`.
pub fn run(args: ExecArgs) -> anyhow::Result<u8> {
    let mut args = *args.options;
    // exec asks on the terminal whenever there is one (stdin and stderr both a TTY).
    args.approvals.interactive = true;
    let (argv, request_text): (Vec<OsString>, Option<String>) = match &args.shell {
        Some(text) => (
            vec!["/bin/sh".into(), "-c".into(), text.into()],
            Some(text.clone()),
        ),
        None => (args.command.clone(), None),
    };
    if argv.is_empty() {
        return Err(fail(
            "no command given: use `cordon exec -- CMD [ARG…]` or `--shell TEXT`",
        ));
    }
    let sandbox_mode = match &args.sandbox {
        Some(s) => Some(s.parse::<SandboxMode>().map_err(fail)?),
        None => None,
    };
    let home_view = match args.home.as_str() {
        "hidden" => HomeView::Hidden,
        "visible" => HomeView::Visible,
        other => {
            return Err(fail(format!(
                "unknown --home `{other}`: expected hidden or visible"
            )));
        }
    };
    let network = match args.net.as_str() {
        _ if args.proxy_socket.is_some() => Network::Proxy {
            socket: args.proxy_socket.clone().unwrap_or_default(),
            port: cordon_sandbox::DEFAULT_PROXY_PORT,
        },
        "none" => Network::None,
        "full" => Network::Full,
        other => {
            return Err(fail(format!(
                "unknown --net `{other}`: expected none or full"
            )));
        }
    };
    let require = match args.require.as_str() {
        "any" => Require::Any,
        "full" => Require::Full,
        other => {
            return Err(fail(format!(
                "unknown --require `{other}`: expected any or full"
            )));
        }
    };
    let timeout = match &args.timeout {
        Some(t) => Some(parse_duration(t).map_err(fail)?),
        None => None,
    };

    // Start the sandbox helper now, so that it loads while the policy is judged and the
    // audit record is written. It does nothing until it gets a spec, which only an allow
    // below sends; on any other path it is dropped and exits. Starting it while this
    // process has a single thread also keeps its pipe ends out of other children.
    // `--net` alone decides whether the command shares the host's network (the policy
    // can only add a proxy to an isolated one), so the helper can make its namespaces
    // right away.
    let helper = Helper::spawn(HelperHints {
        capture_output: args.max_output.is_some(),
        host_network: Some(matches!(network, Network::Full)),
    })
    .ok();

    // Policy first: the sandbox only ever contains a command the policy allowed.
    let mut opts = args.policy.options().map_err(|e| fail(format!("{e:#}")))?;
    opts.sandbox_mode = sandbox_mode;
    opts.approval = match &args.approval {
        Some(a) => Some(a.parse::<ApprovalPolicy>().map_err(fail)?),
        None => None,
    };
    opts.remembered_rules = args.approvals.remembered_rules();
    opts.network_allow = args.allow_net.clone();
    opts.network_allow_private = args.allow_private.clone();
    let mut policy = cordon_policy::Policy::load(&opts, &RealFs)
        .map_err(|e| fail(format!("invalid config: {e}")))?;
    let approval = policy.approval();
    if approval == ApprovalPolicy::Never {
        policy.set_no_human(true);
    }
    let cwd = match &args.cwd {
        Some(c) if c.is_absolute() => c.clone(),
        Some(c) => policy.workspace().join(c),
        None => std::env::current_dir()
            .map_err(|e| fail(format!("cannot read the current directory: {e}")))?,
    };
    let request = match &request_text {
        Some(text) => Request::shell(text.clone(), Some(cwd.clone())),
        None => {
            let words: Vec<String> = argv
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            Request::argv(&words, Some(cwd.clone()))
        }
    };
    let ops = policy.operations(&request, &RealFs);
    let mut verdict = policy.judge(&ops);
    if approval == ApprovalPolicy::Untrusted
        && verdict.decision == Decision::Allow
        && !known_read_only(&verdict)
    {
        verdict.decision = Decision::Ask;
        verdict.reason = format!(
            "the untrusted approval policy runs only known read-only commands without asking ({})",
            verdict.reason
        );
    }
    // on-failure: an ask runs in the sandbox first; a human is asked only if containment
    // demonstrably blocked something.
    let deferred = approval == ApprovalPolicy::OnFailure && verdict.decision == Decision::Ask;
    let settled = if deferred {
        crate::approve::Settled {
            verdict,
            pending: None,
            answer: Some("deferred (on-failure)".into()),
            lease: None,
        }
    } else {
        args.approvals
            .settle(&policy, &request, &ops, verdict, true)
    };
    let audit = |settled: &crate::approve::Settled, extra: serde_json::Value| {
        let rec = crate::approve::record("exec", &policy, &request, settled, extra);
        args.approvals.audit(rec)
    };
    if let Some(id) = settled.pending {
        audit(&settled, serde_json::json!({}))
            .map_err(|e| fail(format!("cannot write the audit log: {e}")))?;
        eprintln!(
            "cordon: approval needed: {} (pending approval {id}; answer it with `cordon approvals approve {id}` and run again)",
            settled.verdict.reason
        );
        return Ok(crate::approve::PENDING);
    }
    match settled.verdict.decision {
        Decision::Allow => {}
        Decision::Ask if deferred => {}
        _ => {
            let _ = audit(&settled, serde_json::json!({}));
            return Err(Exit::new(
                DENIED,
                format!("denied by policy: {}", settled.verdict.reason),
            )
            .into());
        }
    }
    // The egress proxy runs here, outside the sandbox, when anything may be reached (and
    // under on-failure, so that refused connections are seen and can be asked about).
    // The policy's `[network]` already holds `--allow-net` and `--allow-private`.
    let net_settings = policy.network().clone();
    let net_policy = NetworkPolicy::from_settings(&net_settings)
        .map_err(|e| fail(format!("invalid network allowlist: {e}")))?;

    let settings = policy.sandbox();
    let mut builder = SandboxBuilder::new(argv.clone())
        .workspace(policy.workspace())
        .home(&opts.home)
        .mode(policy.sandbox_mode())
        .home_view(home_view)
        .timeout(timeout)
        .output_limit(args.max_output)
        .require(require)
        .env_policy(EnvPolicy {
            allow: settings
                .env_allow
                .iter()
                .cloned()
                .chain(args.env.clone())
                .collect(),
            allow_secret: settings
                .env_allow_secret
                .iter()
                .cloned()
                .chain(args.env_secret.clone())
                .collect(),
        })
        .limits(Limits {
            cpu_seconds: args.cpu_limit,
            address_space: args.memory_limit,
            processes: args.process_limit,
            file_size: args.file_size_limit,
            open_files: args.open_files_limit.or(Limits::default().open_files),
        });
    builder = builder.cwd(&cwd);
    for r in settings.writable_roots.iter().chain(&args.writable_root) {
        builder = builder.writable_root(r);
    }
    for m in settings.mask.iter().chain(&args.mask) {
        builder = builder.mask(m);
    }
    if let Some(list) = &settings.home_readable {
        builder = builder.home_readable(list.clone());
    }

    let want_proxy = matches!(network, Network::None)
        && (!net_policy.is_empty() || approval == ApprovalPolicy::OnFailure);
    // Build the sandbox and hold it just before the command would start; the caller
    // lets it go.
    let prepare = |helper: Option<Helper>,
                   builder: SandboxBuilder,
                   net_policy: &NetworkPolicy|
     -> anyhow::Result<Prepared> {
        let proxy = if want_proxy {
            Some(Egress::start(net_policy.clone(), args.verbose)?)
        } else {
            None
        };
        let network = match &proxy {
            Some(p) => Network::Proxy {
                socket: p.socket.clone(),
                port: cordon_sandbox::DEFAULT_PROXY_PORT,
            },
            None => network.clone(),
        };
        let spec = builder
            .network(network)
            .build()
            .map_err(|e| fail(e.message))?;
        let permit = Permit::from_verdict(&settled.verdict)
            .or_else(|| Permit::on_failure_trial(&settled.verdict, approval))
            .ok_or_else(|| fail("internal error: no permit for a call that was not allowed"))?;
        let helper = match helper {
            Some(h) => h,
            None => Helper::spawn(HelperHints::for_spec(&spec)).map_err(|e| fail(e.message))?,
        };
        let started = helper.start(&spec, permit).map_err(|e| fail(e.message))?;
        Ok(Prepared { started, proxy })
    };
    let go = |prepared: Prepared| -> anyhow::Result<Run> {
        let result = prepared.started.finish();
        let events = prepared.proxy.map(Egress::finish).unwrap_or_default();
        match result {
            Ok(outcome) => Ok(Run { outcome, events }),
            Err(e) if e.kind == SandboxErrorKind::NotFound => {
                Err(Exit::new(NOT_FOUND, e.message).into())
            }
            Err(e) => Err(fail(e.message)),
        }
    };
    let prepared = prepare(helper, builder.clone(), &net_policy)?;
    // A decision that cannot be recorded does not run: the sandbox is built meanwhile,
    // but its command waits for `go`, and dropping `prepared` stops it.
    audit(&settled, serde_json::json!({"phase": "start"})).map_err(|e| {
        fail(format!(
            "cannot write the audit log ({e}); fix it or pass --no-audit"
        ))
    })?;
    let mut run = go(prepared)?;
    let mut escalation = serde_json::Value::Null;
    let mut rerun_refused: Option<String> = None;
    if approval == ApprovalPolicy::OnFailure
        && let Some(extra) = Escalation::from_run(&run, &policy)
    {
        let fp = format!("{}+{}", policy.fingerprint(&request), extra.key());
        let (granted, answer) = escalate(&args.approvals, &request, &fp, &extra)?;
        escalation = serde_json::json!({"asked": extra.describe(), "answer": answer});
        if granted {
            eprintln!("cordon: re-running with {} (approved)", extra.describe());
            let (b, n) = extra.apply(builder.clone(), &net_policy, &net_settings)?;
            let prepared = prepare(None, b, &n)?;
            // The re-run has more than the first: it is recorded before it starts, too.
            // If it cannot be, it does not start, and the first run still gets its end.
            match audit(
                &settled,
                serde_json::json!({"phase": "start", "escalation": escalation}),
            ) {
                Ok(()) => match go(prepared) {
                    Ok(r) => run = r,
                    // The first run still gets its end record.
                    Err(e) => {
                        rerun_refused = Some(format!("the re-run failed: {e:#}"));
                        escalation["rerun"] = serde_json::json!(format!("failed: {e:#}"));
                    }
                },
                Err(e) => {
                    drop(prepared);
                    rerun_refused = Some(format!(
                        "cannot write the audit log ({e}); the re-run did not start"
                    ));
                    escalation["rerun"] = serde_json::json!("not started: the audit log failed");
                }
            }
        }
    }

    let report = report_json(&run);
    if let Some(path) = &args.report {
        let json = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, json + "\n").map_err(|e| {
            fail(format!(
                "cannot write the report to {}: {e}",
                path.display()
            ))
        })?;
    }
    let outcome = &run.outcome;
    let blocked = report["blocked"].as_array().cloned().unwrap_or_default();
    if let Some(first) = blocked.first() {
        let n = blocked.len();
        eprintln!(
            "cordon: containment blocked {n} action{} (first: {} {}){}",
            if n == 1 { "" } else { "s" },
            first["target"].as_str().unwrap_or(""),
            first["detail"].as_str().unwrap_or(""),
            if args.report.is_some() {
                ""
            } else {
                "; --report FILE lists them"
            }
        );
    }
    if outcome.output_truncated {
        eprintln!("cordon: output was cut at the --max-output limit");
    }
    if outcome.timed_out {
        eprintln!("cordon: the command timed out; every process of the sandbox was killed");
    }
    let end = audit(
        &settled,
        serde_json::json!({
            "phase": "end",
            "exit_status": outcome.status,
            "timed_out": outcome.timed_out,
            "tier": report["tier"],
            "contained": blocked,
            "escalation": escalation,
        }),
    );
    if let Err(e) = end {
        eprintln!("cordon: the end of this run could not be written to the audit log: {e}");
    }
    if let Some(msg) = rerun_refused {
        return Err(fail(msg));
    }
    Ok(outcome.status)
}

/// A sandbox built and waiting for its go, with the egress proxy serving it.
struct Prepared {
    started: cordon_sandbox::Started,
    proxy: Option<Egress>,
}

/// One sandboxed run and the egress decisions made during it.
struct Run {
    outcome: cordon_sandbox::Outcome,
    events: Vec<EgressEvent>,
}

/// Is every operation of the call a known read-only one (what `untrusted` runs unasked)?
fn known_read_only(v: &cordon_policy::Verdict) -> bool {
    v.findings
        .iter()
        .all(|f| matches!(f.op, "run" | "read" | "list") && f.decision == Decision::Allow)
}

/// The sandbox's denial report with the proxy's decisions merged in: refused connections
/// become `connect` entries of `blocked`, and every decision is listed under `egress`.
fn report_json(run: &Run) -> serde_json::Value {
    let mut report = serde_json::to_value(&run.outcome.report).unwrap_or(serde_json::Value::Null);
    if let Some(blocked) = report["blocked"].as_array_mut() {
        for e in run
            .events
            .iter()
            .filter(|e| e.decision == EgressDecision::Deny)
        {
            blocked.push(serde_json::json!({
                "kind": "connect",
                "target": format!("{}:{}", e.host, e.port),
                "detail": format!("{} ({})", e.reason, e.code),
            }));
        }
    }
    report["egress"] = serde_json::to_value(&run.events).unwrap_or(serde_json::Value::Null);
    report
}

/// The egress proxy of one run, on a Unix socket in a private directory.
struct Egress {
    handle: cordon_egress::EgressHandle,
    dir: PathBuf,
    socket: PathBuf,
}

impl Egress {
    fn start(policy: NetworkPolicy, verbose: bool) -> anyhow::Result<Egress> {
        use std::os::unix::fs::DirBuilderExt;
        let base = std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute() && p.is_dir())
            .unwrap_or_else(std::env::temp_dir);
        let nonce = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let dir = base.join(format!("cordon-egress-{}-{nonce:08x}", std::process::id()));
        // `create` (not `create_all`) fails if anything is already there: no planted path.
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(|e| {
                fail(format!(
                    "cannot create the egress directory {}: {e}",
                    dir.display()
                ))
            })?;
        let socket = dir.join("egress.sock");
        let mut config = ProxyConfig::new(policy);
        if verbose {
            config = config.with_sink(|e: &EgressEvent| eprintln!("{}", e.to_json()));
        }
        // The proxy's threads must leave SIGINT, SIGTERM and SIGHUP to the thread that
        // forwards them to the command.
        let started = cordon_sandbox::with_forwarded_signals_blocked(|| {
            EgressProxy::start_unix(config, &socket)
        });
        let handle = started.map_err(|e| {
            let _ = std::fs::remove_dir(&dir);
            fail(format!("cannot start the egress proxy: {e}"))
        })?;
        Ok(Egress {
            handle,
            dir,
            socket,
        })
    }

    fn finish(self) -> Vec<EgressEvent> {
        let events = self.handle.events();
        self.handle.shutdown();
        let _ = std::fs::remove_file(&self.socket);
        let _ = std::fs::remove_dir(&self.dir);
        events
    }
}

/// The one extra permission an `on-failure` run may ask for.
enum Escalation {
    /// Make this directory writable (the one holding the refused write).
    Write(PathBuf),
    /// Allow this host (and port) through the proxy.
    Host(String),
}

impl Escalation {
    /// The first blocked write or refused-but-not-forbidden connection of a run.
    fn from_run(run: &Run, policy: &cordon_policy::Policy) -> Option<Escalation> {
        for b in &run.outcome.report.blocked {
            if b.kind == cordon_sandbox::BlockedKind::Write {
                let p = PathBuf::from(&b.target);
                let dir = if p.is_dir() {
                    p
                } else {
                    p.parent()?.to_path_buf()
                };
                // Ask about where the write would really land: the sandboxed command may
                // have planted symlinks on the way. Never offer a protected or critical
                // directory (HOME, the workspace's parents, agent config, `.git/hooks`…).
                let Ok(dir) = std::fs::canonicalize(&dir) else {
                    continue;
                };
                let home = policy.home();
                let offered = dir.is_dir()
                    && cordon_policy::guards::critical_delete(&dir, home, policy.workspace())
                        .is_none()
                    && cordon_policy::guards::protected_write(&dir.join("x"), home).is_none();
                if offered {
                    return Some(Escalation::Write(dir));
                }
            }
        }
        run.events
            .iter()
            .find(|e| {
                e.decision == EgressDecision::Deny
                    && matches!(
                        e.code.as_str(),
                        "no-allowlist" | "not-allowed" | "port-not-allowed"
                    )
            })
            .map(|e| Escalation::Host(format!("{}:{}", e.host, e.port)))
    }

    fn key(&self) -> String {
        match self {
            Escalation::Write(p) => format!("write:{}", p.display()),
            Escalation::Host(h) => format!("net:{h}"),
        }
    }

    fn describe(&self) -> String {
        match self {
            Escalation::Write(p) => format!("write access to the directory {}", p.display()),
            Escalation::Host(h) => format!("network access to {h}"),
        }
    }

    /// The builder and network policy for the re-run: exactly one thing more.
    fn apply(
        &self,
        builder: SandboxBuilder,
        net: &NetworkPolicy,
        settings: &cordon_policy::NetworkSettings,
    ) -> anyhow::Result<(SandboxBuilder, NetworkPolicy)> {
        match self {
            Escalation::Write(p) => {
                // The directory must still be what the human approved.
                if std::fs::canonicalize(p).ok().as_ref() != Some(p) {
                    return Err(fail(format!(
                        "{} changed after it was approved; not re-running",
                        p.display()
                    )));
                }
                Ok((builder.writable_root(p), net.clone()))
            }
            Escalation::Host(h) => {
                let mut s = settings.clone();
                s.allow.push(h.clone());
                let n = NetworkPolicy::from_settings(&s)
                    .map_err(|e| fail(format!("cannot allow {h}: {e}")))?;
                Ok((builder, n))
            }
        }
    }
}

/// Ask whether to re-run with the extra permission: an existing approval of exactly this
/// escalation, a human at the terminal, or (with `--pending`) a pending record.
fn escalate(
    approvals: &crate::approve::ApprovalArgs,
    request: &Request,
    fingerprint: &str,
    extra: &Escalation,
) -> anyhow::Result<(bool, String)> {
    use cordon_store::{AskContext, Resolution};
    let store = match approvals.open_store() {
        Ok(s) => s,
        Err(e) => {
            return Ok((
                false,
                format!("not asked: the approval store cannot be used ({e})"),
            ));
        }
    };
    let ctx = AskContext {
        fingerprint: fingerprint.to_string(),
        session: request.session.clone(),
        tool: request.tool.clone(),
        tool_kind: "Bash".into(),
        target: extra.describe(),
        consequence: "The command runs again with this one extra permission.".into(),
        reason: format!(
            "containment blocked the command; re-run with {}?",
            extra.describe()
        ),
        suggestion: None,
        request: cordon_store::redact(&request.canonical_json()),
        verdict: serde_json::json!({"escalation": extra.describe()}),
    };
    match approvals.resolve(&store, &ctx) {
        Ok(Resolution::Allow(g)) => Ok((true, g.answer().to_string())),
        Ok(Resolution::Pending(id)) => {
            eprintln!(
                "cordon: containment blocked the command; re-running with {} needs approval (pending approval {}; `cordon approvals approve {}`, then run again)",
                extra.describe(),
                id.0,
                id.0
            );
            Ok((false, format!("pending {}", id.0)))
        }
        Ok(Resolution::Deny(r)) => Ok((false, r.to_string())),
        Err(e) => Ok((false, format!("not asked: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert!(parse_duration("0").is_err());
        assert!(parse_duration("5 parsecs").is_err());
        assert!(parse_duration("-1").is_err());
    }
}
