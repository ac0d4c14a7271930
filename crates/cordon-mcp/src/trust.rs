//! Messages of untrusted servers: every string labelled as data or neutralised, and
//! stripped of secrets, before the client (and so the model) reads it.
//!
//! [`untrusted_message`] is the one walker every message of a server marked `trust =
//! "untrusted"` goes through on its way to the client: responses of every method,
//! notifications (log lines, progress) and requests (`sampling/createMessage`,
//! `elicitation/create`, `roots/list`). It uses cordon's shared modules and nothing of its
//! own: [`cordon_policy::secrets::redact`] (and the secret-name rule of
//! [`cordon_policy::secrets::redact_json`]) and [`cordon_policy::label::label_redacted`],
//! which redacts the text as it is finally written, after escaping.
//!
//! - The envelope is rebuilt from JSON-RPC's members only (`jsonrpc`, `id`, `method`,
//!   `params`, `result`, `error`); anything else the server put beside them is dropped.
//!   A method that is not a plain name (ASCII letters, digits, `/ _ - . $`, at most 128
//!   bytes) or that spells a secret drops the whole message.
//! - Every key at every depth is redacted and has every spelling of the wrapper's tag
//!   rewritten.
//! - Prose members (`text`, `description`, `message`, `title`, `instructions`,
//!   `systemPrompt`, `data` when it is a string, and `name` of a resource, a resource
//!   template or a `resource_link` block, which clients show as the resource's title) are
//!   redacted and wrapped as
//!   `<untrusted_content source="mcp:SERVER/WHAT">…</untrusted_content>`, `WHAT` being
//!   the tool or the method.
//! - Every other string is *neutralised in place*: redacted, then rewritten exactly as
//!   the body of a label is (every spelling of an `untrusted_content` tag gets `[` for its
//!   `<`; controls, bidi and tag characters become U+FFFD), without the wrapper. So a
//!   structured value (`structuredContent`, `_meta`, a tool's schemas, a resource's
//!   `uri`) keeps its shape and types: strings stay strings, and only text that could
//!   close a label or that holds a secret changes. Inside `structuredContent` and `_meta`
//!   nothing is wrapped, prose members included. Identifiers the protocol needs (a
//!   tool's or a prompt's `name`, a `uri`) stay plain, neutralised only. The value of a
//!   key that names a secret (`api_key`, `password`) becomes `[REDACTED]` when it is a
//!   string, as `redact_json` does; an array or an object there keeps its shape with every
//!   string in it `[REDACTED]`; a number or a boolean is kept.
//! - Binary payloads (`data` of an `image` or `audio` part, `blob` of a resource) must be
//!   standard base64 whose decoded bytes spell no secret the detectors know and, read
//!   as text whatever their `mimeType` (invalid UTF-8 and controls read as U+FFFD), hold
//!   nothing neutralising would change (a spelling of the tag); anything else is
//!   emptied.
//!
//! The harness tells the model what the wrapper means with [`cordon_policy::label::PROMPT`].

use base64::Engine;
use cordon_policy::label::{SourceName, label_redacted, verify};
use cordon_policy::secrets;
use serde_json::{Map, Value};

/// Members whose string value is prose a model reads: wrapped in the label.
const PROSE: [&str; 7] = [
    "text",
    "description",
    "message",
    "title",
    "instructions",
    "systemPrompt",
    "data",
];

/// Members whose value is structured: neutralised, never wrapped.
const STRUCTURED: [&str; 2] = ["structuredContent", "_meta"];

/// Is `method` a plain method name?
pub fn plain_method(method: &str) -> bool {
    !method.is_empty()
        && method.len() <= 128
        && method
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/_-.$".contains(&b))
}

/// Make one message of the untrusted server `server` safe for the client: `what` names
/// what it is (the tool a result answers, else the method), for the label's source.
/// `None` when the message must be dropped (a method that is not a plain name, or not a
/// JSON-RPC message at all).
pub fn untrusted_message(server: &str, what: &str, msg: &Map<String, Value>) -> Option<Value> {
    let source = SourceName::escaped(&format!("mcp:{server}/{what}"));
    let mut out = Map::new();
    out.insert("jsonrpc".into(), Value::String("2.0".into()));
    if let Some(id) = msg.get("id") {
        // Ids reaching the client are the gateway's or the client's own; a string is
        // neutralised all the same.
        out.insert("id".into(), walk(id, &source, None, false));
    }
    if let Some(m) = msg.get("method") {
        let m = m
            .as_str()
            .filter(|m| plain_method(m) && secrets::find(m).is_empty())?;
        out.insert("method".into(), Value::String(m.into()));
        if let Some(p) = msg.get("params") {
            out.insert("params".into(), walk(p, &source, None, false));
        }
        return Some(Value::Object(out));
    }
    match (msg.get("result"), msg.get("error")) {
        (Some(r), None) => {
            out.insert("result".into(), walk(r, &source, None, false));
        }
        (None, Some(e)) => {
            out.insert("error".into(), error(e, &source));
        }
        _ => return None,
    }
    Some(Value::Object(out))
}

/// Label and redact an MCP `CallToolResult` (the `result` member of a `tools/call`
/// response) of `tool` on the server called `server`.
pub fn label_untrusted_result(server: &str, tool: &str, result: &mut Value) {
    let source = SourceName::escaped(&format!("mcp:{server}/{tool}"));
    *result = walk(result, &source, None, false);
}

/// `v` with every string (keys included) redacted and neutralised, nothing wrapped: for
/// text cordon shows in its own messages (an approval question).
pub fn neutralised(server: &str, what: &str, v: &Value) -> Value {
    let source = SourceName::escaped(&format!("mcp:{server}/{what}"));
    walk(v, &source, None, true)
}

/// A JSON-RPC error object: an integer code, a labelled message, the data walked.
fn error(e: &Value, source: &SourceName) -> Value {
    let mut out = Map::new();
    let code = e
        .get("code")
        .filter(|c| c.is_i64())
        .cloned()
        .unwrap_or(Value::from(-32603));
    out.insert("code".into(), code);
    let message = e.get("message").and_then(Value::as_str).unwrap_or("");
    out.insert("message".into(), Value::String(wrap(source, message)));
    if let Some(d) = e.get("data") {
        out.insert("data".into(), walk(d, source, Some("data"), false));
    }
    Value::Object(out)
}

/// `v` made safe. `key` is the member holding it; `structured` says no wrapping.
fn walk(v: &Value, source: &SourceName, key: Option<&str>, structured: bool) -> Value {
    match v {
        Value::String(s) => {
            if !structured && key.is_some_and(|k| PROSE.contains(&k)) {
                Value::String(wrap(source, s))
            } else {
                Value::String(neutralise(source, s))
            }
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|i| walk(i, source, key, structured))
                .collect(),
        ),
        Value::Object(m) => object(m, source, structured),
        other => other.clone(),
    }
}

fn object(m: &Map<String, Value>, source: &SourceName, structured: bool) -> Value {
    let kind = m.get("type").and_then(Value::as_str);
    let binary_part = matches!(kind, Some("image" | "audio"));
    // A resource, a resource template or a link to one: its `name` is a display name
    // (the `uri` identifies it), so prose.
    let resource = kind == Some("resource_link")
        || ["uri", "uriTemplate"]
            .iter()
            .any(|u| m.get(*u).is_some_and(Value::is_string));
    let mut out = Map::new();
    for (k, v) in m {
        let binary = (k == "blob" || (binary_part && k == "data")) && v.is_string();
        let safe = if binary {
            Value::String(binary_payload(source, v.as_str().unwrap_or_default()))
        } else if let Some(r) = secret_named(k, v) {
            r
        } else if resource && k == "name" && v.is_string() && !structured {
            Value::String(wrap(source, v.as_str().unwrap_or_default()))
        } else {
            let inner = structured || STRUCTURED.contains(&k.as_str());
            walk(v, source, Some(k), inner)
        };
        out.insert(neutralise(source, k), safe);
    }
    Value::Object(out)
}

/// `[REDACTED]` when `key` names a secret and `value` is one (`redact_json`'s rule); an
/// array or an object under such a key with every string in it `[REDACTED]`.
fn secret_named(key: &str, value: &Value) -> Option<Value> {
    // Ask the shared rule about this name and value.
    if value.is_array() || value.is_object() {
        let mut probe = Map::new();
        probe.insert(key.to_string(), Value::Array(Vec::new()));
        let secret = matches!(
            secrets::redact_json(&Value::Object(probe)).get(key),
            Some(Value::String(r)) if r == secrets::REDACTED
        );
        return secret.then(|| every_string_redacted(value));
    }
    // A number or a boolean under such a name (`maxTokens`) keeps its type.
    if !value.is_string() {
        return None;
    }
    let mut probe = Map::new();
    probe.insert(key.to_string(), value.clone());
    match secrets::redact_json(&Value::Object(probe)).get(key) {
        Some(Value::String(r)) if r == secrets::REDACTED && value.as_str() != Some(r) => {
            Some(Value::String(secrets::REDACTED.into()))
        }
        _ => None,
    }
}

/// `v` with every string in it, keys aside, `[REDACTED]`; keys neutralised as secrets.
fn every_string_redacted(v: &Value) -> Value {
    match v {
        Value::String(_) => Value::String(secrets::REDACTED.into()),
        Value::Array(items) => Value::Array(items.iter().map(every_string_redacted).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| {
                    let key = neutralise(&SourceName::escaped("mcp"), k);
                    (key, every_string_redacted(x))
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Wrapped, and redacted as given and as finally written.
fn wrap(source: &SourceName, s: &str) -> String {
    label_redacted(source, s)
}

/// Escaped as a label's body is, without the wrapper, and redacted as given and as
/// finally written (before and after escaping: see [`label_redacted`]).
fn neutralise(source: &SourceName, s: &str) -> String {
    if plain(s) {
        // Escaping leaves such text as it is, and `[REDACTED]` is plain too.
        return secrets::redact(s).into_owned();
    }
    let labelled = label_redacted(source, s);
    match verify(&labelled) {
        Ok(l) => l.body.to_string(),
        Err(_) => "[cordon withheld this value: it could not be made safe]".into(),
    }
}

/// Text the label would leave as it is: printable ASCII with no character that can
/// start a tag or an entity (the common case, checked without building a label).
fn plain(s: &str) -> bool {
    s.bytes()
        .all(|b| (0x20..0x7f).contains(&b) && !b"<&%\\".contains(&b))
}

/// A binary payload kept only when it is standard base64 spelling no secret and, read as
/// text, holding no spelling of the tag. Any payload is read so, not only a `text/*` one:
/// a client may show any as text, and bytes that are not text rarely spell a tag.
fn binary_payload(source: &SourceName, data: &str) -> String {
    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(data) else {
        return String::new();
    };
    let text = String::from_utf8_lossy(&bytes);
    if !secrets::find(data).is_empty() || !secrets::find(&text).is_empty() {
        return String::new();
    }
    // Controls would change on their own (binary is full of them): they are read as
    // U+FFFD first, so only what neutralising does to text (a tag's spelling, bidi) counts.
    let text: String = text
        .chars()
        .map(|c| {
            if c.is_control() && !matches!(c, '\t' | '\n' | '\r') {
                '\u{FFFD}'
            } else {
                c
            }
        })
        .collect();
    if neutralise(source, &text) != text {
        return String::new();
    }
    data.to_string()
}

#[cfg(test)]
mod tests;
