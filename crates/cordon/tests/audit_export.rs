#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code
//! Issue 36 through the binary: a one-shot decision never waits for the collector (its
//! record waits in the log), `cordon audit export --otlp` ships on demand, and `cordon
//! serve` ships in the background, to a receiver decoding with Python's
//! `opentelemetry-proto` (from `scripts/install-test-deps.sh`).

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::cli::{cordon, run_with_input};
use serde_json::Value;

struct Receiver {
    dir: tempfile::TempDir,
    child: Child,
    port: u16,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Receiver {
    fn start() -> Receiver {
        let deps = std::env::var_os("CORDON_OTLP_TEST_DEPS")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.test-deps/otlp"));
        let python = deps.join("venv/bin/python");
        assert!(
            python.exists(),
            "{} is missing: run scripts/install-test-deps.sh",
            python.display()
        );
        let dir = tempfile::tempdir().unwrap();
        let child = Command::new(python)
            .arg(
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../cordon-export/tests/otlp_receiver.py"),
            )
            .arg(dir.path())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        let port = loop {
            if let Ok(p) = std::fs::read_to_string(dir.path().join("port")) {
                break p.trim().parse().unwrap();
            }
            assert!(Instant::now() < deadline, "the receiver did not start");
            std::thread::sleep(Duration::from_millis(50));
        };
        Receiver { dir, child, port }
    }

    fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn received(&self) -> Vec<Value> {
        std::fs::read_to_string(self.dir.path().join("received.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn wait_for(&self, n: usize, within: Duration) -> Vec<Value> {
        let deadline = Instant::now() + within;
        loop {
            let got = self.received();
            if got.len() >= n || Instant::now() > deadline {
                return got;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    ws: PathBuf,
    state: PathBuf,
}

fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let (home, ws, state) = (root.join("home"), root.join("ws"), root.join("state"));
    for d in [&home, &ws] {
        std::fs::create_dir_all(d).unwrap();
    }
    Env {
        _tmp: tmp,
        home,
        ws,
        state,
    }
}

impl Env {
    fn cmd(&self, args: &[&str], endpoint: &str) -> Command {
        let mut c = cordon(&self.home, &self.ws, &self.state, args);
        c.env("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint);
        c
    }

    fn check(&self, endpoint: &str, i: usize) -> Duration {
        let req = serde_json::json!({"tool": "Read", "input": {"file_path": self.ws.join(format!("f{i}"))}, "cwd": self.ws, "session": "s-export"});
        let started = Instant::now();
        let out = run_with_input(
            self.cmd(&["check", "--isolated", "-"], endpoint),
            req.to_string().as_bytes(),
        );
        assert!(out.status.code().is_some(), "{out:?}");
        started.elapsed()
    }
}

#[test]
fn a_one_shot_decision_never_waits_and_audit_export_ships_it_later() {
    // A collector that accepts connections and never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_url = format!("http://{}", silent.local_addr().unwrap());
    let e = env();
    for i in 0..3 {
        let took = e.check(&silent_url, i);
        assert!(took < Duration::from_secs(3), "a check waited {took:?}");
    }
    // Shipping to the silent one gives up after its timeout, leaving all queued.
    let out = e
        .cmd(
            &["audit", "export", "--otlp", "--timeout", "1s"],
            &silent_url,
        )
        .env("OTEL_EXPORTER_OTLP_TIMEOUT", "300")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("still queued"),
        "{out:?}"
    );
    let rx = Receiver::start();
    let out = e
        .cmd(&["audit", "export", "--otlp"], &rx.base())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("exported 4 records"),
        "{out:?}"
    );
    let got = rx.received();
    assert_eq!(got.len(), 4, "the header and three decisions");
    assert!(
        got[1..]
            .iter()
            .all(|r| r["attributes"]["session.id"] == "s-export"
                && r["attributes"]["cordon.kind"] == "check"),
        "{got:?}"
    );
    // Without an endpoint it says how to configure one.
    let out = run_with_input(
        cordon(&e.home, &e.ws, &e.state, &["audit", "export", "--otlp"]),
        b"",
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("OTEL_EXPORTER_OTLP_ENDPOINT"));
}

#[test]
fn cordon_serve_ships_in_the_background() {
    let rx = Receiver::start();
    let e = env();
    let mut serve = e
        .cmd(&["serve", "--isolated"], &rx.base())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = serve.stdin.take().unwrap();
    for i in 0..5 {
        let req = serde_json::json!({"tool": "Read", "input": {"file_path": e.ws.join(format!("f{i}"))}, "cwd": e.ws});
        writeln!(stdin, "{}", common::cli::check_frame(i, &req)).unwrap();
    }
    stdin.flush().unwrap();
    let got = rx.wait_for(6, Duration::from_secs(20));
    drop(stdin);
    let _ = serve.wait();
    assert_eq!(got.len(), 6, "the header and five decisions: {got:?}");
}
