//! The proxy: two readers (client → server, server → client), the messages they stop,
//! and the state they share.
//!
//! Every request either end sends goes on under an id of the gateway's own and every
//! response must be the single answer to an outstanding request ([`crate::ids`]);
//! anything else from the server (an unknown, repeated, early or wrongly typed id, a
//! batch, a line that is not JSON-RPC) is a protocol violation: dropped, reported on
//! stderr and in the audit log, never forwarded. Beyond that, messages are forwarded as
//! they came except:
//!
//! * `tools/call`, `resources/read`, `prompts/get` and `completion/complete` from the
//!   client, and `sampling/createMessage` from the server: judged on their own thread
//!   ([`crate::call`]), then forwarded or answered with a refusal;
//! * `tools/list` results from the server: changed tools withheld ([`crate::view`]);
//! * results of judged calls: recorded in the audit log ([`crate::call::record_result`]);
//! * every message of a server marked untrusted: rebuilt, labelled and redacted
//!   ([`crate::trust`]);
//! * the gateway's own requests (its `tools/list` to the server, its
//!   `elicitation/create` to the client) and their responses, which the other side never
//!   sees;
//! * malformed lines from the client, answered with a JSON-RPC error and never forwarded.
//!
//! What is forwarded is the parsed message written again, not the bytes received: the
//! server reads exactly the message the gate judged, so no difference between two JSON
//! parsers (a duplicated key, say) can slip a call past it.

use crate::frame::{self, Frame, Malformed, Message};
use crate::ids::{Dir, Entry, Matched, Minter, Table};
use crate::view::View;
use crate::{Ended, GatewayError, GatewayOptions};
use cordon_gate::Gate;
use cordon_policy::mcp::Trust;
use cordon_store::Phase;
use serde_json::{Map, Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, mpsc};
use std::time::{Duration, Instant};

/// How many protocol violations are written to the audit log one by one.
const VIOLATIONS_RECORDED: u64 = 100;

/// What a response from the server answers.
#[derive(Debug)]
pub(crate) enum Inflight {
    /// The client's `initialize`: the server's capabilities are read from the answer.
    Initialize,
    /// The client's `tools/list`: changed tools are withheld from the answer.
    ToolsList,
    /// A permitted `tools/call` of this tool, as judged: its answer is recorded as the
    /// call's result, and an untrusted server's answer is labelled.
    ToolsCall(String, Box<cordon_policy::Request>),
    /// Another judged request of this method: its answer is recorded as its result.
    Judged(String, Box<cordon_policy::Request>),
    /// Any other request of the client, by method.
    Other(String),
    /// The gateway's own `tools/list`, with the pages so far.
    OwnList(crate::pages::ToolPages),
}

/// What a response from the client answers.
#[derive(Debug)]
pub(crate) enum Waiting {
    /// A request of the server (the server's id is the entry's).
    Server,
    /// A request of the gateway's own.
    Own(mpsc::Sender<Map<String, Value>>),
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
    minter: Minter,
    inflight: Mutex<Table<Inflight>>,
    answers: Mutex<Table<Waiting>>,
    pub(crate) client_elicits: AtomicBool,
    server_has_tools: AtomicBool,
    violations: AtomicU64,
    /// Calls judged on threads of their own (a server's sampling requests among them).
    judging: crate::ids::Slots,
    pub(crate) seq: AtomicU64,
    pub(crate) view: Mutex<View>,
    pub(crate) view_changed: Condvar,
    pub(crate) tty: Mutex<()>,
    ended: Mutex<mpsc::Sender<Ended>>,
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

    /// Write a message of the server to the client: rebuilt, labelled and redacted when
    /// the server is untrusted (`what` names it for the label), else as it is.
    pub(crate) fn server_to_client(&self, what: &str, obj: Map<String, Value>) {
        if self.trust != Trust::Untrusted {
            return self.to_client(&Value::Object(obj));
        }
        match crate::trust::untrusted_message(&self.name, what, &obj) {
            Some(v) => self.to_client(&v),
            None => self.violation(
                "server",
                "its method is not a plain name, or it is no JSON-RPC message",
                obj.get("id"),
            ),
        }
    }

    /// Forward a request of the client (`id` is the client's; `None`: the gateway's
    /// own) under a fresh id of the gateway's; when the table is full the client is
    /// answered with an error instead.
    pub(crate) fn forward_request(
        &self,
        id: Option<Value>,
        mut obj: Map<String, Value>,
        what: Inflight,
    ) {
        let ours = self.minter.mint(Dir::ToServer);
        let added = match self.inflight.lock() {
            Ok(mut t) => t.insert(
                ours.clone(),
                Entry {
                    peer_id: id.clone(),
                    what,
                },
            ),
            Err(_) => Err(crate::ids::Full),
        };
        if added.is_err() {
            eprintln!(
                "cordon: MCP server `{}`: {} requests are outstanding; a request was refused",
                self.name,
                crate::ids::MAX_OUTSTANDING
            );
            if let Some(id) = id {
                self.to_client(&frame::error_response(id, -32000, &full_message()));
            }
            return;
        }
        obj.insert("id".into(), Value::String(ours));
        self.to_server(&Value::Object(obj));
    }

    /// Forward a request of the server to the client under a fresh id of the gateway's
    /// (labelled first when the server is untrusted; a message the walker drops is never
    /// recorded as outstanding).
    pub(crate) fn forward_server_request(
        &self,
        id: Value,
        method: &str,
        mut obj: Map<String, Value>,
    ) {
        let ours = self.minter.mint(Dir::ToClient);
        obj.insert("id".into(), Value::String(ours.clone()));
        let out = if self.trust == Trust::Untrusted {
            match crate::trust::untrusted_message(&self.name, method, &obj) {
                Some(v) => v,
                None => {
                    return self.violation(
                        "server",
                        "its method is not a plain name, or it is no JSON-RPC message",
                        Some(&id),
                    );
                }
            }
        } else {
            Value::Object(obj)
        };
        let added = match self.answers.lock() {
            Ok(mut t) => t.insert(
                ours,
                Entry {
                    peer_id: Some(id.clone()),
                    what: Waiting::Server,
                },
            ),
            Err(_) => Err(crate::ids::Full),
        };
        if added.is_err() {
            self.to_server(&frame::error_response(id, -32000, &full_message()));
            return;
        }
        self.to_client(&out);
    }

    fn end(&self, how: Ended) {
        if let Ok(tx) = self.ended.lock() {
            let _ = tx.send(how);
        }
    }

    /// A message `from` sent that breaks the protocol: dropped, reported on stderr and
    /// (the first [`VIOLATIONS_RECORDED`]) in the audit log.
    pub(crate) fn violation(&self, from: &str, why: &str, id: Option<&Value>) {
        let n = self.violations.fetch_add(1, Ordering::Relaxed);
        let id_text = id.map(|i| crate::cut(&i.to_string(), 200));
        let id_text = id_text.map(|t| cordon_policy::secrets::redact(&t).into_owned());
        eprintln!(
            "cordon: MCP {from} of `{}` sent a message the gateway dropped: {why}{}",
            self.name,
            id_text
                .as_deref()
                .map(|t| format!(" (id {t})"))
                .unwrap_or_default()
        );
        if n > VIOLATIONS_RECORDED {
            return;
        }
        let mut record = self.gate.bare_record(
            Phase::Notice,
            &format!("mcp__{}", self.name),
            json!({"protocol_violation": from, "id": id_text}),
        );
        record.session = Some(crate::call::session(self));
        record.reason = Some(if n == VIOLATIONS_RECORDED {
            format!(
                "MCP {from} protocol violation: {why}; further violations of this run are reported on stderr only"
            )
        } else {
            format!("MCP {from} protocol violation: {why}")
        });
        record.answer = Some("dropped".into());
        if let Err(e) = self.gate.append(&record) {
            eprintln!("cordon: {e}");
        }
    }

    /// Send a request of the gateway's own to the client and wait for its response.
    pub(crate) fn request_client(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Map<String, Value>, String> {
        let id = self.minter.mint(Dir::ToClient);
        let (tx, rx) = mpsc::channel();
        self.answers
            .lock()
            .map_err(|_| "the gateway's state is poisoned".to_string())?
            .insert(
                id.clone(),
                Entry {
                    peer_id: None,
                    what: Waiting::Own(tx),
                },
            )
            .map_err(|_| full_message())?;
        self.to_client(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let got = rx.recv_timeout(timeout);
        if let Ok(mut m) = self.answers.lock() {
            m.remove(&id);
        }
        got.map_err(|_| format!("the client did not answer `{method}` in time"))
    }

    /// Ask the server for its whole tool list (the answer updates the view).
    pub(crate) fn refresh_tools(&self, cursor: Option<Value>, so_far: crate::pages::ToolPages) {
        if !self.server_has_tools.load(Ordering::SeqCst) {
            self.set_view_empty();
            return;
        }
        let mut params = Map::new();
        if let Some(c) = cursor {
            params.insert("cursor".into(), c);
        }
        let msg = json!({"jsonrpc": "2.0", "method": "tools/list", "params": params});
        let Value::Object(obj) = msg else { return };
        self.forward_request(None, obj, Inflight::OwnList(so_far));
    }

    fn set_view_empty(&self) {
        self.apply_full_list(&[], Some("the server declared no tools"));
    }
}

/// Judge a request on a thread of its own, unless [`crate::ids::MAX_OUTSTANDING`] are
/// being judged already (each may wait for a human): then `false`, and nothing started.
fn judge_on_thread(s: &Arc<Shared>, judge: impl FnOnce(&Arc<Shared>) + Send + 'static) -> bool {
    if !s.judging.take() {
        eprintln!(
            "cordon: MCP server `{}`: {} requests are being judged; a request was refused",
            s.name,
            crate::ids::MAX_OUTSTANDING
        );
        return false;
    }
    /// Gives the slot back however the judgement ends.
    struct Judging(Arc<Shared>);
    impl Drop for Judging {
        fn drop(&mut self) {
            self.0.judging.give_back();
        }
    }
    let slot = Judging(Arc::clone(s));
    std::thread::spawn(move || judge(&slot.0));
    true
}

fn full_message() -> String {
    format!(
        "cordon mcp-gateway refused this request: {} requests are already waiting for an answer",
        crate::ids::MAX_OUTSTANDING
    )
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
    let nonce = crate::nonce()?;
    let shared = Arc::new(Shared {
        trust: gate.policy().mcp().trust(&options.name),
        name: options.name.clone(),
        minter: Minter::new(nonce.clone())?,
        nonce,
        gate,
        identity: crate::pin::command_pin(&options.identity),
        interactive: options.interactive,
        session: options.session.clone(),
        to_client: Mutex::new(client_out),
        to_server: Mutex::new(Some(server_in)),
        inflight: Mutex::new(Table::default()),
        answers: Mutex::new(Table::default()),
        client_elicits: AtomicBool::new(false),
        server_has_tools: AtomicBool::new(false),
        violations: AtomicU64::new(0),
        judging: crate::ids::Slots::bounded(crate::ids::MAX_OUTSTANDING),
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
                    let refused = id.clone();
                    if !judge_on_thread(s, move |s| crate::call::judge(s, id, obj)) {
                        s.to_client(&frame::error_response(refused, -32000, &full_message()));
                    }
                }
                "resources/read" | "prompts/get" | "completion/complete" => {
                    let refused = id.clone();
                    if !judge_on_thread(s, move |s| crate::call::judge_method(s, id, &method, obj))
                    {
                        s.to_client(&frame::error_response(refused, -32000, &full_message()));
                    }
                }
                "tools/list" => s.forward_request(Some(id), obj, Inflight::ToolsList),
                "initialize" => {
                    s.client_elicits
                        .store(declares_elicitation(&obj), Ordering::SeqCst);
                    s.forward_request(Some(id), obj, Inflight::Initialize);
                }
                _ => s.forward_request(Some(id), obj, Inflight::Other(method)),
            },
            // A call without an id expects no answer and would run unjudged: dropped.
            Ok(Message::Notification { method, .. })
                if matches!(
                    method.as_str(),
                    "tools/call" | "resources/read" | "prompts/get" | "completion/complete"
                ) => {}
            Ok(Message::Notification { method, mut obj }) => {
                if method == "notifications/cancelled" {
                    // The client cancels a request of its own: name it as the server knows it.
                    let Some(ours) = cancelled(&obj)
                        .and_then(|peer| s.inflight.lock().ok().and_then(|mut t| t.cancel(&peer)))
                    else {
                        continue;
                    };
                    set_cancelled(&mut obj, ours);
                }
                s.to_server(&Value::Object(obj));
                if method == "notifications/initialized" {
                    s.refresh_tools(None, Default::default());
                }
            }
            Ok(Message::Response { id, mut obj }) => {
                let matched = match s.answers.lock() {
                    Ok(mut t) => t.answer(&id),
                    Err(_) => Matched::Unknown("the gateway's state is poisoned"),
                };
                match matched {
                    Matched::Answer(Entry {
                        what: Waiting::Own(tx),
                        ..
                    }) => {
                        let _ = tx.send(obj);
                    }
                    Matched::Answer(Entry {
                        peer_id: Some(server_id),
                        what: Waiting::Server,
                    }) => {
                        obj.insert("id".into(), server_id);
                        s.to_server(&Value::Object(obj));
                    }
                    Matched::Answer(_) | Matched::Cancelled => {}
                    Matched::Unknown(why) => s.violation("client", why, Some(&id)),
                }
            }
        }
    }
}

/// The `requestId` a `notifications/cancelled` names.
fn cancelled(obj: &Map<String, Value>) -> Option<Value> {
    obj.get("params")?.get("requestId").cloned()
}

fn set_cancelled(obj: &mut Map<String, Value>, ours: String) {
    if let Some(Value::Object(p)) = obj.get_mut("params") {
        p.insert("requestId".into(), Value::String(ours));
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
                s.violation(
                    "server",
                    &format!("a message larger than {} bytes", frame::MAX_FRAME),
                    None,
                );
                continue;
            }
            Ok(None) | Err(_) => return,
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match frame::parse(&line) {
            Err(Malformed::Parse) => s.violation("server", "a line that is not JSON", None),
            Err(Malformed::Invalid(why)) => s.violation("server", why, None),
            Ok(Message::Response { id, mut obj }) => {
                let matched = match s.inflight.lock() {
                    Ok(mut t) => t.answer(&id),
                    Err(_) => Matched::Unknown("the gateway's state is poisoned"),
                };
                match matched {
                    Matched::Answer(e) => {
                        match e.peer_id {
                            Some(client_id) => obj.insert("id".into(), client_id),
                            None => obj.remove("id"),
                        };
                        from_server(s, e.what, obj);
                    }
                    Matched::Cancelled => {}
                    Matched::Unknown(why) => s.violation("server", why, Some(&id)),
                }
            }
            Ok(Message::Notification { method, mut obj }) => {
                if method == "notifications/cancelled" {
                    let Some(ours) = cancelled(&obj)
                        .and_then(|peer| s.answers.lock().ok().and_then(|mut t| t.cancel(&peer)))
                    else {
                        continue;
                    };
                    set_cancelled(&mut obj, ours);
                }
                let refresh = method == "notifications/tools/list_changed";
                s.server_to_client(&method, obj);
                if refresh {
                    s.refresh_tools(None, Default::default());
                }
            }
            Ok(Message::Request { id, method, obj }) => {
                if method == "sampling/createMessage" {
                    let refused = id.clone();
                    if !judge_on_thread(s, move |s| crate::call::judge_sampling(s, id, obj)) {
                        s.to_server(&frame::error_response(refused, -32000, &full_message()));
                    }
                } else {
                    s.forward_server_request(id, &method, obj);
                }
            }
        }
    }
}

/// A response from the server, by what it answers (its id is the client's again).
fn from_server(s: &Arc<Shared>, what: Inflight, mut obj: Map<String, Value>) {
    match what {
        Inflight::Other(method) => s.server_to_client(&method, obj),
        Inflight::Initialize => {
            let tools = obj
                .get("result")
                .and_then(|r| r.get("capabilities"))
                .and_then(|c| c.get("tools"))
                .is_some();
            s.server_has_tools.store(tools, Ordering::SeqCst);
            s.server_to_client("initialize", obj);
        }
        Inflight::ToolsCall(tool, request) => {
            crate::call::record_result(s, &request, &obj);
            s.server_to_client(&tool, obj);
        }
        Inflight::Judged(method, request) => {
            crate::call::record_result(s, &request, &obj);
            s.server_to_client(&method, obj);
        }
        Inflight::ToolsList => {
            // Waiting for the gateway's own list must not hold up this reader.
            let s = Arc::clone(s);
            std::thread::spawn(move || {
                crate::view::filter_client_list(&s, &mut obj);
                s.server_to_client("tools/list", obj);
            });
        }
        Inflight::OwnList(mut so_far) => {
            let Some(result) = obj.get("result") else {
                s.apply_full_list(&[], Some("the server's tool list could not be read"));
                return;
            };
            match so_far.add(result) {
                crate::pages::Next::Fetch(c) => s.refresh_tools(Some(c), so_far),
                crate::pages::Next::Done(tools) => s.apply_full_list(&tools, None),
                crate::pages::Next::TooLarge(why) => s.apply_full_list(&[], Some(&why)),
            }
        }
    }
}
