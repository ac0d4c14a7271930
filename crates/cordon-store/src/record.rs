//! The one shape of an audit record. Every writer (`check`, `exec`, and every later
//! surface through the gate) fills this struct; `schemas/audit-record.schema.json` in the
//! repository describes the line it becomes, and a test checks records of every kind
//! against it. The log itself adds `seq`, `time` and `prev`.

use crate::store::{LeaseId, PendingId};
use cordon_policy::{ApprovalPolicy, Containment, Decision, Mode, Surface};
use serde::Serialize;
use serde_json::{Map, Value};

/// Which moment of a call a record describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Phase {
    /// The decision, when nothing runs (a refusal, a pending approval, `check`).
    Decision,
    /// A contained run is about to start (written before the command may run).
    Start,
    /// An `on-failure` re-run with one more permission is about to start.
    Rerun,
    /// A contained run ended.
    End,
    /// The harness reported the result of a call it ran (a post-tool hook, the
    /// service's `record`); such a record carries no decision.
    Result,
    /// Something a surface noted that decides nothing by itself (an MCP server pinned on
    /// first use); its `reason` says what.
    Notice,
}

/// The containment tier a run got, in its end record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum RunTier {
    /// Namespaces, the mount plan, Landlock and seccomp.
    Full,
    /// Landlock and seccomp only.
    Fallback,
    /// The tier required was not there, and nothing ran.
    Unavailable,
}

/// One policy finding that did not allow, in brief.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FindingBrief {
    /// The operation (`read`, `write`, `exec`, …).
    pub op: String,
    /// Its target.
    pub target: String,
    /// `ask` or `deny`.
    pub decision: Decision,
}

/// One thing containment blocked during a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContainmentBlock {
    /// `write`, `connect` or `syscall`.
    pub kind: String,
    /// The path, address or system call.
    pub target: String,
    /// What happened.
    pub detail: String,
}

/// The on-failure escalation of a run: what was asked and how it was answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EscalationRecord {
    /// The one extra permission asked for.
    pub asked: String,
    /// The answer (`allow-once`, `lease`, `pending 7`, `denied: …`).
    pub answer: String,
    /// Whether the re-run started, and if not, why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerun: Option<String>,
}

/// The egress log of a contained run, in its end record: every request or tunnel the
/// egress proxy judged, bounded. Kept are the first [`EgressLog::KEPT_REFUSED`] events
/// that were not allowed and the first [`EgressLog::KEPT_ALLOWED`] that were, in the order
/// they happened; the counts and the destinations cover every event the proxy reported.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct EgressLog {
    /// How many events the proxy reported.
    pub total: u64,
    /// How many were allowed.
    pub allowed: u64,
    /// How many were refused by policy or a limit.
    pub refused: u64,
    /// How many were malformed or could not reach their upstream.
    pub errors: u64,
    /// How many requests carried a credential the proxy added.
    #[serde(skip_serializing_if = "is_zero")]
    pub injected: u64,
    /// How many events are counted but not listed in `events`.
    #[serde(skip_serializing_if = "is_zero")]
    pub omitted: u64,
    /// Each destination reached or refused, with its counts (at most
    /// [`EgressLog::KEPT_DESTINATIONS`], first seen first).
    pub destinations: Vec<EgressDestination>,
    /// The events kept, in the order they happened.
    pub events: Vec<EgressEntry>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl EgressLog {
    /// How many events that were not allowed an end record lists.
    pub const KEPT_REFUSED: usize = 50;
    /// How many allowed events an end record lists.
    pub const KEPT_ALLOWED: usize = 50;
    /// How many destinations an end record lists.
    pub const KEPT_DESTINATIONS: usize = 50;

    /// The log of `entries`, in the order they happened, bounded as the type says.
    pub fn of(entries: impl IntoIterator<Item = EgressEntry>) -> EgressLog {
        let mut log = EgressLog::default();
        let (mut kept_allowed, mut kept_refused) = (0usize, 0usize);
        for e in entries {
            log.total += 1;
            let allowed = e.decision == "allow";
            match e.decision.as_str() {
                "allow" => log.allowed += 1,
                "deny" => log.refused += 1,
                _ => log.errors += 1,
            }
            if allowed && e.credential.is_some() {
                log.injected += 1;
            }
            let room_for_more = log.destinations.len() < Self::KEPT_DESTINATIONS;
            match log
                .destinations
                .iter_mut()
                .find(|d| d.host == e.host && d.port == e.port)
            {
                Some(d) if allowed => d.allowed += 1,
                Some(d) => d.refused += 1,
                None if room_for_more => log.destinations.push(EgressDestination {
                    host: e.host.clone(),
                    port: e.port,
                    allowed: u64::from(allowed),
                    refused: u64::from(!allowed),
                }),
                None => {}
            }
            let kept = if allowed {
                &mut kept_allowed
            } else {
                &mut kept_refused
            };
            let room = if allowed {
                Self::KEPT_ALLOWED
            } else {
                Self::KEPT_REFUSED
            };
            if *kept < room {
                *kept += 1;
                log.events.push(e);
            } else {
                log.omitted += 1;
            }
        }
        log
    }
}

/// One destination of a run's egress and what became of the requests to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EgressDestination {
    /// The normalized host (or the raw target, bounded, when it did not parse).
    pub host: String,
    /// The port (0 when unknown).
    pub port: u16,
    /// Requests or tunnels allowed.
    pub allowed: u64,
    /// Requests or tunnels refused or failed.
    pub refused: u64,
}

/// One decision of the egress proxy, as the audit log keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EgressEntry {
    /// Milliseconds since the Unix epoch when the request arrived.
    pub time_ms: u64,
    /// How the client asked: `connect`, `http`, `socks5`, `intercepted`, `unknown`.
    pub protocol: String,
    /// The HTTP method, where the proxy saw one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The request path and query, where the proxy saw them (bounded by the proxy).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The credential added to the request, or whose leak was refused (its name only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credential: Option<String>,
    /// The normalized host (or the raw target, bounded, when it did not parse).
    pub host: String,
    /// The port (0 when unknown).
    pub port: u16,
    /// The address the proxy checked and connected to, or refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// `allow`, `deny` or `error`.
    pub decision: String,
    /// The stable network code (`allow`, `not-allowed`, `credential-leak`, …).
    pub code: String,
    /// One human sentence (absent when allowed).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// The upstream's HTTP status, where the proxy saw one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Bytes from the command to the upstream.
    pub bytes_up: u64,
    /// Bytes from the upstream to the command.
    pub bytes_down: u64,
    /// From arrival to the end of the request or tunnel, in milliseconds.
    pub duration_ms: u64,
}

/// One audit record. `None` fields and empty lists are left out of the line.
#[derive(Debug, Clone, Serialize)]
pub struct AuditRecord {
    /// The surface that decided: `check`, `exec`, …
    pub kind: Surface,
    /// Which moment of the call this is.
    pub phase: Phase,
    /// The session id, if the caller gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The agent id, if the caller gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The harness's id of the call, which ties its decision, run and result together.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation_id: Option<String>,
    /// The tool name as called.
    pub tool: String,
    /// The tool input (secrets are redacted whenever the record is serialized).
    #[serde(serialize_with = "redacted_value")]
    pub input: Value,
    /// The working directory of the call, if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The workspace.
    pub workspace: String,
    /// The final decision: `allow`, `ask` or `deny` (absent on a result record).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// One sentence (absent on a result record; secrets are redacted whenever the record
    /// is serialized).
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "redacted_text"
    )]
    pub reason: Option<String>,
    /// The step and rule that decided, the verdict's `source` (absent on a result record).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<Value>,
    /// The input fields a configured preset set over the model's input.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub presets: Vec<String>,
    /// Whether a human replaced the input before approving it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub edited: bool,
    /// What the harness reported about a call it ran (on a result record; secrets are
    /// redacted whenever the record is serialized).
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "redacted_option"
    )]
    pub result: Option<Value>,
    /// The containment the call was judged under: `none`, `fallback`, `full`,
    /// `full-host-network`, `full-home-visible`, `full-home-visible-host-network`.
    pub containment: Containment,
    /// The permission mode.
    pub mode: Mode,
    /// The approval policy.
    pub approval: ApprovalPolicy,
    /// The fingerprint of the config that decided.
    pub policy_version: String,
    /// How an ask was answered (`lease`, `allow-once`, `pending`, `deferred (on-failure)`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// The lease that granted the call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease: Option<LeaseId>,
    /// The pending approval recorded for the call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending: Option<PendingId>,
    /// The policy's findings that did not allow.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub blocked: Vec<FindingBrief>,
    /// The tier the run actually got (`full`, `fallback`), or `unavailable` when the tier
    /// required was not there, at the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tier: Option<RunTier>,
    /// The command's exit status, at the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_status: Option<i32>,
    /// Whether the timeout ended the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timed_out: Option<bool>,
    /// What containment blocked during the run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub containment_blocked: Vec<ContainmentBlock>,
    /// The on-failure escalation, if one was asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub escalation: Option<EscalationRecord>,
    /// The egress log of the run, at the end (when the egress proxy judged anything).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub egress: Option<EgressLog>,
}

impl AuditRecord {
    /// The record as one JSON object, with secrets in `input`, `reason` and `result`
    /// redacted.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or_else(|_| Value::Object(Map::new()))
    }

    /// The record as the log writes it (redacted as [`to_value`](Self::to_value) is),
    /// serialized once, straight from the struct.
    pub fn log_fields(&self) -> LogFields {
        // A struct of strings, numbers and JSON values always serializes; should it ever
        // fail, the record still says which surface wrote nothing else.
        let whole = serde_json::to_string(self)
            .unwrap_or_else(|_| serde_json::json!({ "kind": self.kind }).to_string());
        LogFields::from_object_text(&whole)
    }
}

/// A record ready for the log: the members of one JSON object (`,"a":1,"b":2`), without
/// the `seq`, `time`, `prev` and `sig` the log adds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFields(String);

impl LogFields {
    /// The members of the JSON object `record` (`None` when it is not an object); the
    /// log's own keys are left out.
    pub fn from_value(record: &Value) -> Option<LogFields> {
        let Value::Object(fields) = record else {
            return None;
        };
        let owned = |k: &str| matches!(k, "seq" | "time" | "prev" | "sig" | "signed_from");
        // Serializing a map of JSON values into a String cannot fail.
        let whole = if fields.keys().any(|k| owned(k)) {
            let kept: Map<String, Value> = fields
                .iter()
                .filter(|(k, _)| !owned(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            serde_json::to_string(&kept)
        } else {
            serde_json::to_string(fields)
        }
        .unwrap_or_else(|_| "{}".into());
        Some(LogFields::from_object_text(&whole))
    }

    /// `{"a":1,"b":2}` -> `,"a":1,"b":2`; `{}` -> ``. A record longer than
    /// [`MAX_FIELDS`] is cut first ([`cut_to_fit`]), so that every line the log writes
    /// stays under the length its own readers accept.
    fn from_object_text(whole: &str) -> LogFields {
        let cut;
        let whole = if whole.len() > MAX_FIELDS {
            cut = cut_to_fit(whole);
            cut.as_str()
        } else {
            whole
        };
        LogFields(
            match whole.strip_prefix('{').and_then(|w| w.strip_suffix('}')) {
                Some("") | None => String::new(),
                Some(inner) => format!(",{inner}"),
            },
        )
    }

    /// The members, each preceded by a comma.
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

/// The longest a record's own fields may be, in bytes: a quarter of the longest line the
/// log's readers accept (`MAX_LINE`, 1 MiB), leaving room for what the log adds.
pub(crate) const MAX_FIELDS: usize = 256 << 10;

/// Strings longer than this are replaced when a record is cut.
const CUT_STRING: usize = 1024;

/// A record too long for the log, made to fit: every string longer than [`CUT_STRING`]
/// (a file's content in a tool input, a long command) becomes
/// `"[N bytes cut from the record; blake3 HASH]"`; if that is still too long, only the
/// short top-level scalars stay, with `"cut": {"bytes": N, "blake3": HASH}` naming the whole.
/// The hash lets the original be matched to the record without keeping it.
fn cut_to_fit(whole: &str) -> String {
    let marker = |s: &str| {
        format!(
            "[{} bytes cut from the record; blake3 {}]",
            s.len(),
            blake3::hash(s.as_bytes()).to_hex()
        )
    };
    fn shorten(v: &mut Value, marker: &dyn Fn(&str) -> String) {
        match v {
            Value::String(s) if s.len() > CUT_STRING => *s = marker(s),
            Value::Array(items) => items.iter_mut().for_each(|i| shorten(i, marker)),
            Value::Object(map) => map.values_mut().for_each(|i| shorten(i, marker)),
            _ => {}
        }
    }
    let Ok(Value::Object(mut map)) = serde_json::from_str::<Value>(whole) else {
        return serde_json::json!({ "cut": marker(whole) }).to_string();
    };
    let mut value = Value::Object(map.clone());
    shorten(&mut value, &marker);
    let text = value.to_string();
    if text.len() <= MAX_FIELDS {
        return text;
    }
    map.retain(|_, v| match v {
        Value::String(s) => s.len() <= 256,
        Value::Number(_) | Value::Bool(_) | Value::Null => true,
        _ => false,
    });
    map.insert(
        "cut".into(),
        serde_json::json!({
            "bytes": whole.len(),
            "blake3": blake3::hash(whole.as_bytes()).to_hex().to_string(),
        }),
    );
    let text = Value::Object(map).to_string();
    if text.len() <= MAX_FIELDS {
        text
    } else {
        serde_json::json!({ "cut": marker(whole) }).to_string()
    }
}

fn redacted_value<S: serde::Serializer>(v: &Value, s: S) -> Result<S::Ok, S::Error> {
    crate::redact::redact(v).serialize(s)
}

fn redacted_option<S: serde::Serializer>(v: &Option<Value>, s: S) -> Result<S::Ok, S::Error> {
    v.as_ref().map(crate::redact::redact).serialize(s)
}

fn redacted_text<S: serde::Serializer>(v: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
    v.as_deref()
        .map(cordon_policy::secrets::redact)
        .serialize(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_too_long_for_the_log_is_cut_to_fit_and_names_what_was_cut() {
        // A Write of almost 1 MiB: the tool input alone is near the line limit.
        let content = "x".repeat(1_048_250);
        let record = serde_json::json!({
            "kind": "decision", "tool": "Write", "decision": "ask",
            "input": {"file_path": "/w/a", "content": content},
        });
        let fields = LogFields::from_value(&record).unwrap();
        assert!(
            fields.as_str().len() <= MAX_FIELDS,
            "{}",
            fields.as_str().len()
        );
        let back: Value = serde_json::from_str(&format!("{{{}}}", &fields.as_str()[1..])).unwrap();
        assert_eq!(back["tool"], "Write");
        assert_eq!(back["decision"], "ask");
        assert_eq!(back["input"]["file_path"], "/w/a");
        let cut = back["input"]["content"].as_str().unwrap();
        assert!(
            cut.starts_with("[1048250 bytes cut from the record; blake3 "),
            "{cut}"
        );
        // Many short strings too: only the short top-level scalars stay, the whole hashed.
        let many: Vec<String> = (0..100_000).map(|i| format!("arg{i}")).collect();
        let record = serde_json::json!({"kind": "decision", "tool": "Bash", "argv": many});
        let fields = LogFields::from_value(&record).unwrap();
        assert!(fields.as_str().len() <= MAX_FIELDS);
        let back: Value = serde_json::from_str(&format!("{{{}}}", &fields.as_str()[1..])).unwrap();
        assert_eq!(back["tool"], "Bash");
        assert!(
            back["cut"]["bytes"].as_u64().unwrap() > MAX_FIELDS as u64,
            "{back}"
        );
        // An ordinary record is untouched.
        let small = serde_json::json!({"kind": "decision", "tool": "Read"});
        assert_eq!(
            LogFields::from_value(&small).unwrap().as_str(),
            r#","kind":"decision","tool":"Read""#
        );
    }
    use serde_json::json;

    #[test]
    fn omits_empty_fields_and_redacts_input() {
        let r = AuditRecord {
            kind: Surface::Check,
            phase: Phase::Decision,
            session: None,
            agent: None,
            operation_id: None,
            tool: "Bash".into(),
            input: json!({"command": "curl -H 'Authorization: Bearer s3cr3t' https://x"}),
            cwd: Some("/w".into()),
            workspace: "/w".into(),
            decision: Some(Decision::Deny),
            reason: Some("r".into()),
            source: Some(json!({"step": "guard"})),
            presets: Vec::new(),
            edited: false,
            result: None,
            containment: Containment::None,
            mode: Mode::Default,
            approval: ApprovalPolicy::OnRequest,
            policy_version: "v".into(),
            answer: None,
            lease: None,
            pending: None,
            blocked: Vec::new(),
            tier: None,
            exit_status: None,
            timed_out: None,
            containment_blocked: Vec::new(),
            escalation: None,
            egress: None,
        };
        let v = r.to_value();
        assert_eq!(
            v["input"]["command"],
            "curl -H 'Authorization: Bearer [REDACTED]' https://x"
        );
        assert_eq!(v["cwd"], "/w");
        assert_eq!(v["phase"], "decision");
        assert!(v.get("session").is_none() && v.get("blocked").is_none());
    }

    fn entry(host: &str, decision: &str, credential: Option<&str>) -> EgressEntry {
        EgressEntry {
            time_ms: 1,
            protocol: "connect".into(),
            method: None,
            path: None,
            credential: credential.map(String::from),
            host: host.into(),
            port: 443,
            address: None,
            decision: decision.into(),
            code: if decision == "allow" {
                "allow".into()
            } else {
                "not-allowed".into()
            },
            reason: String::new(),
            status: None,
            bytes_up: 0,
            bytes_down: 0,
            duration_ms: 0,
        }
    }

    #[test]
    fn an_egress_log_counts_everything_and_lists_a_bounded_part() {
        // Many allowed requests first must not push the refusals out of the list.
        let allowed = (0..200).map(|i| entry(&format!("h{}.example", i % 3), "allow", None));
        let refused = (0..70).map(|_| entry("evil.example", "deny", None));
        let injected = std::iter::once(entry("api.example", "allow", Some("API_TOKEN")));
        let failed = std::iter::once(entry("down.example", "error", None));
        let log = EgressLog::of(allowed.chain(refused).chain(injected).chain(failed));
        assert_eq!(
            (
                log.total,
                log.allowed,
                log.refused,
                log.errors,
                log.injected
            ),
            (272, 201, 70, 1, 1)
        );
        let listed_refused = log.events.iter().filter(|e| e.decision != "allow").count();
        assert_eq!(listed_refused, EgressLog::KEPT_REFUSED);
        assert_eq!(
            log.events.len(),
            EgressLog::KEPT_ALLOWED + EgressLog::KEPT_REFUSED
        );
        assert_eq!(log.omitted, 272 - log.events.len() as u64);
        let evil = log
            .destinations
            .iter()
            .find(|d| d.host == "evil.example")
            .unwrap();
        assert_eq!((evil.allowed, evil.refused), (0, 70));
        assert_eq!(log.destinations.len(), 6);
        let v = serde_json::to_value(&log).unwrap();
        assert_eq!(v["events"][0]["decision"], "allow");
        assert!(v["events"][0].get("reason").is_none());
    }

    #[test]
    fn destinations_are_bounded() {
        let log = EgressLog::of(
            (0..EgressLog::KEPT_DESTINATIONS + 10).map(|i| entry(&format!("h{i}"), "deny", None)),
        );
        assert_eq!(log.destinations.len(), EgressLog::KEPT_DESTINATIONS);
        assert_eq!(log.refused, (EgressLog::KEPT_DESTINATIONS + 10) as u64);
    }
}
