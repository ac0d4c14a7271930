//! `cordon approvals`: answer requests recorded with `--pending`, and manage what a
//! human chose to remember.
//!
//! Exit status: 0 done; 2 bad usage, an unknown id, or an id already answered; 1 the
//! store or the audit log could not be used (nothing was changed then). The store is
//! `--store F`, else `$CORDON_STATE_DIR/store.sqlite3`,
//! `$XDG_STATE_HOME/cordon/store.sqlite3` or `~/.local/state/cordon/store.sqlite3`;
//! every answer is appended to the audit log next to it (or `--audit-file F`).

use std::path::{Path, PathBuf};

use cordon_gate::{Gate, GateError, GateOptions, PendingAnswer};

use cordon_policy::terminal::{path_for_terminal, sanitize_for_terminal};
use cordon_store::{
    Answer, AnswerKind, Answered, AnsweredBy, AuditLog, Durability, PendingId, Store, StoreError,
    StoreErrorKind,
};
use serde_json::json;

use crate::exit::{Code, Exit};
use crate::setup::{PolicyArgs, load};

/// Where the store and the audit log are.
#[derive(clap::Args)]
pub struct Location {
    /// Store file (default: the state directory's store.sqlite3).
    #[arg(long, value_name = "F")]
    store: Option<PathBuf>,
    /// Audit log that records answers (default: the state directory's audit.jsonl).
    #[arg(long, value_name = "F")]
    audit_file: Option<PathBuf>,
}

/// Subcommands of `cordon approvals`.
#[derive(clap::Subcommand)]
pub enum ApprovalsCommand {
    /// List requests waiting for a human.
    List {
        /// One JSON object per line instead of text.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        at: Location,
    },
    /// Show one request (in any state): what it runs, why it asks, and the first lines of
    /// the files it runs that the session wrote.
    Show {
        /// The id shown by `cordon approvals list`.
        id: i64,
        /// The request as one JSON object instead of text.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        at: Location,
    },
    /// Approve a pending request: the same call is then allowed once (within 24 hours), in
    /// the session it was asked in (one asked without a session: only without one).
    /// With `--input FILE`, approve it with that input in place of its own: the edited
    /// call is judged now (a denied edit is refused and the request stays pending) and
    /// again when the call arrives, and the harness receives the edited input.
    Approve {
        /// The id shown by `cordon approvals list`.
        id: i64,
        /// A JSON object to use as the call's input (`-` reads stdin).
        #[arg(long, value_name = "FILE", conflicts_with_all = ["always", "any_session", "for_session"])]
        input: Option<PathBuf>,
        /// Always allow: save one of the rules offered with the request (`--rule`; by
        /// default the first, the exact call) and allow the exact call from now on.
        #[arg(long, conflicts_with_all = ["any_session", "for_session"])]
        always: bool,
        /// With `--always`: the offered rule to save, by its number in `approvals list`
        /// or its exact text. A rule that was not offered is refused.
        #[arg(long, value_name = "N|RULE", requires = "always")]
        rule: Option<String>,
        /// Let the call through once in any session, or without one.
        #[arg(long, conflicts_with = "for_session")]
        any_session: bool,
        /// Let the same call (same files) through for the rest of the session it was
        /// asked in (12 hours).
        #[arg(long)]
        for_session: bool,
        /// The policy the edit is judged by (the workspace defaults to the pending call's).
        #[command(flatten)]
        policy: PolicyArgs,
        #[command(flatten)]
        at: Location,
    },
    /// Deny a pending request.
    Deny {
        /// The id shown by `cordon approvals list`.
        id: i64,
        #[command(flatten)]
        at: Location,
    },
    /// List the leases that can still be used (unspent, unexpired, not revoked).
    Leases {
        #[command(flatten)]
        at: Location,
    },
    /// Revoke a lease: the call it covers is asked about again.
    Revoke {
        /// The id shown by `cordon approvals leases`.
        id: i64,
        #[command(flatten)]
        at: Location,
    },
    /// List the rules saved by "always allow".
    Rules {
        #[command(flatten)]
        at: Location,
    },
    /// Remove a saved rule.
    Forget {
        /// The rule exactly as listed, e.g. 'Bash(cargo test:*)'.
        rule: String,
        #[command(flatten)]
        at: Location,
    },
}

fn fail(e: StoreError) -> anyhow::Error {
    let code = match e.kind() {
        StoreErrorKind::NoSuchPending(_)
        | StoreErrorKind::AlreadyAnswered { .. }
        | StoreErrorKind::Invalid(_) => Code::Invalid,
        _ => Code::Internal,
    };
    Exit::new(code, e.to_string()).into()
}

/// The store holding the pending approvals, leases and rules (`[store]`'s database when
/// configured, else the local file).
fn open_store(at: &Location) -> anyhow::Result<Store> {
    let location = crate::setup::locate_store(at.store.as_deref())?;
    Store::open_at(&location.shared).map_err(fail)
}

fn open_audit(at: &Location) -> anyhow::Result<AuditLog> {
    let path = match (&at.audit_file, &at.store) {
        (Some(f), _) => f.clone(),
        (None, Some(store)) => store.with_file_name("audit.jsonl"),
        (None, None) => cordon_store::default_audit_path().map_err(fail)?,
    };
    let store = match &at.store {
        Some(s) => s.clone(),
        None => cordon_store::default_store_path().map_err(fail)?,
    };
    AuditLog::open_anchored(&path, Durability::FsyncEach, &store).map_err(fail)
}

/// Where `store` is, for a line on the terminal (a database by its URL, never a password).
fn store_for_terminal(store: &Store) -> String {
    if store.is_shared() {
        sanitize_for_terminal(&store.location())
    } else {
        path_for_terminal(store.path())
    }
}

fn fmt_time(t: std::time::SystemTime) -> String {
    cordon_store::format_time(t)
}

/// A one-line view of what the request would do.
/// The input keys one of which heads a pending request's line.
const SUMMARY_KEYS: [&str; 5] = ["command", "path", "file_path", "url", "pattern"];

fn summary(request: &serde_json::Value) -> String {
    let input = &request["input"];
    let target = SUMMARY_KEYS
        .iter()
        .find_map(|k| input.get(*k).and_then(|v| v.as_str()).map(str::to_string))
        .unwrap_or_else(|| input.to_string());
    sanitize_for_terminal(&target)
}

/// Lines of one input value shown in a listing (`approvals show` shows all).
const LISTED_LINES: usize = 12;

/// The rest of a request's input (a Write's content, an Edit's old and new text, …): the
/// approval is bound to all of it, so all of it is shown.
fn print_input(p: &cordon_store::Pending, full: bool) {
    let Some(input) = p.request["input"].as_object() else {
        return;
    };
    let head = SUMMARY_KEYS
        .iter()
        .find(|k| input.get(**k).is_some_and(|v| v.is_string()));
    for (key, value) in input {
        if head.is_some_and(|h| h == key) {
            continue;
        }
        let text = match value {
            serde_json::Value::String(t) => t.clone(),
            other => serde_json::to_string_pretty(other).unwrap_or_default(),
        };
        println!("    input {}:", sanitize_for_terminal(key));
        let lines: Vec<&str> = text.lines().collect();
        let shown = if full {
            lines.len()
        } else {
            lines.len().min(LISTED_LINES)
        };
        for line in &lines[..shown] {
            println!("      | {}", sanitize_for_terminal(line));
        }
        if shown < lines.len() {
            println!(
                "      | … {} more lines (`cordon approvals show {}` shows all)",
                lines.len() - shown,
                p.id
            );
        }
    }
}

/// A pending request as text: what it runs, why it asks; with `full`, the first lines
/// of the files it runs that the session wrote.
fn print_pending(p: &cordon_store::Pending, full: bool) {
    let tool = p.request["tool"].as_str().unwrap_or("?");
    println!(
        "{}  {}  session {}  {}: {}",
        p.id,
        fmt_time(p.created),
        sanitize_for_terminal(p.session.as_deref().unwrap_or("-")),
        sanitize_for_terminal(tool),
        summary(&p.request)
    );
    if let Some(machine) = &p.machine {
        println!("    asked on machine: {}", sanitize_for_terminal(machine));
    }
    // The approval is bound to these too (the fingerprint is computed from what is shown).
    let workspace = p.verdict["workspace"].as_str();
    if let Some(dir) = p.request["cwd"].as_str().or(workspace) {
        println!(
            "    in: {} (workspace {})",
            sanitize_for_terminal(dir),
            sanitize_for_terminal(workspace.unwrap_or("?"))
        );
    }
    print_input(p, full);
    if let Some(reason) = p.verdict["reason"].as_str() {
        println!("    reason: {}", sanitize_for_terminal(reason));
    }
    // A containment escalation: what approving it would let the command do.
    if let Some(e) = p.verdict.get("escalation").filter(|e| !e.is_null()) {
        let text = e.as_str().map_or_else(|| e.to_string(), str::to_string);
        println!("    escalation: {}", sanitize_for_terminal(&text));
    }
    let runs = &p.verdict["runs"];
    for f in runs["files"].as_array().into_iter().flatten() {
        let path = f["path"].as_str().unwrap_or("?");
        let state = f["state"].as_str().unwrap_or("?");
        let written = if f["written"] == true {
            " (written in the session)"
        } else {
            ""
        };
        println!(
            "    runs: {}{written}: {}",
            sanitize_for_terminal(path),
            sanitize_for_terminal(state)
        );
        if let Some(head) = f["head"].as_str().filter(|_| full || f["written"] == true) {
            for line in head.lines() {
                println!("      | {}", sanitize_for_terminal(line));
            }
        }
    }
    for n in runs["notes"].as_array().into_iter().flatten() {
        println!(
            "    runs: {}",
            sanitize_for_terminal(n.as_str().unwrap_or("?"))
        );
    }
    // A structured action's inputs, bound to the approval the same way.
    for f in p.verdict["inputs"].as_array().into_iter().flatten() {
        println!(
            "    input: {}: {}",
            sanitize_for_terminal(f["path"].as_str().unwrap_or("?")),
            sanitize_for_terminal(f["state"].as_str().unwrap_or("?"))
        );
    }
    if let Some(rule) = &p.suggestion {
        println!(
            "    rule \"always allow\" would save: {}",
            sanitize_for_terminal(rule)
        );
    }
}

/// Run `cordon approvals`.
pub fn run(c: ApprovalsCommand) -> anyhow::Result<u8> {
    match c {
        ApprovalsCommand::List { json, at } => {
            let store = open_store(&at)?;
            let pending = store.pending().map_err(fail)?;
            if json {
                for p in &pending {
                    let line = json!({
                        "id": p.id.0,
                        "machine": p.machine,
                        "created": fmt_time(p.created),
                        "session": p.session,
                        "fingerprint": p.fingerprint,
                        "request": p.request,
                        "verdict": p.verdict,
                        "suggestion": p.suggestion,
                        "suggestions": p.suggestions,
                    });
                    println!("{line}");
                }
            } else if pending.is_empty() {
                println!("no pending approvals in {}", store_for_terminal(&store));
            } else {
                for p in &pending {
                    print_pending(p, false);
                    print_rule_options(p);
                }
            }
            Ok(0)
        }
        ApprovalsCommand::Show { id, json, at } => {
            let store = open_store(&at)?;
            let (p, state) = store.approval(PendingId(id)).map_err(fail)?;
            if json {
                let line = json!({
                    "id": p.id.0,
                    "state": state.as_str(),
                    "created": fmt_time(p.created),
                    "session": p.session,
                    "fingerprint": p.fingerprint,
                    "request": p.request,
                    "verdict": p.verdict,
                    "suggestion": p.suggestion,
                    "suggestions": p.suggestions,
                });
                println!("{line}");
            } else {
                print_pending(&p, true);
                print_rule_options(&p);
                println!("    state: {}", state.as_str());
            }
            Ok(0)
        }
        ApprovalsCommand::Approve {
            id,
            always: true,
            rule,
            at,
            ..
        } => answer_always(id, rule.as_deref(), &at),
        ApprovalsCommand::Approve {
            id,
            input: Some(file),
            policy,
            at,
            ..
        } => answer_edited(id, &file, policy, &at),
        ApprovalsCommand::Approve {
            id,
            any_session,
            for_session,
            at,
            ..
        } => {
            let how = match (any_session, for_session) {
                (true, _) => Answer::ApproveAnySession,
                (_, true) => Answer::ApproveForSession,
                _ => Answer::Approve,
            };
            answer(id, how, &at)
        }
        ApprovalsCommand::Deny { id, at } => answer(id, Answer::Deny, &at),
        ApprovalsCommand::Leases { at } => {
            let store = open_store(&at)?;
            let leases = store.leases().map_err(fail)?;
            if leases.is_empty() {
                println!("no active leases in {}", store_for_terminal(&store));
            }
            for l in leases {
                let expires = l.expires.map_or_else(|| "never".to_string(), fmt_time);
                println!(
                    "{}  {}  expires {}  fingerprint {}  ({})",
                    l.id,
                    sanitize_for_terminal(&l.scope.to_string()),
                    expires,
                    sanitize_for_terminal(&l.fingerprint),
                    sanitize_for_terminal(&l.answer)
                );
            }
            Ok(0)
        }
        ApprovalsCommand::Revoke { id, at } => {
            let store = open_store(&at)?;
            let mut audit = open_audit(&at)?;
            if !store.revoke(cordon_store::LeaseId(id)).map_err(fail)? {
                return Err(Exit::new(
                    Code::Invalid,
                    format!("no active lease has id {id}; see `cordon approvals leases`"),
                )
                .into());
            }
            audit
                .append(&json!({"event": "lease-revoked", "lease": id}))
                .map_err(fail)?;
            println!("revoked lease {id}");
            Ok(0)
        }
        ApprovalsCommand::Rules { at } => {
            let store = open_store(&at)?;
            let rules = store.rules().map_err(fail)?;
            if rules.is_empty() {
                println!("no remembered rules in {}", store_for_terminal(&store));
            }
            for r in rules {
                println!(
                    "{}  ({}, saved {} by {})",
                    sanitize_for_terminal(&r.rule),
                    sanitize_for_terminal(&r.tool_kind),
                    fmt_time(r.created),
                    sanitize_for_terminal(&r.created_by)
                );
            }
            Ok(0)
        }
        ApprovalsCommand::Forget { rule, at } => {
            let store = open_store(&at)?;
            if !store.forget_rule(&rule).map_err(fail)? {
                return Err(Exit::new(
                    Code::Invalid,
                    format!("no saved rule is exactly {rule:?}; see `cordon approvals rules`"),
                )
                .into());
            }
            let mut audit = open_audit(&at)?;
            audit
                .append(&json!({"event": "rule-forgotten", "rule": rule}))
                .map_err(fail)?;
            println!("forgot {}", sanitize_for_terminal(&rule));
            Ok(0)
        }
    }
}

fn answer(id: i64, answer: Answer, at: &Location) -> anyhow::Result<u8> {
    let store = open_store(at)?;
    // Open the audit log first: an answer that cannot be recorded is not given.
    let mut audit = open_audit(at)?;
    let answered = store.answer(PendingId(id), answer).map_err(fail)?;
    let approved = match answer {
        Answer::ApproveAnySession => AnswerKind::ApproveAnySession,
        Answer::ApproveForSession => AnswerKind::ApproveForSession,
        _ => AnswerKind::Approve,
    };
    let (request, kind, lease) = match &answered {
        Answered::Approved(a) => (a.request(), approved, Some(a.lease())),
        Answered::Denied(d) => (d.request(), AnswerKind::Deny, None),
    };
    let record = cordon_store::answered_record(request, kind, AnsweredBy::Cli, &request.request)
        .lease(lease)
        .into_value();
    audit.append(&record).map_err(fail)?;
    let lease = lease.map(|l| l.0);
    let session = request.session.as_deref().map(sanitize_for_terminal);
    match (lease, answer, session) {
        (Some(lease), Answer::ApproveForSession, Some(s)) => println!(
            "approved {id}: lease {lease} lets the same call through in session {s} for 12 hours"
        ),
        (Some(lease), Answer::ApproveAnySession, _) => println!(
            "approved {id}: lease {lease} lets the same call through once within 24 hours, in any session"
        ),
        (Some(lease), _, Some(s)) => println!(
            "approved {id}: lease {lease} lets the same call through once within 24 hours, in session {s}"
        ),
        (Some(lease), _, None) => println!(
            "approved {id}: lease {lease} lets the same call through once within 24 hours, without a session"
        ),
        (None, ..) => println!("denied {id}"),
    }
    print_call(&request.request);
    Ok(0)
}

/// What the answer was about, so that a mistyped id is seen at once: the tool, its
/// command or path, and the workspace it was asked in.
fn print_call(request: &serde_json::Value) {
    let tool = sanitize_for_terminal(request["tool"].as_str().unwrap_or("?"));
    println!("  the call: {tool}: {}", summary(request));
    let workspace = ["workspace", "cwd"]
        .iter()
        .find_map(|k| request[*k].as_str());
    if let Some(w) = workspace {
        println!("  asked in: {}", sanitize_for_terminal(w));
    }
}

/// Approve pending request `id` with the input in `file` in place of its own.
fn answer_edited(id: i64, file: &Path, mut args: PolicyArgs, at: &Location) -> anyhow::Result<u8> {
    let input = read_input(file)?;
    let location = crate::setup::locate_store(at.store.as_deref())?;
    let store = Store::open_at(&location.shared).map_err(fail)?;
    let (pending, _) = store.approval(PendingId(id)).map_err(fail)?;
    if args.workspace.is_none() {
        args.workspace = pending.verdict["workspace"].as_str().map(PathBuf::from);
    }
    let mut opts = args.options()?;
    opts.remembered_rules = store
        .rules()
        .map_err(fail)?
        .into_iter()
        .map(|r| r.rule)
        .collect();
    let gate = Gate::new(
        load(&opts, Code::Invalid)?,
        GateOptions {
            surface: cordon_gate::Surface::Approvals,
            store: Some(location.local.clone()),
            audit: None,
            no_audit: true,
            edits: true,
        },
    )
    .with_location(&location);
    drop(store);
    // Open the audit log first: an answer that cannot be recorded is not given.
    let mut audit = open_audit(at)?;
    let answered = gate
        .answer_pending(PendingId(id), PendingAnswer::ApproveEdited(input))
        .map_err(|e| match e {
            GateError::Store(e) => fail(e),
            GateError::Edit(why) => Exit::new(Code::Deny, why).into(),
            other => Exit::new(Code::Internal, other.to_string()).into(),
        })?;
    let record = cordon_store::answered_record(
        &pending,
        AnswerKind::ApproveEdited,
        AnsweredBy::Cli,
        &answered.request,
    )
    .lease(answered.lease)
    .edited_verdict(answered.edited.as_ref().map(|v| v.decision.as_str()))
    .into_value();
    audit.append(&record).map_err(fail)?;
    println!(
        "approved {id} with an edited input: lease {} lets the edited call through once within 24 hours",
        answered
            .lease
            .map_or_else(|| "?".to_string(), |l| l.to_string())
    );
    Ok(0)
}

/// A JSON object from `file` (`-`: stdin), at most the request size limit.
// The file the user named on the command line: a pipe or a FIFO there is meant.
#[allow(clippy::disallowed_methods)]
fn read_input(file: &Path) -> anyhow::Result<serde_json::Map<String, serde_json::Value>> {
    use std::io::Read;
    let limit = cordon_policy::request::MAX_REQUEST_BYTES;
    let mut buf = Vec::new();
    let read = if file == Path::new("-") {
        std::io::stdin()
            .take(limit as u64 + 1)
            .read_to_end(&mut buf)
    } else {
        std::fs::File::open(file).and_then(|f| f.take(limit as u64 + 1).read_to_end(&mut buf))
    };
    read.map_err(|e| {
        Exit::new(
            Code::Invalid,
            format!(
                "cannot read the edited input {}: {e}",
                path_for_terminal(file)
            ),
        )
    })?;
    if buf.len() > limit {
        return Err(Exit::new(
            Code::Invalid,
            format!("the edited input is larger than the {limit}-byte limit"),
        )
        .into());
    }
    match serde_json::from_slice(&buf) {
        Ok(serde_json::Value::Object(m)) => Ok(m),
        Ok(_) => Err(Exit::new(Code::Invalid, "the edited input must be a JSON object").into()),
        Err(e) => Err(Exit::new(
            Code::Invalid,
            format!("the edited input is not valid JSON: {e}"),
        )
        .into()),
    }
}

/// The rules "always allow" may save for a pending request, numbered for `--rule N`.
fn print_rule_options(p: &cordon_store::Pending) {
    for (i, o) in p.suggestions.iter().enumerate() {
        let also = o.example.as_deref().map_or_else(
            || " (this exact call)".to_string(),
            |e| format!(" (also allows e.g. {})", sanitize_for_terminal(e)),
        );
        println!(
            "    always allow --rule {}: {}{also}",
            i + 1,
            sanitize_for_terminal(&o.rule)
        );
    }
}

/// Approve pending request `id` for good, saving one of the rules offered with it.
fn answer_always(id: i64, rule: Option<&str>, at: &Location) -> anyhow::Result<u8> {
    let store = open_store(at)?;
    // Open the audit log first: an answer that cannot be recorded is not given.
    let mut audit = open_audit(at)?;
    let pick = rule.map_or(
        cordon_store::RulePick::Number(1),
        cordon_store::RulePick::parse,
    );
    let done = store
        .answer_always(PendingId(id), &pick, "cordon approvals")
        .map_err(fail)?;
    let request = &done.request;
    let record = cordon_store::answered_record(
        request,
        AnswerKind::AlwaysAllow,
        AnsweredBy::Cli,
        &request.request,
    )
    .lease(Some(done.lease))
    .rule(&done.rule)
    .into_value();
    audit.append(&record).map_err(fail)?;
    println!(
        "always allowed {id}: saved rule {}, lease {}",
        sanitize_for_terminal(&done.rule),
        done.lease
    );
    Ok(0)
}
