#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! A fleet against a real PostgreSQL server: 8 `cordon serve` instances, each with its
//! own state directory and socket, sharing one database through `[store]`; a human answer
//! given once in the console (`cordon ui`) and honoured by the service that asked; a
//! once-lease spent once across services; the same pending list, machines named, on every
//! service; and the server stopped and started under calls (asks fail closed, plain
//! allows and guard denies still answer, nothing committed is lost, no cordon restart).
// Test code: a failed setup step should stop the test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::cli::{Served, serve_socket};
use cordon_store::pg_test::Cluster;

/// Machines in the fleet.
const FLEET: usize = 8;

struct Fleet {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    ws: PathBuf,
    cluster: Cluster,
}

/// A workspace and a user config pointing at a fresh cluster; `None` when PostgreSQL is
/// not installed (and not required).
/// The cluster is this test's own (pg-core's `cordon_store::pg_test`): the fault test
/// stops and starts it.
fn fleet() -> Option<Fleet> {
    let cluster = Cluster::start_private()?;
    let db = cluster.fresh_database();
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let home = root.join("home");
    let ws = home.join("src/proj");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(home.join(".config/cordon")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "KEY").unwrap();
    std::fs::write(ws.join("src/main.rs"), "fn main(){}").unwrap();
    // One config for every machine (leases are bound to the policy's version, so a fleet
    // shares one); each machine's name comes from CORDON_MACHINE.
    std::fs::write(
        home.join(".config/cordon/policy.toml"),
        format!(
            "[permissions]\nask = [\"Bash(make deploy:*)\"]\n\n[store]\nurl = \"{}\"\n",
            cluster.url(&db)
        ),
    )
    .unwrap();
    Some(Fleet {
        _tmp: tmp,
        root,
        home,
        ws,
        cluster,
    })
}

impl Fleet {
    /// `cordon ARGS` as machine `machine`, with its own state directory.
    fn cordon(&self, machine: &str, args: &[&str]) -> Command {
        let mut cmd = common::cli::cordon(
            &self.home,
            &self.ws,
            &self.root.join("state").join(machine),
            args,
        );
        cmd.env("CORDON_MACHINE", machine);
        cmd
    }

    fn serve(&self, machine: &str) -> Served {
        let socket = self.root.join("sockets").join(machine).join("serve.sock");
        let mut cmd = self.cordon(machine, &["serve", "--socket", socket.to_str().unwrap()]);
        cmd.stdout(Stdio::null()).stderr(Stdio::piped());
        serve_socket(&mut cmd, socket)
    }

    fn read(&self) -> Value {
        json!({"tool": "Read", "input": {"file_path": self.ws.join("src/main.rs")}})
    }

    fn key(&self) -> Value {
        json!({"tool": "Read", "input": {"file_path": self.home.join(".ssh/id_rsa")}})
    }
}

fn deploy(op: &str) -> Value {
    json!({"tool": "Bash", "input": {"command": "make deploy"}, "session": "s1", "operation_id": op})
}

/// One JSON-RPC call over a service's socket.
fn call(socket: &Path, method: &str, params: Value) -> Value {
    let mut s = UnixStream::connect(socket).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let frame = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    s.write_all(format!("{frame}\n").as_bytes()).unwrap();
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line).unwrap();
    serde_json::from_str(&line).unwrap_or_else(|_| panic!("not JSON: {line:?}"))
}

/// `check` through a service; the verdict object.
fn check(socket: &Path, req: &Value, on_ask: &str) -> Value {
    let mut params = req.clone();
    params["on_ask"] = json!(on_ask);
    let answer = call(socket, "check", params);
    answer["result"].clone()
}

/// A running `cordon ui`: its address and token; killed when dropped.
struct Console {
    child: Child,
    addr: SocketAddr,
    token: String,
}

impl Drop for Console {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn console(f: &Fleet, machine: &str) -> Console {
    let mut child = f
        .cordon(machine, &["ui", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let url = line
        .trim()
        .strip_prefix("cordon ui: open http://")
        .unwrap_or_else(|| panic!("no URL: {line:?}"))
        .to_string();
    let (addr, token) = url.split_once("/?token=").unwrap();
    Console {
        child,
        addr: addr.parse().unwrap(),
        token: token.to_string(),
    }
}

/// One HTTP request to the console: status and body.
fn http(
    c: &Console,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let mut s = TcpStream::connect(c.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nhost: {}\r\nconnection: close\r\ncontent-length: {}\r\n",
        c.addr,
        body.len()
    );
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
    (status, head.to_string(), body.to_string())
}

/// Sign in: the cookie and the CSRF token.
fn sign_in(c: &Console) -> (String, String) {
    let (status, head, _) = http(c, "GET", &format!("/?token={}", c.token), &[], "");
    assert_eq!(status, 303, "{head}");
    let cookie = head
        .lines()
        .find_map(|l| {
            l.strip_prefix("set-cookie: ")
                .or_else(|| l.strip_prefix("Set-Cookie: "))
        })
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    let state = console_state(c, &cookie);
    (cookie, state["csrf"].as_str().unwrap().to_string())
}

fn console_state(c: &Console, cookie: &str) -> Value {
    let (status, _, body) = http(c, "GET", "/api/state", &[("cookie", cookie)], "");
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

fn answer(c: &Console, cookie: &str, csrf: &str, id: i64, word: &str) -> (u16, String) {
    let origin = format!("http://{}", c.addr);
    let (status, _, body) = http(
        c,
        "POST",
        "/api/answer",
        &[
            ("cookie", cookie),
            ("origin", &origin),
            ("x-cordon-csrf", csrf),
        ],
        &json!({"id": id, "answer": word}).to_string(),
    );
    (status, body)
}

fn pending_ids(socket: &Path) -> Vec<(i64, Value)> {
    let list = call(socket, "pending.list", json!({}));
    list["result"]["pending"]
        .as_array()
        .unwrap_or_else(|| panic!("{list}"))
        .iter()
        .map(|p| (p["id"].as_i64().unwrap(), p["machine"].clone()))
        .collect()
}

#[test]
fn eight_services_share_one_approval_answered_once_in_the_console() {
    let Some(f) = fleet() else {
        return;
    };
    let machines: Vec<String> = (0..FLEET).map(|i| format!("m{i}")).collect();
    let services: Vec<Served> = machines.iter().map(|m| f.serve(m)).collect();
    let sock = |i: usize| services[i].socket.clone();

    // Every service answers the policy's own verdicts.
    for i in 0..FLEET {
        assert_eq!(check(&sock(i), &f.read(), "caller")["decision"], "allow");
        assert_eq!(check(&sock(i), &f.key(), "caller")["decision"], "deny");
    }

    // Machine m3 records an ask as pending; every service lists it, naming m3.
    let asked = check(&sock(3), &deploy("op-1"), "pending");
    assert_eq!(asked["outcome"], "pending", "{asked}");
    let id = asked["pending"]
        .as_i64()
        .unwrap_or_else(|| panic!("{asked}"));
    for i in 0..FLEET {
        let list = pending_ids(&sock(i));
        assert_eq!(list, vec![(id, json!("m3"))], "service m{i}");
    }

    // `cordon approvals` on another machine lists it too, the machine named.
    let out = f
        .cordon("m2", &["approvals", "list", "--json"])
        .output()
        .unwrap();
    let listed: Value = serde_json::from_slice(out.stdout.split(|b| *b == b'\n').next().unwrap())
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(
        (listed["id"].as_i64(), listed["machine"].as_str()),
        (Some(id), Some("m3"))
    );

    // The console (its own machine) shows it with the machine named, and answers it once.
    let ui = console(&f, "console");
    let (cookie, csrf) = sign_in(&ui);
    let state = console_state(&ui, &cookie);
    assert_eq!(state["shared"], true, "{state}");
    assert_eq!(state["pending"][0]["id"], id, "{state}");
    assert_eq!(state["pending"][0]["machine"], "m3", "{state}");
    let (status, body) = answer(&ui, &cookie, &csrf, id, "once");
    assert_eq!(status, 200, "{body}");
    let (status, body) = answer(&ui, &cookie, &csrf, id, "once");
    assert_eq!(status, 409, "answered once: {body}");
    for i in 0..FLEET {
        assert!(pending_ids(&sock(i)).is_empty(), "service m{i}");
    }

    // The service that asked collects the answer, once.
    let resumed = check(&sock(3), &deploy("op-1"), "pending");
    assert_eq!(resumed["decision"], "allow", "{resumed}");
    let again = check(&sock(3), &deploy("op-1"), "caller");
    assert_ne!(
        again["decision"], "allow",
        "an operation id is spent once: {again}"
    );

    // A once-lease is spent once when every service claims it at the same moment.
    let asked = check(&sock(0), &deploy("op-2"), "pending");
    let id2 = asked["pending"]
        .as_i64()
        .unwrap_or_else(|| panic!("{asked}"));
    let (status, body) = answer(&ui, &cookie, &csrf, id2, "once");
    assert_eq!(status, 200, "{body}");
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(FLEET));
    let claims: Vec<_> = (0..FLEET)
        .map(|i| {
            let socket = sock(i);
            let barrier = std::sync::Arc::clone(&barrier);
            std::thread::spawn(move || {
                let req = deploy(&format!("op-2-{i}"));
                barrier.wait();
                check(&socket, &req, "deny")["decision"]
                    .as_str()
                    .unwrap_or("")
                    .to_string()
            })
        })
        .collect();
    let decisions: Vec<String> = claims.into_iter().map(|t| t.join().unwrap()).collect();
    let allowed = decisions.iter().filter(|d| *d == "allow").count();
    assert_eq!(allowed, 1, "one lease, one call: {decisions:?}");

    // "Always" answered once in the console applies on every machine: each service's
    // rules reader picks the saved rule up. The call is sent from another directory, so
    // only the rule (not the lease bound to the exact call) can allow it.
    let plan =
        |cwd: &Path| json!({"tool": "Bash", "input": {"command": "terraform plan"}, "cwd": cwd});
    let asked = check(&sock(1), &plan(&f.ws), "pending");
    let id3 = asked["pending"]
        .as_i64()
        .unwrap_or_else(|| panic!("{asked}"));
    let (status, body) = answer(&ui, &cookie, &csrf, id3, "always");
    assert_eq!(status, 200, "{body}");
    let elsewhere = f.ws.join("src");
    for i in 0..FLEET {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let got = check(&sock(i), &plan(&elsewhere), "deny");
            if got["decision"] == "allow" {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "service m{i} never saw the rule: {got}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    // A one-shot `cordon check` on a machine with no service ships what it wrote after
    // answering.
    let out = f
        .cordon("cli-1", &["check", &f.read().to_string()])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // The console shows every machine's decisions, shipped by each service in the
    // background, the machine named.
    let machines: Vec<String> = machines.into_iter().chain(["cli-1".to_string()]).collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let state = console_state(&ui, &cookie);
        let seen: std::collections::BTreeSet<String> = state["decisions"]
            .as_array()
            .unwrap_or_else(|| panic!("{state}"))
            .iter()
            .filter_map(|d| d["machine"].as_str().map(str::to_string))
            .collect();
        if machines.iter().all(|m| seen.contains(m)) {
            break;
        }
        assert!(Instant::now() < deadline, "decisions of {seen:?} only");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_stopped_server_fails_asks_closed_and_the_fleet_reconnects() {
    let Some(f) = fleet() else {
        return;
    };
    let services: Vec<Served> = ["a", "b"].iter().map(|m| f.serve(m)).collect();
    let a = services[0].socket.clone();
    let b = services[1].socket.clone();
    let asked = check(&a, &deploy("op-kept"), "pending");
    let kept = asked["pending"]
        .as_i64()
        .unwrap_or_else(|| panic!("{asked}"));

    // Calls go on through the stop and the restart: every plain allow is answered
    // allow, none waits long.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let load = {
        let (stop, socket, read) = (std::sync::Arc::clone(&stop), a.clone(), f.read());
        std::thread::spawn(move || {
            let (mut n, mut slowest) = (0u32, Duration::ZERO);
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let started = Instant::now();
                let got = check(&socket, &read, "caller");
                assert_eq!(got["decision"], "allow", "under the stop: {got}");
                slowest = slowest.max(started.elapsed());
                n += 1;
            }
            (n, slowest)
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    f.cluster.stop("fast");
    for socket in [&a, &b] {
        let started = Instant::now();
        assert_eq!(check(socket, &f.read(), "caller")["decision"], "allow");
        assert_eq!(check(socket, &f.key(), "caller")["decision"], "deny");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "policy-only decisions waited on the store: {:?}",
            started.elapsed()
        );
        let ask = check(socket, &deploy("op-down"), "pending");
        assert_eq!(
            ask["decision"], "deny",
            "an ask needing the store fails closed: {ask}"
        );
        let reason = ask["reason"].as_str().unwrap_or("");
        assert!(reason.contains("store"), "{reason}");
    }
    // A one-shot `cordon check` too: the plain allow answers, the ask is refused.
    let started = Instant::now();
    let out = f
        .cordon("a", &["check", &f.read().to_string()])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    let out = f
        .cordon("a", &["check", "--pending", &deploy("op-cli").to_string()])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(v["decision"], "deny", "{v}");

    // Back up: the same services, not restarted, use it again; nothing committed is lost.
    f.cluster.restart();
    let deadline = Instant::now() + Duration::from_secs(20);
    let id = loop {
        let asked = check(&b, &deploy("op-up"), "pending");
        if let Some(id) = asked["pending"].as_i64() {
            break id;
        }
        assert!(Instant::now() < deadline, "no reconnect: {asked}");
        std::thread::sleep(Duration::from_millis(200));
    };
    for socket in [&a, &b] {
        let ids: Vec<i64> = pending_ids(socket).into_iter().map(|(i, _)| i).collect();
        assert_eq!(
            ids,
            vec![kept, id],
            "the pending approval from before the stop is kept"
        );
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (n, slowest) = load.join().unwrap();
    assert!(n > 10, "only {n} calls went on");
    assert!(
        slowest < Duration::from_secs(3),
        "a plain allow waited {slowest:?} through the stop and restart"
    );
}
