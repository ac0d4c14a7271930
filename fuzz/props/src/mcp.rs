//! The MCP gateway's framing and its walker for untrusted servers.
//!
//! The bytes are a stream of server lines, read with the gateway's framing and
//! classified as the gateway classifies them. Properties:
//! - a line the gateway accepts as a request has a string or number id (the response id
//!   confusion class: an id of another JSON type is never matched);
//! - nothing unlabelled from an untrusted server reaches the client: in what
//!   [`untrusted_message`] returns, every string (keys included) either is a whole,
//!   valid label, or holds no spelling of the label's tag and no secret the detectors
//!   know; a label's body holds no secret either; the envelope has only JSON-RPC members.

use cordon_mcp::frame::{Frame, Message, parse, read_frame};
use cordon_mcp::trust::{label_untrusted_result, neutralised, untrusted_message};
use cordon_policy::label::verify;
use cordon_policy::secrets;
use serde_json::Value;
use std::io::BufReader;

const TAG: &str = "untrusted_content";

fn plain(s: &str) -> bool {
    let lower = s.to_lowercase();
    !lower.contains(&format!("<{TAG}")) && !lower.contains(&format!("</{TAG}"))
}

fn check_string(s: &str, labels_ok: bool) {
    if labels_ok && s.starts_with(&format!("<{TAG}")) {
        let l =
            verify(s).unwrap_or_else(|e| panic!("a broken label reaches the client: {e:?}: {s:?}"));
        assert!(
            secrets::find(l.body).is_empty(),
            "a secret inside a label: {s:?}"
        );
        return;
    }
    assert!(plain(s), "an unlabelled tag reaches the client: {s:?}");
    assert!(
        secrets::find(s).is_empty(),
        "a secret reaches the client: {s:?}"
    );
}

fn walk(v: &Value, labels_ok: bool) {
    match v {
        Value::String(s) => check_string(s, labels_ok),
        Value::Array(a) => a.iter().for_each(|x| walk(x, labels_ok)),
        Value::Object(o) => {
            for (k, x) in o {
                check_string(k, false);
                walk(x, labels_ok);
            }
        }
        _ => {}
    }
}

/// The property.
pub fn check(data: &[u8]) {
    let mut reader = BufReader::with_capacity(13, data);
    while let Some(frame) = read_frame(&mut reader).expect("reading a slice") {
        let Frame::Line(line) = frame else {
            panic!("a line under the frame cap was skipped");
        };
        assert!(!line.contains(&b'\n'), "a frame holds a newline");
        let Ok(msg) = parse(&line) else { continue };
        let obj = match &msg {
            Message::Request { id, obj, .. } => {
                assert!(id.is_string() || id.is_number(), "request id {id}");
                obj
            }
            Message::Notification { obj, .. } => obj,
            Message::Response { obj, .. } => obj,
        };
        if let Some(out) = untrusted_message("srv", "tools/call", obj) {
            let o = out.as_object().expect("a message is an object");
            for k in o.keys() {
                assert!(
                    ["jsonrpc", "id", "method", "params", "result", "error"].contains(&k.as_str()),
                    "member {k} reaches the client"
                );
            }
            walk(&out, true);
        }
        if let Some(r) = obj.get("result") {
            let mut r = r.clone();
            label_untrusted_result("srv", "tool", &mut r);
            walk(&r, true);
        }
        walk(
            &neutralised("srv", "tool", &Value::Object(obj.clone())),
            false,
        );
    }
}
