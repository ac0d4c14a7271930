//! Operation-id claims are bounded: kept 7 days and at most the newest 20,000 (pruned in
//! a claim's own transaction when an hour passed or the store grew 1 MiB), and a replay
//! of a kept claim is still refused.
// Test helpers outside #[test] functions may unwrap and panic: a failure is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use cordon_store::{CLAIM_KEEP, CLAIM_MAX_ROWS, PRUNE_EVERY, Store};

fn rows(path: &std::path::Path) -> i64 {
    let c = rusqlite::Connection::open(path).unwrap();
    c.query_row("SELECT count(*) FROM operations", [], |r| r.get(0))
        .unwrap()
}

fn ms(d: std::time::Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap()
}

#[test]
fn many_claims_leave_a_bounded_table_and_recent_replays_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite3");
    let s = Store::open(&path).unwrap();
    let total: i64 = 28_000;
    let fp = "f".repeat(64);
    let started = std::time::Instant::now();
    for i in 0..total {
        assert!(
            s.claim_operation(&format!("toolu_01{i:022}"), "hook", &fp)
                .unwrap()
        );
    }
    let took = started.elapsed();
    let kept = rows(&path);
    eprintln!("{total} claims in {took:?}: {kept} rows kept");
    // Before pruning, every claim stayed: 28,000 rows.
    assert!(kept < total, "{kept} rows: nothing was pruned");
    // Bounded: the newest 20,000 after the last prune, plus what the store took in
    // since (less than 1 MiB of claims).
    assert!(kept <= CLAIM_MAX_ROWS + 8_000, "{kept} rows");
    // The newest CLAIM_MAX_ROWS ids are all still claimed: a replay is refused.
    for i in (total - CLAIM_MAX_ROWS..total).step_by(97) {
        assert!(
            !s.claim_operation(&format!("toolu_01{i:022}"), "hook", &fp)
                .unwrap(),
            "replay of claim {i} was accepted"
        );
    }
    assert!(
        !s.claim_operation(&format!("toolu_01{:022}", total - 1), "hook", &fp)
            .unwrap()
    );
}

#[test]
fn claims_older_than_a_week_are_pruned_younger_ones_refuse_replays() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite3");
    let s = Store::open(&path).unwrap();
    assert!(s.claim_operation("old", "hook", "fp").unwrap());
    assert!(s.claim_operation("recent", "hook", "fp").unwrap());
    // Age them: one past the week, one six days old; the last prune an hour ago.
    let now = {
        let c = rusqlite::Connection::open(&path).unwrap();
        let now: i64 = c
            .query_row("SELECT max(at_ms) FROM operations", [], |r| r.get(0))
            .unwrap();
        let day = 24 * 3600 * 1000;
        c.execute(
            "UPDATE operations SET at_ms = ?1 WHERE operation_id = 'old'",
            [now - ms(CLAIM_KEEP) - day],
        )
        .unwrap();
        c.execute(
            "UPDATE operations SET at_ms = ?1 WHERE operation_id = 'recent'",
            [now - 6 * day],
        )
        .unwrap();
        // Not yet an hour since the last prune: nothing is pruned.
        c.execute(
            "UPDATE operations_pruned SET at_ms = ?1",
            [now - ms(PRUNE_EVERY) + 60_000],
        )
        .unwrap();
        now
    };
    assert!(s.claim_operation("trigger-1", "hook", "fp").unwrap());
    assert_eq!(rows(&path), 3, "pruned before the hour passed");
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute(
            "UPDATE operations_pruned SET at_ms = ?1",
            [now - ms(PRUNE_EVERY) - 1],
        )
        .unwrap();
    }
    assert!(s.claim_operation("trigger-2", "hook", "fp").unwrap());
    assert_eq!(rows(&path), 3, "the week-old claim was not pruned");
    // Within the window the replay is still refused; past it the claim is gone.
    assert!(!s.claim_operation("recent", "hook", "fp").unwrap());
    assert!(!s.claim_operation("trigger-1", "hook", "fp").unwrap());
    assert!(s.claim_operation("old", "hook", "fp").unwrap());
}
