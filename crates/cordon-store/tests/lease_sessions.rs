#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code
//! Once-leases bound to the session they were asked in (schema 8), and the migration
//! that gives an older once-lease the session of the approval it answers.

use cordon_store::pg_test::asked;
use cordon_store::{Answer, Answered, PendingId, Scope, Store};

fn temp_store() -> (tempfile::TempDir, std::path::PathBuf, Store) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state").join("store.sqlite3");
    let store = Store::open(&path).unwrap();
    (dir, path, store)
}

fn pend(s: &Store, session: Option<&str>, op: Option<&str>) -> PendingId {
    let a = asked("make", session, op);
    s.add_pending_for(&a.fingerprint, session, op, &a.request, &a.verdict, None)
        .unwrap()
}

/// The fingerprint of the call every approval here asks about.
fn fp() -> String {
    asked("make", None, None).fingerprint
}

fn approve(s: &Store, id: PendingId, how: Answer) {
    assert!(matches!(s.answer(id, how).unwrap(), Answered::Approved(_)));
}

cordon_store::both_backends! {
fn a_once_lease_is_spent_only_in_the_session_it_was_asked_in(b) {
    let s = b.open();
    approve(&s, pend(&s, Some("A"), Some("op-1")), Answer::Approve);
    assert!(
        s.consume_for(&fp(), Some("B"), Some("op-1"))
            .unwrap()
            .is_none()
    );
    assert!(s.consume_for(&fp(), None, Some("op-1")).unwrap().is_none());
    // Another operation id in the same session: the call, not the attempt.
    assert!(
        s.consume_for(&fp(), Some("A"), Some("op-2"))
            .unwrap()
            .is_some()
    );
    assert!(
        s.consume_for(&fp(), Some("A"), Some("op-3"))
            .unwrap()
            .is_none()
    );
}
}

cordon_store::both_backends! {
fn without_a_session_the_operation_id_still_binds_unless_widened(b) {
    let s = b.open();
    approve(&s, pend(&s, None, Some("op-1")), Answer::Approve);
    assert!(s.consume_for(&fp(), None, Some("op-2")).unwrap().is_none());
    assert!(
        s.consume_for(&fp(), Some("A"), Some("op-1"))
            .unwrap()
            .is_none()
    );
    assert!(s.consume_for(&fp(), None, Some("op-1")).unwrap().is_some());
    approve(&s, pend(&s, None, Some("op-4")), Answer::ApproveAnySession);
    assert!(
        s.consume_for(&fp(), Some("Z"), Some("op-5"))
            .unwrap()
            .is_some()
    );
    assert!(
        s.consume_for(&fp(), Some("Z"), Some("op-6"))
            .unwrap()
            .is_none()
    );
}
}

cordon_store::both_backends! {
fn approving_for_the_session_makes_a_session_lease(b) {
    let s = b.open();
    approve(&s, pend(&s, Some("A"), None), Answer::ApproveForSession);
    for _ in 0..3 {
        let used = s.consume_for(&fp(), Some("A"), None).unwrap().unwrap();
        assert_eq!(used.scope, Scope::Session("A".into()));
    }
    assert!(s.consume_for(&fp(), Some("B"), None).unwrap().is_none());
    assert!(s.consume_for(&fp(), None, None).unwrap().is_none());
    let id = pend(&s, None, None);
    let e = s.answer(id, Answer::ApproveForSession).unwrap_err();
    assert!(e.to_string().contains("without a session"), "{e}");
    // Nothing was settled: it is still pending.
    assert!(s.get_pending(id).is_ok());
}
}

/// A store of schema 7 with an unspent once-lease answering a pending approval of
/// session A: after the migration it is bound to A.
#[test]
fn a_version_7_once_lease_takes_its_approvals_session() {
    let (_d, path, s) = temp_store();
    let id = pend(&s, Some("A"), None);
    approve(&s, id, Answer::Approve);
    drop(s);
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(
            "ALTER TABLE leases DROP COLUMN bound_session;
             ALTER TABLE leases DROP COLUMN any_session;
             DROP TABLE operations_pruned;
             ALTER TABLE pending DROP COLUMN suggestions;
             DROP TABLE audit_heads; DROP TABLE audit_export;
             ALTER TABLE pending DROP COLUMN machine; DROP TABLE decisions;
             PRAGMA user_version = 7;",
        )
        .unwrap();
    let s = Store::open(&path).unwrap();
    assert!(s.consume_for(&fp(), Some("B"), None).unwrap().is_none());
    assert!(s.consume_for(&fp(), None, None).unwrap().is_none());
    assert!(s.consume_for(&fp(), Some("A"), None).unwrap().is_some());
}

cordon_store::both_backends! {
/// A gateway run's own session (no agent session named) is no session for once-leases:
/// the approval covers the retry through the next run of the gateway, and nothing else.
fn a_gateway_runs_own_session_binds_as_none(b) {
    let s = b.open();
    let run1 = format!("{}everything:n1", cordon_store::GATEWAY_RUN_SESSION);
    let run2 = format!("{}everything:n2", cordon_store::GATEWAY_RUN_SESSION);
    approve(&s, pend(&s, Some(&run1), None), Answer::Approve);
    assert!(
        s.consume_for(&fp(), Some("agent-A"), None)
            .unwrap()
            .is_none()
    );
    assert!(s.consume_for(&fp(), Some(&run2), None).unwrap().is_some());
}
}
