#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! A hostile MCP server (`tests/mcp/evil-server.js`) marked untrusted behind `cordon
//! mcp-gateway`, driven by the TypeScript SDK (the client Claude Code uses), the Python
//! SDK and a raw client: forged, repeated, early and guessed response ids, every content
//! part, errors, `_meta`, log lines, progress, sampling and elicitation requests,
//! resources, prompts and completions, file URIs spelled several ways. Asserted: what the
//! client received (no token, nothing forged, no closing tag outside a label) and what
//! the audit log holds.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code

mod common;

use common::mcp::{Deps, Env, deps};
use cordon_policy::label::{SourceName, label, verify};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

const POLICY: &str = r#"
[permissions]
allow = ["mcp__evil__echo", "mcp__evil__twice", "mcp__evil__parts", "mcp__evil__fails",
  "mcp__evil__rpcerror", "mcp__evil__chatty", "mcp__evil__sample",
  "mcp__evil__resources/read", "mcp__evil__prompts/get", "mcp__evil__completion/complete"]
[mcp.servers.evil]
trust = "untrusted"
"#;

fn evil(d: &Deps) -> Vec<String> {
    let js = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/evil-server.js");
    vec![d.node.display().to_string(), js.display().to_string()]
}

/// Every string of `v`, keys included: no token, nothing forged, and any tag start only
/// inside a whole label (which may follow a client library's own prefix).
fn assert_clean(v: &Value) {
    fn check(s: &str, whole: &Value) {
        assert!(
            !s.contains("ghp_A1b2"),
            "a token reached the client: {s:?}\n{whole}"
        );
        assert!(
            !s.contains("FORGED"),
            "a forged message reached the client: {s:?}"
        );
        let (before, labelled) = match s.find("<untrusted_content source=") {
            Some(i) => (&s[..i], Some(&s[i..])),
            None => (s, None),
        };
        let plain = label(&SourceName::escaped("t"), before);
        assert_eq!(
            verify(&plain).unwrap().body,
            before,
            "an unlabelled tag in {s:?}"
        );
        if let Some(l) = labelled {
            verify(l.trim_end()).unwrap_or_else(|e| panic!("{e}: {s:?}"));
        }
    }
    fn go(v: &Value, whole: &Value) {
        match v {
            Value::String(s) => check(s, whole),
            Value::Array(a) => a.iter().for_each(|x| go(x, whole)),
            Value::Object(m) => m.iter().for_each(|(k, x)| {
                check(k, whole);
                go(x, whole);
            }),
            _ => {}
        }
    }
    go(v, v);
}

/// The body of a label, checked.
fn body(v: &Value) -> String {
    let s = v.as_str().unwrap_or_else(|| panic!("not a string: {v}"));
    let l = verify(s).unwrap_or_else(|e| panic!("{e}: {s:?}"));
    assert!(l.source.starts_with("mcp:evil/"), "{s}");
    l.body.to_string()
}

fn steps(e: &Env) -> Value {
    let home = e.p("home");
    let ws = e.p("ws");
    std::fs::write(e.root.join("ws/a.txt"), "a").unwrap();
    std::fs::create_dir_all(e.root.join("home/.ssh")).unwrap();
    std::fs::write(e.root.join("home/.ssh/id_rsa"), "PRIVATE").unwrap();
    json!([
        {"list": "tools"},
        {"call": "echo", "args": {"message": "hi"}},
        {"call": "twice"},
        {"call": "echo", "args": {"message": "again"}},
        {"call": "parts"},
        {"call": "fails"},
        {"call": "rpcerror"},
        {"call": "chatty"},
        {"call": "sample"},
        {"list": "resources"},
        {"read": "note://evil"},
        {"read": format!("file://LOCALHOST{home}/.ssh/id_rsa")},
        {"read": format!("file://{home}/%2essh/id%5Frsa")},
        {"read": format!("file://{ws}/a.txt")},
        {"list": "prompts"},
        {"prompt": "p"},
        {"complete": true}
    ])
}

/// What both SDKs must have received, step by step.
fn assert_steps(s: &[Value], e: &Env) {
    assert_eq!(body(&s[1]["content"][0]["text"]), "echo: hi");
    assert_eq!(body(&s[2]["content"][0]["text"]), "first");
    assert_eq!(body(&s[3]["content"][0]["text"]), "echo: again");
    let parts = &s[4]["content"];
    assert!(
        body(&parts[0]["text"]).starts_with("[/untrusted_content]"),
        "{parts}"
    );
    assert_eq!(
        parts[1]["data"], "",
        "an image spelling a token is emptied: {parts}"
    );
    assert_eq!(parts[2]["data"], "", "audio that is not base64 is emptied");
    assert!(body(&parts[3]["resource"]["text"]).contains("[REDACTED]"));
    assert_eq!(parts[4]["resource"]["blob"], "");
    assert!(body(&parts[5]["description"]).contains("SYSTEM"));
    assert!(body(&parts[5]["name"]).starts_with("link "), "{parts}");
    assert_eq!(
        parts[6]["resource"]["blob"], "",
        "a text blob closing the label is emptied: {parts}"
    );
    assert_eq!(
        s[4]["structuredContent"]["password"],
        json!(["[REDACTED]", {"inner": "[REDACTED]"}]),
        "{}",
        s[4]
    );
    assert_eq!(
        s[4]["structuredContent"]["api_key"], "[REDACTED]",
        "{}",
        s[4]
    );
    assert_eq!(s[5]["isError"], true);
    assert!(
        s[6]["error"]
            .as_str()
            .unwrap()
            .contains("<untrusted_content"),
        "{}",
        s[6]
    );
    assert!(body(&s[7]["content"][0]["text"]).starts_with("chatty done"));
    assert!(
        body(&s[8]["content"][0]["text"]).starts_with("sampling-refused"),
        "{}",
        s[8]
    );
    assert!(body(&s[10]["contents"][0]["text"]).starts_with("read note://evil"));
    for i in [11, 12] {
        let err = s[i]["error"].as_str().unwrap_or_else(|| panic!("{}", s[i]));
        assert!(err.contains("cordon"), "{err}");
    }
    let ws_read = body(&s[13]["contents"][0]["text"]);
    assert!(
        ws_read.starts_with(&format!("read file://{}/a.txt", e.p("ws"))),
        "{ws_read}"
    );
    assert!(body(&s[15]["messages"][0]["content"]["text"]).starts_with("prompt"));
    assert!(s[16]["completion"]["values"].as_array().unwrap().len() == 2);
}

/// What the audit log must hold after the SDK runs.
fn assert_audit(e: &Env) {
    let audit = e.audit();
    let dropped = audit.iter().filter(|a| a["answer"] == "dropped").count();
    assert!(dropped >= 27, "protocol violations recorded: {dropped}");
    let results = audit
        .iter()
        .filter(|a| a["phase"] == "result" && a["tool"] == "mcp__evil__echo")
        .count();
    assert_eq!(results, 2, "one result record per answered echo");
    let decided = |tool: &str| -> Vec<String> {
        audit
            .iter()
            .filter(|a| a["phase"] == "decision" && a["tool"] == tool)
            .map(|a| a["decision"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    assert!(!decided("mcp__evil__sampling/createMessage").is_empty());
    assert!(
        decided("mcp__evil__sampling/createMessage")
            .iter()
            .all(|d| d != "allow")
    );
    assert_eq!(decided("Read").len(), 3, "three file reads judged as reads");
    for t in [
        "mcp__evil__resources/read",
        "mcp__evil__prompts/get",
        "mcp__evil__completion/complete",
    ] {
        assert!(!decided(t).is_empty(), "{t} was not judged");
    }
}

#[test]
fn the_typescript_sdk_gets_nothing_unlabelled_from_a_hostile_server() {
    let Some(d) = deps("the_typescript_sdk_gets_nothing_unlabelled_from_a_hostile_server") else {
        return;
    };
    let e = Env::new(POLICY);
    let steps = steps(&e);
    let (r, stderr) = e.scripted(&d, "ts-client.js", e.gateway("evil", &[], &evil(&d)), steps);
    assert_clean(&r);
    assert_steps(r["steps"].as_array().unwrap(), &e);
    assert!(body(&r["instructions"]).contains("SYSTEM"));
    // Tool descriptions are labelled, their schemas' prose too.
    let echo = &r["steps"][0]["tools"][0];
    assert!(body(&echo["description"]).starts_with("Echoes."));
    assert!(r["logs"].as_array().unwrap().len() == 2, "{}", r["logs"]);
    assert!(body(&r["logs"][0]["data"]).contains("SYSTEM"));
    assert!(
        body(&r["progress"][0]["message"]).contains("SYSTEM"),
        "{}",
        r["progress"]
    );
    assert_eq!(
        r["sampled"],
        json!([]),
        "sampling is not allowed by the policy"
    );
    let server_elicit = r["elicited"].as_array().unwrap().iter().any(|m| {
        m["message"]
            .as_str()
            .is_some_and(|t| t.starts_with("<untrusted_content"))
    });
    assert!(server_elicit, "{}", r["elicited"]);
    assert!(
        stderr.contains("sent a message the gateway dropped"),
        "{stderr}"
    );
    assert_audit(&e);
}

#[test]
fn the_python_sdk_gets_nothing_unlabelled_from_a_hostile_server() {
    let Some(d) = deps("the_python_sdk_gets_nothing_unlabelled_from_a_hostile_server") else {
        return;
    };
    let e = Env::new(POLICY);
    let steps = steps(&e);
    let (r, _) = e.scripted(&d, "py-client.py", e.gateway("evil", &[], &evil(&d)), steps);
    assert_clean(&r);
    assert_steps(r["steps"].as_array().unwrap(), &e);
    assert!(body(&r["initialize"]["instructions"]).contains("SYSTEM"));
    assert_eq!(r["sampled"], json!([]));
    assert!(!r["logs"].as_array().unwrap().is_empty());
    assert_audit(&e);
}

#[test]
fn sampling_is_forwarded_labelled_when_a_rule_allows_it() {
    let Some(d) = deps("sampling_is_forwarded_labelled_when_a_rule_allows_it") else {
        return;
    };
    let e = Env::new(&POLICY.replace(
        "\"mcp__evil__sample\",",
        "\"mcp__evil__sample\", \"mcp__evil__sampling/createMessage\",",
    ));
    let (r, _) = e.scripted(
        &d,
        "ts-client.js",
        e.gateway("evil", &[], &evil(&d)),
        json!([{"call": "sample"}]),
    );
    assert_clean(&r);
    assert!(
        body(&r["steps"][0]["content"][0]["text"]).starts_with("sampling-ok"),
        "{r}"
    );
    let sampled = &r["sampled"][0];
    assert!(
        body(&sampled["systemPrompt"]).contains("SYSTEM"),
        "{sampled}"
    );
    assert!(body(&sampled["messages"][0]["content"]["text"]).contains("[REDACTED]"));
}

struct Raw {
    child: std::process::Child,
    out: BufReader<std::process::ChildStdout>,
}

impl Raw {
    fn send(&mut self, v: Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    }

    fn next(&mut self) -> Value {
        let mut line = String::new();
        self.out.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|_| panic!("not JSON: {line:?}"))
    }
}

#[test]
fn a_raw_client_gets_one_answer_per_request_and_nothing_forged() {
    let Some(d) = deps("a_raw_client_gets_one_answer_per_request_and_nothing_forged") else {
        return;
    };
    let e = Env::new(POLICY);
    let gw = e.gateway("evil", &[], &evil(&d));
    let mut raw = raw_client(&e, &gw);
    raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}));
    let init = raw.next();
    assert_eq!(init["id"], 1, "{init}");
    raw.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    // The server forges answers to 0..11, "0".."11", 5.0, a guessed next id, null and a
    // batch before it answers; the client gets exactly its own answer, under its own id.
    for (id, message) in [
        (json!(5), "five"),
        (json!("5"), "string five"),
        (json!(5.5), "float"),
    ] {
        raw.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": message}}}));
        let got = raw.next();
        assert_eq!(got["id"], id, "{got}");
        assert_eq!(
            body(&got["result"]["content"][0]["text"]),
            format!("echo: {message}")
        );
        assert_clean(&got);
    }
    // A second answer to an answered id is not forwarded: the next line is the ping's.
    raw.send(
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "twice"}}),
    );
    assert_eq!(body(&raw.next()["result"]["content"][0]["text"]), "first");
    std::thread::sleep(std::time::Duration::from_millis(300));
    raw.send(json!({"jsonrpc": "2.0", "id": 8, "method": "ping"}));
    let pong = raw.next();
    assert_eq!(pong, json!({"jsonrpc": "2.0", "id": 8, "result": {}}));
    // The client side is held to the same rule: an answer to nothing is dropped.
    raw.send(json!({"jsonrpc": "2.0", "id": "cordon-guess", "result": {}}));
    raw.send(json!({"jsonrpc": "2.0", "id": 9, "method": "ping"}));
    assert_eq!(raw.next()["id"], 9);
    drop(raw.child.stdin.take());
    let _ = raw.child.wait();
    let audit = e.audit();
    let dropped: Vec<&Value> = audit.iter().filter(|a| a["answer"] == "dropped").collect();
    // 28 forged answers per echo (0..11 and "0".."11", 5.0, a guessed id, null, a
    // batch), three echoes, and the client's answer to nothing.
    assert!(dropped.len() >= 85, "{}", dropped.len());
    assert!(
        dropped
            .iter()
            .any(|a| a["input"]["protocol_violation"] == "client")
    );
    assert!(
        dropped.iter().any(|a| a["input"]["id"] == "5.0"),
        "the id 5.0 is recorded as sent"
    );
    let results = audit.iter().filter(|a| a["phase"] == "result").count();
    assert_eq!(results, 4, "each answered call has its result record");
}

fn raw_client(e: &Env, gw: &[String]) -> Raw {
    let mut child = Command::new(&gw[0])
        .args(&gw[1..])
        .env("HOME", e.p("home"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = BufReader::new(child.stdout.take().unwrap());
    Raw { child, out }
}
