//! The console over real HTTP on loopback: the token, the cookie session, the Host,
//! Origin and CSRF checks, the headers of every response, answers written to the store and
//! the audit log, and records streamed as server-sent events.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use cordon_store::{AuditLog, Durability, EgressEntry, EgressLog, PendingState, Store};
use cordon_ui::{CSP, ChangePlaces, Console, Places, UiOptions};
use serde_json::{Value, json};

struct Running {
    _dir: tempfile::TempDir,
    addr: SocketAddr,
    token: String,
    store: std::path::PathBuf,
    audit: std::path::PathBuf,
}

fn start() -> Running {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite3");
    let audit = dir.path().join("audit.jsonl");
    Store::open(&store).unwrap();
    let console = Console::bind(UiOptions {
        listen: "127.0.0.1:0".parse().unwrap(),
        dangerously_listen_non_loopback: false,
        places: Places {
            store: store.clone(),
            shared: None,
            audit: audit.clone(),
            changes: ChangePlaces {
                bases: vec![dir.path().join("changes")],
                home: dir.path().join("home"),
            },
        },
        loader: Arc::new(|_| Err("no policy in this test".to_string())),
    })
    .unwrap();
    let addr = console.addr();
    let token = console.token().to_string();
    assert_eq!(console.url(), format!("http://{addr}/?token={token}"));
    std::thread::spawn(move || console.serve());
    Running {
        _dir: dir,
        addr,
        token,
        store,
        audit,
    }
}

struct Reply {
    status: u16,
    head: String,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
        })
    }
}

fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Reply {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nconnection: close\r\ncontent-length: {}\r\n",
        body.len()
    );
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("host: {addr}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    Reply {
        status,
        head: head.to_string(),
        body: body.to_string(),
    }
}

/// Sign in with the token: the session cookie header to send back.
fn login(r: &Running) -> String {
    let reply = request(r.addr, "GET", &format!("/?token={}", r.token), &[], "");
    assert_eq!(reply.status, 303, "{}", reply.head);
    assert_eq!(reply.header("location").as_deref(), Some("/"));
    let cookie = reply.header("set-cookie").unwrap();
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    assert!(cookie.contains("SameSite=Strict"), "{cookie}");
    cookie.split(';').next().unwrap().to_string()
}

fn csrf(r: &Running, cookie: &str) -> String {
    let reply = request(r.addr, "GET", "/api/state", &[("cookie", cookie)], "");
    assert_eq!(reply.status, 200, "{}", reply.body);
    let v: Value = serde_json::from_str(&reply.body).unwrap();
    v["csrf"].as_str().unwrap().to_string()
}

/// The request and verdict of `command` asked in `session`, as the gate records them,
/// and their fingerprint (which answering computes again).
fn call(command: &str, session: Option<&str>) -> (Value, Value, String) {
    let mut request = json!({"tool": "Bash", "input": {"command": command}});
    if let Some(s) = session {
        request["session"] = s.into();
    }
    let verdict = json!({"decision": "ask", "reason": "exec asks",
                         "workspace": "/w", "grant_version": "v1"});
    let fp = cordon_policy::fingerprint::approval_fingerprint(&request, &verdict).unwrap();
    (request, verdict, fp)
}

fn add_pending(r: &Running, command: &str) -> i64 {
    let store = Store::open(&r.store).unwrap();
    let (request, verdict, fp) = call(command, Some("s1"));
    store
        .add_pending(&fp, Some("s1"), &request, &verdict, Some("Bash(make:*)"))
        .unwrap()
        .0
}

#[test]
fn every_request_needs_the_token() {
    let r = start();
    for path in [
        "/",
        "/app.js",
        "/app.css",
        "/api/state",
        "/api/events",
        "/api/verify",
        "/api/changes",
        "/api/changes/1-2-3",
    ] {
        let reply = request(r.addr, "GET", path, &[], "");
        assert_eq!(reply.status, 401, "{path}");
        assert!(reply.body.contains("open the URL"), "{}", reply.body);
    }
    let wrong = "0".repeat(64);
    let reply = request(r.addr, "GET", &format!("/?token={wrong}"), &[], "");
    assert_eq!(reply.status, 401);
    assert!(reply.header("set-cookie").is_none());
    let reply = request(
        r.addr,
        "GET",
        "/api/state",
        &[("cookie", &format!("cordon_ui={}", r.token))],
        "",
    );
    assert_eq!(
        reply.status, 401,
        "the launch token is not itself a session"
    );
    let cookie = login(&r);
    let reply = request(r.addr, "GET", "/", &[("cookie", &cookie)], "");
    assert_eq!(reply.status, 200);
    assert!(reply.body.contains("<title>cordon console</title>"));
}

#[test]
fn every_response_carries_the_strict_headers() {
    let r = start();
    let cookie = login(&r);
    for (path, cookie) in [
        ("/", Some(&cookie)),
        ("/app.js", Some(&cookie)),
        ("/api/state", Some(&cookie)),
        ("/", None),
    ] {
        let headers: Vec<(&str, &str)> = cookie
            .map(|c| vec![("cookie", c.as_str())])
            .unwrap_or_default();
        let reply = request(r.addr, "GET", path, &headers, "");
        assert_eq!(
            reply.header("content-security-policy").as_deref(),
            Some(CSP),
            "{path}"
        );
        assert_eq!(
            reply.header("x-content-type-options").as_deref(),
            Some("nosniff")
        );
        assert_eq!(
            reply.header("referrer-policy").as_deref(),
            Some("no-referrer")
        );
        assert_eq!(reply.header("x-frame-options").as_deref(), Some("DENY"));
    }
    assert!(CSP.contains("default-src 'none'") && CSP.contains("script-src 'self'"));
    assert!(CSP.contains("frame-ancestors 'none'") && !CSP.contains("unsafe"));
}

#[test]
fn a_foreign_host_is_refused_even_with_a_session() {
    let r = start();
    let cookie = login(&r);
    for host in [
        "attacker.example",
        &format!("attacker.example:{}", r.addr.port()),
        "127.0.0.1:1",
    ] {
        let reply = request(
            r.addr,
            "GET",
            "/api/state",
            &[("host", host), ("cookie", &cookie)],
            "",
        );
        assert_eq!(reply.status, 421, "{host}");
        let reply = request(
            r.addr,
            "GET",
            &format!("/?token={}", r.token),
            &[("host", host)],
            "",
        );
        assert_eq!(reply.status, 421, "{host}: no login through a rebound name");
    }
    let reply = request(
        r.addr,
        "GET",
        "/api/state",
        &[
            ("host", &format!("localhost:{}", r.addr.port())),
            ("cookie", &cookie),
        ],
        "",
    );
    assert_eq!(reply.status, 200);
}

#[test]
fn a_change_needs_same_origin_and_the_csrf_token() {
    let r = start();
    let id = add_pending(&r, "make deploy");
    let cookie = login(&r);
    let token = csrf(&r, &cookie);
    let origin = format!("http://{}", r.addr);
    let body = json!({"id": id, "answer": "once"}).to_string();
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, u16);
    let refused: [Case<'_>; 5] = [
        (
            "cross-origin",
            vec![
                ("cookie", &cookie),
                ("origin", "http://attacker.example"),
                ("x-cordon-csrf", &token),
            ],
            403,
        ),
        (
            "cross-site fetch",
            vec![
                ("cookie", &cookie),
                ("origin", &origin),
                ("sec-fetch-site", "cross-site"),
                ("x-cordon-csrf", &token),
            ],
            403,
        ),
        (
            "no origin",
            vec![("cookie", &cookie), ("x-cordon-csrf", &token)],
            403,
        ),
        (
            "no csrf",
            vec![("cookie", &cookie), ("origin", &origin)],
            403,
        ),
        (
            "no cookie",
            vec![("origin", &origin), ("x-cordon-csrf", &token)],
            401,
        ),
    ];
    for (what, headers, status) in refused {
        let reply = request(r.addr, "POST", "/api/answer", &headers, &body);
        assert_eq!(reply.status, status, "{what}: {}", reply.body);
    }
    let wrong = "f".repeat(64);
    let reply = request(
        r.addr,
        "POST",
        "/api/answer",
        &[
            ("cookie", &cookie),
            ("origin", &origin),
            ("x-cordon-csrf", &wrong),
        ],
        &body,
    );
    assert_eq!(reply.status, 403);
    let reply = request(r.addr, "GET", "/api/answer", &[("cookie", &cookie)], "");
    assert_eq!(reply.status, 404, "a GET changes nothing");
    let store = Store::open(&r.store).unwrap();
    assert_eq!(
        store.approval(cordon_store::PendingId(id)).unwrap().1,
        PendingState::Pending
    );

    // The same request from the page itself goes through, and is audited as the console's.
    let ok = [
        ("cookie", cookie.as_str()),
        ("origin", origin.as_str()),
        ("sec-fetch-site", "same-origin"),
        ("x-cordon-csrf", token.as_str()),
    ];
    let reply = request(r.addr, "POST", "/api/answer", &ok, &body);
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        store.approval(cordon_store::PendingId(id)).unwrap().1,
        PendingState::Approved
    );
    let rec = &cordon_store::tail(&r.audit, 1).unwrap()[0];
    assert_eq!(rec["event"], "approval-answered");
    assert_eq!(rec["answered_by"], "console");
    assert_eq!(rec["pending"], id);
    // A second answer is refused with the store's reason.
    let reply = request(r.addr, "POST", "/api/answer", &ok, &body);
    assert_eq!(reply.status, 409, "{}", reply.body);
}

#[test]
fn session_and_always_answers_make_the_wider_grant() {
    let r = start();
    let cookie = login(&r);
    let token = csrf(&r, &cookie);
    let origin = format!("http://{}", r.addr);
    let ok = [
        ("cookie", cookie.as_str()),
        ("origin", origin.as_str()),
        ("x-cordon-csrf", token.as_str()),
    ];
    let store = Store::open(&r.store).unwrap();

    let id = add_pending(&r, "make a");
    let reply = request(
        r.addr,
        "POST",
        "/api/answer",
        &ok,
        &json!({"id": id, "answer": "session"}).to_string(),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let leases = store.leases().unwrap();
    assert_eq!(
        leases.len(),
        1,
        "only the session lease is left: {leases:?}"
    );
    assert_eq!(leases[0].scope, cordon_store::Scope::Session("s1".into()));
    let fp = call("make a", None).2;
    assert!(store.consume(&fp, Some("s1")).unwrap().is_some());
    assert!(store.consume(&fp, Some("s2")).unwrap().is_none());

    let id = add_pending(&r, "make b");
    let reply = request(
        r.addr,
        "POST",
        "/api/answer",
        &ok,
        &json!({"id": id, "answer": "always"}).to_string(),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let rules = store.rules().unwrap();
    // The rule offered is derived from the call shown: its exact call.
    assert_eq!(rules[0].rule, "Bash(make b)");
    assert!(rules[0].created_by.ends_with("(console)"), "{:?}", rules[0]);

    // Revoke and forget through the console.
    let lease = store.leases().unwrap()[0].id.0;
    let reply = request(
        r.addr,
        "POST",
        "/api/revoke",
        &ok,
        &json!({"id": lease}).to_string(),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(store.leases().unwrap().iter().all(|l| l.id.0 != lease));
    let reply = request(
        r.addr,
        "POST",
        "/api/forget",
        &ok,
        &json!({"rule": "Bash(make b)"}).to_string(),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(store.rules().unwrap().is_empty());
    let rec = &cordon_store::tail(&r.audit, 1).unwrap()[0];
    assert_eq!(
        (rec["event"].as_str(), rec["answered_by"].as_str()),
        (Some("rule-forgotten"), Some("console"))
    );
    // A malformed answer is refused without touching anything.
    let reply = request(
        r.addr,
        "POST",
        "/api/answer",
        &ok,
        "{\"id\": 1, \"answer\": \"yes please\"}",
    );
    assert_eq!(reply.status, 400);
    let reply = request(r.addr, "POST", "/api/answer", &ok, "not json");
    assert_eq!(reply.status, 400);
}

#[test]
fn records_stream_as_events_with_untrusted_text_kept_in_one_json_line() {
    let r = start();
    let cookie = login(&r);
    let evil = "<script>alert(1)</script>\n\ndata: {\"forged\":true}";
    let mut log = AuditLog::open(&r.audit, Durability::FsyncEach).unwrap();
    log.append(&json!({"tool": "Bash", "decision": "deny", "input": {"command": evil}}))
        .unwrap();
    let mut s = TcpStream::connect(r.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET /api/events HTTP/1.1\r\nhost: {}\r\ncookie: {cookie}\r\n\r\n",
        r.addr
    )
    .unwrap();
    let mut seen = String::new();
    let mut buf = [0u8; 4096];
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !seen.contains("alert") && std::time::Instant::now() < deadline {
        let n = s.read(&mut buf).unwrap();
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    assert!(seen.contains("content-type: text/event-stream"), "{seen}");
    let data: Vec<&str> = seen.lines().filter(|l| l.starts_with("data: ")).collect();
    assert_eq!(data.len(), 1, "{seen}");
    let v: Value = serde_json::from_str(data[0].trim_start_matches("data: ")).unwrap();
    assert_eq!(v["input"]["command"], evil);
}

/// Read server-sent events from `/api/events` until `until` is seen; the `data:` lines.
fn events_until(r: &Running, cookie: &str, until: &str) -> Vec<Value> {
    let mut s = TcpStream::connect(r.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET /api/events HTTP/1.1\r\nhost: {}\r\ncookie: {cookie}\r\n\r\n",
        r.addr
    )
    .unwrap();
    let mut seen = String::new();
    let mut buf = [0u8; 4096];
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !seen.contains(until) && std::time::Instant::now() < deadline {
        let n = s.read(&mut buf).unwrap();
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    seen.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect()
}

#[test]
fn a_runs_egress_log_reaches_the_page_with_its_refused_host() {
    let r = start();
    let cookie = login(&r);
    let entry = |host: &str, decision: &str, code: &str| EgressEntry {
        time_ms: 1_764_620_000_000,
        protocol: "connect".into(),
        method: None,
        path: None,
        credential: None,
        host: host.into(),
        port: 443,
        address: None,
        decision: decision.into(),
        code: code.into(),
        reason: if decision == "allow" {
            String::new()
        } else {
            format!("{host} is not on the network allowlist")
        },
        status: None,
        bytes_up: 0,
        bytes_down: 0,
        duration_ms: 1,
    };
    let egress = EgressLog::of([
        entry("crates.io", "allow", "allow"),
        entry("<b>evil</b>.example", "deny", "not-allowed"),
    ]);
    let mut log = AuditLog::open(&r.audit, Durability::FsyncEach).unwrap();
    log.append(&json!({
        "kind": "exec", "phase": "end", "tool": "Bash", "decision": "allow",
        "input": {"command": "cargo fetch"}, "exit_status": 0,
        "egress": serde_json::to_value(&egress).unwrap(),
    }))
    .unwrap();
    let data = events_until(&r, &cookie, "not-allowed");
    let end = data.iter().find(|v| v["phase"] == "end").unwrap();
    assert_eq!(end["egress"]["refused"], 1, "{end}");
    let refused = &end["egress"]["events"][1];
    assert_eq!(refused["host"], "<b>evil</b>.example");
    assert_eq!(refused["decision"], "deny");
    assert_eq!(end["egress"]["destinations"][1]["refused"], 1);
    // The page draws the log as text: a table of destinations and one of events.
    let script = request(r.addr, "GET", "/app.js", &[("cookie", &cookie)], "").body;
    assert!(
        script.contains("section(\"Egress log\", ...egressView(r.egress))"),
        "the detail view does not draw the egress log"
    );
}

#[test]
fn the_page_has_no_inline_script_and_never_writes_html() {
    let r = start();
    let cookie = login(&r);
    let page = request(r.addr, "GET", "/", &[("cookie", &cookie)], "").body;
    let script = request(r.addr, "GET", "/app.js", &[("cookie", &cookie)], "").body;
    for tag in page.split("<script").skip(1) {
        let open = tag.split('>').next().unwrap();
        assert!(open.contains("src=\"/app.js\""), "inline script: {open}");
        assert!(
            tag.split('>').nth(1).unwrap().starts_with("</script"),
            "inline script body"
        );
    }
    assert!(!page.contains(" style="), "no inline style");
    let handler = page.split(" on").skip(1).any(|rest| {
        let name: String = rest.chars().take_while(char::is_ascii_alphabetic).collect();
        !name.is_empty() && rest[name.len()..].starts_with('=')
    });
    assert!(!handler, "no inline event handlers");
    for sink in [
        ".innerHTML",
        ".outerHTML",
        "insertAdjacentHTML",
        "document.write",
        "eval(",
        "new Function",
    ] {
        assert!(!script.contains(sink), "app.js uses {sink}");
    }
    assert!(script.contains("textContent"));
}

#[test]
fn a_non_loopback_address_is_refused_without_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let err = Console::bind(UiOptions {
        listen: "0.0.0.0:0".parse().unwrap(),
        dangerously_listen_non_loopback: false,
        places: Places {
            store: dir.path().join("s"),
            shared: None,
            audit: dir.path().join("a"),
            changes: ChangePlaces {
                bases: vec![dir.path().join("c")],
                home: dir.path().join("h"),
            },
        },
        loader: Arc::new(|_| Err(String::new())),
    })
    .err()
    .unwrap();
    assert!(err.to_string().contains("not a loopback address"), "{err}");
}

/// "Always allow" in the console saves one of the rules offered with the request (by its
/// number), and refuses any other.
#[test]
fn always_saves_only_an_offered_rule() {
    let r = start();
    let cookie = login(&r);
    let token = csrf(&r, &cookie);
    let origin = format!("http://{}", r.addr);
    let ok = [
        ("cookie", cookie.as_str()),
        ("origin", origin.as_str()),
        ("x-cordon-csrf", token.as_str()),
    ];
    let store = Store::open(&r.store).unwrap();
    let offered = vec![
        cordon_store::RuleOption::exact("Bash(git status --short)"),
        cordon_store::RuleOption {
            rule: "Bash(git status:*)".into(),
            example: Some("git status --ignored".into()),
        },
    ];
    let (asked, verdict, fp) = call("git status --short", None);
    let id = store
        .add_pending_offering(&fp, None, None, &asked, &verdict, &offered)
        .unwrap()
        .0;
    let reply = request(r.addr, "GET", "/api/state", &[("cookie", &cookie)], "");
    let state: Value = serde_json::from_str(&reply.body).unwrap();
    assert_eq!(
        state["pending"][0]["suggestions"][1],
        json!({"rule": "Bash(git status:*)", "example": "git status --ignored"})
    );
    for (rule, status) in [
        (json!("Bash(git:*)"), 400),
        (json!(3), 400),
        (json!(-1), 400),
        (json!({"rule": "x"}), 400),
    ] {
        let body = json!({"id": id, "answer": "always", "rule": rule}).to_string();
        let reply = request(r.addr, "POST", "/api/answer", &ok, &body);
        assert_eq!(reply.status, status, "{rule}: {}", reply.body);
        assert!(store.rules().unwrap().is_empty());
        assert_eq!(store.pending().unwrap().len(), 1);
    }
    let body = json!({"id": id, "answer": "always", "rule": 2}).to_string();
    let reply = request(r.addr, "POST", "/api/answer", &ok, &body);
    assert_eq!(reply.status, 200, "{}", reply.body);
    let rules: Vec<String> = store.rules().unwrap().into_iter().map(|r| r.rule).collect();
    assert_eq!(rules, ["Bash(git status:*)"]);
    let rec = &cordon_store::tail(&r.audit, 1).unwrap()[0];
    assert_eq!(rec["rule"], "Bash(git status:*)");
}
