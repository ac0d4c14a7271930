//! Audit records as OTLP log records (the OpenTelemetry project's prost types, encoded
//! by prost). Each record's line travels whole as the body, byte for byte, so that the
//! collector's copy can be re-assembled and verified with `cordon audit verify --key`
//! (the signatures are inside the lines); its fields travel as attributes, under
//! OpenTelemetry's semantic-convention names where one exists.

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{
    AnyValue, InstrumentationScope, KeyValue, any_value::Value as Any,
};
use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs, SeverityNumber};
use opentelemetry_proto::tonic::resource::v1::Resource;
use serde_json::Value;

use cordon_store::QueuedRecord;

/// cordon's version, sent as `service.version`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Who is sending: the resource attributes of every request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sender {
    /// `host.name`.
    pub host: String,
    /// `user.name`.
    pub user: String,
    /// `user.id` (the uid).
    pub uid: u32,
}

impl Sender {
    /// This machine and user.
    pub fn this_process() -> Sender {
        let uid = rustix::process::getuid().as_raw();
        Sender {
            host: rustix::system::uname()
                .nodename()
                .to_string_lossy()
                .into_owned(),
            user: std::env::var("USER")
                .or_else(|_| std::env::var("LOGNAME"))
                .unwrap_or_else(|_| format!("uid {uid}")),
            uid,
        }
    }
}

fn kv(key: &str, value: Any) -> KeyValue {
    KeyValue {
        key: key.to_string(),
        value: Some(AnyValue { value: Some(value) }),
        ..KeyValue::default()
    }
}

fn text(key: &str, value: &str) -> KeyValue {
    kv(key, Any::StringValue(value.to_string()))
}

/// A JSON value as an attribute value: scalars as themselves, the rest as JSON text.
fn any(v: &Value) -> Option<Any> {
    match v {
        Value::Null => None,
        Value::Bool(b) => Some(Any::BoolValue(*b)),
        Value::Number(n) => n
            .as_i64()
            .map(Any::IntValue)
            .or_else(|| n.as_f64().map(Any::DoubleValue)),
        Value::String(s) => Some(Any::StringValue(s.clone())),
        other => Some(Any::StringValue(other.to_string())),
    }
}

/// The id a collector recognizes a record by, the same on every delivery: the log's
/// id (its header hash, first 32 hex digits) and the record's seq.
pub fn record_id(log_id: &str, seq: u64) -> String {
    format!("{}:{seq}", log_id.get(..32).unwrap_or(log_id))
}

/// Top-level record fields with a semantic-convention name.
const SEMCONV: &[(&str, &str)] = &[
    ("session", "session.id"),
    ("tool", "gen_ai.tool.name"),
    ("operation_id", "gen_ai.tool.call.id"),
    ("exit_status", "process.exit.code"),
];

/// Fields of the input a call acted on, with a semantic-convention name.
const INPUT_SEMCONV: &[(&str, &str)] = &[
    ("file_path", "file.path"),
    ("path", "file.path"),
    ("url", "url.full"),
    ("command", "process.command_line"),
];

fn decision_of(record: &Value) -> Option<&str> {
    record.get("decision").and_then(Value::as_str).or_else(|| {
        record
            .get("verdict")
            .and_then(|v| v.get("decision"))
            .and_then(Value::as_str)
    })
}

fn time_ns(record: &Value) -> u64 {
    record
        .get("time")
        .and_then(Value::as_str)
        .and_then(|t| humantime::parse_rfc3339(t).ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// One audit record as a log record.
pub fn log_record(log_id: &str, record: &QueuedRecord, observed_ns: u64) -> LogRecord {
    let line = String::from_utf8_lossy(&record.line).into_owned();
    let parsed: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
    let mut attributes = vec![
        text("log.record.uid", &record_id(log_id, record.seq)),
        text("cordon.audit.log_id", log_id),
        kv(
            "cordon.audit.seq",
            Any::IntValue(i64::try_from(record.seq).unwrap_or(i64::MAX)),
        ),
    ];
    if let Some(why) = &record.chain_break {
        attributes.push(text("cordon.audit.chain_break", why));
    }
    if let Value::Object(fields) = &parsed {
        for (k, v) in fields {
            let name = match k.as_str() {
                "seq" | "time" => continue,
                "prev" => "cordon.audit.prev".to_string(),
                "sig" => "cordon.audit.sig".to_string(),
                _ => SEMCONV
                    .iter()
                    .find(|(f, _)| f == k)
                    .map_or_else(|| format!("cordon.{k}"), |(_, s)| (*s).to_string()),
            };
            if let Some(value) = any(v) {
                attributes.push(kv(&name, value));
            }
        }
        if let Some(Value::Object(input)) = fields.get("input") {
            for (field, name) in INPUT_SEMCONV {
                if let Some(Value::String(s)) = input.get(*field)
                    && !attributes.iter().any(|a| a.key == *name)
                {
                    attributes.push(text(name, s));
                }
            }
        }
        if let Some(d) = decision_of(&parsed) {
            attributes.push(text("cordon.decision", d));
        }
    }
    let (severity, severity_text) = match decision_of(&parsed) {
        _ if record.chain_break.is_some() => (SeverityNumber::Error, "ERROR"),
        Some("deny") => (SeverityNumber::Warn, "WARN"),
        _ if parsed.get("event").and_then(Value::as_str) == Some("dropped") => {
            (SeverityNumber::Error, "ERROR")
        }
        _ => (SeverityNumber::Info, "INFO"),
    };
    let event = if record.seq == 0 {
        Some("header")
    } else {
        parsed
            .get("event")
            .or_else(|| parsed.get("phase"))
            .and_then(Value::as_str)
    }
    .unwrap_or("record");
    LogRecord {
        time_unix_nano: time_ns(&parsed),
        observed_time_unix_nano: observed_ns,
        severity_number: severity as i32,
        severity_text: severity_text.to_string(),
        body: Some(AnyValue {
            value: Some(Any::StringValue(line)),
        }),
        attributes,
        event_name: format!("cordon.audit.{event}"),
        ..LogRecord::default()
    }
}

/// One export request for `records` of the log `log_id`.
pub fn request(
    sender: &Sender,
    log_id: &str,
    records: &[QueuedRecord],
    observed_ns: u64,
) -> ExportLogsServiceRequest {
    let resource = Resource {
        attributes: vec![
            text("service.name", "cordon"),
            text("service.version", VERSION),
            text("host.name", &sender.host),
            text("user.name", &sender.user),
            text("user.id", &sender.uid.to_string()),
        ],
        ..Resource::default()
    };
    ExportLogsServiceRequest {
        resource_logs: vec![ResourceLogs {
            resource: Some(resource),
            scope_logs: vec![ScopeLogs {
                scope: Some(InstrumentationScope {
                    name: "cordon.audit".into(),
                    version: VERSION.into(),
                    ..InstrumentationScope::default()
                }),
                log_records: records
                    .iter()
                    .map(|r| log_record(log_id, r, observed_ns))
                    .collect(),
                schema_url: String::new(),
            }],
            schema_url: String::new(),
        }],
    }
}
