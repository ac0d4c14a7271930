#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code
//! Issue 36: audit records exported to a local OTLP/HTTP receiver that decodes them
//! with the official protobuf definitions (Python's `opentelemetry-proto`, from
//! `scripts/install-test-deps.sh`): what arrives, a collector down for a while, an
//! answer lost (duplicates only with the same record ids), and the queue's bound.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use cordon_export::{DrainOptions, ExportConfig, ExportError, Exporter};
use cordon_store::{
    AuditKey, AuditLog, Durability, VerifyOptions, VerifyReport, key_path_for_store,
};
use serde_json::{Value, json};

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

fn python() -> PathBuf {
    let p = std::env::var_os("CORDON_OTLP_TEST_DEPS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.test-deps/otlp"))
        .join("venv/bin/python");
    assert!(
        p.exists(),
        "{} is missing: run scripts/install-test-deps.sh (it installs Python's opentelemetry-proto)",
        p.display()
    );
    p
}

impl Receiver {
    fn start() -> Receiver {
        let dir = tempfile::tempdir().unwrap();
        let child = Command::new(python())
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/otlp_receiver.py"))
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

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/v1/logs", self.port)
    }

    fn set(&self, flag: &str, on: bool) {
        let p = self.dir.path().join(flag);
        if on {
            std::fs::write(p, "").unwrap();
        } else {
            let _ = std::fs::remove_file(p);
        }
    }

    fn received(&self) -> Vec<Value> {
        std::fs::read_to_string(self.dir.path().join("received.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

struct Scene {
    _d: tempfile::TempDir,
    log: PathBuf,
    store: PathBuf,
}

fn scene() -> Scene {
    let d = tempfile::tempdir().unwrap();
    Scene {
        log: d.path().join("state/audit.jsonl"),
        store: d.path().join("state/store.sqlite3"),
        _d: d,
    }
}

impl Scene {
    fn append(&self, from: u64, n: u64) {
        let mut log =
            AuditLog::open_anchored(&self.log, Durability::FsyncEach, &self.store).unwrap();
        for i in from..from + n {
            log.append(&json!({
                "kind": "hook", "session": "sess-1", "tool": "Read",
                "decision": if i % 2 == 0 { "allow" } else { "deny" },
                "operation_id": format!("toolu_{i}"),
                "input": {"file_path": format!("/ws/f{i}")},
            }))
            .unwrap();
        }
    }

    fn exporter(&self, url: &str, max_backlog: u64) -> Exporter {
        let config = ExportConfig {
            endpoint: url.to_string(),
            headers: vec![("x-api-key".into(), "k123".into())],
            timeout: Duration::from_secs(5),
            max_backlog,
        };
        Exporter::new(&self.log, &self.store, config)
    }
}

fn quick(give_up: Duration) -> DrainOptions {
    DrainOptions {
        give_up_after: give_up,
        first_backoff: Duration::from_millis(50),
        max_backoff: Duration::from_millis(200),
    }
}

fn uid(r: &Value) -> String {
    r["attributes"]["log.record.uid"]
        .as_str()
        .unwrap()
        .to_string()
}

fn seq(r: &Value) -> u64 {
    r["attributes"]["cordon.audit.seq"].as_u64().unwrap()
}

/// The collector's copy as a file: one line per record id, in seq order.
fn reassemble(received: &[Value], path: &Path) {
    let mut by_seq = BTreeMap::new();
    for r in received {
        by_seq.insert(seq(r), r["body"].as_str().unwrap().to_string());
    }
    let text: String = by_seq.values().map(|l| format!("{l}\n")).collect();
    std::fs::write(path, text).unwrap();
}

#[test]
fn records_arrive_as_otlp_logs_and_the_collectors_copy_verifies() {
    let rx = Receiver::start();
    let s = scene();
    s.append(0, 6);
    let report = s
        .exporter(&rx.url(), 1000)
        .drain(&quick(Duration::from_secs(10)), &AtomicBool::new(false))
        .unwrap();
    assert_eq!(report.sent, 7, "the header and 6 records");
    let got = rx.received();
    assert_eq!(got.len(), 7);
    let r = got.iter().find(|r| seq(r) == 2).unwrap();
    assert_eq!(r["resource"]["service.name"], "cordon");
    assert_eq!(r["resource"]["service.version"], env!("CARGO_PKG_VERSION"));
    assert!(
        r["resource"]["host.name"]
            .as_str()
            .is_some_and(|h| !h.is_empty())
    );
    assert!(r["resource"]["user.name"].as_str().is_some());
    assert_eq!(r["attributes"]["session.id"], "sess-1");
    assert_eq!(r["attributes"]["gen_ai.tool.name"], "Read");
    assert_eq!(r["attributes"]["gen_ai.tool.call.id"], "toolu_1");
    assert_eq!(r["attributes"]["file.path"], "/ws/f1");
    assert_eq!(r["attributes"]["cordon.decision"], "deny");
    assert_eq!(r["severity_text"], "WARN");
    assert_eq!(r["headers"]["x-api-key"], "k123");
    assert!(r["time_unix_nano"].as_u64().unwrap() > 0);
    let lines: Vec<String> = std::fs::read_to_string(&s.log)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(
        r["body"].as_str().unwrap(),
        lines[2],
        "the line travels byte for byte"
    );
    // The collector's copy verifies with the public key alone.
    let copy = s._d.path().join("collector.jsonl");
    reassemble(&got, &copy);
    let key = AuditKey::load(&key_path_for_store(&s.store))
        .unwrap()
        .public();
    let checked = cordon_store::verify_with(
        &copy,
        &VerifyOptions {
            store: None,
            key: Some(&key),
        },
    )
    .unwrap();
    assert!(
        matches!(checked.report, VerifyReport::Ok { records: 6, .. }),
        "{checked:?}"
    );
    assert_eq!(checked.signed_through, Some(6));
    // Nothing new: nothing sent again.
    let again = s
        .exporter(&rx.url(), 1000)
        .drain(&quick(Duration::from_secs(5)), &AtomicBool::new(false))
        .unwrap();
    assert_eq!(again.sent, 0);
    assert_eq!(rx.received().len(), 7);
    // Two more: those two only, resumed from the cursor's offset.
    s.append(6, 2);
    let more = s
        .exporter(&rx.url(), 1000)
        .drain(&quick(Duration::from_secs(5)), &AtomicBool::new(false))
        .unwrap();
    assert_eq!(more.sent, 2);
    let seqs: Vec<u64> = rx.received().iter().map(seq).collect();
    assert_eq!(seqs, (0..=8).collect::<Vec<_>>());
}

#[test]
fn a_collector_down_for_a_while_gets_everything_when_it_returns() {
    let rx = Receiver::start();
    let s = scene();
    s.append(0, 4);
    rx.set("down", true);
    let err = s
        .exporter(&rx.url(), 1000)
        .drain(&quick(Duration::from_millis(500)), &AtomicBool::new(false))
        .unwrap_err();
    assert!(matches!(err, ExportError::Unreachable { .. }), "{err}");
    assert!(rx.received().is_empty());
    // More decisions meanwhile; the exporting process is a new one (a restart).
    s.append(4, 5);
    // An unreachable port too (connection refused) is retried, not fatal.
    let dead = s
        .exporter("http://127.0.0.1:9/v1/logs", 1000)
        .drain(&quick(Duration::from_millis(300)), &AtomicBool::new(false));
    assert!(matches!(dead, Err(ExportError::Unreachable { .. })));
    rx.set("down", false);
    let report = s
        .exporter(&rx.url(), 1000)
        .drain(&quick(Duration::from_secs(10)), &AtomicBool::new(false))
        .unwrap();
    assert_eq!(report.sent, 10);
    let seqs: Vec<u64> = rx.received().iter().map(seq).collect();
    assert_eq!(
        seqs,
        (0..=9).collect::<Vec<_>>(),
        "no loss, no duplicate, in order"
    );
}

#[test]
fn a_lost_answer_sends_again_with_the_same_record_ids() {
    let rx = Receiver::start();
    let s = scene();
    s.append(0, 3);
    // The collector keeps the records but its answer is lost.
    rx.set("lose-answer", true);
    let _ = s
        .exporter(&rx.url(), 1000)
        .drain(&quick(Duration::from_millis(400)), &AtomicBool::new(false));
    rx.set("lose-answer", false);
    s.append(3, 2);
    s.exporter(&rx.url(), 1000)
        .drain(&quick(Duration::from_secs(10)), &AtomicBool::new(false))
        .unwrap();
    let got = rx.received();
    assert!(got.len() > 6, "some were sent twice: {}", got.len());
    // Every duplicate carries the same id and the same line; every record arrived.
    let mut bodies: BTreeMap<String, String> = BTreeMap::new();
    for r in &got {
        let body = r["body"].as_str().unwrap().to_string();
        if let Some(before) = bodies.insert(uid(r), body.clone()) {
            assert_eq!(before, body, "one id, two different records");
        }
    }
    let seqs: BTreeSet<u64> = got.iter().map(seq).collect();
    assert_eq!(seqs, (0..=5).collect());
}

#[test]
fn the_queue_bound_holds_and_the_drop_is_recorded() {
    let rx = Receiver::start();
    let s = scene();
    rx.set("down", true);
    s.append(0, 25);
    let bound = 10;
    let err = s
        .exporter(&rx.url(), bound)
        .drain(&quick(Duration::from_millis(300)), &AtomicBool::new(false))
        .unwrap_err();
    let ExportError::Unreachable { report, .. } = err else {
        panic!("{err}")
    };
    assert_eq!(report.remaining, bound, "the queue holds at most the bound");
    // The drop is a record of the log (verifiable, anchored) and the last one.
    let lines = cordon_store::tail(&s.log, 1).unwrap();
    let drop = &lines[0];
    assert_eq!(
        (drop["kind"].as_str(), drop["event"].as_str()),
        (Some("export"), Some("dropped"))
    );
    assert_eq!(
        (drop["first"].as_u64(), drop["last"].as_u64()),
        (Some(1), Some(16))
    );
    rx.set("down", false);
    s.exporter(&rx.url(), bound)
        .drain(&quick(Duration::from_secs(10)), &AtomicBool::new(false))
        .unwrap();
    let got = rx.received();
    assert_eq!(got.len() as u64, bound);
    let seqs: Vec<u64> = got.iter().map(seq).collect();
    assert_eq!(seqs, (17..=26).collect::<Vec<_>>());
    let last = got.last().unwrap();
    assert_eq!(last["attributes"]["cordon.event"], "dropped");
    assert_eq!(last["severity_text"], "ERROR");
}

#[test]
fn a_forged_huge_seq_skips_nothing_and_ships_marked() {
    // Outside review of issue 36, F3: one line `{"seq":100000000,…}` made the exporter
    // believe 100 million records waited, skip the real ones and ship a drop record.
    let rx = Receiver::start();
    let s = scene();
    s.append(0, 3);
    let stop = AtomicBool::new(false);
    s.exporter(&rx.url(), 100)
        .drain(&quick(Duration::from_secs(10)), &stop)
        .unwrap();
    s.append(3, 5);
    let mut text = std::fs::read_to_string(&s.log).unwrap();
    text.push_str("{\"seq\":100000000,\"prev\":\"00\"}\n");
    std::fs::write(&s.log, text).unwrap();
    let report = s
        .exporter(&rx.url(), 100)
        .drain(&quick(Duration::from_secs(10)), &stop)
        .unwrap();
    assert_eq!(report.dropped, 0, "{report:?}");
    assert_eq!(report.breaks, 1, "{report:?}");
    let got = rx.received();
    let seqs: Vec<u64> = got.iter().map(seq).collect();
    assert_eq!(seqs, vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 100000000]);
    assert!(
        got.iter()
            .all(|r| r["attributes"]["cordon.event"] != "dropped")
    );
    let forged = got.last().unwrap();
    assert!(
        forged["attributes"]["cordon.audit.chain_break"]
            .as_str()
            .is_some_and(|w| w.contains("chain breaks")),
        "{forged}"
    );
    assert!(
        got[..9]
            .iter()
            .all(|r| r["attributes"]["cordon.audit.chain_break"].is_null())
    );
}
