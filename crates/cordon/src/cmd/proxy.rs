//! `cordon proxy`: the egress proxy on its own, for tools and harnesses that bring their
//! own containment. Parses flags, builds the policy, hands over to `cordon-egress`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use cordon_egress::{EgressProxy, Limits, ProxyConfig};
use cordon_policy::net::NetworkPolicy;
use cordon_policy::{LoadOptions, NetworkSettings, RealFs};

use crate::exit::{Code, Exit};

/// Run the allowlisting egress proxy on its own.
#[derive(clap::Args)]
pub struct ProxyArgs {
    /// TCP address to listen on (port 0 picks a free port; the address is printed).
    #[arg(
        long,
        value_name = "ADDR",
        default_value = "127.0.0.1:3128",
        conflicts_with = "unix"
    )]
    listen: SocketAddr,
    /// Listen on a Unix socket at PATH instead (the path must not exist).
    #[arg(long, value_name = "PATH")]
    unix: Option<PathBuf>,
    /// Allow a destination: `example.com`, `*.example.com`, optionally `:PORT`. Repeatable.
    /// Without any, every destination is refused.
    #[arg(long = "allow", value_name = "HOST[:PORT]")]
    allow: Vec<String>,
    /// Refuse a destination even if allowed (on every port unless `:PORT`). Repeatable.
    #[arg(long = "deny", value_name = "HOST[:PORT]")]
    deny: Vec<String>,
    /// Exempt a CIDR from the private-address refusal. Repeatable.
    #[arg(long = "allow-private", value_name = "CIDR")]
    allow_private: Vec<String>,
    /// A config file whose `[network]` table applies (the flags layer; repeatable). The
    /// managed, user and project files apply too, unless `--isolated`.
    #[arg(long = "config", value_name = "FILE")]
    config: Vec<PathBuf>,
    /// Ignore the managed, user and project config files.
    #[arg(long)]
    isolated: bool,
    /// Print every decision as a JSON line on stderr.
    #[arg(long)]
    verbose: bool,
    /// Client connections served at once.
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_connections)]
    max_connections: usize,
    /// Seconds without traffic after which a tunnel is closed.
    #[arg(long, value_name = "SECS", default_value_t = Limits::default().idle_timeout.as_secs())]
    idle_timeout: u64,
    /// Threads of the proxy's runtime.
    #[arg(long, value_name = "N", default_value_t = Limits::default().worker_threads)]
    threads: usize,
    /// Seconds allowed for resolving a name and for connecting.
    #[arg(long, value_name = "SECS", default_value_t = Limits::default().connect_timeout.as_secs())]
    connect_timeout: u64,
}

/// Run `cordon proxy` until SIGINT or SIGTERM.
pub fn run(args: ProxyArgs) -> anyhow::Result<u8> {
    let (configured, load) = network_settings(&args)?;
    let allow: Vec<String> = configured.allow.into_iter().chain(args.allow).collect();
    let deny: Vec<String> = configured.deny.into_iter().chain(args.deny).collect();
    let private: Vec<String> = configured
        .allow_private
        .into_iter()
        .chain(args.allow_private)
        .collect();
    let policy = NetworkPolicy::from_lists(&allow, &deny, &private)
        .map_err(|e| Exit::new(Code::Invalid, format!("{e}.")))?;
    // The same user reaches the shared store's server from wherever the proxy leads: the
    // check `cordon exec` makes, on the proxy's own allowlists.
    cordon_gate::locate_for_protection(&load, None)
        .and_then(|location| location.check_net_reach(&policy))
        .map_err(|e| {
            Exit::new(
                Code::Invalid,
                cordon_policy::terminal::sanitize_for_terminal(&e.to_string()),
            )
        })?;
    if args.max_connections == 0
        || args.idle_timeout == 0
        || args.connect_timeout == 0
        || args.threads == 0
    {
        return Err(Exit::new(Code::Invalid,
            "--max-connections, --threads, --idle-timeout and --connect-timeout must be at least 1.",
        )
        .into());
    }
    if policy.is_empty() {
        eprintln!("cordon proxy: no --allow given: every destination will be refused");
    }
    let limits = Limits {
        max_connections: args.max_connections,
        idle_timeout: Duration::from_secs(args.idle_timeout),
        connect_timeout: Duration::from_secs(args.connect_timeout),
        worker_threads: args.threads,
        ..Limits::default()
    };
    let mut config = ProxyConfig::new(policy).with_limits(limits);
    if args.verbose {
        config = config.with_sink(|event| eprintln!("{}", event.to_json()));
    }
    let started = match &args.unix {
        Some(path) => EgressProxy::start_unix(config, path),
        None => EgressProxy::start_tcp(config, args.listen),
    };
    let handle = started.map_err(|e| Exit::new(Code::Internal, format!("{e}.")))?;
    handle
        .serve_until_signal(|addr| eprintln!("cordon proxy: listening on {addr}"))
        .map_err(|e| {
            Exit::new(
                Code::Internal,
                format!("cordon proxy could not wait for signals: {e}."),
            )
        })?;
    Ok(0)
}

/// The `[network]` table merged over the config layers (trust rules included: an untrusted
/// project cannot widen the allowlist), and the options it was loaded with.
fn network_settings(args: &ProxyArgs) -> anyhow::Result<(NetworkSettings, LoadOptions)> {
    let workspace = std::env::current_dir().map_err(|e| {
        Exit::new(
            Code::Invalid,
            format!("cannot read the current directory: {e}."),
        )
    })?;
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .filter(|h| h.is_absolute());
    let home = match home {
        Some(h) => h,
        // Without a home there is no user layer to read; an isolated run needs none.
        None if args.isolated => PathBuf::from("/"),
        None => {
            return Err(Exit::new(
                Code::Invalid,
                "HOME is not set to an absolute path; set it or pass --isolated.",
            )
            .into());
        }
    };
    let options = LoadOptions {
        workspace,
        home,
        xdg_config_home: std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from),
        config_files: args.config.clone(),
        skip_default_files: args.isolated,
        ..LoadOptions::default()
    };
    let merged = cordon_policy::config::load(&options, &RealFs)
        .map_err(|e| Exit::new(Code::Invalid, e.to_string()))?;
    Ok((merged.network, options))
}
