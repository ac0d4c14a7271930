//! `cordon exec`: judge a command with the policy, then run it inside the sandbox.
//!
//! Exit status: the command's; 124 timeout; 125 cordon itself failed; 126 denied by
//! policy; 127 command not found.

use crate::exit::Exit;
use crate::setup::PolicyArgs;
use cordon_policy::{Decision, RealFs, Request, SandboxMode};
use cordon_sandbox::{
    EnvPolicy, HomeView, Limits, Network, Permit, Require, SandboxBuilder, SandboxErrorKind,
};
use std::ffi::OsString;
use std::io::{BufRead, Write};
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

/// Ask on the terminal; `false` when there is none or the answer is not yes.
fn ask_on_terminal(reason: &str, what: &str) -> bool {
    let Ok(tty) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
    else {
        return false;
    };
    let mut out = &tty;
    if write!(
        out,
        "cordon: {reason}\ncordon: run `{what}` in the sandbox? [y/N] "
    )
    .is_err()
    {
        return false;
    }
    let mut line = String::new();
    if std::io::BufReader::new(&tty).read_line(&mut line).is_err() {
        return false;
    }
    matches!(line.trim(), "y" | "Y" | "yes" | "YES" | "Yes")
}

/// Run `cordon exec`.
pub fn run(args: ExecArgs) -> anyhow::Result<u8> {
    let args = *args.options;
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

    // Policy first: the sandbox only ever contains a command the policy allowed.
    let mut opts = args.policy.options().map_err(|e| fail(format!("{e:#}")))?;
    opts.sandbox_mode = sandbox_mode;
    let policy = cordon_policy::Policy::load(&opts, &RealFs)
        .map_err(|e| fail(format!("invalid config: {e}")))?;
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
    let verdict = policy.decide(&request, &RealFs);
    let shown = request_text.clone().unwrap_or_else(|| {
        argv.iter()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ")
    });
    match verdict.decision {
        Decision::Allow => {}
        Decision::Deny => {
            return Err(Exit::new(DENIED, format!("denied by policy: {}", verdict.reason)).into());
        }
        Decision::Ask => {
            if !ask_on_terminal(&verdict.reason, &shown) {
                return Err(Exit::new(
                    DENIED,
                    format!(
                        "denied: {} (approval was needed and not given)",
                        verdict.reason
                    ),
                )
                .into());
            }
        }
    }
    let permit = Permit::policy_allowed(verdict.reason.clone());

    let settings = policy.sandbox();
    let mut builder = SandboxBuilder::new(argv)
        .workspace(policy.workspace())
        .home(&opts.home)
        .mode(policy.sandbox_mode())
        .network(network)
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
    let spec = builder.build().map_err(|e| fail(e.message))?;
    match cordon_sandbox::run(&spec, permit) {
        Ok(outcome) => {
            if let Some(path) = &args.report {
                let json = serde_json::to_string_pretty(&outcome.report)?;
                std::fs::write(path, json + "\n").map_err(|e| {
                    fail(format!(
                        "cannot write the report to {}: {e}",
                        path.display()
                    ))
                })?;
            }
            if let Some(first) = outcome.report.blocked.first() {
                let n = outcome.report.blocked.len();
                eprintln!(
                    "cordon: containment blocked {n} action{} (first: {} {}){}",
                    if n == 1 { "" } else { "s" },
                    first.target,
                    first.detail,
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
            Ok(outcome.status)
        }
        Err(e) if e.kind == SandboxErrorKind::NotFound => {
            Err(Exit::new(NOT_FOUND, e.message).into())
        }
        Err(e) => Err(fail(e.message)),
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
