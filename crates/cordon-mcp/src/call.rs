//! One `tools/call`: judged by the gate, then forwarded or answered.
//!
//! The call becomes the request `{"tool": "mcp__NAME__TOOL", "input": {"arguments":
//! …}}` (cordon-policy's adapter for MCP tool names), with the agent's session
//! (`--session`) or else this gateway run as its session and `mcp-NONCE-ID` as its operation id (JSON-RPC ids repeat from one session
//! to the next; the nonce keeps them apart). A tool whose definition changed since it
//! was approved is judged by the policy with one more ask rule naming it, so only a
//! human (or a lease a human gave) lets it through, and deny rules and guards still
//! deny first.
//!
//! An ask goes to the human by MCP elicitation when the client declared it, else to the
//! terminal (`--interactive` and a `/dev/tty`), else becomes a pending approval. A
//! refusal is answered as a tool result with `isError: true` and the reason as text, so
//! the model reads why; only a call the gateway cannot read at all gets a JSON-RPC
//! error. Every decision is written to the audit log before anything is forwarded.

use crate::elicit::Elicitor;
use crate::gateway::{Inflight, Shared};
use crate::view::Status;
use cordon_gate::TerminalPrompter;
use cordon_gate::{Absent, Containment, Gate, Human, Outcome, ToolResult};
use cordon_policy::{Attenuation, RealFs, Request};
use cordon_store::Prompter;
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// The session every call of this gateway run belongs to: the one `--session` named
/// (an agent's), else one that lasts as long as the run ("allow for this session").
pub(crate) fn session(s: &Shared) -> String {
    match &s.session {
        Some(id) => id.clone(),
        None => format!(
            "{}{}:{}",
            cordon_store::GATEWAY_RUN_SESSION,
            s.name,
            s.nonce
        ),
    }
}

/// Judge one `tools/call` request and forward or answer it.
pub(crate) fn judge(s: &Arc<Shared>, id: Value, obj: Map<String, Value>) {
    let params = obj.get("params").and_then(Value::as_object);
    let Some(tool) = params
        .and_then(|p| p.get("name"))
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
    else {
        s.to_client(&crate::frame::error_response(
            id,
            -32602,
            "invalid params: `tools/call` needs a non-empty string `name` (cordon mcp-gateway)",
        ));
        return;
    };
    let arguments = match params.and_then(|p| p.get("arguments")) {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(a @ Value::Object(_)) => a.clone(),
        Some(_) => {
            s.to_client(&crate::frame::error_response(
                id,
                -32602,
                "invalid params: `arguments` must be an object (cordon mcp-gateway)",
            ));
            return;
        }
    };
    let op = format!("mcp-{}-{}", s.nonce, id_text(&id));
    let request = Request::from_value(json!({
        "tool": format!("mcp__{}__{}", s.name, tool),
        "input": {"arguments": arguments},
        "session": session(s),
        "operation_id": crate::cut(&op, 200),
    }));
    let request = match request {
        Ok(r) => r,
        Err(e) => {
            return refuse(s, id, &format!("cordon cannot judge this call: {e}"));
        }
    };
    let change = match s.tool_status(&tool) {
        Status::Approved => None,
        Status::Changed(why) => Some(why),
    };
    let drift_gate;
    let gate: &Gate = match &change {
        None => &s.gate,
        Some(_) => {
            let narrowed = s.gate.policy().attenuate(&Attenuation {
                ask: vec![format!("mcp__{}__{}", s.name, tool)],
                ..Attenuation::default()
            });
            match narrowed {
                Ok(p) => {
                    drift_gate = Gate::new(p, s.gate.options().clone()).sharing_store_of(&s.gate);
                    &drift_gate
                }
                Err(e) => {
                    return refuse(
                        s,
                        id,
                        &format!(
                            "cordon refused this call: the tool changed since it was approved and cannot be asked about ({e})"
                        ),
                    );
                }
            }
        }
    };
    match conclude(s, gate, &request, &tool, change.as_deref()) {
        Ok(judged) => {
            // Forward what was judged: a configured preset may have set arguments.
            let mut obj = obj;
            if let Some(args) = judged.input.get("arguments")
                && let Some(Value::Object(params)) = obj.get_mut("params")
                && params.get("arguments") != Some(args)
            {
                params.insert("arguments".into(), args.clone());
            }
            s.forward_request(Some(id), obj, Inflight::ToolsCall(tool, judged))
        }
        Err(text) => refuse(s, id, &text),
    }
}

/// The gate's decision on `request`, written to the audit log: the request as judged
/// when it is permitted, else the sentence the refusal is answered with.
pub(crate) fn conclude(
    s: &Arc<Shared>,
    gate: &Gate,
    request: &Request,
    what: &str,
    change: Option<&str>,
) -> Result<Box<Request>, String> {
    let mut outcome = decide(s, gate, request, what, change);
    if let Some(why) = change {
        note_change(&mut outcome, why);
    }
    let (outcome, audit_error) = gate.conclude(outcome);
    if let Some(e) = &audit_error {
        eprintln!("cordon: {e}");
    }
    Err(match outcome {
        Outcome::Permitted(p) => return Ok(Box::new(p.decided.request.clone())),
        Outcome::Pending(d) => {
            let n = d.pending.map_or_else(|| "?".to_string(), |p| p.to_string());
            format!(
                "cordon: this call needs approval and is pending approval {n}: run `cordon approvals approve {n}`, then retry. ({})",
                d.verdict.reason
            )
        }
        Outcome::Refused(r) => {
            let mut text = format!("cordon denied this call: {}", r.decided.verdict.reason);
            for f in &r.fixes {
                text.push_str(&format!("\n- {f}"));
            }
            text
        }
        Outcome::Ask(d) => format!(
            "cordon denied this call: approval needed and no human can be asked ({})",
            d.verdict.reason
        ),
        Outcome::Trial(t) => format!(
            "cordon denied this call: the on-failure approval policy runs only contained shell commands ({})",
            t.decided().verdict.reason
        ),
    })
}

/// Judge a `resources/read`, `prompts/get` or `completion/complete` of the client and
/// forward it or answer it with a JSON-RPC error.
///
/// `resources/read` of a `file:` URI is judged as a read of that file (the URI parsed as
/// a WHATWG URL, so `file://localhost/…`, `FILE:`, percent-encoding and dot segments are
/// read as the server's URL parser reads them), of an `http:`/`https:` URI as a fetch of
/// it, of any other absolute URI as the tool `mcp__SERVER__resources/read`; a text that
/// is no absolute URI, or a file URI naming another host or no path cordon can judge,
/// is refused. The other two are judged as `mcp__SERVER__prompts/get` and
/// `mcp__SERVER__completion/complete` with their params as arguments.
pub(crate) fn judge_method(s: &Arc<Shared>, id: Value, method: &str, obj: Map<String, Value>) {
    let params = obj
        .get("params")
        .cloned()
        .unwrap_or(Value::Object(Map::new()));
    let target = if method == "resources/read" {
        match params
            .get("uri")
            .and_then(Value::as_str)
            .map(resource_target)
        {
            Some(Ok(Some(t))) => t,
            Some(Ok(None)) => json!({
                "tool": format!("mcp__{}__resources/read", s.name),
                "input": {"arguments": params}
            }),
            Some(Err(why)) => {
                return refuse_rpc(s, id, -32602, &format!("cordon refused this read: {why}"));
            }
            None => {
                return refuse_rpc(
                    s,
                    id,
                    -32602,
                    "invalid params: `resources/read` needs a string `uri` (cordon mcp-gateway)",
                );
            }
        }
    } else {
        json!({"tool": format!("mcp__{}__{}", s.name, method), "input": {"arguments": params}})
    };
    let Some(request) = request_of(s, target, &format!("mcp-{}-{}", s.nonce, id_text(&id))) else {
        return refuse_rpc(
            s,
            id,
            -32602,
            &format!("cordon refused this request: `{method}` cannot be judged as it was sent"),
        );
    };
    match conclude(s, &s.gate, &request, method, None) {
        Ok(judged) => {
            s.forward_request(Some(id), obj, Inflight::Judged(method.to_string(), judged))
        }
        Err(text) => refuse_rpc(s, id, -32001, &text),
    }
}

/// What a `resources/read` of `uri` is judged as (a request without session and id):
/// a file read, a fetch, or `None` for the server's own resource tool.
fn resource_target(uri: &str) -> Result<Option<Value>, String> {
    let parsed = url::Url::parse(uri)
        .map_err(|e| format!("`{}` is not an absolute URI ({e})", crate::cut(uri, 200)))?;
    Ok(Some(match parsed.scheme() {
        "file" => {
            let path = parsed.to_file_path().map_err(|()| {
                format!(
                    "the file URI `{}` names another host or no local path",
                    crate::cut(uri, 200)
                )
            })?;
            let Some(path) = path.to_str() else {
                return Err("the file URI's path is not UTF-8".into());
            };
            json!({"tool": "Read", "input": {"file_path": path}})
        }
        "http" | "https" => json!({"tool": "WebFetch", "input": {"url": parsed.as_str()}}),
        _ => return Ok(None),
    }))
}

/// `target` as a request of this gateway's session with operation id `op`.
fn request_of(s: &Shared, mut target: Value, op: &str) -> Option<Request> {
    let obj = target.as_object_mut()?;
    obj.insert("session".into(), Value::String(session(s)));
    obj.insert("operation_id".into(), Value::String(crate::cut(op, 200)));
    Request::from_value(target).ok()
}

/// Judge a `sampling/createMessage` of the server (it would spend the user's model) as
/// the tool `mcp__SERVER__sampling/createMessage`: forwarded to the client when the
/// policy permits it (an allow rule naming it, or a human's approval), else answered to
/// the server with an error.
pub(crate) fn judge_sampling(s: &Arc<Shared>, id: Value, obj: Map<String, Value>) {
    let method = "sampling/createMessage";
    // What the human asked and the audit log see of an untrusted server's text: every
    // string redacted and its tag spellings rewritten.
    let mut params = obj
        .get("params")
        .cloned()
        .unwrap_or(Value::Object(Map::new()));
    if s.trust == cordon_policy::mcp::Trust::Untrusted {
        params = crate::trust::neutralised(&s.name, method, &params);
    }
    let n = s.seq.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let target =
        json!({"tool": format!("mcp__{}__{method}", s.name), "input": {"arguments": params}});
    let judged = match request_of(s, target, &format!("mcp-{}-sampling-{n}", s.nonce)) {
        Some(request) => conclude(s, &s.gate, &request, method, None).map(|_| ()),
        None => Err("cordon refused this request: it cannot be judged as it was sent".into()),
    };
    match judged {
        Ok(()) => s.forward_server_request(id, method, obj),
        Err(text) => {
            eprintln!(
                "cordon: MCP server `{}` asked to sample the client's model: {text}",
                s.name
            );
            s.to_server(&crate::frame::error_response(id, -1, &text));
        }
    }
}

/// Answer a request with a JSON-RPC error.
fn refuse_rpc(s: &Shared, id: Value, code: i64, text: &str) {
    s.to_client(&crate::frame::error_response(id, code, text));
}

/// The gate's decision with the human this gateway has.
fn decide(
    s: &Arc<Shared>,
    gate: &Gate,
    request: &Request,
    tool: &str,
    change: Option<&str>,
) -> Outcome {
    if s.client_elicits.load(std::sync::atomic::Ordering::SeqCst) {
        let mut elicitor = Elicitor {
            shared: Arc::clone(s),
            tool: tool.to_string(),
            change: change.map(str::to_string),
        };
        let human = Human {
            prompter: Some(&mut elicitor as &mut dyn Prompter),
            absent: Absent::Deny,
        };
        return gate.decide(request, &RealFs, Containment::None, human, false);
    }
    if s.interactive
        && let Ok(tty) = open_tty()
        && let Ok(reader) = tty.try_clone()
    {
        // One question on the terminal at a time.
        let _turn = s.tty.lock();
        let mut prompter = TerminalPrompter::new(std::io::BufReader::new(reader), tty);
        let human = Human {
            prompter: Some(&mut prompter as &mut dyn Prompter),
            absent: Absent::Pending,
        };
        return gate.decide(request, &RealFs, Containment::None, human, false);
    }
    // No human here: a lease may answer; else a pending approval. The pending record is
    // made without the operation id, so that the approval covers the retry (which comes
    // with a new JSON-RPC id); the retry then claims its own id.
    let first = gate.decide(request, &RealFs, Containment::None, Human::caller(), false);
    let Outcome::Ask(_) = first else {
        return first;
    };
    let mut unbound = request.clone();
    unbound.operation_id = None;
    let human = Human {
        prompter: None,
        absent: Absent::Pending,
    };
    gate.decide(&unbound, &RealFs, Containment::None, human, false)
}

/// Record what the server answered to a permitted call (a `result` record tied to the
/// decision by the operation id): whether it failed, the start of its text and its size.
/// The call has already run, so a record that cannot be written does not hold back the
/// answer; it is reported on stderr.
pub(crate) fn record_result(s: &Shared, request: &Request, response: &Map<String, Value>) {
    let result = tool_result(response);
    if let Err(e) = s.gate.record_result(request, &result) {
        eprintln!(
            "cordon: the result of {} was not recorded: {e}",
            request.tool
        );
    }
}

/// A server's answer to `tools/call` as a [`ToolResult`]: failed when it is a JSON-RPC
/// error or a result with `isError: true`; the output is the text of its content
/// blocks (other blocks are counted by type), or the JSON-RPC error's message.
fn tool_result(response: &Map<String, Value>) -> ToolResult {
    if let Some(error) = response.get("error") {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("(no message)");
        return ToolResult {
            ok: Some(false),
            ..ToolResult::default()
        }
        .with_output(&format!("JSON-RPC error: {message}"));
    }
    let result = response.get("result");
    let failed = result
        .and_then(|r| r.get("isError"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut text = String::new();
    for block in result
        .and_then(|r| r.get("content"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if !text.is_empty() {
            text.push('\n');
        }
        match (block.get("type").and_then(Value::as_str), block.get("text")) {
            (Some("text"), Some(Value::String(t))) => text.push_str(t),
            (kind, _) => text.push_str(&format!("[{} block]", kind.unwrap_or("unknown"))),
        }
    }
    ToolResult {
        ok: Some(!failed),
        ..ToolResult::default()
    }
    .with_output(&text)
}

/// Put the change that made the call ask into its verdict (and so the audit record).
fn note_change(outcome: &mut Outcome, why: &str) {
    let d = match outcome {
        Outcome::Permitted(p) => &mut p.decided,
        Outcome::Refused(r) => &mut r.decided,
        Outcome::Ask(d) | Outcome::Pending(d) => d,
        Outcome::Trial(_) => return,
    };
    d.verdict.reason = format!("{} ({why})", d.verdict.reason);
}

/// Answer a call with an error result the model reads.
fn refuse(s: &Shared, id: Value, text: &str) {
    s.to_client(&json!({
        "jsonrpc": "2.0",
        "id": id,
        "result": {"content": [{"type": "text", "text": text}], "isError": true}
    }));
}

fn id_text(id: &Value) -> String {
    match id {
        Value::String(s) => format!("s{s}"),
        other => format!("n{other}"),
    }
}

/// The controlling terminal, to ask its human.
// `/dev/tty`: a device the kernel resolves to this process's terminal, not a file a run
// could plant or replace; nothing is created.
#[allow(clippy::disallowed_methods)]
fn open_tty() -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(uri: &str) -> Option<String> {
        resource_target(uri)
            .ok()??
            .get("input")?
            .get("file_path")?
            .as_str()
            .map(str::to_string)
    }

    #[test]
    fn file_uris_are_read_as_their_paths_however_spelled() {
        for uri in [
            "file:///home/u/.ssh/id_rsa",
            "file://localhost/home/u/.ssh/id_rsa",
            "file://LOCALHOST/home/u/.ssh/id_rsa",
            "FILE:///home/u/.ssh/id_rsa",
            "file:///home/u/%2essh/id%5Frsa",
            "file:///home/u/x/../.ssh/id_rsa",
            "file:///home/u/x/%2e%2e/.ssh/id_rsa",
            "file:/home/u/.ssh/id_rsa",
            "  file:///home/u/.ssh/id_rsa",
        ] {
            assert_eq!(path(uri).as_deref(), Some("/home/u/.ssh/id_rsa"), "{uri}");
        }
        assert!(resource_target("file://evil.example/etc/passwd").is_err());
        assert!(resource_target("/etc/passwd").is_err());
        assert!(resource_target("file:///a%FFb").is_err());
        let fetch = resource_target("HTTPS://Example.com/a").unwrap().unwrap();
        assert_eq!(fetch["tool"], "WebFetch");
        assert_eq!(fetch["input"]["url"], "https://example.com/a");
        assert_eq!(resource_target("note://x"), Ok(None));
    }

    #[test]
    fn method_names_are_mcp_tool_names_to_the_policy() {
        for tool in ["mcp__s__resources/read", "mcp__s__sampling/createMessage"] {
            let r = Request::from_value(json!({"tool": tool, "input": {"arguments": {}}})).unwrap();
            assert!(
                matches!(r.action(), Ok(cordon_policy::Action::Mcp { .. })),
                "{tool}"
            );
        }
    }
}
