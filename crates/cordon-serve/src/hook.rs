//! Hook calls through the service: `cordon hook HARNESS --server SOCKET` hands the
//! harness's payload to a running `cordon serve` ([`forward`], the client side) instead of
//! loading the policy and opening the approval store in a process of its own; the service
//! answers it with the same [`cordon_hook::answer`] a standalone hook runs (the `hook`
//! method), under the harness's own surface name, so its operation ids, audit records and
//! session records are the ones the standalone hook would write.
//!
//! The service judges with its own policy and workspace: a payload whose cwd is not
//! inside that workspace is blocked (a service per workspace). Every failure on either
//! side blocks the call with the harness's blocking exit code: an unreachable service,
//! a peer that is not this user, an answer that is not one, a status other than "proceed"
//! (0) or "block" (2).

use crate::rpc::{self, RpcError};
use crate::service::Connection;
use cordon_gate::{Gate, GateOptions};
use cordon_hook::{Containing, Harness, HarnessMode, Reply};
use cordon_policy::RealFs;
use serde_json::{Map, Value, json};
use std::io::{BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The gates hook calls are decided with: one per harness (its surface) and narrowing
/// permission mode, made from the service's current gate and remade when that one is
/// replaced by a reload.
#[derive(Default)]
pub(crate) struct HookGates {
    made: std::sync::Mutex<Vec<Made>>,
}

struct Made {
    base: Arc<Gate>,
    harness: Harness,
    narrowing: Option<HarnessMode>,
    gate: Arc<Gate>,
}

impl HookGates {
    /// The gate for `harness` in `mode` over the policy of `base` (the service's current
    /// gate): the policy narrowed by the mode as the standalone hook narrows it.
    fn get(
        &self,
        base: &Arc<Gate>,
        harness: Harness,
        mode: Option<&HarnessMode>,
    ) -> Result<Arc<Gate>, String> {
        // Only these modes change the policy (`cordon_hook::narrow`; `acceptEdits` where the
        // config opted in); every other one is the policy as is.
        let narrowing = mode
            .filter(|m| {
                matches!(
                    m,
                    HarnessMode::Plan | HarnessMode::DontAsk | HarnessMode::AcceptEdits
                )
            })
            .cloned();
        let make = || -> Result<Arc<Gate>, String> {
            let options = GateOptions {
                surface: harness.surface(),
                edits: false,
                ..base.options().clone()
            };
            let policy = cordon_hook::narrow(base.policy().clone(), narrowing.as_ref())
                .map_err(|e| e.to_string())?;
            // As the standalone hook: the record is in the file before the answer, and
            // reaches the disk with the next sync.
            Ok(Arc::new(
                Gate::new(policy, options)
                    .sharing_store_of(base)
                    .with_unsynced_audit(),
            ))
        };
        let Ok(mut made) = self.made.lock() else {
            return make();
        };
        // A reload replaced the base: the gates made from the old one go with it. Each
        // entry holds its base, so a base's address is never reused while it is here.
        made.retain(|m| Arc::ptr_eq(&m.base, base));
        if let Some(m) = made
            .iter()
            .find(|m| m.harness == harness && m.narrowing == narrowing)
        {
            return Ok(Arc::clone(&m.gate));
        }
        let gate = make()?;
        made.push(Made {
            base: Arc::clone(base),
            harness,
            narrowing,
            gate: Arc::clone(&gate),
        });
        Ok(gate)
    }
}

impl Connection<'_> {
    /// `hook`: `{"harness", "payload"}` (the harness's name and its hook payload, an
    /// object); the reply the hook process gives the harness: `{"status", "stdout",
    /// "stderr"}`.
    pub(crate) fn hook(&mut self, mut params: Map<String, Value>) -> Result<Value, RpcError> {
        let harness = match params.remove("harness") {
            Some(Value::String(s)) => Harness::named(&s),
            _ => None,
        }
        .ok_or_else(|| {
            RpcError::params("`harness` must be \"claude-code\", \"codex\" or \"gemini\"")
        })?;
        let payload = match params.remove("payload") {
            Some(v @ Value::Object(_)) => v,
            _ => {
                return Err(RpcError::params(
                    "`payload` must be the harness's hook payload (a JSON object)",
                ));
            }
        };
        if let Some(k) = params.keys().next() {
            return Err(RpcError::params(format!(
                "unknown parameter `{}`: expected harness and payload",
                cordon_policy::terminal::sanitize_for_terminal(k)
            )));
        }
        let reply = self.hook_reply(harness, &payload);
        Ok(json!({"status": reply.status, "stdout": reply.stdout, "stderr": reply.stderr}))
    }

    fn hook_reply(&self, harness: Harness, payload: &Value) -> Reply {
        let bytes = serde_json::to_vec(payload).unwrap_or_default();
        let call = match cordon_hook::parse(harness, &bytes) {
            Ok(c) => c,
            Err(e) => return Reply::block(e.to_string()),
        };
        let base = self.service.policy.gate();
        let workspace = base.policy().workspace();
        if let Some(cwd) = call.cwd() {
            let (resolved, _, _, _) = cordon_policy::paths::resolve(cwd, &RealFs);
            if !cordon_policy::paths::is_within(&resolved, workspace) {
                return Reply::block(format!(
                    "the cordon serve at this socket judges calls in {}, and this call runs in {}; start a service for that workspace or run the hook without --server",
                    workspace.display(),
                    cwd.display()
                ));
            }
        }
        let gate = match self
            .service
            .hook_gates
            .get(&base, harness, call.mode.as_ref())
        {
            Ok(g) => g,
            Err(why) => return Reply::block(why),
        };
        let containing = Containing {
            exec: match &self.service.hook_exec {
                Some(exec) if gate.policy().hook_contain() && harness.can_rewrite() => {
                    Some(exec.clone())
                }
                _ => None,
            },
        };
        cordon_hook::answer(&gate, &call, &RealFs, &containing)
    }
}

/// How long a hook waits for the service's answer before it blocks the call.
pub const FORWARD_TIMEOUT: Duration = Duration::from_secs(60);

/// The longest answer line a hook reads (its stdout may carry a rewritten input as large
/// as the largest request).
const MAX_ANSWER: usize = 4 * cordon_policy::request::MAX_REQUEST_BYTES;

/// Hand one hook payload (`bytes`, the harness's stdin) of `harness` to the service at
/// `socket` and return its reply; every failure is a blocking reply saying what failed.
pub fn forward(socket: &Path, harness: Harness, bytes: &[u8]) -> Reply {
    // Not JSON: the standalone hook's own reading says why, word for word.
    let payload: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(_) => {
            return match cordon_hook::parse(harness, bytes) {
                Err(e) => Reply::block(e.to_string()),
                Ok(_) => Reply::block("the hook payload could not be read"),
            };
        }
    };
    match ask(socket, harness, payload) {
        Ok(reply) => reply,
        Err(why) => Reply::block(format!(
            "cordon serve at {} did not answer ({why}); start it (`cordon serve --socket {}`) or remove --server",
            socket.display(),
            socket.display()
        )),
    }
}

fn ask(socket: &Path, harness: Harness, payload: Value) -> Result<Reply, String> {
    let frame = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "hook",
        "params": {"harness": harness.name(), "payload": payload},
    });
    reply_of(&exchange(socket, &frame).map_err(|e| e.to_string())?)
}

/// Does a `cordon serve` of this user answer on `socket` (`cordon doctor`)? It is sent
/// a call of no method, which a service answers with an error and nothing else.
pub fn answers(socket: &Path) -> Result<(), ServiceError> {
    let frame = json!({"jsonrpc": "2.0", "id": 1, "method": "doctor.ping"});
    let answer = exchange(socket, &frame)?;
    let v: Value = serde_json::from_slice(&answer).map_err(|_| ServiceError::NotJson)?;
    match v.get("jsonrpc") {
        Some(Value::String(s)) if s == "2.0" => Ok(()),
        _ => Err(ServiceError::NotJsonRpc),
    }
}

/// Why the service at a socket did not answer as a `cordon serve` of this user does.
#[derive(Debug)]
#[non_exhaustive]
pub enum ServiceError {
    /// Connecting to the socket failed.
    Connect(std::io::Error),
    /// The kernel did not say which process listens on the socket.
    PeerUnknown(rustix::io::Errno),
    /// The socket belongs to a process of another user.
    OtherUser {
        /// The listening process's uid.
        uid: u32,
        /// This process's effective uid.
        me: u32,
    },
    /// Sending the call or reading the answer failed.
    Io(std::io::Error),
    /// The answer line is longer than a hook reads.
    TooLong,
    /// The service closed the connection without answering.
    Closed,
    /// The answer is not JSON.
    NotJson,
    /// The answer is JSON but not JSON-RPC 2.0.
    NotJsonRpc,
}

impl std::fmt::Display for ServiceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServiceError::Connect(e) | ServiceError::Io(e) => write!(f, "{e}"),
            ServiceError::PeerUnknown(e) => write!(f, "cannot tell who listens there: {e}"),
            ServiceError::OtherUser { uid, me } => write!(
                f,
                "the socket belongs to a process of uid {uid}, not to you (uid {me})"
            ),
            ServiceError::TooLong => f.write_str("its answer is too long"),
            ServiceError::Closed => f.write_str("it closed the connection"),
            ServiceError::NotJson => f.write_str("its answer is not JSON"),
            ServiceError::NotJsonRpc => f.write_str("its answer is not JSON-RPC"),
        }
    }
}

impl std::error::Error for ServiceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ServiceError::Connect(e) | ServiceError::Io(e) => Some(e),
            ServiceError::PeerUnknown(e) => Some(e),
            _ => None,
        }
    }
}

/// One frame sent to the service of this user at `socket`, and its answer line.
fn exchange(socket: &Path, frame: &Value) -> Result<Vec<u8>, ServiceError> {
    let stream = UnixStream::connect(socket).map_err(ServiceError::Connect)?;
    // Only a service of this user may answer: the kernel says who listens.
    let me = rustix::process::geteuid().as_raw();
    let peer = rustix::net::sockopt::socket_peercred(&stream).map_err(ServiceError::PeerUnknown)?;
    if peer.uid.as_raw() != me {
        return Err(ServiceError::OtherUser {
            uid: peer.uid.as_raw(),
            me,
        });
    }
    let _ = stream.set_read_timeout(Some(FORWARD_TIMEOUT));
    let _ = stream.set_write_timeout(Some(FORWARD_TIMEOUT));
    let mut line = frame.to_string().into_bytes();
    line.push(b'\n');
    (&stream).write_all(&line).map_err(ServiceError::Io)?;
    let mut reader = BufReader::new(&stream);
    match rpc::read_frame(&mut reader, MAX_ANSWER) {
        Ok(rpc::Frame::Line(l)) => Ok(l),
        Ok(rpc::Frame::TooLong) => Err(ServiceError::TooLong),
        Ok(rpc::Frame::End) => Err(ServiceError::Closed),
        Err(e) => Err(ServiceError::Io(e)),
    }
}

/// The reply in a service's answer line; anything but a well-formed result whose status
/// is 0 or 2 is an error.
fn reply_of(answer: &[u8]) -> Result<Reply, String> {
    let v: Value = serde_json::from_slice(answer).map_err(|_| "its answer is not JSON")?;
    if let Some(e) = v.get("error") {
        let msg = e
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("no message");
        return Err(format!("it refused the call: {msg}"));
    }
    let r = v.get("result").ok_or("its answer has no result")?;
    let text = |k: &str| r.get(k).and_then(Value::as_str).map(str::to_string);
    let status = r.get("status").and_then(Value::as_u64);
    match (status, text("stdout"), text("stderr")) {
        (Some(s @ (0 | 2)), Some(stdout), Some(stderr)) => Ok(Reply {
            status: s as u8,
            stdout,
            stderr,
        }),
        _ => Err("its answer is not a hook reply".into()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn only_a_well_formed_reply_proceeds() {
        let ok = br#"{"id":1,"jsonrpc":"2.0","result":{"status":0,"stdout":"{}\n","stderr":""}}"#;
        assert_eq!(reply_of(ok).unwrap().status, 0);
        for bad in [
            &br#"{"id":1,"jsonrpc":"2.0","result":{"status":1,"stdout":"","stderr":""}}"#[..],
            br#"{"id":1,"jsonrpc":"2.0","result":{"status":0,"stdout":"x"}}"#,
            br#"{"id":1,"jsonrpc":"2.0","result":{"status":"0","stdout":"","stderr":""}}"#,
            br#"{"id":1,"jsonrpc":"2.0","error":{"code":-32601,"message":"no method"}}"#,
            br#"{"id":1,"jsonrpc":"2.0"}"#,
            b"not json",
        ] {
            assert!(reply_of(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }

    /// A listener on a fresh socket that answers one connection with `answer`.
    fn one_answer(answer: &'static [u8]) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("s.sock");
        let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut line = String::new();
            let _ = std::io::BufRead::read_line(&mut BufReader::new(&conn), &mut line);
            let _ = conn.write_all(answer);
        });
        (dir, socket)
    }

    #[test]
    fn a_socket_that_does_not_answer_as_a_service_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let missing = answers(&dir.path().join("none.sock")).unwrap_err();
        assert!(matches!(missing, ServiceError::Connect(_)), "{missing}");
        let (_d, s) = one_answer(b"hello\n");
        let e = answers(&s).unwrap_err();
        assert!(matches!(e, ServiceError::NotJson), "{e}");
        assert_eq!(e.to_string(), "its answer is not JSON");
        let (_d, s) = one_answer(b"{\"id\":1}\n");
        assert!(matches!(answers(&s), Err(ServiceError::NotJsonRpc)));
        let (_d, s) = one_answer(b"");
        assert!(matches!(answers(&s), Err(ServiceError::Closed)));
        let (_d, s) = one_answer(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{}}\n");
        answers(&s).unwrap();
    }

    #[test]
    fn harness_names_round_trip() {
        for h in Harness::ALL {
            assert_eq!(Harness::named(h.name()), Some(h));
        }
        assert_eq!(Harness::named("cursor"), None);
    }
}
