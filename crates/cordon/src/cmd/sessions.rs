//! `cordon sessions`: what sessions remember (files written, trifecta legs), and ending
//! them. Exit status: 0 done; 2 bad usage or an unknown session; 1 the store could not
//! be used.

use std::path::PathBuf;

use cordon_policy::terminal::sanitize_for_terminal as clean;
use cordon_store::{EventKind, SessionSummary, Store, format_time};
use serde_json::json;

use crate::exit::{Code, Exit};
use crate::setup::{PolicyArgs, load};

/// Where the store is, and the config that says when sessions expire.
#[derive(clap::Args)]
pub struct At {
    /// Store file (default: the state directory's store.sqlite3).
    #[arg(long, value_name = "F")]
    store: Option<PathBuf>,
    #[command(flatten)]
    policy: PolicyArgs,
}

/// Subcommands of `cordon sessions`.
#[derive(clap::Subcommand)]
pub enum SessionsCommand {
    /// List sessions that are not expired, most recently used first.
    List {
        /// One JSON object per line instead of text.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        at: At,
    },
    /// Show what a session remembers, in order.
    Show {
        /// The session id.
        id: String,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        at: At,
    },
    /// Forget a session: later calls with its id start with an empty record.
    End {
        /// The session id.
        id: String,
        #[command(flatten)]
        at: At,
    },
}

fn open(at: &At) -> anyhow::Result<(Store, std::time::Duration)> {
    let opts = at.policy.options()?;
    let policy = load(&opts, Code::Invalid)?;
    let location = crate::setup::ApprovalArgs {
        store: at.store.clone(),
        ..Default::default()
    }
    .location(&opts)?;
    let store =
        Store::open_at(&location.shared).map_err(|e| Exit::new(Code::Internal, e.to_string()))?;
    Ok((store, policy.sessions().expire_after))
}

fn summary_json(s: &SessionSummary) -> serde_json::Value {
    json!({
        "id": s.id,
        "started": format_time(s.started),
        "last": format_time(s.last),
        "writes": s.writes,
        "legs": s.legs.iter().map(|l| l.as_str()).collect::<Vec<_>>(),
        "overflowed": s.overflowed.map(format_time),
    })
}

fn summary_line(s: &SessionSummary) -> String {
    let legs: Vec<&str> = s.legs.iter().map(|l| l.as_str()).collect();
    let legs = if legs.is_empty() {
        "no trifecta legs".to_string()
    } else {
        legs.join("+")
    };
    let full = if s.overflowed.is_some() {
        " (full: past its cap)"
    } else {
        ""
    };
    clean(&format!(
        "{}  last {}  {} file(s) written  {legs}{full}",
        s.id,
        format_time(s.last),
        s.writes
    ))
}

/// Run `cordon sessions`.
pub fn run(c: SessionsCommand) -> anyhow::Result<u8> {
    match c {
        SessionsCommand::List { json, at } => {
            let (store, expire) = open(&at)?;
            let list = store
                .sessions(expire)
                .map_err(|e| Exit::new(Code::Internal, e.to_string()))?;
            for s in &list {
                if json {
                    println!("{}", summary_json(s));
                } else {
                    println!("{}", summary_line(s));
                }
            }
            if list.is_empty() && !json {
                eprintln!("no sessions");
            }
        }
        SessionsCommand::Show { id, json, at } => {
            let (store, expire) = open(&at)?;
            let Some((s, events)) = store
                .session(&id, expire)
                .map_err(|e| Exit::new(Code::Internal, e.to_string()))?
            else {
                return Err(Exit::new(
                    Code::Invalid,
                    format!("no session `{}` (unknown, ended or expired)", clean(&id)),
                )
                .into());
            };
            let evs: Vec<serde_json::Value> = events
                .iter()
                .map(|e| {
                    json!({
                        "seq": e.seq,
                        "kind": e.kind.to_string(),
                        "target": e.target,
                        "hash": e.hash,
                        "at": format_time(e.at),
                        "tool": e.by.tool,
                        "call": e.by.call,
                        "operation_id": e.by.operation_id,
                    })
                })
                .collect();
            if json {
                let mut v = summary_json(&s);
                v["events"] = evs.into();
                println!("{v}");
            } else {
                println!("{}", summary_line(&s));
                for e in &events {
                    let what = match e.kind {
                        EventKind::Write => match &e.hash {
                            Some(h) => {
                                format!("wrote {} (blake3 {})", e.target, &h[..h.len().min(16)])
                            }
                            None => format!("wrote {} (content unknown)", e.target),
                        },
                        EventKind::Tree => {
                            format!("filled {}/ (anything beneath may be new)", e.target)
                        }
                        EventKind::Unseen => format!(
                            "written by unknown code: anything beneath {}/ (the call's writes cannot be read off it)",
                            e.target.trim_end_matches('/')
                        ),
                        EventKind::Leg(l) => format!("{}: {}", l.describe(), e.target),
                        _ => e.target.clone(),
                    };
                    let op =
                        e.by.operation_id
                            .as_deref()
                            .map(|o| format!(" [{o}]"))
                            .unwrap_or_default();
                    println!(
                        "{}",
                        clean(&format!(
                            "  #{} {}  {what}  by `{}` {}{op}",
                            e.seq,
                            format_time(e.at),
                            e.by.tool,
                            e.by.call
                        ))
                    );
                }
            }
        }
        SessionsCommand::End { id, at } => {
            let (store, _) = open(&at)?;
            let ended = store
                .end_session(&id)
                .map_err(|e| Exit::new(Code::Internal, e.to_string()))?;
            if !ended {
                return Err(
                    Exit::new(Code::Invalid, format!("no session `{}`", clean(&id))).into(),
                );
            }
            eprintln!("session {} ended", clean(&id));
        }
    }
    Ok(Code::Allow.get())
}
