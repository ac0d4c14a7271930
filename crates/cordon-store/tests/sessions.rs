//! Session memory against a real SQLite file: writes, legs, the cap, expiry, ending.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use cordon_policy::session::Leg;
use cordon_store::{CallRef, EventKind, SessionLimits, SessionRecord};

fn by(call: &str) -> CallRef {
    CallRef {
        tool: "Write".into(),
        call: call.into(),
        operation_id: Some(format!("op-{call}")),
    }
}

const LIMITS: SessionLimits = SessionLimits {
    max_writes: 3,
    expire_after: Duration::from_secs(3600),
};

fn write(path: &str) -> SessionRecord {
    SessionRecord {
        writes: vec![(path.into(), Some(format!("hash-of-{path}")))],
        ..SessionRecord::default()
    }
}

cordon_store::both_backends! {
fn a_filled_directory_is_found_from_beneath_and_from_above(b) {
    let s = b.open();
    let fill = |dir: &str| SessionRecord {
        trees: vec![dir.into()],
        ..SessionRecord::default()
    };
    s.record_session("s", &by("cp x pkg/"), &fill("/w/pkg"), LIMITS)
        .unwrap();
    s.record_session("s", &by("unzip a.zip -d /w2"), &fill("/w2"), LIMITS)
        .unwrap();
    // Beneath the filled directory: the ancestor lookup finds it.
    let v = s
        .session_view("s", &["/w/pkg/sub/", "/w2/deep/x.sh"], LIMITS.expire_after)
        .unwrap();
    let got: Vec<(&str, EventKind)> = v
        .writes
        .iter()
        .map(|w| (w.target.as_str(), w.kind))
        .collect();
    assert!(got.contains(&("/w/pkg", EventKind::Tree)), "{got:?}");
    assert!(got.contains(&("/w2", EventKind::Tree)), "{got:?}");
    // Above it: the prefix scan finds it.
    let v = s.session_view("s", &["/w/"], LIMITS.expire_after).unwrap();
    assert_eq!(v.writes.len(), 1);
    assert_eq!(v.writes[0].by.call, "cp x pkg/");
    // A sibling sees nothing.
    let v = s
        .session_view("s", &["/w/pkgs/"], LIMITS.expire_after)
        .unwrap();
    assert!(v.writes.is_empty(), "{:?}", v.writes);
    assert_eq!(s.sessions(LIMITS.expire_after).unwrap()[0].legs, vec![]);
}
}

cordon_store::both_backends! {
fn writes_are_found_beneath_a_prefix_and_rewrites_update_the_row(b) {
    let s = b.open();
    s.record_session("s1", &by("a"), &write("/w/pkg/x_test.go"), LIMITS)
        .unwrap();
    s.record_session("s1", &by("b"), &write("/w/other/y.go"), LIMITS)
        .unwrap();
    s.record_session("s1", &by("c"), &write("/w/pkg/x_test.go"), LIMITS)
        .unwrap();
    let v = s
        .session_view("s1", &["/w/pkg/"], LIMITS.expire_after)
        .unwrap();
    assert_eq!(v.writes.len(), 1);
    assert_eq!(v.writes[0].target, "/w/pkg/x_test.go");
    assert_eq!(v.writes[0].by.call, "c", "the latest write names its call");
    assert_eq!(v.writes[0].kind, EventKind::Write);
    // Another session sees nothing of it.
    let other = s.session_view("s2", &["/w/"], LIMITS.expire_after).unwrap();
    assert!(other.writes.is_empty() && other.legs.is_empty());
    let list = s.sessions(LIMITS.expire_after).unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].writes, 2);
}
}

cordon_store::both_backends! {
fn the_first_call_of_each_leg_is_kept(b) {
    let s = b.open();
    let legs = |l: Leg, t: &str| SessionRecord {
        legs: vec![(l, t.into())],
        ..SessionRecord::default()
    };
    s.record_session("s", &by("read"), &legs(Leg::Private, "/w/.env"), LIMITS)
        .unwrap();
    s.record_session("s", &by("read2"), &legs(Leg::Private, "/w/.npmrc"), LIMITS)
        .unwrap();
    s.record_session(
        "s",
        &by("fetch"),
        &legs(Leg::Untrusted, "example.com:443"),
        LIMITS,
    )
    .unwrap();
    let v = s.session_view("s", &[], LIMITS.expire_after).unwrap();
    let got: Vec<_> = v
        .legs
        .iter()
        .map(|e| (e.kind, e.by.call.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (EventKind::Leg(Leg::Private), "read"),
            (EventKind::Leg(Leg::Untrusted), "fetch")
        ]
    );
}
}

cordon_store::both_backends! {
fn a_full_session_says_so_instead_of_forgetting(b) {
    let s = b.open();
    for i in 0..5 {
        s.record_session("s", &by("w"), &write(&format!("/w/f{i}")), LIMITS)
            .unwrap();
    }
    let v = s.session_view("s", &["/w/"], LIMITS.expire_after).unwrap();
    assert_eq!(v.writes.len(), 3, "only the cap is remembered");
    assert!(
        v.overflowed.is_some(),
        "and the session knows it ran past it"
    );
}
}

cordon_store::both_backends! {
fn ended_and_expired_sessions_hold_nothing(b) {
    let s = b.open();
    s.record_session("s", &by("w"), &write("/w/a"), LIMITS)
        .unwrap();
    assert!(s.end_session("s").unwrap());
    assert!(!s.end_session("s").unwrap());
    assert!(
        s.session_view("s", &["/w/"], LIMITS.expire_after)
            .unwrap()
            .writes
            .is_empty()
    );

    s.record_session("old", &by("w"), &write("/w/a"), LIMITS)
        .unwrap();
    std::thread::sleep(Duration::from_millis(30));
    let short = Duration::from_millis(10);
    assert!(
        s.session_view("old", &["/w/"], short)
            .unwrap()
            .writes
            .is_empty()
    );
    assert!(s.sessions(short).unwrap().is_empty());
    // The next record deletes it for good.
    let limits = SessionLimits {
        expire_after: short,
        ..LIMITS
    };
    s.record_session("new", &by("w"), &write("/w/b"), limits)
        .unwrap();
    assert!(s.session("old", LIMITS.expire_after).unwrap().is_none());
    let (summary, events) = s.session("new", LIMITS.expire_after).unwrap().unwrap();
    assert_eq!(summary.id, "new");
    assert_eq!(events.len(), 1);
}
}

cordon_store::both_backends! {
fn code_whose_writes_cannot_be_read_marks_its_directory(b) {
    let s = b.open();
    let unseen = SessionRecord {
        unseen: vec!["/w".into()],
        ..SessionRecord::default()
    };
    s.record_session("s", &by("python3 gen.py"), &unseen, LIMITS)
        .unwrap();
    // Found from beneath, as a filled directory is, and read back as what it is.
    let v = s
        .session_view("s", &["/w/Makefile"], LIMITS.expire_after)
        .unwrap();
    assert_eq!(v.writes.len(), 1, "{v:?}");
    assert_eq!(v.writes[0].kind, EventKind::Unseen);
    assert_eq!(v.writes[0].target, "/w");
    assert_eq!(v.writes[0].hash, None);
    assert_eq!(v.writes[0].by.call, "python3 gen.py");
    let (summary, events) = s.session("s", LIMITS.expire_after).unwrap().unwrap();
    assert_eq!(summary.writes, 1);
    assert_eq!(events[0].kind, EventKind::Unseen);
    // Another session is not affected.
    let other = s
        .session_view("t", &["/w/Makefile"], LIMITS.expire_after)
        .unwrap();
    assert!(other.writes.is_empty());
}
}
