//! `cordon ui`: the local web console (see the `cordon-ui` crate).
//!
//! Prints the URL that carries the launch token, then serves until interrupted. Exit
//! status: 2 bad usage (a non-loopback address without the flag that allows it); 1 the
//! console could not start.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use cordon_store::Store;
use cordon_ui::{ChangePlaces, Console, Places, UiOptions};

use crate::exit::{Code, Exit};
use crate::setup::{PolicyArgs, load};

/// Serve the local web console: live decisions, pending approvals, leases and rules.
#[derive(clap::Args)]
pub struct UiArgs {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:7878")]
    listen: SocketAddr,
    /// Allow a non-loopback --listen address: anyone on the network who learns the
    /// token can then answer approvals, over plain HTTP.
    #[arg(long)]
    dangerously_listen_non_loopback: bool,
    /// Store file (default: the state directory's store.sqlite3).
    #[arg(long, value_name = "F")]
    store: Option<PathBuf>,
    /// Audit log (default: the state directory's audit.jsonl, or the one next to --store).
    #[arg(long, value_name = "F")]
    audit_file: Option<PathBuf>,
    /// The policy edited approvals are judged by (the workspace defaults to the pending
    /// call's).
    #[command(flatten)]
    policy: PolicyArgs,
}

fn internal(e: impl std::fmt::Display) -> anyhow::Error {
    Exit::new(Code::Internal, e.to_string()).into()
}

/// Run `cordon ui`.
pub fn run(args: UiArgs) -> anyhow::Result<u8> {
    let store = match &args.store {
        Some(s) => s.clone(),
        None => cordon_store::default_store_path().map_err(internal)?,
    };
    let audit = match (&args.audit_file, &args.store) {
        (Some(f), _) => f.clone(),
        (None, Some(s)) => s.with_file_name("audit.jsonl"),
        (None, None) => cordon_store::default_audit_path().map_err(internal)?,
    };
    if !args.listen.ip().is_loopback() && !args.dangerously_listen_non_loopback {
        return Err(Exit::new(
            Code::Invalid,
            format!(
                "refusing to listen on {}, which is not a loopback address; use 127.0.0.1, or add --dangerously-listen-non-loopback",
                args.listen
            ),
        )
        .into());
    }
    if !args.listen.ip().is_loopback() {
        eprintln!(
            "cordon ui: WARNING: listening on {} (not loopback): anyone who can reach it and learns the token can answer approvals, and the traffic is not encrypted",
            args.listen
        );
    }
    // Where the shared state is (`[store]`), asked as every surface asks.
    let location = crate::setup::ApprovalArgs {
        store: Some(store.clone()),
        ..Default::default()
    }
    .location(&args.policy.options()?)?;
    // Open the store once now so a broken one is reported before the browser is.
    Store::open_at(&location.shared).map_err(internal)?;
    // The console's own records (its answers) reach the fleet's console like any
    // machine's decisions.
    let _shipping = if location.is_shared() {
        cordon_export::Shipper::new(&audit, &store, std::sync::Arc::clone(&location.shared))
            .spawn(std::time::Duration::from_secs(1), "cordon ui")
            .ok()
    } else {
        None
    };
    let policy = args.policy.clone();
    let shared_for_rules = std::sync::Arc::clone(&location.shared);
    let loader = move |workspace: Option<PathBuf>| -> Result<cordon_policy::Policy, String> {
        let mut p = policy.clone();
        if p.workspace.is_none() {
            p.workspace = workspace;
        }
        let mut opts = p.options().map_err(|e| e.to_string())?;
        opts.remembered_rules = Store::open_at(&shared_for_rules)
            .and_then(|s| s.rules())
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|r| r.rule)
            .collect();
        load(&opts, Code::Invalid).map_err(|e| e.to_string())
    };
    let console = Console::bind(UiOptions {
        listen: args.listen,
        dangerously_listen_non_loopback: args.dangerously_listen_non_loopback,
        places: Places {
            store,
            shared: location.is_shared().then_some(location),
            audit,
            changes: ChangePlaces::for_user(),
        },
        loader: Arc::new(loader),
    })
    .map_err(internal)?;
    // One write, and a closed stdout does not stop the console.
    let banner = format!(
        "cordon ui: open {}\ncordon ui: token {}\n",
        console.url(),
        console.token()
    );
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(banner.as_bytes()).and_then(|()| out.flush());
    drop(out);
    console.serve().map_err(internal)?;
    Ok(0)
}
