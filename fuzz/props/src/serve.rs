//! `cordon serve`'s JSON-RPC lines.
//!
//! The bytes are a stream of lines read with the service's own framing (a small read
//! buffer, the service's line cap) and handled by one connection of a running service.
//! Properties: no crash; a line past the cap ends the stream; every answer is one JSON
//! line of JSON-RPC 2.0 with a `result` or an `error`; a request with an id gets exactly
//! one answer under that same id, a notification none, and a line that is not a request
//! an error under a null id.

use cordon_policy::{LoadOptions, request::MAX_REQUEST_BYTES};
use cordon_serve::rpc::{Frame, parse_call, read_frame};
use cordon_serve::{ServeOptions, Service};
use serde_json::Value;
use std::io::BufReader;
use std::sync::OnceLock;

struct World {
    service: Service,
}

fn world() -> &'static World {
    static W: OnceLock<World> = OnceLock::new();
    W.get_or_init(|| {
        // The workspace and the store, removed when the process exits.
        let dir = crate::scratch::process_dir("cordon-fuzz-serve");
        let ws = dir.join("ws");
        #[allow(clippy::disallowed_methods)] // a scratch directory of the fuzzer's own
        std::fs::create_dir_all(ws.join("src")).expect("the workspace");
        let mut opts = ServeOptions::new(LoadOptions {
            workspace: ws,
            home: dir.join("home"),
            skip_default_files: true,
            ..Default::default()
        });
        opts.store = Some(dir.join("store.sqlite3"));
        opts.audit = Some(dir.join("audit.jsonl"));
        opts.no_audit = true;
        let service = Service::start(opts).expect("the service starts");
        World { service }
    })
}

/// The property.
pub fn check(data: &[u8]) {
    let w = world();
    let mut conn = w.service.connect();
    let mut reader = BufReader::with_capacity(7, data);
    let cap = MAX_REQUEST_BYTES;
    let mut lines = 0;
    loop {
        let line = match read_frame(&mut reader, cap).expect("reading a slice") {
            Frame::Line(l) => l,
            Frame::TooLong => {
                assert!(data.len() > cap, "a line under the cap was refused");
                return;
            }
            Frame::End => return,
        };
        lines += 1;
        assert!(lines <= data.len() + 1, "more lines than bytes");
        assert!(!line.contains(&b'\n'), "a frame holds a newline");
        let expect = match parse_call(&line) {
            Ok(c) => c.id,
            Err((id, _)) => Some(id),
        };
        let answer = conn.handle(&line);
        match (expect, answer) {
            (None, None) => {}
            (None, Some(a)) => panic!("a notification was answered: {a}"),
            (Some(id), None) => panic!("request {id} got no answer"),
            (Some(id), Some(a)) => {
                assert!(!a.contains('\n'), "an answer is one line: {a:?}");
                let v: Value = serde_json::from_str(&a).expect("the answer is JSON");
                assert_eq!(v["jsonrpc"], "2.0", "{a}");
                assert_eq!(v["id"], id, "answered under another id: {a}");
                assert!(
                    v.get("result").is_some() != v.get("error").is_some(),
                    "an answer has a result or an error: {a}"
                );
                if let Some(e) = v.get("error") {
                    assert!(e["code"].is_i64(), "{a}");
                    assert!(e["message"].as_str().is_some_and(|m| !m.is_empty()), "{a}");
                }
            }
        }
    }
}
