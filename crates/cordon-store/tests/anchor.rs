#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! Issue 36: an audit log anchored in the store and closed by signatures. An attacker
//! with write access to the log file cuts its end, puts back an older copy, replaces it,
//! or rewrites a record and recomputes the chain; each is found, with the key where the
//! chain alone cannot find it.
// Test helpers outside #[test] functions may unwrap and panic: a failure is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use cordon_store::{
    AuditKey, AuditLog, AuditPublicKey, Break, Durability, Store, VerifyOptions, VerifyReport,
    key_path_for_store, verify, verify_with,
};
use serde_json::json;

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

fn append(s: &Scene, n: u64, durability: Durability) {
    let mut log = AuditLog::open_anchored(&s.log, durability, &s.store).unwrap();
    for i in 0..n {
        log.append(&json!({"tool": "Bash", "decision": "allow", "input": {"command": format!("echo {i}")}}))
            .unwrap();
    }
    log.flush().unwrap();
}

fn public(s: &Scene) -> AuditPublicKey {
    AuditKey::load(&key_path_for_store(&s.store))
        .unwrap()
        .public()
}

/// The full check: anchored in the scene's store, signatures checked with its key.
fn check(s: &Scene, key: bool) -> VerifyReport {
    let store = Store::open(&s.store).unwrap();
    let k = public(s);
    let opts = VerifyOptions {
        store: Some(&store),
        key: key.then_some(&k),
    };
    verify_with(&s.log, &opts).unwrap().report
}

/// What an attacker who can write the store too does: anchor the file as it is now.
fn reanchor_to_file(s: &Scene) {
    let store = Store::open(&s.store).unwrap();
    let VerifyReport::Ok { head, records } = verify(&s.log).unwrap() else {
        panic!()
    };
    let header = lines(&s.log)[0].clone();
    store
        .reanchor_audit(
            &cordon_store::anchor_key(&s.log),
            &cordon_store::AuditHead {
                log_id: blake3::hash(header.as_bytes()).to_hex().to_string(),
                seq: records,
                hash: head,
            },
            std::fs::metadata(&s.log).unwrap().len(),
        )
        .unwrap();
}

fn broken(report: VerifyReport) -> (Break, String) {
    match report {
        VerifyReport::Broken { why, detail, .. } => (why, detail),
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

/// Recompute every `prev` from the line before it, as an attacker with the public hash
/// does after editing a record.
fn rechain(lines: &mut [String]) {
    for i in 1..lines.len() {
        let prev = blake3::hash(lines[i - 1].as_bytes()).to_hex().to_string();
        let at = lines[i].find("\"prev\":\"").unwrap() + 8;
        lines[i].replace_range(at..at + 64, &prev);
    }
}

#[test]
fn an_anchored_signed_log_verifies_with_and_without_the_key() {
    let s = scene();
    append(&s, 10, Durability::FsyncEach);
    append(&s, 5, Durability::FsyncEach);
    assert!(matches!(
        check(&s, true),
        VerifyReport::Ok { records: 15, .. }
    ));
    assert!(matches!(
        check(&s, false),
        VerifyReport::Ok { records: 15, .. }
    ));
    // The key stays out of every record and is private.
    let key_text = std::fs::read_to_string(key_path_for_store(&s.store)).unwrap();
    let log_text = std::fs::read_to_string(&s.log).unwrap();
    assert!(!log_text.contains(key_text.trim()));
    let mode = std::fs::metadata(key_path_for_store(&s.store)).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o777,
        0o600
    );
}

#[test]
fn issue_36_truncation_at_a_record_boundary_is_found() {
    let s = scene();
    append(&s, 51, Durability::FsyncEach);
    let mut all = lines(&s.log);
    all.truncate(all.len() - 5);
    write_lines(&s.log, &all);
    // The chain alone still verifies: that is the issue.
    assert!(matches!(
        verify(&s.log).unwrap(),
        VerifyReport::Ok { records: 46, .. }
    ));
    let (why, detail) = broken(check(&s, false));
    assert_eq!(why, Break::Truncation);
    assert!(
        detail.contains("ends at record 46") && detail.contains("record 51"),
        "{detail}"
    );
}

#[test]
fn a_tail_cut_mid_record_is_found_too() {
    let s = scene();
    append(&s, 8, Durability::FsyncEach);
    let text = std::fs::read(&s.log).unwrap();
    std::fs::write(&s.log, &text[..text.len() - 40]).unwrap();
    assert!(matches!(broken(check(&s, false)).0, Break::TornTail));
    // The next writer cuts the torn line, but the anchor remembers what was there.
    append(&s, 1, Durability::FsyncEach);
    let (why, detail) = broken(check(&s, true));
    assert_eq!(why, Break::Anchor);
    assert!(
        detail.contains("ended at record 7") && detail.contains("record 8"),
        "{detail}"
    );
}

#[test]
fn a_log_replaced_by_an_older_copy_is_found() {
    let s = scene();
    append(&s, 10, Durability::FsyncEach);
    let old = std::fs::read(&s.log).unwrap();
    append(&s, 4, Durability::FsyncEach);
    std::fs::write(&s.log, &old).unwrap();
    let (why, _) = broken(check(&s, true));
    assert_eq!(why, Break::Truncation);
}

#[test]
fn a_rollback_that_writers_then_extend_past_the_anchor_is_still_found() {
    let s = scene();
    append(&s, 10, Durability::FsyncEach);
    let old = std::fs::read(&s.log).unwrap();
    append(&s, 3, Durability::FsyncEach);
    std::fs::write(&s.log, &old).unwrap();
    // Enough appends to pass the anchored seq: the new chain is valid and signed, but a
    // writer saw the file behind the anchor and the store kept it.
    append(
        &s,
        6,
        Durability::Batched {
            max_records: 100,
            max_delay: Duration::from_secs(60),
        },
    );
    let (why, detail) = broken(check(&s, true));
    assert_eq!(why, Break::Anchor);
    assert!(detail.contains("older copy"), "{detail}");
}

#[test]
fn a_head_that_does_not_match_is_found() {
    let s = scene();
    append(&s, 6, Durability::FsyncEach);
    let mut all = lines(&s.log);
    let last = all.len() - 1;
    all[last] = all[last].replace("echo 5", "echo X");
    write_lines(&s.log, &all);
    let (why, detail) = broken(check(&s, false));
    assert_eq!(why, Break::HeadMismatch);
    assert!(detail.contains("record 6"), "{detail}");
}

#[test]
fn a_log_deleted_and_begun_afresh_is_found() {
    let s = scene();
    append(&s, 5, Durability::FsyncEach);
    std::fs::remove_file(&s.log).unwrap();
    // Before any writer: the file is gone.
    let (why, detail) = broken(check(&s, false));
    assert_eq!(why, Break::Replaced);
    assert!(detail.contains("gone"), "{detail}");
    // A writer then starts a new log.
    append(&s, 7, Durability::FsyncEach);
    let (why, detail) = broken(check(&s, true));
    assert_eq!(why, Break::Anchor);
    assert!(detail.contains("deleted or replaced"), "{detail}");
}

#[test]
fn another_log_put_in_its_place_is_found() {
    let s = scene();
    append(&s, 5, Durability::FsyncEach);
    let other = scene();
    append(&other, 9, Durability::FsyncEach);
    std::fs::copy(&other.log, &s.log).unwrap();
    let (why, _) = broken(check(&s, false));
    assert_eq!(why, Break::Replaced);
}

#[test]
fn issue_36_a_rewrite_with_the_chain_recomputed_fails_only_with_the_key() {
    let s = scene();
    append(&s, 10, Durability::FsyncEach);
    let mut all = lines(&s.log);
    all[3] = all[3].replace("echo 2", "echo ?");
    rechain(&mut all);
    write_lines(&s.log, &all);
    // The chain and the record count are intact; the anchored head hash is not.
    assert!(matches!(
        verify(&s.log).unwrap(),
        VerifyReport::Ok { records: 10, .. }
    ));
    assert_eq!(broken(check(&s, false)).0, Break::HeadMismatch);
    // An attacker who also rewrites the anchor (the store is theirs too) passes every
    // check but the key's.
    reanchor_to_file(&s);
    assert!(matches!(check(&s, false), VerifyReport::Ok { .. }));
    let (why, detail) = broken(check(&s, true));
    assert_eq!(why, Break::BadSignature);
    assert!(detail.contains("record 3"), "{detail}");
}

#[test]
fn a_rewrite_that_strips_or_forges_the_signatures_fails_with_the_key() {
    let s = scene();
    append(&s, 6, Durability::FsyncEach);
    let original = lines(&s.log);
    // Second spelling: drop every signature and recompute the chain.
    let mut stripped: Vec<String> = original
        .iter()
        .map(|l| match l.find(",\"sig\":\"") {
            Some(at) => format!("{}}}", &l[..at]),
            None => l.clone(),
        })
        .collect();
    stripped[2] = stripped[2].replace("echo 1", "echo !");
    rechain(&mut stripped);
    write_lines(&s.log, &stripped);
    reanchor_to_file(&s);
    assert!(matches!(check(&s, false), VerifyReport::Ok { .. }));
    let (why, _) = broken(check(&s, true));
    assert_eq!(why, Break::Unsigned);
    // Third: sign the rewritten log with a key of the attacker's own.
    let thief = scene();
    append(&thief, 6, Durability::FsyncEach);
    std::fs::copy(&thief.log, &s.log).unwrap();
    reanchor_to_file(&s);
    assert!(matches!(check(&s, false), VerifyReport::Ok { .. }));
    let (why, _) = broken(check(&s, true));
    assert_eq!(why, Break::BadSignature);
}

#[test]
fn batched_appends_sign_once_per_batch_and_the_last_record_is_signed() {
    let s = scene();
    append(
        &s,
        50,
        Durability::Batched {
            max_records: 20,
            max_delay: Duration::from_secs(60),
        },
    );
    let signed = lines(&s.log)
        .iter()
        .filter(|l| l.contains("\"sig\":\""))
        .count();
    assert_eq!(signed, 3, "batches of 20, 20 and 10");
    assert!(lines(&s.log).last().unwrap().contains("\"sig\":\""));
    assert!(matches!(
        check(&s, true),
        VerifyReport::Ok { records: 50, .. }
    ));
}

#[test]
fn a_caller_cannot_supply_its_own_sig_field() {
    let s = scene();
    let mut log = AuditLog::open_anchored(&s.log, Durability::FsyncEach, &s.store).unwrap();
    log.append(&json!({"tool": "Bash", "sig": "00"})).unwrap();
    drop(log);
    assert!(!lines(&s.log)[1].contains("\"sig\":\"00\""));
    assert!(matches!(
        check(&s, true),
        VerifyReport::Ok { records: 1, .. }
    ));
}

/// One connection to the store serves a one-shot surface's decisions and its log's anchor:
/// a connection lent to the anchored log moves the head, and comes back to the lender;
/// one to another store file, or lent to a log that is not anchored, is handed back at
/// once (the anchor never moves in a store it does not belong to).
#[test]
fn a_lent_store_connection_anchors_the_log_and_comes_back() {
    let s = scene();
    append(&s, 1, Durability::FsyncEach);
    let key = cordon_store::anchor_key(&s.log);
    let mut log = AuditLog::open_anchored(&s.log, Durability::FsyncEach, &s.store).unwrap();
    assert!(log.lend_store(Store::open(&s.store).unwrap()).is_none());
    log.append(&json!({"tool": "Bash", "decision": "allow", "input": {"command": "lent"}}))
        .unwrap();
    let back = log.take_store().expect("the lent connection comes back");
    assert_eq!(back.audit_anchor(&key).unwrap().unwrap().head.seq, 2);
    assert!(log.take_store().is_none(), "given back once");
    assert!(matches!(
        check(&s, true),
        VerifyReport::Ok { records: 2, .. }
    ));

    // A connection to another store file is not the anchor's.
    let other = s.store.with_file_name("other.sqlite3");
    let mut log = AuditLog::open_anchored(&s.log, Durability::FsyncEach, &s.store).unwrap();
    let refused = log.lend_store(Store::open(&other).unwrap());
    assert_eq!(
        refused.map(|st| st.path().to_path_buf()),
        Some(other.clone())
    );
    log.append(&json!({"tool": "Bash", "decision": "allow", "input": {"command": "own"}}))
        .unwrap();
    assert!(
        Store::open(&other)
            .unwrap()
            .audit_anchor(&key)
            .unwrap()
            .is_none()
    );
    assert_eq!(back.audit_anchor(&key).unwrap().unwrap().head.seq, 3);

    // Nor is a log without an anchor a place for one.
    let mut plain = AuditLog::open(&s.log, Durability::FsyncEach).unwrap();
    assert!(plain.lend_store(back).is_some());
}
