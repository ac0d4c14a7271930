//! The proxy: two readers (client → server, server → client), the messages they stop,
//! and the state they share.
//!
//! Everything is forwarded as it came (ids, protocol versions, capabilities, requests
//! and notifications of either side) except:
//!
//! * `tools/call` from the client: judged on its own thread ([`crate::call`]), then
//!   forwarded or answered with an error result;
//! * `tools/list` results from the server: changed tools withheld ([`crate::view`]);
//! * results of `tools/call`: recorded in the audit log ([`crate::call::record_result`]),
//!   and labelled when the server is untrusted ([`crate::trust`]);
//! * the gateway's own requests (its `tools/list` to the server, its
//!   `elicitation/create` to the client) and their responses, which the other side never
//!   sees;
//! * malformed lines from the client, answered with a JSON-RPC error and never forwarded.
//!
//! What is forwarded is the parsed message written again, not the bytes received: the
//! server reads exactly the message the gate judged, so no difference between two JSON
//! parsers (a duplicated key, say) can slip a call past it.

use crate::frame::{self, Frame, Malformed, Message};
use crate::view::View;
use crate::{Ended, GatewayError, GatewayOptions};
use cordon_gate::Gate;
use cordon_policy::mcp::Trust;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, mpsc};
use std::time::{Duration, Instant};

/// What a response from the server answers, for the requests whose answer the gateway
/// reads.
#[derive(Debug)]
pub(crate) enum Inflight {
    /// The client's `initialize`: the server's capabilities are read from the answer.
    Initialize,
    /// The client's `tools/list`: changed tools are withheld from the answer.
    ToolsList,
    /// A permitted `tools/call` of this tool, as judged: its answer is recorded as the
    /// call's result, and an untrusted server's answer is labelled.
    ToolsCall(String, Box<cordon_policy::Request>),
    /// The gateway's own `tools/list`, with the tools of the pages so far.
    OwnList(Vec<Value>),
}

/// State both readers and every call share.
pub(crate) struct Shared {
    pub(crate) name: String,
    pub(crate) nonce: String,
    pub(crate) gate: Gate,
    pub(crate) trust: Trust,
    pub(crate) identity: String,
    pub(crate) interactive: bool,
    pub(crate) session: Option<String>,
    to_client: Mutex<Box<dyn Write + Send>>,
    to_server: Mutex<Option<ChildStdin>>,
    inflight: Mutex<HashMap<String, Inflight>>,
    answers: Mutex<HashMap<String, mpsc::Sender<Map<String, Value>>>>,
    pub(crate) client_elicits: AtomicBool,
    server_has_tools: AtomicBool,
    seq: AtomicU64,
    pub(crate) view: Mutex<View>,
    pub(crate) view_changed: Condvar,
    pub(crate) tty: Mutex<()>,
    ended: Mutex<mpsc::Sender<Ended>>,
}

fn key(id: &Value) -> String {
    id.to_string()
}

impl Shared {
    /// Write one message to the client; a failure ends the gateway.
    pub(crate) fn to_client(&self, v: &Value) {
        let ok = match self.to_client.lock() {
            Ok(mut w) => frame::write_frame(&mut **w, v).is_ok(),
            Err(_) => false,
        };
        if !ok {
            self.end(Ended::ClientClosed);
        }
    }

    /// Write one message to the server; a failure ends the gateway.
    pub(crate) fn to_server(&self, v: &Value) {
        let ok = match self.to_server.lock() {
            Ok(mut w) => match w.as_mut() {
                Some(w) => frame::write_frame(w, v).is_ok(),
                None => false,
            },
            Err(_) => false,
        };
        if !ok {
            self.end(Ended::ServerClosed);
        }
    }

    /// Forward a client request whose answer the gateway reads.
    pub(crate) fn forward_tracked(&self, id: &Value, obj: Map<String, Value>, what: Inflight) {
        if let Ok(mut m) = self.inflight.lock() {
            m.insert(key(id), what);
        }
        self.to_server(&Value::Object(obj));
    }

    fn end(&self, how: Ended) {
        if let Ok(tx) = self.ended.lock() {
            let _ = tx.send(how);
        }
    }

    /// A fresh id for a request of the gateway's own (strings the two ends do not use).
    pub(crate) fn own_id(&self) -> String {
        format!(
            "cordon-{}-{}",
            self.nonce,
            self.seq.fetch_add(1, Ordering::Relaxed)
        )
    }

    /// Send a request of the gateway's own to the client and wait for its response.
    pub(crate) fn request_client(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Map<String, Value>, String> {
        let id = self.own_id();
        let (tx, rx) = mpsc::channel();
        self.answers
            .lock()
            .map_err(|_| "the gateway's state is poisoned".to_string())?
            .insert(key(&Value::String(id.clone())), tx);
        self.to_client(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let got = rx.recv_timeout(timeout);
        if let Ok(mut m) = self.answers.lock() {
            m.remove(&key(&Value::String(id)));
        }
        got.map_err(|_| format!("the client did not answer `{method}` in time"))
    }

    /// Ask the server for its whole tool list (the answer updates the view).
    pub(crate) fn refresh_tools(&self, cursor: Option<Value>, so_far: Vec<Value>) {
        if !self.server_has_tools.load(Ordering::SeqCst) {
            self.set_view_empty();
            return;
        }
        let id = Value::String(self.own_id());
        let mut params = Map::new();
        if let Some(c) = cursor {
            params.insert("cursor".into(), c);
        }
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params});
        let Value::Object(obj) = msg else { return };
        self.forward_tracked(&id, obj, Inflight::OwnList(so_far));
    }

    fn set_view_empty(&self) {
        self.apply_full_list(&[], Some("the server declared no tools"));
    }
}

/// Run the gateway until the client closes its end or the server exits.
pub(crate) fn run(
    gate: Gate,
    options: GatewayOptions,
    client_in: Box<dyn BufRead + Send>,
    client_out: Box<dyn Write + Send>,
) -> Result<Ended, GatewayError> {
    let Some((program, args)) = options.spawn.split_first() else {
        return Err(GatewayError::Spawn {
            command: String::new(),
            why: "no server command was given".into(),
        });
    };
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| GatewayError::Spawn {
            command: options.spawn.join(" "),
            why: e.to_string(),
        })?;
    let (server_in, server_out) = match (child.stdin.take(), child.stdout.take()) {
        (Some(i), Some(o)) => (i, o),
        _ => {
            let _ = child.kill();
            return Err(GatewayError::Spawn {
                command: options.spawn.join(" "),
                why: "its standard input and output could not be connected".into(),
            });
        }
    };
    let (tx, rx) = mpsc::channel();
    let shared = Arc::new(Shared {
        trust: gate.policy().mcp().trust(&options.name),
        name: options.name.clone(),
        nonce: crate::nonce()?,
        gate,
        identity: crate::pin::command_pin(&options.identity),
        interactive: options.interactive,
        session: options.session.clone(),
        to_client: Mutex::new(client_out),
        to_server: Mutex::new(Some(server_in)),
        inflight: Mutex::new(HashMap::new()),
        answers: Mutex::new(HashMap::new()),
        client_elicits: AtomicBool::new(false),
        server_has_tools: AtomicBool::new(false),
        seq: AtomicU64::new(0),
        view: Mutex::new(View::default()),
        view_changed: Condvar::new(),
        tty: Mutex::new(()),
        ended: Mutex::new(tx),
    });
    {
        let s = Arc::clone(&shared);
        std::thread::spawn(move || {
            server_loop(&s, BufReader::new(server_out));
            s.end(Ended::ServerClosed);
        });
    }
    {
        let s = Arc::clone(&shared);
        std::thread::spawn(move || {
            client_loop(&s, client_in);
            s.end(Ended::ClientClosed);
        });
    }
    let ended = rx.recv().unwrap_or(Ended::ClientClosed);
    // Closing the server's stdin is how MCP's stdio transport asks a server to stop.
    if let Ok(mut w) = shared.to_server.lock() {
        w.take();
    }
    let status = stop(&mut child);
    Ok(match ended {
        Ended::ServerClosed | Ended::ServerExited(_) => Ended::ServerExited(status),
        other => other,
    })
}

/// Wait a little for the server to exit by itself, then kill it.
fn stop(child: &mut Child) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        match child.try_wait() {
            Ok(Some(s)) => return Some(s),
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            _ => {
                let _ = child.kill();
                return child.wait().ok();
            }
        }
    }
}

fn client_loop(s: &Arc<Shared>, mut input: Box<dyn BufRead + Send>) {
    loop {
        let line = match frame::read_frame(&mut input) {
            Ok(Some(Frame::Line(l))) => l,
            Ok(Some(Frame::TooLong)) => {
                let e = Malformed::Invalid("the message is larger than the gateway accepts");
                s.to_client(&frame::error_response(Value::Null, e.code(), &e.message()));
                continue;
            }
            Ok(None) | Err(_) => return,
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match frame::parse(&line) {
            Err(e) => {
                s.to_client(&frame::error_response(Value::Null, e.code(), &e.message()));
            }
            Ok(Message::Request { id, method, obj }) => match method.as_str() {
                "tools/call" => {
                    let s = Arc::clone(s);
                    std::thread::spawn(move || crate::call::judge(&s, id, obj));
                }
                "tools/list" => s.forward_tracked(&id, obj, Inflight::ToolsList),
                "initialize" => {
                    s.client_elicits
                        .store(declares_elicitation(&obj), Ordering::SeqCst);
                    s.forward_tracked(&id, obj, Inflight::Initialize);
                }
                _ => s.to_server(&Value::Object(obj)),
            },
            // A call without an id expects no answer and would run unjudged: dropped.
            Ok(Message::Notification { method, .. }) if method == "tools/call" => {}
            Ok(Message::Notification { method, obj }) => {
                s.to_server(&Value::Object(obj));
                if method == "notifications/initialized" {
                    s.refresh_tools(None, Vec::new());
                }
            }
            Ok(Message::Response { id, obj }) => {
                let waiting = s
                    .answers
                    .lock()
                    .ok()
                    .and_then(|m| m.get(&key(&id)).cloned());
                match waiting {
                    Some(tx) => {
                        let _ = tx.send(obj);
                    }
                    None => s.to_server(&Value::Object(obj)),
                }
            }
        }
    }
}

/// Did the client's `initialize` declare form elicitation? (`{}` is form only; since
/// 2025-11-25 a client may list `form` and `url`.)
fn declares_elicitation(obj: &Map<String, Value>) -> bool {
    match obj
        .get("params")
        .and_then(|p| p.get("capabilities"))
        .and_then(|c| c.get("elicitation"))
    {
        Some(Value::Object(m)) => m.is_empty() || m.contains_key("form"),
        _ => false,
    }
}

fn server_loop(s: &Arc<Shared>, mut out: BufReader<std::process::ChildStdout>) {
    loop {
        let line = match frame::read_frame(&mut out) {
            Ok(Some(Frame::Line(l))) => l,
            Ok(Some(Frame::TooLong)) => {
                eprintln!(
                    "cordon: MCP server `{}` sent a message larger than {} bytes; it was dropped",
                    s.name,
                    frame::MAX_FRAME
                );
                continue;
            }
            Ok(None) | Err(_) => return,
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match frame::parse(&line) {
            Err(_) => eprintln!(
                "cordon: MCP server `{}` wrote a line that is not a JSON-RPC message; it was dropped",
                s.name
            ),
            Ok(Message::Response { id, obj }) => {
                let what = s.inflight.lock().ok().and_then(|mut m| m.remove(&key(&id)));
                from_server(s, what, obj);
            }
            Ok(Message::Notification { method, obj }) => {
                s.to_client(&Value::Object(obj));
                if method == "notifications/tools/list_changed" {
                    s.refresh_tools(None, Vec::new());
                }
            }
            Ok(Message::Request { obj, .. }) => s.to_client(&Value::Object(obj)),
        }
    }
}

/// A response from the server, by what it answers.
fn from_server(s: &Arc<Shared>, what: Option<Inflight>, mut obj: Map<String, Value>) {
    match what {
        None => s.to_client(&Value::Object(obj)),
        Some(Inflight::Initialize) => {
            let tools = obj
                .get("result")
                .and_then(|r| r.get("capabilities"))
                .and_then(|c| c.get("tools"))
                .is_some();
            s.server_has_tools.store(tools, Ordering::SeqCst);
            s.to_client(&Value::Object(obj));
        }
        Some(Inflight::ToolsCall(tool, request)) => {
            crate::call::record_result(s, &request, &obj);
            if s.trust == Trust::Untrusted
                && let Some(result) = obj.get_mut("result")
            {
                crate::trust::label_untrusted_result(&s.name, &tool, result);
            }
            s.to_client(&Value::Object(obj));
        }
        Some(Inflight::ToolsList) => {
            // Waiting for the gateway's own list must not hold up this reader.
            let s = Arc::clone(s);
            std::thread::spawn(move || {
                crate::view::filter_client_list(&s, &mut obj);
                s.to_client(&Value::Object(obj));
            });
        }
        Some(Inflight::OwnList(mut so_far)) => {
            let Some(result) = obj.get("result") else {
                s.apply_full_list(&[], Some("the server's tool list could not be read"));
                return;
            };
            if let Some(tools) = result.get("tools").and_then(Value::as_array) {
                so_far.extend(tools.iter().cloned());
            }
            match result.get("nextCursor") {
                Some(c) if !c.is_null() && so_far.len() < 100_000 => {
                    s.refresh_tools(Some(c.clone()), so_far)
                }
                _ => s.apply_full_list(&so_far, None),
            }
        }
    }
}
