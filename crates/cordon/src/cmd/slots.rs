//! `cordon slots`: the persistent sandbox slots that `cordon exec --slot KEY` runs in.
//!
//! Exit status: 0 done; 2 an invalid key or scope, a slot that does not exist, or one
//! that a run holds (with `--no-wait`, or past `--wait`); 1 the slot or a snapshot could
//! not be read, written or removed, or a snapshot was refused.

use cordon_policy::terminal::{path_for_terminal, sanitize_for_terminal as clean};
use cordon_sandbox::slot::{self, SlotError, SlotErrorKind, SlotName, SlotPaths, SlotScope, Wait};
use cordon_store::{Store, format_time};
use serde_json::json;
use std::path::PathBuf;
use std::time::Duration;

use crate::exit::{Code, Exit};

/// `--scope`.
#[derive(clap::ValueEnum, Debug, Clone, Copy, Default)]
pub enum ScopeArg {
    /// One agent session (`--session ID`).
    Session,
    /// The current user (uid).
    #[default]
    User,
    /// One agent (`--agent NAME`).
    Agent,
    /// One slot shared by every run of this state directory.
    Global,
}

impl From<ScopeArg> for SlotScope {
    fn from(s: ScopeArg) -> SlotScope {
        match s {
            ScopeArg::Session => SlotScope::Session,
            ScopeArg::User => SlotScope::User,
            ScopeArg::Agent => SlotScope::Agent,
            ScopeArg::Global => SlotScope::Global,
        }
    }
}

/// Which slot: the key and what its scope needs.
#[derive(clap::Args, Debug, Clone)]
pub struct Which {
    /// The slot's key.
    key: String,
    /// The slot's scope.
    #[arg(long, value_enum, default_value_t)]
    scope: ScopeArg,
    /// The session id (for `--scope session`).
    #[arg(long, value_name = "ID")]
    session: Option<String>,
    /// The agent name (for `--scope agent`).
    #[arg(long, value_name = "NAME")]
    agent: Option<String>,
}

/// How long to wait for a slot a run holds.
#[derive(clap::Args, Debug, Clone)]
pub struct WaitArgs {
    /// Wait at most this many seconds for a run that holds the slot.
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 300,
        conflicts_with = "no_wait"
    )]
    wait: u64,
    /// Refuse at once when a run holds the slot.
    #[arg(long)]
    no_wait: bool,
}

impl WaitArgs {
    fn wait(&self) -> Wait {
        if self.no_wait {
            Wait::No
        } else {
            Wait::Up(Duration::from_secs(self.wait))
        }
    }
}

/// Subcommands of `cordon slots`.
#[derive(clap::Subcommand)]
pub enum SlotsCommand {
    /// List the slots cordon has recorded.
    List {
        /// One JSON object per line instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Show one slot: where it is, when it was used, its size, its last run.
    Show {
        #[command(flatten)]
        which: Which,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Remove a slot's directory and record (refused while a run holds it).
    Rm {
        #[command(flatten)]
        which: Which,
    },
    /// Write a compressed, hash-verified archive of a slot (waits for a run that holds it).
    Snapshot {
        #[command(flatten)]
        which: Which,
        /// Where to write it [default: KEY-SCOPE-TIME.cordon-slot in the current directory].
        #[arg(long, value_name = "FILE")]
        to: Option<PathBuf>,
        #[command(flatten)]
        wait: WaitArgs,
    },
    /// Replace a slot with the contents of a snapshot, once the snapshot is verified.
    Restore {
        #[command(flatten)]
        which: Which,
        /// The snapshot file.
        file: PathBuf,
        #[command(flatten)]
        wait: WaitArgs,
    },
}

fn slot_err(e: SlotError) -> anyhow::Error {
    let code = match e.kind {
        SlotErrorKind::Invalid | SlotErrorKind::Busy | SlotErrorKind::NotFound => Code::Invalid,
        _ => Code::Internal,
    };
    Exit::new(code, e.message).into()
}

fn store() -> anyhow::Result<Store> {
    Store::open_default().map_err(|e| Exit::new(Code::Internal, e.to_string()).into())
}

/// Record a run on a slot in cordon's default store, where `list` and `show` read it:
/// `cordon exec --slot` gives this to the sandbox, which never opens the store itself.
pub fn record_run(run: &slot::SlotRun<'_>) -> Result<(), String> {
    let store = Store::open_default().map_err(|e| e.to_string())?;
    let n = run.name;
    store
        .slot_ran(
            n.scope,
            &n.scope_id,
            &n.key,
            run.dir,
            run.command,
            run.status,
        )
        .map_err(|e| e.to_string())
}

fn locate(which: &Which) -> anyhow::Result<(SlotName, SlotPaths)> {
    let name = SlotName::new(
        which.scope.into(),
        &which.key,
        which.session.as_deref(),
        which.agent.as_deref(),
    )
    .map_err(slot_err)?;
    let paths =
        SlotPaths::locate(&slot::slots_base().map_err(slot_err)?, &name).map_err(slot_err)?;
    Ok((name, paths))
}

fn missing(name: &SlotName) -> anyhow::Error {
    Exit::new(
        Code::Invalid,
        format!(
            "there is no slot {}; `cordon slots list` shows them",
            clean(&name.to_string())
        ),
    )
    .into()
}

/// Run `cordon slots …`.
pub fn run(cmd: SlotsCommand) -> anyhow::Result<u8> {
    match cmd {
        SlotsCommand::List { json } => list(json),
        SlotsCommand::Show { which, json } => show(&which, json),
        SlotsCommand::Rm { which } => rm(&which),
        SlotsCommand::Snapshot { which, to, wait } => take_snapshot(&which, to, &wait),
        SlotsCommand::Restore { which, file, wait } => restore(&which, &file, &wait),
    }
}

fn record_json(r: &cordon_store::SlotRecord, size: Option<u64>) -> serde_json::Value {
    json!({
        "key": r.key,
        "scope": r.scope.as_str(),
        "scope_id": r.scope_id,
        "dir": r.dir,
        "created": format_time(r.created),
        "last_used": format_time(r.last_used),
        "runs": r.runs,
        "last_run": r.last_run,
        "last_status": r.last_status,
        "size": size.or(r.size),
    })
}

fn list(json: bool) -> anyhow::Result<u8> {
    let store = store()?;
    let records = store
        .slots()
        .map_err(|e| Exit::new(Code::Internal, e.to_string()))?;
    if records.is_empty() && !json {
        println!("no slots");
    }
    for r in &records {
        if json {
            println!("{}", record_json(r, None));
        } else {
            println!(
                "{}\t{}\t{}\tlast used {}\t{} run{}",
                clean(&r.key),
                r.scope,
                clean(&r.scope_id),
                format_time(r.last_used),
                r.runs,
                if r.runs == 1 { "" } else { "s" }
            );
        }
    }
    Ok(0)
}

fn show(which: &Which, json: bool) -> anyhow::Result<u8> {
    let (name, paths) = locate(which)?;
    if !paths.exists() {
        return Err(missing(&name));
    }
    let store = store()?;
    let record = store
        .slot(name.scope, &name.scope_id, &name.key)
        .map_err(|e| Exit::new(Code::Internal, e.to_string()))?;
    let (bytes, entries) = slot::tree_size(&paths.dir).map_err(slot_err)?;
    let _ = store.slot_measured(name.scope, &name.scope_id, &name.key, bytes);
    let busy = slot::SlotGuard::acquire(&paths, Wait::No).err();
    let startup = slot::startup_files(&paths).map_err(slot_err)?;
    if json {
        let mut v = match &record {
            Some(r) => record_json(r, Some(bytes)),
            None => {
                json!({"key": name.key, "scope": name.scope.as_str(), "scope_id": name.scope_id, "dir": paths.dir, "size": bytes})
            }
        };
        v["entries"] = json!(entries);
        v["busy"] = json!(busy.as_ref().map(|e| e.message.clone()));
        v["startup_files"] = json!(startup);
        println!("{v}");
        return Ok(0);
    }
    println!("slot     {}", clean(&name.to_string()));
    println!("dir      {}", path_for_terminal(&paths.dir));
    println!("size     {bytes} bytes in {entries} entries");
    if let Some(r) = &record {
        println!("created  {}", format_time(r.created));
        println!("used     {} ({} runs)", format_time(r.last_used), r.runs);
        if let Some(run) = &r.last_run {
            let status = r
                .last_status
                .map(|s| format!("exit {s}"))
                .unwrap_or_else(|| "running or killed".into());
            println!("last run {} ({status})", clean(run));
        }
    }
    match busy {
        Some(e) => println!("state    {}", clean(&e.message)),
        None => println!("state    free"),
    }
    if !startup.is_empty() {
        println!(
            "startup  {} start-up file(s) in HOME, reset before the next run (unless --slot-keep-startup):",
            startup.len()
        );
        for f in &startup {
            println!("         ~/{}", path_for_terminal(f));
        }
    }
    Ok(0)
}

fn rm(which: &Which) -> anyhow::Result<u8> {
    let (name, paths) = locate(which)?;
    let store = store()?;
    let known = store
        .slot(name.scope, &name.scope_id, &name.key)
        .map_err(|e| Exit::new(Code::Internal, e.to_string()))?
        .is_some();
    if !paths.exists() && !known {
        return Err(missing(&name));
    }
    let guard = slot::SlotGuard::acquire(&paths, Wait::No).map_err(|e| {
        slot_err(SlotError {
            message: format!("not removed: {}", e.message),
            ..e
        })
    })?;
    slot::remove_tree(&paths.dir).map_err(slot_err)?;
    drop(guard);
    store
        .slot_forget(name.scope, &name.scope_id, &name.key)
        .map_err(|e| Exit::new(Code::Internal, e.to_string()))?;
    eprintln!("cordon: removed the slot {}", clean(&name.to_string()));
    Ok(0)
}

fn take_snapshot(which: &Which, to: Option<PathBuf>, wait: &WaitArgs) -> anyhow::Result<u8> {
    let (name, paths) = locate(which)?;
    if !paths.exists() {
        return Err(missing(&name));
    }
    let out = to.unwrap_or_else(|| {
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        PathBuf::from(format!("{}-{}-{stamp}.cordon-slot", name.key, name.scope))
    });
    // Anchored before the guard is waited for: a run still in the slot cannot move
    // where the snapshot goes.
    let out_file = cordon_fs::OutputFile::prepare(&out)
        .map_err(|e| Exit::new(Code::Internal, format!("cannot write the snapshot: {e}")))?;
    let guard = slot::SlotGuard::acquire(&paths, wait.wait()).map_err(slot_err)?;
    let report = slot::snapshot_to(&paths, &name, &out_file).map_err(slot_err)?;
    drop(guard);
    let m = &report.manifest;
    println!("{}", path_for_terminal(&out));
    eprintln!(
        "cordon: snapshot of {}: {} entries, {} bytes of files, {} bytes compressed, blake3 {}",
        clean(&name.to_string()),
        m.entries,
        m.bytes,
        m.archive_bytes,
        m.archive_blake3
    );
    if report.left_out_links + report.left_out_special > 0 {
        eprintln!(
            "cordon: left out {} symlink(s) that lead out of the slot and {} device(s), FIFO(s) or socket(s)",
            report.left_out_links, report.left_out_special
        );
    }
    Ok(0)
}

fn restore(which: &Which, file: &std::path::Path, wait: &WaitArgs) -> anyhow::Result<u8> {
    let (name, paths) = locate(which)?;
    let guard = slot::SlotGuard::acquire(&paths, wait.wait()).map_err(slot_err)?;
    let report = slot::restore(&paths, file).map_err(slot_err)?;
    drop(guard);
    eprintln!(
        "cordon: restored the slot {} from {} ({} entries, {} bytes of files)",
        clean(&name.to_string()),
        path_for_terminal(file),
        report.manifest.entries,
        report.manifest.bytes
    );
    Ok(0)
}
