//! The MCP gateway's framing and its walker for untrusted servers.
//!
//! The bytes are a stream of server lines, read with the gateway's framing and
//! classified as the gateway classifies them. Properties:
//! - a line the gateway accepts as a request has a string or number id (the response id
//!   confusion class: an id of another JSON type is never matched);
//! - nothing unlabelled from an untrusted server reaches the client: in what
//!   [`untrusted_message`] returns, every string (keys included) either is a whole,
//!   valid label, or holds no spelling of the label's tag and no secret the detectors
//!   know; a label's body holds no secret either; the envelope has only JSON-RPC members;
//! - the in-flight tables stay bounded: the same lines drive the gateway's id table
//!   ([`cordon_mcp::ids::Table`], with a bound of 1 to 8 the first byte picks so that
//!   inputs reach it) as a request forwarded (requests), an answer (responses; a number
//!   id `k` names the `k`th id minted) and a cancellation (`notifications/cancelled`).
//!   It never holds more than its bound nor remembers more than
//!   [`cordon_mcp::ids::CANCELLED_KEPT`] cancellations; a request is refused exactly
//!   when the table is full; an answer is matched only to an outstanding minted id,
//!   once, with the original id back; a cancelled id's answer is dropped quietly. The
//!   results of responses, read as pages of the gateway's own tool list
//!   ([`cordon_mcp::pages`], small bounds), never exceed the page, tool or byte bound.

use cordon_mcp::frame::{Frame, Message, parse, read_frame};
use cordon_mcp::ids::{CANCELLED_KEPT, Dir, Entry, Matched, Minter, Table};
use cordon_mcp::pages::{Bounds, Next, ToolPages};
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

/// The gateway's id table and its own tool list, driven by the lines (see above).
struct Inflight {
    cap: usize,
    table: Table<usize>,
    minter: Minter,
    /// Every id minted, in order, with the request's own id and whether it is
    /// still outstanding.
    minted: Vec<(String, Value, bool)>,
    pages: ToolPages,
}

const PAGE_BOUNDS: Bounds = Bounds {
    pages: 3,
    tools: 6,
    bytes: 600,
};

impl Inflight {
    fn new(cap: usize) -> Inflight {
        Inflight {
            cap,
            table: Table::bounded(cap),
            minter: Minter::new("fuzz".into()).expect("a minter"),
            minted: Vec::new(),
            pages: ToolPages::bounded(PAGE_BOUNDS),
        }
    }

    fn outstanding(&self) -> usize {
        self.minted.iter().filter(|m| m.2).count()
    }

    fn request(&mut self, id: &Value) {
        let ours = self.minter.mint(Dir::ToServer);
        let full = self.outstanding() >= self.cap;
        let added = self.table.insert(
            ours.clone(),
            Entry {
                peer_id: Some(id.clone()),
                what: self.minted.len(),
            },
        );
        assert_eq!(
            added.is_err(),
            full,
            "refused {added:?} with {} of {} outstanding",
            self.outstanding(),
            self.cap
        );
        self.minted.push((ours, id.clone(), added.is_ok()));
    }

    fn response(&mut self, id: &Value, obj: &serde_json::Map<String, Value>) {
        let id = match id.as_u64().and_then(|k| self.minted.get(k as usize)) {
            Some(m) => Value::String(m.0.clone()),
            None => id.clone(),
        };
        let was = self
            .minted
            .iter()
            .position(|m| m.2 && Value::String(m.0.clone()) == id);
        match self.table.answer(&id) {
            Matched::Answer(e) => {
                let k = was.expect("an answer matched no outstanding minted id");
                assert_eq!(e.what, k, "an answer matched another request");
                assert_eq!(
                    e.peer_id.as_ref(),
                    Some(&self.minted[k].1),
                    "the original id"
                );
                self.minted[k].2 = false;
            }
            Matched::Cancelled | Matched::Unknown(_) => {
                assert!(
                    was.is_none(),
                    "an outstanding request's answer was not matched: {id}"
                );
            }
        }
        if let Some(result) = obj.get("result") {
            match self.pages.add(result) {
                Next::Fetch(_) => {}
                Next::Done(_) | Next::TooLarge(_) => {
                    self.pages = ToolPages::bounded(PAGE_BOUNDS);
                }
            }
            assert!(
                self.pages.pages() < PAGE_BOUNDS.pages,
                "pages past the bound"
            );
            assert!(
                self.pages.tools().len() <= PAGE_BOUNDS.tools,
                "tools past the bound"
            );
            assert!(
                self.pages.bytes() <= PAGE_BOUNDS.bytes,
                "bytes past the bound"
            );
        }
    }

    fn cancel(&mut self, obj: &serde_json::Map<String, Value>) {
        let Some(peer) = obj.get("params").and_then(|p| p.get("requestId")) else {
            return;
        };
        match self.table.cancel(peer) {
            Some(ours) => {
                let m = self
                    .minted
                    .iter_mut()
                    .find(|m| m.2 && m.0 == ours)
                    .expect("a cancellation named no outstanding minted id");
                assert_eq!(&m.1, peer, "a cancellation took another request");
                m.2 = false;
                assert!(
                    matches!(self.table.answer(&Value::String(ours)), Matched::Cancelled),
                    "a cancelled request's answer is dropped quietly"
                );
            }
            None => assert!(
                !self.minted.iter().any(|m| m.2 && &m.1 == peer),
                "an outstanding request {peer} was not cancelled"
            ),
        }
    }

    fn bounded(&self) {
        assert_eq!(
            self.table.len(),
            self.outstanding(),
            "the table and the model"
        );
        assert!(
            self.table.len() <= self.cap,
            "{} outstanding",
            self.table.len()
        );
        assert!(self.table.cancelled_len() <= CANCELLED_KEPT);
    }
}

/// The property.
pub fn check(data: &[u8]) {
    let mut inflight = Inflight::new(1 + usize::from(data.first().copied().unwrap_or(0) % 8));
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
                inflight.request(id);
                obj
            }
            Message::Notification { obj, method } => {
                if method == "notifications/cancelled" {
                    inflight.cancel(obj);
                }
                obj
            }
            Message::Response { obj, id } => {
                inflight.response(id, obj);
                obj
            }
        };
        inflight.bounded();
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
