//! `cordon serve`: the decision service (JSON-RPC 2.0, one object per line) on stdio or
//! a Unix socket. The service itself is `cordon-serve`.

use crate::exit::{Code, Exit};
use crate::setup::{ApprovalArgs, PolicyArgs};
use cordon_policy::terminal::sanitize_for_terminal as clean;
use cordon_serve::{AuditSync, ServeError, ServeOptions, Service};
use std::path::PathBuf;
use std::sync::Arc;

/// `--audit-sync`.
#[derive(clap::ValueEnum, Debug, Clone, Copy)]
pub enum SyncArg {
    /// Answer once the record is written; sync to disk at most 10 ms later.
    Batched,
    /// Answer once the record is written and synced (concurrent calls share a sync).
    Each,
}

/// Serve decisions to a harness: JSON-RPC 2.0, one object per line, on stdio or a
/// Unix socket.
#[derive(clap::Args)]
pub struct ServeArgs {
    #[command(flatten)]
    policy: PolicyArgs,
    /// Listen on this Unix socket (created 0600 in a 0700 directory of yours) instead of
    /// serving one client on stdin/stdout.
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// Most socket clients served at once.
    #[arg(long, value_name = "N", default_value_t = 64)]
    max_connections: usize,
    /// When audit records reach the disk.
    #[arg(long, value_enum, default_value = "batched")]
    audit_sync: SyncArg,
    /// The approval store (default: the state directory's store.sqlite3).
    #[arg(long, value_name = "FILE")]
    store: Option<PathBuf>,
    /// The audit log (default: the state directory's audit.jsonl).
    #[arg(long, value_name = "FILE")]
    audit_file: Option<PathBuf>,
    /// Write no audit records.
    #[arg(long)]
    no_audit: bool,
}

/// Run `cordon serve`.
pub fn run(args: ServeArgs) -> anyhow::Result<u8> {
    let mut load = args.policy.options()?;
    let remembered = ApprovalArgs {
        store: args.store.clone(),
        ..Default::default()
    }
    .remembered(&load)?;
    load.remembered_rules = remembered.rules;
    let mut options = ServeOptions::new(load);
    options.location = Some(remembered.location);
    // A rule remembered (or forgotten) while the service runs applies from its next look.
    options.follow_rules = true;
    // Hook calls through the service rewrite contained shell calls to this `cordon exec`
    // (with `[hook] contain`); the service's workspace goes with each call's cwd.
    options.hook_exec = match crate::cmd::hook::exec_line(
        &args.policy,
        args.store.as_ref(),
        args.audit_file.as_ref(),
        args.no_audit,
    ) {
        Ok(line) => Some(line),
        Err(e) => {
            // Such calls are then judged as they are (asked, not run contained).
            eprintln!(
                "cordon serve: hook calls will not be rewritten to run contained: {}",
                clean(&e)
            );
            None
        }
    };
    // Shipping the audit log to a collector (user or managed export.toml, OTEL_* variables).
    options.export = cordon_export::ExportConfig::load(&cordon_export::ConfigSources::system())
        .map_err(|e| {
            Exit::new(
                Code::Invalid,
                format!("audit export: {}", clean(&e.to_string())),
            )
        })?;
    options.store = args.store;
    options.audit = args.audit_file;
    options.no_audit = args.no_audit;
    options.max_connections = args.max_connections;
    options.audit_sync = match args.audit_sync {
        SyncArg::Batched => AuditSync::default(),
        SyncArg::Each => AuditSync::Each,
    };
    let failed = |e: ServeError| {
        let code = match e {
            ServeError::Config(_) | ServeError::Socket(_) => Code::Invalid,
            _ => Code::Internal,
        };
        Exit::new(code, clean(&e.to_string()))
    };
    let service = Arc::new(Service::start(options).map_err(failed)?);
    match args.socket {
        None => cordon_serve::listen::serve_stdio(&service),
        Some(path) => {
            let bound = cordon_serve::listen::bind(&path).map_err(failed)?;
            eprintln!(
                "cordon serve: listening on {}",
                clean(&bound.path().display().to_string())
            );
            cordon_serve::listen::serve_socket(Arc::clone(&service), bound)?;
        }
    }
    service.shutdown();
    Ok(0)
}
