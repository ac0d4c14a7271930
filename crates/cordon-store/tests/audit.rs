#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! The hash-chained audit log: append, verify, tamper detection of each kind, torn
//! tails from a killed writer, and concurrent appenders.
// Test helpers outside #[test] functions may unwrap and panic: a failure is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use cordon_store::{AuditLog, Break, Durability, ExportFilter, VerifyReport, export, tail, verify};
use serde_json::{Value, json};

const BATCHED: Durability = Durability::Batched {
    max_records: 64,
    max_delay: Duration::from_millis(50),
};

fn log_with(n: u64) -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("audit.jsonl");
    let mut log = AuditLog::open(&path, Durability::FsyncEach).unwrap();
    for i in 0..n {
        log.append(&json!({"session": format!("s{}", i % 2), "tool": "Bash", "decision": if i % 3 == 0 {"deny"} else {"allow"}, "input": {"command": format!("echo {i}")}}))
            .unwrap();
    }
    (d, path)
}

fn lines(path: &Path) -> Vec<Vec<u8>> {
    let bytes = std::fs::read(path).unwrap();
    bytes
        .split_inclusive(|b| *b == b'\n')
        .map(<[u8]>::to_vec)
        .collect()
}

fn write_lines(path: &Path, lines: &[Vec<u8>]) {
    std::fs::write(path, lines.concat()).unwrap();
}

fn broken(path: &Path) -> (u64, Break) {
    match verify(path).unwrap() {
        VerifyReport::Broken { line, why, .. } => (line, why),
        ok => panic!("expected a break, got {ok:?}"),
    }
}

#[test]
fn intact_log_verifies() {
    let (_d, path) = log_with(10);
    let VerifyReport::Ok { records, head } = verify(&path).unwrap() else {
        panic!()
    };
    assert_eq!(records, 10);
    assert_eq!(head.len(), 64);
    let all = lines(&path);
    let header: Value = serde_json::from_slice(&all[0]).unwrap();
    assert_eq!(header["cordon_audit"], 1);
    assert_eq!(header["seed"].as_str().unwrap().len(), 64);
    // Record 1 chains to the header's bytes.
    let first: Value = serde_json::from_slice(&all[1]).unwrap();
    let want = blake3::hash(&all[0][..all[0].len() - 1])
        .to_hex()
        .to_string();
    assert_eq!(first["prev"], want);
    assert_eq!(first["seq"], 1);
    assert!(first["time"].as_str().unwrap().ends_with('Z'));
}

#[test]
fn seeds_differ_between_files() {
    let (_a, pa) = log_with(0);
    let (_b, pb) = log_with(0);
    assert_ne!(lines(&pa)[0], lines(&pb)[0]);
}

#[test]
fn reopening_continues_the_chain() {
    let (_d, path) = log_with(3);
    let mut log = AuditLog::open(&path, BATCHED).unwrap();
    let r = log.append_now(&json!({"tool": "Read"})).unwrap();
    assert_eq!(r.seq, 4);
    drop(log);
    assert!(matches!(
        verify(&path).unwrap(),
        VerifyReport::Ok { records: 4, .. }
    ));
}

#[test]
fn log_owned_fields_are_replaced() {
    let (_d, path) = log_with(0);
    let mut log = AuditLog::open(&path, BATCHED).unwrap();
    log.append(&json!({"seq": 77, "prev": "x", "time": "then", "tool": "Read"}))
        .unwrap();
    drop(log);
    let rec = &tail(&path, 1).unwrap()[0];
    assert_eq!(rec["seq"], 1);
    assert_ne!(rec["prev"], "x");
    assert_ne!(rec["time"], "then");
    assert!(matches!(
        verify(&path).unwrap(),
        VerifyReport::Ok { records: 1, .. }
    ));
    assert!(
        AuditLog::open(&path, BATCHED)
            .unwrap()
            .append(&json!([1]))
            .is_err()
    );
}

#[test]
fn detects_changed_byte() {
    let (_d, path) = log_with(6);
    let mut all = lines(&path);
    // Line 4 (record 3): "echo 2" -> "echo 9", still valid JSON.
    let s = String::from_utf8(all[3].clone())
        .unwrap()
        .replace("echo 2", "echo 9");
    all[3] = s.into_bytes();
    write_lines(&path, &all);
    assert_eq!(broken(&path), (4, Break::Edit));
}

#[test]
fn detects_changed_byte_breaking_json() {
    let (_d, path) = log_with(6);
    let mut all = lines(&path);
    all[2][0] = b'[';
    write_lines(&path, &all);
    assert_eq!(broken(&path), (3, Break::Edit));
}

#[test]
fn detects_edited_header() {
    let (_d, path) = log_with(3);
    let mut all = lines(&path);
    let s = String::from_utf8(all[0].clone()).unwrap();
    let pos = s.find("\"seed\":\"").unwrap() + 8;
    let mut b = s.into_bytes();
    b[pos] = if b[pos] == b'0' { b'1' } else { b'0' };
    all[0] = b;
    write_lines(&path, &all);
    assert_eq!(broken(&path), (1, Break::Edit));
}

#[test]
fn detects_deleted_line() {
    let (_d, path) = log_with(6);
    let mut all = lines(&path);
    all.remove(3);
    write_lines(&path, &all);
    assert_eq!(broken(&path), (4, Break::Deletion));
}

#[test]
fn detects_swapped_lines() {
    let (_d, path) = log_with(6);
    let mut all = lines(&path);
    all.swap(2, 3);
    write_lines(&path, &all);
    assert_eq!(broken(&path), (3, Break::Reorder));
}

#[test]
fn detects_truncation_mid_line() {
    let (_d, path) = log_with(6);
    let len = std::fs::metadata(&path).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(len - 20)
        .unwrap();
    assert_eq!(broken(&path), (7, Break::TornTail));
}

#[test]
fn detects_dropped_header() {
    let (_d, path) = log_with(4);
    let mut all = lines(&path);
    all.remove(0);
    write_lines(&path, &all);
    assert_eq!(broken(&path), (1, Break::MissingHeader));
    std::fs::write(&path, b"").unwrap();
    assert_eq!(broken(&path), (1, Break::MissingHeader));
}

#[test]
fn torn_tail_is_repaired_by_the_next_append() {
    let (_d, path) = log_with(5);
    let before = lines(&path);
    // A writer died halfway through record 6.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(br#"{"seq":6,"time":"2026-"#).unwrap();
    drop(f);
    assert_eq!(broken(&path), (7, Break::TornTail));
    let mut log = AuditLog::open(&path, BATCHED).unwrap();
    let r = log.append_now(&json!({"tool": "Read"})).unwrap();
    assert_eq!(r.seq, 6);
    drop(log);
    assert!(matches!(
        verify(&path).unwrap(),
        VerifyReport::Ok { records: 6, .. }
    ));
    let after = lines(&path);
    assert_eq!(
        &after[..before.len()],
        &before[..],
        "earlier records are intact"
    );
}

#[test]
fn tail_and_export_filter() {
    let (_d, path) = log_with(12);
    let last = tail(&path, 3).unwrap();
    assert_eq!(
        last.iter()
            .map(|v| v["seq"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        vec![10, 11, 12]
    );
    let mut out = Vec::new();
    let filter = ExportFilter {
        session: Some("s0".into()),
        decision: Some("deny".into()),
        ..Default::default()
    };
    let n = export(&path, &filter, &mut out).unwrap();
    // i in 0..12, even and divisible by 3: 0, 6.
    assert_eq!(n, 2);
    let exported: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    assert_eq!(
        exported
            .iter()
            .map(|v| v["seq"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        vec![1, 7]
    );
    let future = ExportFilter {
        since: Some(std::time::SystemTime::now() + Duration::from_secs(60)),
        ..Default::default()
    };
    assert_eq!(export(&path, &future, &mut Vec::new()).unwrap(), 0);
    let past = ExportFilter {
        since: Some(std::time::SystemTime::now() - Duration::from_secs(60)),
        tool: Some("Bash".into()),
        ..Default::default()
    };
    assert_eq!(export(&path, &past, &mut Vec::new()).unwrap(), 12);
}

#[test]
fn concurrent_appenders_keep_one_chain() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("audit.jsonl");
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let path = path.clone();
            std::thread::spawn(move || {
                let mut log = AuditLog::open(&path, BATCHED).unwrap();
                for i in 0..250 {
                    log.append(&json!({"writer": t, "i": i})).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    // And a second process at the same time as this one.
    let mut child = spawn_appender(&path, Some(300));
    let mut log = AuditLog::open(&path, BATCHED).unwrap();
    for i in 0..300 {
        log.append(&json!({"writer": "parent", "i": i})).unwrap();
    }
    drop(log);
    assert!(child.wait().unwrap().success());
    match verify(&path).unwrap() {
        VerifyReport::Ok { records: 1600, .. } => {}
        other => panic!("{other:?}"),
    }
}

fn spawn_appender(path: &Path, count: Option<u64>) -> std::process::Child {
    spawn_appender_batched(path, count, 64)
}

fn spawn_appender_batched(path: &Path, count: Option<u64>, batch: u32) -> std::process::Child {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        "appender_child",
        "--include-ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("CORDON_TEST_AUDIT_CHILD", path)
    .env("CORDON_TEST_AUDIT_BATCH", batch.to_string())
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::null());
    if let Some(n) = count {
        cmd.env("CORDON_TEST_AUDIT_COUNT", n.to_string());
    }
    cmd.spawn().unwrap()
}

/// Not a test: the body of the child process the tests above start.
#[test]
#[ignore = "child process of other tests"]
fn appender_child() {
    let Some(path) = std::env::var_os("CORDON_TEST_AUDIT_CHILD") else {
        return;
    };
    let count: u64 = std::env::var("CORDON_TEST_AUDIT_COUNT")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(u64::MAX);
    // Large batches make each write big enough for a SIGKILL to cut it short.
    let batch = std::env::var("CORDON_TEST_AUDIT_BATCH")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(64);
    let durability = Durability::Batched {
        max_records: batch,
        max_delay: Duration::from_secs(3600),
    };
    let mut log = AuditLog::open(Path::new(&path), durability).unwrap();
    let filler = "x".repeat(3000);
    for i in 0..count {
        log.append(&json!({"writer": "child", "i": i, "pad": filler}))
            .unwrap();
        if i == u64::from(batch).max(100) {
            println!("RUNNING");
            std::io::stdout().flush().unwrap();
        }
    }
}

#[test]
fn kill_nine_mid_stream_loses_no_complete_record() {
    let mut torn = 0;
    for round in 0..10 {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("audit.jsonl");
        let mut child = spawn_appender_batched(&path, None, if round % 2 == 0 { 4000 } else { 64 });
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        while out.read_line(&mut line).unwrap() > 0 && !line.contains("RUNNING") {
            line.clear();
        }
        std::thread::sleep(Duration::from_millis(20 + round * 13));
        rustix::process::kill_process(
            rustix::process::Pid::from_child(&child),
            rustix::process::Signal::KILL,
        )
        .unwrap();
        child.wait().unwrap();
        let n_lines = lines(&path).len() as u64;
        let complete = match verify(&path).unwrap() {
            VerifyReport::Ok { records, .. } => records,
            VerifyReport::Broken {
                line,
                why: Break::TornTail,
                records_ok,
                ..
            } => {
                assert_eq!(line, n_lines, "only the last line may be torn");
                torn += 1;
                records_ok
            }
            other => panic!("round {round}: {other:?}"),
        };
        assert!(complete >= 64, "round {round}: only {complete} records");
        let before = std::fs::read(&path).unwrap();
        let keep = before.iter().rposition(|b| *b == b'\n').unwrap() + 1;
        let mut log = AuditLog::open(&path, BATCHED).unwrap();
        let r = log.append_now(&json!({"after": "crash"})).unwrap();
        drop(log);
        assert_eq!(r.seq, complete + 1);
        let VerifyReport::Ok { records, .. } = verify(&path).unwrap() else {
            panic!("round {round}")
        };
        assert_eq!(records, complete + 1);
        assert_eq!(&std::fs::read(&path).unwrap()[..keep], &before[..keep]);
    }
    eprintln!("kill -9 left a torn tail in {torn} of 10 rounds");
}

#[test]
fn file_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let (_d, path) = log_with(1);
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
}

#[test]
fn parses_times_and_ages() {
    use cordon_store::parse_time;
    let now = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
    assert_eq!(
        parse_time("2h", now).unwrap(),
        now - Duration::from_secs(7200)
    );
    assert_eq!(
        parse_time("1970-01-02T00:00:00Z", now).unwrap(),
        std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(86400)
    );
    assert_eq!(
        parse_time("1970-01-03", now).unwrap(),
        std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(2 * 86400)
    );
    let err = parse_time("yesterday-ish", now).unwrap_err();
    assert_eq!(
        err,
        cordon_store::TimeError::Unrecognized("yesterday-ish".into())
    );
    assert_eq!(
        err.to_string(),
        "\"yesterday-ish\" is neither an RFC 3339 time (2026-01-02T03:04:05Z) nor an age (15m, 2h, 3d)"
    );
}

#[test]
fn batched_records_wait_for_the_batch() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("audit.jsonl");
    let mut log = AuditLog::open(
        &path,
        Durability::Batched {
            max_records: 4,
            max_delay: Duration::from_secs(3600),
        },
    )
    .unwrap();
    for i in 0..3 {
        log.append(&json!({"i": i})).unwrap();
    }
    assert!(matches!(
        verify(&path).unwrap(),
        VerifyReport::Ok { records: 0, .. }
    ));
    log.append(&json!({"i": 3})).unwrap();
    assert!(matches!(
        verify(&path).unwrap(),
        VerifyReport::Ok { records: 4, .. }
    ));
    log.append(&json!({"i": 4})).unwrap();
    let r = log.flush().unwrap().unwrap();
    assert_eq!(r.seq, 5);
    assert_eq!(log.flush().unwrap(), None);
    log.append(&json!({"i": 5})).unwrap();
    drop(log);
    assert!(matches!(
        verify(&path).unwrap(),
        VerifyReport::Ok { records: 6, .. }
    ));
}

#[test]
fn verify_while_another_process_appends_sees_no_break() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("audit.jsonl");
    let mut child = spawn_appender(&path, None);
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while out.read_line(&mut line).unwrap() > 0 && !line.contains("RUNNING") {
        line.clear();
    }
    let mut last = 0;
    for _ in 0..20 {
        match verify(&path).unwrap() {
            VerifyReport::Ok { records, .. } => {
                assert!(records >= last);
                last = records;
            }
            other => panic!("{other:?}"),
        }
    }
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    child.wait().unwrap();
    assert!(last > 0);
}

#[test]
fn refuses_to_append_to_a_file_that_is_not_a_log() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("notes.txt");
    std::fs::write(&path, "my notes\nsecond line\n").unwrap();
    let err = AuditLog::open(&path, BATCHED).unwrap_err();
    assert!(
        err.to_string().contains("not a cordon audit header"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "my notes\nsecond line\n"
    );
}

/// A small deterministic generator, so the mutation test needs no extra dependency.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn any_changed_byte_before_the_last_line_is_detected() {
    let (_d, path) = log_with(8);
    let original = std::fs::read(&path).unwrap();
    let last_line_start = original[..original.len() - 1]
        .iter()
        .rposition(|b| *b == b'\n')
        .unwrap()
        + 1;
    let mut rng = Lcg(0x00c0_4d0e);
    for _ in 0..300 {
        let mut bytes = original.clone();
        let at = rng.below(last_line_start);
        let mut new = rng.below(256) as u8;
        if new == bytes[at] {
            new ^= 0x01;
        }
        bytes[at] = new;
        std::fs::write(&path, &bytes).unwrap();
        match verify(&path).unwrap() {
            VerifyReport::Broken { .. } => {}
            ok => panic!("byte {at} changed to {new:#x} went unnoticed: {ok:?}"),
        }
    }
}

#[test]
fn an_unsynced_record_is_in_the_file_and_chained_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let mut log = AuditLog::open(&path, Durability::FsyncEach).unwrap();
    log.append(&json!({"phase": "start", "n": 1})).unwrap();
    log.append_unsynced(&json!({"phase": "end", "n": 2}))
        .unwrap();
    // Read by another handle while the writer is still open: nothing waits in memory.
    let written = lines(&path);
    assert_eq!(written.len(), 3, "header, start, end");
    let end: Value = serde_json::from_slice(&written[2]).unwrap();
    assert_eq!(end["n"], 2);
    // The log's own durability is unchanged: the next append is synced and chained.
    log.append(&json!({"phase": "start", "n": 3})).unwrap();
    drop(log);
    assert!(matches!(
        verify(&path).unwrap(),
        VerifyReport::Ok { records: 3, .. }
    ));
}

#[test]
fn how_a_run_ended_is_read_from_its_record() {
    use cordon_store::{RunEnding, run_ending, summary_line};
    let end = |extra: serde_json::Value| {
        let mut r = serde_json::json!({"phase": "end", "decision": "allow", "tool": "bash"});
        for (k, v) in extra.as_object().unwrap() {
            r[k] = v.clone();
        }
        r
    };
    let ended = |text: &str, failed: bool| {
        Some(RunEnding {
            failed,
            text: text.into(),
        })
    };
    assert_eq!(
        run_ending(&end(serde_json::json!({"exit_status": 0}))),
        ended("exit 0", false)
    );
    assert_eq!(
        run_ending(&end(serde_json::json!({"exit_status": 3}))),
        ended("exit 3", true)
    );
    assert_eq!(
        run_ending(&end(serde_json::json!({"exit_status": 137}))),
        ended("signal 9", true)
    );
    assert_eq!(
        run_ending(&end(
            serde_json::json!({"exit_status": 124, "timed_out": true})
        )),
        ended("timed out", true)
    );
    assert_eq!(
        run_ending(&end(
            serde_json::json!({"exit_status": 1, "containment_blocked": [{"kind": "write"}]})
        )),
        ended("exit 1, containment blocked 1", true)
    );
    // A tool's own result, recorded by the hook or the service.
    let result = serde_json::json!({"kind": "result", "result": {"ok": false}});
    assert_eq!(run_ending(&result), ended("failed", true));
    let result = serde_json::json!({"kind": "result", "result": {"ok": true, "exit_status": 0}});
    assert_eq!(run_ending(&result), ended("exit 0", false));
    // A decision says nothing about a run.
    assert_eq!(run_ending(&serde_json::json!({"decision": "allow"})), None);
    let line = summary_line(&end(serde_json::json!({"exit_status": 3})));
    assert!(line.contains("allow (exit 3: FAILED)"), "{line}");
}
