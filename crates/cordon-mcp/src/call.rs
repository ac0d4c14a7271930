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
use cordon_gate::{Absent, Containment, Gate, Human, Outcome, ToolResult};
use cordon_policy::{Attenuation, RealFs, Request};
use cordon_store::{Prompter, TerminalPrompter};
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
                    drift_gate = Gate::new(p, s.gate.options().clone());
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
    let mut outcome = decide(s, gate, &request, &tool, change.as_deref());
    if let Some(why) = &change {
        note_change(&mut outcome, why);
    }
    let (outcome, audit_error) = gate.conclude(outcome);
    if let Some(e) = &audit_error {
        eprintln!("cordon: {e}");
    }
    match outcome {
        Outcome::Permitted(p) => {
            // Forward what was judged: a configured preset may have set arguments.
            let mut obj = obj;
            if let Some(judged) = p.decided.request.input.get("arguments")
                && let Some(Value::Object(params)) = obj.get_mut("params")
                && params.get("arguments") != Some(judged)
            {
                params.insert("arguments".into(), judged.clone());
            }
            let judged = Box::new(p.decided.request.clone());
            s.forward_tracked(&id, obj, Inflight::ToolsCall(tool, judged))
        }
        Outcome::Pending(d) => {
            let n = d.pending.unwrap_or_default();
            let text = format!(
                "cordon: this call needs approval and is pending approval {n}: run `cordon approvals approve {n}`, then retry. ({})",
                d.verdict.reason
            );
            refuse(s, id, &text);
        }
        Outcome::Refused(r) => {
            let mut text = format!("cordon denied this call: {}", r.decided.verdict.reason);
            for f in &r.fixes {
                text.push_str(&format!("\n- {f}"));
            }
            refuse(s, id, &text);
        }
        Outcome::Ask(d) => refuse(
            s,
            id,
            &format!(
                "cordon denied this call: approval needed and no human can be asked ({})",
                d.verdict.reason
            ),
        ),
        Outcome::Trial(t) => refuse(
            s,
            id,
            &format!(
                "cordon denied this call: the on-failure approval policy runs only contained shell commands ({})",
                t.decided().verdict.reason
            ),
        ),
    }
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
