//! Reading the audit log for people: which records to export, and the times they are
//! filtered by. The log's own format and chain live in `audit.rs`.

use std::io::Write;
use std::path::Path;
use std::time::SystemTime;

use serde_json::Value;

use crate::audit::for_each_record;
use crate::error::{StoreError, StoreErrorKind};

/// Which records [`export`] keeps. Empty fields match everything.
#[derive(Debug, Clone, Default)]
pub struct ExportFilter {
    /// Only records whose `session` equals this.
    pub session: Option<String>,
    /// Only records whose `tool` equals this.
    pub tool: Option<String>,
    /// Only records whose decision (`decision` or `verdict.decision`) equals this.
    pub decision: Option<String>,
    /// Only records at or after this time.
    pub since: Option<SystemTime>,
    /// Only records before this time.
    pub until: Option<SystemTime>,
}

impl ExportFilter {
    /// Whether a record passes the filter.
    pub fn matches(&self, record: &Value) -> bool {
        let field = |k: &str| record.get(k).and_then(Value::as_str);
        if let Some(s) = &self.session
            && field("session") != Some(s.as_str())
        {
            return false;
        }
        if let Some(t) = &self.tool
            && field("tool") != Some(t.as_str())
        {
            return false;
        }
        if let Some(d) = &self.decision {
            let got = field("decision").or_else(|| {
                record
                    .get("verdict")
                    .and_then(|v| v.get("decision"))
                    .and_then(Value::as_str)
            });
            if got != Some(d.as_str()) {
                return false;
            }
        }
        if self.since.is_some() || self.until.is_some() {
            let Some(t) = field("time").and_then(|t| humantime::parse_rfc3339(t).ok()) else {
                return false;
            };
            if self.since.is_some_and(|s| t < s) || self.until.is_some_and(|u| t >= u) {
                return false;
            }
        }
        true
    }
}

/// Write every record matching `filter` to `out`, one line each, byte for byte as stored.
/// Returns how many were written.
pub fn export(path: &Path, filter: &ExportFilter, out: &mut dyn Write) -> Result<u64, StoreError> {
    let mut count = 0;
    let out_err = |e: std::io::Error| {
        StoreError::new(Path::new("<output>"), StoreErrorKind::Io(e.to_string()))
    };
    for_each_record(path, |line, v| {
        if filter.matches(&v) {
            out.write_all(line).map_err(out_err)?;
            out.write_all(b"\n").map_err(out_err)?;
            count += 1;
        }
        Ok(())
    })?;
    Ok(count)
}

/// Parse a time given on the command line: RFC 3339 (`2026-01-02T03:04:05Z`, a date
/// `2026-01-02`, or without the `Z`, read as UTC), or an age such as `15m`, `2h`, `3d`
/// meaning that long before `now`.
pub fn parse_time(text: &str, now: SystemTime) -> Result<SystemTime, TimeError> {
    let text = text.trim();
    if let Ok(t) = humantime::parse_rfc3339_weak(text) {
        return Ok(t);
    }
    if text.len() == 10
        && let Ok(t) = humantime::parse_rfc3339_weak(&format!("{text}T00:00:00"))
    {
        return Ok(t);
    }
    match cordon_policy::duration::parse(text) {
        Ok(age) => now
            .checked_sub(age)
            .ok_or_else(|| TimeError::BeforeEpoch(text.to_owned())),
        Err(_) => Err(TimeError::Unrecognized(text.to_owned())),
    }
}

/// Why a command-line time was refused ([`parse_time`]); each holds the text given.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TimeError {
    /// An age that reaches back further than the system's clock can count.
    BeforeEpoch(String),
    /// Neither an RFC 3339 time nor an age.
    Unrecognized(String),
}

impl std::fmt::Display for TimeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TimeError::BeforeEpoch(text) => write!(f, "{text:?} reaches before 1970"),
            TimeError::Unrecognized(text) => write!(
                f,
                "{text:?} is neither an RFC 3339 time (2026-01-02T03:04:05Z) nor an age (15m, 2h, 3d)"
            ),
        }
    }
}

impl std::error::Error for TimeError {}

pub use cordon_policy::time::format_time;

/// One readable line for a record, for a person at a terminal: time, session, tool,
/// decision, target and the rule that decided (or, for an event such as an answered
/// approval, the event and what it named). Control characters are stripped.
pub fn summary_line(record: &Value) -> String {
    use cordon_policy::terminal::sanitize_for_terminal;
    let s = |v: Option<&Value>| match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    let time = s(record.get("time")).replace('T', " ").replace('Z', "");
    let session = match s(record.get("session")) {
        e if e.is_empty() => "-".to_string(),
        v => v,
    };
    let tool = match s(record.get("tool")) {
        t if t.is_empty() => s(record.get("kind")),
        t => t,
    };
    let (decision, target, rule) = match record.get("event") {
        Some(event) => {
            let what = ["pending", "lease", "rule", "server"]
                .iter()
                .filter_map(|k| {
                    record
                        .get(*k)
                        .filter(|v| !v.is_null())
                        .map(|v| format!("{k} {}", s(Some(v))))
                })
                .collect::<Vec<_>>()
                .join(", ");
            let by = s(record.get("answered_by"));
            let answer = s(record.get("answer"));
            (
                s(Some(event)),
                what,
                [answer, by]
                    .into_iter()
                    .filter(|x| !x.is_empty())
                    .collect::<Vec<_>>()
                    .join(" by "),
            )
        }
        None => {
            let mut decision = match s(record.get("decision")) {
                d if d.is_empty() => s(record.get("phase")),
                d => d,
            };
            if let Some(end) = run_ending(record) {
                decision = format!(
                    "{decision} ({}{})",
                    end.text,
                    if end.failed { ": FAILED" } else { "" }
                );
            }
            (decision, target_of(record.get("input")), rule_of(record))
        }
    };
    let line = format!("{time}  {session}  {tool}  {decision}  {target}  {rule}");
    sanitize_for_terminal(line.trim_end())
}

/// How a run or a tool call ended, read from its `end` or `result` record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunEnding {
    /// The run failed: a non-zero status, a signal, a timeout, or a result marked not ok.
    pub failed: bool,
    /// `exit 0`, `exit 3`, `signal 9`, `timed out`, `failed`; with `, containment blocked
    /// N` when it did.
    pub text: String,
}

/// How the run of an `end` record (or the call of a `result` record) ended; `None` for
/// records that say nothing about it.
pub fn run_ending(record: &Value) -> Option<RunEnding> {
    let phase = record.get("phase").and_then(Value::as_str);
    let result = record.get("result").filter(|r| r.is_object());
    let status = match (phase, result) {
        (Some("end"), _) => record.get("exit_status"),
        (_, Some(r)) => r.get("exit_status"),
        _ => return None,
    }
    .and_then(Value::as_i64);
    let timed_out = record.get("timed_out").and_then(Value::as_bool) == Some(true);
    let not_ok = result.and_then(|r| r.get("ok")).and_then(Value::as_bool) == Some(false);
    let mut text = match status {
        _ if timed_out => "timed out".to_string(),
        // cordon and the shells report a death by signal N as 128 + N.
        Some(s) if (129..=128 + 64).contains(&s) => format!("signal {}", s - 128),
        Some(s) => format!("exit {s}"),
        None if not_ok => "failed".to_string(),
        None => return None,
    };
    let blocked = record
        .get("containment_blocked")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if blocked > 0 {
        text.push_str(&format!(", containment blocked {blocked}"));
    }
    Some(RunEnding {
        failed: timed_out || not_ok || status.is_some_and(|s| s != 0),
        text,
    })
}

/// What a call acted on: its command, path or URL, else its input as JSON.
fn target_of(input: Option<&Value>) -> String {
    let Some(input) = input else {
        return String::new();
    };
    for key in ["command", "path", "file_path", "url", "pattern"] {
        if let Some(Value::String(t)) = input.get(key) {
            return t.clone();
        }
    }
    if let Some(Value::Array(argv)) = input.get("argv") {
        return argv
            .iter()
            .map(|a| a.as_str().map_or_else(|| a.to_string(), str::to_string))
            .collect::<Vec<_>>()
            .join(" ");
    }
    input.to_string()
}

/// The step and rule that decided, with its file and line, as `step: rule (file:line)`.
fn rule_of(record: &Value) -> String {
    let Some(source) = record.get("source") else {
        return String::new();
    };
    let field = |k: &str| source.get(k).and_then(Value::as_str);
    let mut out = field("step").unwrap_or_default().to_string();
    if let Some(rule) = field("rule") {
        out.push_str(": ");
        out.push_str(rule);
    }
    if let Some(file) = field("file") {
        match source.get("line").and_then(Value::as_u64) {
            Some(line) => out.push_str(&format!(" ({file}:{line})")),
            None => out.push_str(&format!(" ({file})")),
        }
    }
    out
}
