//! `cordon audit`: verify, tail and export the hash-chained audit log; print the public
//! key of its signatures; re-anchor it; ship it to an OpenTelemetry collector.
//!
//! Exit status: 0 the log is intact (or the listing or shipping succeeded); 4 `verify`
//! (or `reanchor`) found a break (the report names the first broken line and the kind of
//! break, in one sentence); 2 bad usage or configuration; 1 the log or the store could
//! not be read, or the collector did not take the records in time. The log is `--file F`, else
//! `$CORDON_STATE_DIR/audit.jsonl`, `$XDG_STATE_HOME/cordon/audit.jsonl` or
//! `~/.local/state/cordon/audit.jsonl`.

use std::io::Write;
use std::path::PathBuf;
use std::time::SystemTime;

use cordon_policy::terminal::{path_for_terminal, sanitize_for_terminal};
use cordon_store::{ExportFilter, VerifyReport};

use crate::exit::{Code, Exit};

/// Exit status of `cordon audit verify` when the chain is broken.
pub const BROKEN: u8 = 4;

/// Subcommands of `cordon audit`.
#[derive(clap::Subcommand)]
pub enum AuditCommand {
    /// Check the hash chain, the head anchored in the store and (with --key) the
    /// signatures; exit 0 if intact, 4 at the first break.
    Verify {
        /// Audit log to check (default: the state directory's audit.jsonl).
        #[arg(long, value_name = "F")]
        file: Option<PathBuf>,
        /// Store holding the log's anchored head (default: the state directory's).
        #[arg(long, value_name = "F")]
        store: Option<PathBuf>,
        /// Also check signatures: with no value, with the key beside the store; else with
        /// this public key (as `cordon audit pubkey` prints it, or a file holding it).
        #[arg(long, value_name = "KEY", num_args = 0..=1, default_missing_value = "")]
        key: Option<String>,
    },
    /// Print the public key that verifies this machine's audit signatures (creating the
    /// signing key when there is none), for `cordon audit verify --key` elsewhere.
    Pubkey {
        /// Store beside which the key lives (default: the state directory's).
        #[arg(long, value_name = "F")]
        store: Option<PathBuf>,
    },
    /// Trust the log as it is now: anchor its current head in the store and forget what
    /// writers found (after reading what `verify` reported). Refused unless the chain
    /// itself verifies.
    Reanchor {
        /// Audit log (default: the state directory's audit.jsonl).
        #[arg(long, value_name = "F")]
        file: Option<PathBuf>,
        /// Store holding the anchor (default: the state directory's).
        #[arg(long, value_name = "F")]
        store: Option<PathBuf>,
        /// Anchor the log even when it ends before the anchored head, or is another log
        /// than the one anchored: accepts the records cut or the replacement.
        #[arg(long)]
        allow_rollback: bool,
    },
    /// Print the last records: one readable line each (time, session, tool, decision,
    /// target, rule) on a terminal; one JSON object per line with --json or when stdout
    /// is not a terminal.
    Tail {
        /// How many records.
        #[arg(short = 'n', long = "lines", default_value_t = 10)]
        n: usize,
        /// One JSON object per line, as stored, even on a terminal.
        #[arg(long)]
        json: bool,
        /// Audit log to read.
        #[arg(long, value_name = "F")]
        file: Option<PathBuf>,
        /// Keep printing records as they are appended, until interrupted.
        #[arg(short = 'f', long)]
        follow: bool,
    },
    /// Print the records matching every filter given, byte for byte as stored; with
    /// --otlp, ship every record not yet shipped to the configured OpenTelemetry
    /// collector instead, and wait until it took them.
    Export {
        /// Ship to the OTLP endpoint (export.toml or OTEL_EXPORTER_OTLP_*) now.
        #[arg(long, conflicts_with_all = ["json", "session", "tool", "decision", "since", "until"])]
        otlp: bool,
        /// With --otlp: how long to keep retrying while the collector is away.
        #[arg(
            long,
            value_name = "DURATION",
            default_value = "60s",
            requires = "otlp"
        )]
        timeout: String,
        /// With --otlp: the store holding the export cursor (default: the state directory's).
        #[arg(long, value_name = "F", requires = "otlp")]
        store: Option<PathBuf>,
        /// Output JSON lines (the only format; accepted for explicitness).
        #[arg(long)]
        json: bool,
        /// Only this session.
        #[arg(long)]
        session: Option<String>,
        /// Only this tool.
        #[arg(long)]
        tool: Option<String>,
        /// Only this decision (allow, ask, deny).
        #[arg(long)]
        decision: Option<String>,
        /// Only records at or after this time (RFC 3339, or an age such as 2h).
        #[arg(long, value_name = "TIME")]
        since: Option<String>,
        /// Only records before this time (RFC 3339, or an age such as 30m).
        #[arg(long, value_name = "TIME")]
        until: Option<String>,
        /// Audit log to read.
        #[arg(long, value_name = "F")]
        file: Option<PathBuf>,
    },
}

fn log_path(file: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    match file {
        Some(f) => Ok(f),
        None => cordon_store::default_audit_path()
            .map_err(|e| Exit::new(Code::Internal, e.to_string()).into()),
    }
}

fn store_path(store: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    match store {
        Some(s) => Ok(s),
        None => cordon_store::default_store_path()
            .map_err(|e| Exit::new(Code::Internal, e.to_string()).into()),
    }
}

/// The key `--key` names: empty, the local key's public half; a file holding a public
/// key; or the key itself.
fn public_key(arg: &str, store: &std::path::Path) -> anyhow::Result<cordon_store::AuditPublicKey> {
    if arg.is_empty() {
        let path = cordon_store::key_path_for_store(store);
        return cordon_store::AuditKey::load(&path)
            .map(|k| k.public())
            .map_err(store_err);
    }
    // A file the user names on the command line: read as given, which may be a pipe
    // (`<(…)`), the way `cat` reads it.
    #[allow(clippy::disallowed_methods)]
    let text = match std::fs::read_to_string(arg) {
        Ok(t) => t,
        Err(_) => arg.to_string(),
    };
    cordon_store::AuditPublicKey::parse(&text)
        .map_err(|why| Exit::new(Code::Invalid, format!("--key: {why}")).into())
}

fn time_arg(flag: &str, value: Option<String>) -> anyhow::Result<Option<SystemTime>> {
    value
        .map(|v| {
            cordon_store::parse_time(&v, SystemTime::now())
                .map_err(|why| Exit::new(Code::Invalid, format!("--{flag}: {why}")).into())
        })
        .transpose()
}

fn store_err(e: cordon_store::StoreError) -> anyhow::Error {
    Exit::new(Code::Internal, e.to_string()).into()
}

/// Run `cordon audit`.
pub fn run(c: AuditCommand) -> anyhow::Result<u8> {
    match c {
        AuditCommand::Verify { file, store, key } => {
            let path = log_path(file)?;
            let store_path = store_path(store)?;
            let key = key.map(|k| public_key(&k, &store_path)).transpose()?;
            // The store is read, never created, by a check.
            let store = if store_path.exists() {
                Some(cordon_store::Store::open(&store_path).map_err(store_err)?)
            } else {
                None
            };
            let opts = cordon_store::VerifyOptions {
                store: store.as_ref(),
                key: key.as_ref(),
            };
            let checked = cordon_store::verify_with(&path, &opts).map_err(store_err)?;
            match checked.report {
                VerifyReport::Ok { records, head } => {
                    println!(
                        "OK: {} — {records} records, head {head}",
                        path_for_terminal(&path)
                    );
                    match checked.anchored {
                        Some(seq) => println!("anchored: the store's head is record {seq}"),
                        None => println!(
                            "not anchored: the store holds no head for this log, so a cut end or an older copy cannot be told"
                        ),
                    }
                    match checked.signed_through {
                        Some(seq) => println!("signed: every record through {seq}"),
                        None => println!(
                            "signatures not checked (--key): a rewrite with the chain recomputed cannot be told"
                        ),
                    }
                    Ok(0)
                }
                VerifyReport::Broken {
                    line,
                    why,
                    detail,
                    records_ok,
                } => {
                    println!(
                        "BROKEN: {} line {line} ({}): {}; {records_ok} records verified before it",
                        path_for_terminal(&path),
                        why.as_str(),
                        sanitize_for_terminal(&detail)
                    );
                    Ok(BROKEN)
                }
            }
        }
        AuditCommand::Pubkey { store } => {
            let key_path = cordon_store::key_path_for_store(&store_path(store)?);
            let key = cordon_store::AuditKey::load_or_create(&key_path).map_err(store_err)?;
            println!("{}", key.public().to_hex());
            Ok(0)
        }
        AuditCommand::Reanchor {
            file,
            store,
            allow_rollback,
        } => {
            let path = log_path(file)?;
            let store_path = store_path(store)?;
            // The local key checks every signature: a human re-anchors a log the key
            // still vouches for, never one rewritten or stripped of its signatures.
            let key = public_key("", &store_path)?;
            let store = cordon_store::Store::open(&store_path).map_err(store_err)?;
            let done = cordon_store::reanchor(&path, &store, Some(&key), allow_rollback)
                .map_err(store_err)?;
            let head = |h: &cordon_store::AuditHead| format!("record {} (hash {})", h.seq, h.hash);
            match &done.old {
                Some(old) => {
                    println!("old head: {}", head(&old.head));
                    if let Some(f) = &old.finding {
                        println!("finding: {}", sanitize_for_terminal(f));
                    }
                }
                None => println!("old head: none"),
            }
            if let Some(why) = &done.refused {
                println!(
                    "REFUSED: {}: {}; nothing was anchored",
                    path_for_terminal(&path),
                    sanitize_for_terminal(why)
                );
                return Ok(BROKEN);
            }
            match done.report {
                VerifyReport::Ok { .. } => {
                    if let Some(new) = &done.new {
                        println!("new head: {}", head(new));
                    }
                    if done.old.as_ref().is_some_and(|o| o.finding.is_some()) {
                        println!("the finding above is cleared");
                    }
                    println!("anchored {}", path_for_terminal(&path));
                    Ok(0)
                }
                VerifyReport::Broken { line, detail, .. } => {
                    println!(
                        "BROKEN: {} line {line}: {}; nothing was anchored",
                        path_for_terminal(&path),
                        sanitize_for_terminal(&detail)
                    );
                    Ok(BROKEN)
                }
            }
        }
        AuditCommand::Tail {
            n,
            json,
            file,
            follow,
        } => {
            use std::io::IsTerminal;
            let path = log_path(file)?;
            let human = !json && std::io::stdout().is_terminal();
            if follow {
                return follow_log(&path, n, human);
            }
            let mut out = std::io::stdout().lock();
            let records = cordon_store::tail(&path, n).map_err(store_err)?;
            if human && records.is_empty() {
                writeln!(out, "no records in {}", path_for_terminal(&path))?;
            }
            for record in records {
                if human {
                    writeln!(out, "{}", cordon_store::summary_line(&record))?;
                } else {
                    writeln!(out, "{record}")?;
                }
            }
            Ok(0)
        }
        AuditCommand::Export {
            otlp: true,
            timeout,
            store,
            file,
            ..
        } => export_otlp(&log_path(file)?, &store_path(store)?, &timeout),
        AuditCommand::Export {
            otlp: false,
            timeout: _,
            store: _,
            json: _,
            session,
            tool,
            decision,
            since,
            until,
            file,
        } => {
            let path = log_path(file)?;
            let filter = ExportFilter {
                session,
                tool,
                decision,
                since: time_arg("since", since)?,
                until: time_arg("until", until)?,
            };
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            cordon_store::export(&path, &filter, &mut out).map_err(store_err)?;
            out.flush()?;
            Ok(0)
        }
    }
}

/// `audit export --otlp`: drain the export queue now.
fn export_otlp(
    log: &std::path::Path,
    store: &std::path::Path,
    timeout: &str,
) -> anyhow::Result<u8> {
    let give_up_after = cordon_policy::duration::parse(timeout)
        .map_err(|e| Exit::new(Code::Invalid, format!("--timeout {timeout:?}: {e}")))?;
    let config = cordon_export::ExportConfig::load(&cordon_export::ConfigSources::system())
        .map_err(|e| Exit::new(Code::Invalid, format!("audit export: {}", sanitize_for_terminal(&e.to_string()))))?
        .ok_or_else(|| {
            Exit::new(
                Code::Invalid,
                "no OTLP endpoint is configured: set OTEL_EXPORTER_OTLP_ENDPOINT, or `endpoint` under [otlp] in ~/.config/cordon/export.toml or /etc/cordon/export.toml",
            )
        })?;
    let endpoint = sanitize_for_terminal(&config.endpoint);
    let exporter = cordon_export::Exporter::new(log, store, config);
    let opts = cordon_export::DrainOptions {
        give_up_after,
        ..Default::default()
    };
    match exporter.drain(&opts, &std::sync::atomic::AtomicBool::new(false)) {
        Ok(r) => {
            println!(
                "exported {} records to {endpoint} in {} requests{}",
                r.sent,
                r.batches,
                if r.dropped > 0 {
                    format!("; {} dropped (recorded in the log)", r.dropped)
                } else {
                    String::new()
                }
            );
            if r.breaks > 0 {
                eprintln!(
                    "cordon: {} shipped record(s) break the log's chain (marked cordon.audit.chain_break): the log was edited; run `cordon audit verify`",
                    r.breaks
                );
            }
            Ok(0)
        }
        Err(e) => Err(Exit::new(Code::Internal, sanitize_for_terminal(&e.to_string())).into()),
    }
}

/// `audit tail --follow`: the last `n` records, then every record appended, read by the
/// one reader the console uses (a file that shrank is read again from its start).
fn follow_log(path: &std::path::Path, n: usize, human: bool) -> anyhow::Result<u8> {
    let print = |line: &cordon_store::Line| -> std::io::Result<()> {
        let mut out = std::io::stdout().lock();
        if human {
            let record: serde_json::Value =
                serde_json::from_str(&line.json).unwrap_or(serde_json::Value::Null);
            writeln!(out, "{}", cordon_store::summary_line(&record))?;
        } else {
            writeln!(out, "{}", line.json)?;
        }
        out.flush()
    };
    let mut reader = cordon_store::Reader::default();
    let mut last = std::collections::VecDeque::with_capacity(n.min(4096));
    reader.poll(path, |line| {
        if last.len() == n {
            last.pop_front();
        }
        if n > 0 {
            last.push_back(line);
        }
    });
    for line in &last {
        print(line)?;
    }
    loop {
        let mut failed = None;
        reader.poll(path, |line| {
            if failed.is_none()
                && let Err(e) = print(&line)
            {
                failed = Some(e);
            }
        });
        if let Some(e) = failed {
            return Err(e.into());
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}
