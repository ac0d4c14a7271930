#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! Leases, remembered rules and pending approvals against a real SQLite file.
// Test helpers outside #[test] functions may unwrap and panic: a failure is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::os::unix::fs::PermissionsExt;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use cordon_store::{
    Answer, Answered, PendingState, Scope, Store, StoreAt, StoreErrorKind, StoreOptions,
};
use serde_json::json;

fn temp_store() -> (tempfile::TempDir, std::path::PathBuf, Store) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state").join("store.sqlite3");
    let store = Store::open(&path).unwrap();
    (dir, path, store)
}

#[test]
fn file_is_private_and_directory_created_0700() {
    let (_d, path, _s) = temp_store();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let dir_mode = std::fs::metadata(path.parent().unwrap())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(dir_mode, 0o700);
}

#[test]
fn refuses_symlinked_store() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("elsewhere");
    std::fs::write(&target, b"").unwrap();
    let link = dir.path().join("store.sqlite3");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let err = Store::open(&link).unwrap_err();
    assert!(
        matches!(err.kind(), StoreErrorKind::Permissions(_)),
        "{err}"
    );
}

cordon_store::both_backends! {
fn once_lease_is_single_use(b) {
    let s = b.open();
    let id = s.grant("fp-a", Scope::Once, None, "test").unwrap();
    let used = s.consume("fp-a", None).unwrap().unwrap();
    assert_eq!(used.lease, id);
    assert_eq!(used.scope, Scope::Once);
    // Replay fails.
    assert_eq!(s.consume("fp-a", None).unwrap(), None);
}
}

cordon_store::both_backends! {
fn different_fingerprint_does_not_match(b) {
    let s = b.open();
    s.grant("fp-a", Scope::Always, None, "test").unwrap();
    s.grant("fp-b", Scope::Session("s1".into()), None, "test")
        .unwrap();
    assert_eq!(s.consume("fp-c", Some("s1")).unwrap(), None);
    assert_eq!(s.consume("fp-a-", None).unwrap(), None);
    assert_eq!(s.consume("", None).unwrap(), None);
    // A fingerprint made under another policy version is simply a different string.
    assert!(s.consume("fp-a", None).unwrap().is_some());
}
}

cordon_store::both_backends! {
fn session_lease_only_for_that_session(b) {
    let s = b.open();
    s.grant("fp", Scope::Session("s1".into()), None, "test")
        .unwrap();
    assert_eq!(s.consume("fp", None).unwrap(), None);
    assert_eq!(s.consume("fp", Some("s2")).unwrap(), None);
    assert_eq!(s.consume("fp", Some("")).unwrap(), None);
    for _ in 0..3 {
        let u = s.consume("fp", Some("s1")).unwrap().unwrap();
        assert_eq!(u.scope, Scope::Session("s1".into()));
    }
}
}

cordon_store::both_backends! {
fn empty_session_lease_is_refused(b) {
    let s = b.open();
    let err = s
        .grant("fp", Scope::Session(String::new()), None, "x")
        .unwrap_err();
    assert!(matches!(err.kind(), StoreErrorKind::Invalid(_)));
    assert!(s.grant("", Scope::Once, None, "x").is_err());
}
}

cordon_store::both_backends! {
fn leases_expire(b) {
    let s = b.open();
    // Long enough that a loaded machine still consumes it in time.
    s.grant("fp", Scope::Always, Some(Duration::from_millis(1000)), "t")
        .unwrap();
    s.grant("fp0", Scope::Once, Some(Duration::ZERO), "t")
        .unwrap();
    assert_eq!(
        s.consume("fp0", None).unwrap(),
        None,
        "a zero ttl is already expired"
    );
    assert!(s.consume("fp", None).unwrap().is_some());
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(s.consume("fp", None).unwrap(), None);
    assert!(s.leases().unwrap().is_empty());
}
}

cordon_store::both_backends! {
fn revoked_lease_grants_nothing(b) {
    let s = b.open();
    let id = s.grant("fp", Scope::Always, None, "t").unwrap();
    assert!(s.revoke(id).unwrap());
    assert!(!s.revoke(id).unwrap());
    assert_eq!(s.consume("fp", None).unwrap(), None);
}
}

cordon_store::both_backends! {
fn approvals_survive_restart(b) {
    {
        let s = b.open();
        s.grant("fp-once", Scope::Once, None, "t").unwrap();
        s.grant("fp-sess", Scope::Session("s1".into()), None, "t")
            .unwrap();
        s.remember_rule("Bash(cargo test:*)", "bash").unwrap();
        s.add_pending(
            "fp-p",
            Some("s1"),
            &json!({"tool": "Bash"}),
            &json!({"decision": "ask"}),
            None,
        )
        .unwrap();
    }
    let s = b.open();
    assert!(s.consume("fp-once", None).unwrap().is_some());
    assert!(s.consume("fp-sess", Some("s1")).unwrap().is_some());
    assert_eq!(s.rules().unwrap()[0].rule, "Bash(cargo test:*)");
    assert_eq!(s.pending().unwrap().len(), 1);
    drop(s);
    // The once lease stays spent after another restart.
    let s = b.open();
    assert_eq!(s.consume("fp-once", None).unwrap(), None);
}
}

cordon_store::both_backends! {
/// Many connections race for one once-lease, round after round: exactly one wins.
fn concurrent_consumers_exactly_one_wins(b) {
    let setup = b.open();
    let at = b.at();
    const THREADS: usize = 16;
    const ROUNDS: usize = 50;
    for round in 0..ROUNDS {
        let fp = format!("race-{round}");
        setup.grant(&fp, Scope::Once, None, "race").unwrap();
        let barrier = Arc::new(Barrier::new(THREADS));
        let handles: Vec<_> = (0..THREADS)
            .map(|_| {
                let (at, fp, barrier) = (at.clone(), fp.clone(), barrier.clone());
                std::thread::spawn(move || {
                    let opts = StoreOptions {
                        busy_timeout: Duration::from_secs(30),
                    };
                    let s = match &at {
                        StoreAt::File(p) => Store::open_with(p, &opts).unwrap(),
                        StoreAt::Postgres(t) => Store::open_pg(t, &opts).unwrap(),
                    };
                    barrier.wait();
                    s.consume(&fp, None).unwrap().is_some()
                })
            })
            .collect();
        let wins = handles
            .into_iter()
            .filter(|_| true)
            .map(|h| h.join().unwrap())
            .filter(|w| *w)
            .count();
        assert_eq!(
            wins, 1,
            "round {round}: {wins} consumers won one once-lease"
        );
    }
}
}

cordon_store::both_backends! {
fn remembered_rules_dedupe(b) {
    let s = b.open();
    s.remember_rule_by("Read(./src/main.rs)", "read", "alice")
        .unwrap();
    s.remember_rule_by("Read(./src/main.rs)", "read", "bob")
        .unwrap();
    let rules = s.rules().unwrap();
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0].created_by, "alice");
    assert!(s.remember_rule("  ", "read").is_err());
    assert!(s.forget_rule("Read(./src/main.rs)").unwrap());
    assert!(s.rules().unwrap().is_empty());
}
}

cordon_store::both_backends! {
fn pending_approve_creates_once_lease(b) {
    let s = b.open();
    let a = cordon_store::pg_test::asked("make", Some("s1"), None);
    let fp = a.fingerprint.as_str();
    let id = s
        .add_pending(
            fp,
            Some("s1"),
            &a.request,
            &a.verdict,
            Some("Bash(make)"),
        )
        .unwrap();
    assert_eq!(
        s.consume(fp, Some("s1")).unwrap(),
        None,
        "pending grants nothing"
    );
    let listed = s.pending().unwrap();
    assert_eq!(listed[0].id, id);
    assert_eq!(listed[0].request["input"]["command"], "make");
    assert_eq!(listed[0].suggestion.as_deref(), Some("Bash(make)"));
    let Answered::Approved(ok) = s.answer(id, Answer::Approve).unwrap() else {
        panic!("expected approval")
    };
    assert_eq!(ok.request().id, id);
    assert!(s.pending().unwrap().is_empty());
    assert_eq!(s.approval(id).unwrap().1, PendingState::Approved);
    let used = s.consume(fp, Some("s1")).unwrap().unwrap();
    assert_eq!(used.lease, ok.lease());
    assert_eq!(
        s.consume(fp, Some("s1")).unwrap(),
        None,
        "approval is single-use"
    );
    // Answering twice fails and creates nothing.
    let err = s.answer(id, Answer::Deny).unwrap_err();
    assert!(
        matches!(err.kind(), StoreErrorKind::AlreadyAnswered { .. }),
        "{err}"
    );
    assert_eq!(s.consume(fp, Some("s1")).unwrap(), None);
}
}

cordon_store::both_backends! {
fn a_call_asked_again_while_waiting_is_the_same_pending_approval(b) {
    let s = b.open();
    let req = json!({"tool": "Bash", "input": {"command": "make"}});
    let add = |fp: &str, session: Option<&str>, op: Option<&str>| {
        s.add_pending_for(fp, session, op, &req, &json!({"decision": "ask"}), None)
            .unwrap()
    };
    let first = add("fp", Some("s1"), None);
    for _ in 0..50 {
        assert_eq!(add("fp", Some("s1"), None), first);
    }
    assert_eq!(s.pending().unwrap().len(), 1, "one approval for the human");
    // Another call, session or operation is another approval.
    let others = [
        add("fp2", Some("s1"), None),
        add("fp", Some("s2"), None),
        add("fp", None, None),
        add("fp", Some("s1"), Some("op-1")),
    ];
    for (i, id) in others.iter().enumerate() {
        assert_ne!(*id, first);
        assert!(others[..i].iter().all(|o| o != id));
    }
    assert_eq!(add("fp", Some("s1"), Some("op-1")), others[3]);
    // The same fingerprint with another verdict (a link now resolving elsewhere) is
    // another approval: the human sees what will run.
    let moved = s
        .add_pending_for(
            "fp",
            Some("s1"),
            None,
            &req,
            &json!({"decision": "ask", "reason": "resolves to /elsewhere"}),
            None,
        )
        .unwrap();
    assert_ne!(moved, first);
    s.answer(moved, Answer::Deny).unwrap();
    // Once answered, the same call asked later is a new approval.
    s.answer(first, Answer::Deny).unwrap();
    let again = add("fp", Some("s1"), None);
    assert_ne!(again, first);
    assert_eq!(s.pending().unwrap().len(), 5);
}
}

#[test]
fn a_connection_knows_when_its_file_was_replaced() {
    let (dir, path, s) = temp_store();
    assert!(s.is_current());
    let aside = dir.path().join("aside.sqlite3");
    std::fs::rename(&path, &aside).unwrap();
    assert!(!s.is_current(), "moved away");
    drop(Store::open(&path).unwrap());
    assert!(!s.is_current(), "another file at the path");
    std::fs::rename(&aside, &path).unwrap();
    assert!(s.is_current(), "its own file back");
}

cordon_store::both_backends! {
fn pending_deny_grants_nothing(b) {
    let s = b.open();
    let id = s
        .add_pending("fp", None, &json!({}), &json!({}), None)
        .unwrap();
    let p = s.get_pending(id).unwrap();
    let denied = p.deny(&s).unwrap();
    assert_eq!(denied.request().id, id);
    assert_eq!(s.approval(id).unwrap().1, PendingState::Denied);
    assert_eq!(s.consume("fp", None).unwrap(), None);
    assert!(matches!(
        s.answer(cordon_store::PendingId(999), Answer::Approve)
            .unwrap_err()
            .kind(),
        StoreErrorKind::NoSuchPending(999)
    ));
}
}

cordon_store::both_backends! {
/// Many connections answer one pending approval at once: exactly one answer is taken.
fn concurrent_answers_exactly_one_wins(b) {
    let s = b.open();
    let id = s
        .add_pending("fp", None, &json!({}), &json!({}), None)
        .unwrap();
    let barrier = Arc::new(Barrier::new(8));
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let (at, barrier) = (b.at(), barrier.clone());
            std::thread::spawn(move || {
                let s = Store::open_at(&at).unwrap();
                barrier.wait();
                let answer = if i % 2 == 0 {
                    Answer::Approve
                } else {
                    Answer::Deny
                };
                s.answer(id, answer).is_ok()
            })
        })
        .collect();
    let ok = handles
        .into_iter()
        .map(|h| h.join().unwrap())
        .filter(|x| *x)
        .count();
    assert_eq!(ok, 1);
    let leases = s.leases().unwrap();
    assert!(leases.len() <= 1);
}
}

// ---- fail closed -------------------------------------------------------------------

fn assert_names_file(err: &cordon_store::StoreError, path: &std::path::Path) {
    let msg = err.to_string();
    assert!(msg.contains(&path.display().to_string()), "{msg}");
}

#[test]
fn locked_store_grants_nothing() {
    let (_d, path, s) = temp_store();
    s.grant("fp", Scope::Always, None, "t").unwrap();
    // Another connection holds the write lock.
    let holder = rusqlite::Connection::open(&path).unwrap();
    holder
        .execute_batch("BEGIN IMMEDIATE; UPDATE leases SET uses = uses;")
        .unwrap();
    let opts = StoreOptions {
        busy_timeout: Duration::from_millis(100),
    };
    let other = Store::open_with(&path, &opts).unwrap();
    let err = other.consume("fp", None).unwrap_err();
    assert!(matches!(err.kind(), StoreErrorKind::Locked), "{err}");
    assert_names_file(&err, &path);
    assert!(err.to_string().contains("nothing was granted"));
    // The flow refuses the same way.
    let ctx = cordon_store::AskContext {
        fingerprint: "fp".into(),
        ..Default::default()
    };
    assert!(
        cordon_store::resolve_ask(
            &other,
            &ctx,
            &mut cordon_store::NoPrompter,
            cordon_store::NoHuman::Deny
        )
        .is_err()
    );
    holder.execute_batch("ROLLBACK").unwrap();
    assert!(other.consume("fp", None).unwrap().is_some());
}

#[test]
fn corrupt_store_grants_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite3");
    let garbage: Vec<u8> = (0..8192u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&path, garbage).unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err.kind(), StoreErrorKind::Corrupt(_)), "{err}");
    assert_names_file(&err, &path);
    assert!(err.to_string().contains("move it aside"));
}

#[test]
fn damaged_pages_grant_nothing() {
    let (_d, path, s) = temp_store();
    for i in 0..200 {
        s.grant(&format!("fp{i}"), Scope::Always, None, &"x".repeat(200))
            .unwrap();
    }
    drop(s);
    // Overwrite the middle of the file (past the header page) with garbage.
    let mut bytes = std::fs::read(&path).unwrap();
    assert!(bytes.len() > 16384);
    for b in &mut bytes[4096..12288] {
        *b = 0xA5;
    }
    std::fs::write(&path, bytes).unwrap();
    let result = Store::open(&path).and_then(|s| s.consume("fp150", None));
    match result {
        Err(err) => {
            assert!(matches!(err.kind(), StoreErrorKind::Corrupt(_)), "{err}");
            assert_names_file(&err, &path);
        }
        Ok(found) => panic!("a damaged store answered {found:?}"),
    }
}

#[test]
fn foreign_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite3");
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE t (x);")
        .unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err.kind(), StoreErrorKind::Corrupt(_)), "{err}");
}

#[test]
fn newer_schema_is_refused() {
    let (_d, path, s) = temp_store();
    s.grant("fp", Scope::Always, None, "t").unwrap();
    drop(s);
    rusqlite::Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(
        matches!(
            err.kind(),
            StoreErrorKind::NewerSchema {
                found: 99,
                supported: cordon_store::SCHEMA_VERSION
            }
        ),
        "{err}"
    );
    assert_names_file(&err, &path);
    assert!(err.to_string().contains("upgrade cordon"));
}

/// A store written by the first schema (a lease and a pending request) opens, migrates,
/// and keeps what it held; the new columns start empty.
#[test]
fn a_version_1_store_migrates_and_keeps_its_leases() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite3");
    let v1 = r#"
        CREATE TABLE leases (id INTEGER PRIMARY KEY AUTOINCREMENT, fingerprint TEXT NOT NULL,
            scope TEXT NOT NULL, session TEXT, created_ms INTEGER NOT NULL, expires_ms INTEGER,
            used_at_ms INTEGER, uses INTEGER NOT NULL DEFAULT 0, answer TEXT NOT NULL,
            revoked INTEGER NOT NULL DEFAULT 0);
        CREATE TABLE rules (id INTEGER PRIMARY KEY AUTOINCREMENT, rule TEXT NOT NULL UNIQUE,
            tool_kind TEXT NOT NULL, created_ms INTEGER NOT NULL, created_by TEXT NOT NULL);
        CREATE TABLE pending (id INTEGER PRIMARY KEY AUTOINCREMENT, fingerprint TEXT NOT NULL,
            session TEXT, request TEXT NOT NULL, verdict TEXT NOT NULL, suggestion TEXT,
            created_ms INTEGER NOT NULL, state TEXT NOT NULL DEFAULT 'pending',
            answered_ms INTEGER, lease_id INTEGER REFERENCES leases (id));
        INSERT INTO leases (fingerprint, scope, created_ms, answer) VALUES ('fp-old', 'once', 1, 'old');
        INSERT INTO pending (fingerprint, request, verdict, created_ms) VALUES ('fp-p', '{}', '{}', 1);
        PRAGMA user_version = 1;
        PRAGMA application_id = 1668248164;
    "#;
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(v1)
        .unwrap();
    let s = Store::open(&path).unwrap();
    let p = s.pending().unwrap();
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].operation_id, None);
    assert_eq!(
        p[0].machine, None,
        "a request from before machines names none"
    );
    assert_eq!(s.add_decisions("m", "log", &[(1, "{}")]).unwrap(), 1);
    // An old once-lease is bound to no operation: any call with that fingerprint gets it.
    assert!(
        s.consume_for("fp-old", None, Some("op-1"))
            .unwrap()
            .is_some()
    );
    assert!(s.claim_operation("op-1", "check", "fp").unwrap());
    assert!(!s.claim_operation("op-1", "check", "fp").unwrap());
}

fn require_sandbox() -> bool {
    std::env::var_os("CORDON_REQUIRE_SANDBOX_TESTS").is_some_and(|v| v == "1")
}

#[test]
fn full_disk_grants_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("tiny");
    std::fs::create_dir(&mnt).unwrap();
    let status = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs"])
        .arg(&mnt)
        .stderr(std::process::Stdio::null())
        .status();
    if !status.is_ok_and(|s| s.success()) {
        assert!(
            !require_sandbox(),
            "cannot mount a tmpfs to simulate a full disk"
        );
        eprintln!(
            "skipped: mounting a tmpfs needs root (set CORDON_REQUIRE_SANDBOX_TESTS=1 to make this fatal)"
        );
        return;
    }
    struct Unmount(std::path::PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(&self.0).status();
        }
    }
    let _guard = Unmount(mnt.clone());
    let path = mnt.join("store.sqlite3");
    let s = Store::open(&path).unwrap();
    s.grant("before", Scope::Once, None, "t").unwrap();
    // Fill the file system.
    let filler = mnt.join("filler");
    let mut f = std::fs::File::create(&filler).unwrap();
    let block = vec![0u8; 4096];
    use std::io::Write;
    while f.write_all(&block).is_ok() {}
    drop(f);
    let mut failures = 0;
    for i in 0..200 {
        match s.grant(&format!("fp{i}"), Scope::Always, None, &"n".repeat(1000)) {
            Ok(_) => {}
            Err(err) => {
                assert!(
                    matches!(err.kind(), StoreErrorKind::Full | StoreErrorKind::Io(_)),
                    "{err}"
                );
                assert_names_file(&err, &path);
                failures += 1;
                break;
            }
        }
    }
    assert_eq!(failures, 1, "grants kept succeeding on a full disk");
    // Whatever the store says now, it must not grant from a failed write.
    let last = s.consume("fp199", None);
    assert!(!matches!(last, Ok(Some(_))), "{last:?}");
    // Freeing space lets it work again.
    std::fs::remove_file(&filler).unwrap();
    assert!(s.consume("before", None).unwrap().is_some());
}

#[test]
fn short_lived_connections_keep_the_wal_short_and_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite3");
    let wal = dir.path().join("store.sqlite3-wal");
    // Each claim in a connection of its own, as hook calls are.
    let mut longest = 0;
    for i in 0..400 {
        let s = Store::open(&path).unwrap();
        assert!(s.claim_operation(&format!("op-{i}"), "hook", "fp").unwrap());
        drop(s);
        let len = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
        longest = longest.max(len);
        if i == 0 {
            assert!(
                len > 0,
                "a small WAL is left in place, not checkpointed on close"
            );
        }
    }
    // Trimmed once past 64 pages; one connection adds a few pages at most.
    assert!(longest < 80 * 4096, "the WAL grew to {longest} bytes");
    let s = Store::open(&path).unwrap();
    for i in 0..400 {
        assert!(
            !s.claim_operation(&format!("op-{i}"), "hook", "fp").unwrap(),
            "op-{i} was lost"
        );
    }
}

/// A claim, which every permitted hook call makes, adds one page to the WAL (the table
/// is keyed by its primary key alone), not a row page and an index page.
#[test]
fn a_claim_writes_about_one_page() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite3");
    let wal = dir.path().join("store.sqlite3-wal");
    // Fill a few pages first, so that the claims below land in an ordinary B-tree.
    {
        let s = Store::open(&path).unwrap();
        for i in 0..200 {
            assert!(
                s.claim_operation(&format!("toolu_seed_{i:04}"), "hook", "fp")
                    .unwrap()
            );
        }
    }
    // The last connection to close (this one) checkpoints and removes the WAL.
    rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    let before = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
    // Fewer than would reach the trim threshold even at two pages a claim.
    let claims = 30u64;
    for i in 0..claims {
        let s = Store::open(&path).unwrap();
        assert!(
            s.claim_operation(&format!("toolu_{i:04}_x"), "hook", "fp")
                .unwrap()
        );
    }
    let after = std::fs::metadata(&wal).unwrap().len();
    // A frame is a 24-byte header and a 4 KiB page.
    let frames = (after - before) / (4096 + 24);
    assert!(
        frames < claims * 3 / 2,
        "{claims} claims wrote {frames} WAL frames (a row and an index entry would be {})",
        claims * 2
    );
}

/// A store of schema 6 (operation claims in a table with a row id) migrates with its
/// claims kept.
#[test]
fn a_version_6_store_keeps_its_claims() {
    let (_d, path, s) = temp_store();
    assert!(s.claim_operation("op-old", "hook", "fp").unwrap());
    drop(s);
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(
            "CREATE TABLE operations_v6 (
                 operation_id TEXT NOT NULL CHECK (length(operation_id) > 0),
                 surface TEXT NOT NULL, fingerprint TEXT NOT NULL, at_ms INTEGER NOT NULL,
                 PRIMARY KEY (operation_id, surface));
             INSERT INTO operations_v6 SELECT * FROM operations;
             DROP TABLE operations;
             ALTER TABLE operations_v6 RENAME TO operations;
             DROP TABLE operations_pruned;
             ALTER TABLE pending DROP COLUMN suggestions;
             ALTER TABLE leases DROP COLUMN bound_session;
             ALTER TABLE leases DROP COLUMN any_session;
             DROP TABLE audit_heads; DROP TABLE audit_export;
             ALTER TABLE pending DROP COLUMN machine; DROP TABLE decisions;
             PRAGMA user_version = 6;",
        )
        .unwrap();
    let s = Store::open(&path).unwrap();
    assert!(
        !s.claim_operation("op-old", "hook", "fp").unwrap(),
        "the old claim was lost"
    );
    assert!(s.claim_operation("op-new", "hook", "fp").unwrap());
    let sql: String = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = 'operations'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(sql.contains("WITHOUT ROWID"), "{sql}");
}

/// Processes that start together (a run and `cordon slots show`, two hooks of one
/// harness) may each be the first to open a state directory's store: every one of them
/// opens it, none fails for the other's creating it.
#[test]
fn a_fresh_store_opened_by_many_at_once_opens_for_each() {
    for round in 0..20 {
        let dir = tempfile::tempdir().unwrap();
        let path = Arc::new(dir.path().join("store.sqlite3"));
        let n = 8;
        let barrier = Arc::new(Barrier::new(n));
        let handles: Vec<_> = (0..n)
            .map(|_| {
                let (path, barrier) = (path.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    Store::open(&path).map(|_| ()).map_err(|e| e.to_string())
                })
            })
            .collect();
        for h in handles {
            if let Err(e) = h.join().unwrap() {
                panic!("round {round}: a concurrent first open failed: {e}");
            }
        }
    }
}
