//! Store and audit benchmarks: audit appends per second (hash chain included) with
//! batched syncs, written unsynced one by one (a hook call's way) and with an fsync per
//! record, each plain and anchored in the store with signed batches (`_anchored`), and the latency of a lease check
//! (`Store::consume`) for a fingerprint with no lease and for a session lease.
//!
//! Run: `cargo bench -p cordon-store --bench store`
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark that cannot set up should stop
#![allow(missing_docs)] // criterion_group! generates an undocumented function

use std::hint::black_box;
use std::time::Duration;

use cordon_store::{AuditLog, Durability, Scope, Store};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;

fn record(i: u64) -> serde_json::Value {
    json!({
        "session": "sess-0123456789",
        "agent": "claude-code",
        "tool": "Bash",
        "input": {"command": format!("cargo test -p cordon-store -- case_{i}")},
        "verdict": {"decision": "allow", "reason": "an allow rule matched", "source": "rule Bash(cargo test:*) at ~/.config/cordon/policy.toml:4"},
        "mode": "default",
        "approval": "on-request",
        "sandbox": "workspace-write",
        "exit": 0,
    })
}

/// The log at `path`, plain (chain only) or anchored in a store and signed (issue 36).
fn open(dir: &std::path::Path, name: &str, durability: Durability, anchored: bool) -> AuditLog {
    let path = dir.join(format!("{name}.jsonl"));
    if anchored {
        AuditLog::open_anchored(&path, durability, &dir.join("store.sqlite3")).unwrap()
    } else {
        AuditLog::open(&path, durability).unwrap()
    }
}

fn audit(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("audit_append");
    group.throughput(Throughput::Elements(1));
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    let rec = record(1);

    for anchored in [false, true] {
        let tag = if anchored { "_anchored" } else { "" };
        for (name, max_records, max_delay_ms) in
            [("batched_1024", 1024, 100), ("batched_8192", 8192, 1000)]
        {
            let durability = Durability::Batched {
                max_records,
                max_delay: Duration::from_millis(max_delay_ms),
            };
            let mut log = open(dir.path(), &format!("{name}{tag}"), durability, anchored);
            group.bench_function(format!("{name}{tag}"), |b| {
                b.iter(|| log.append(black_box(&rec)).unwrap())
            });
        }
        // A hook call's way: each record written at once, not waited for (one batch,
        // so one signature and one anchor move, per record).
        let unsynced = Durability::Batched {
            max_records: u32::MAX,
            max_delay: Duration::MAX,
        };
        let mut log = open(dir.path(), &format!("unsynced{tag}"), unsynced, anchored);
        group.bench_function(format!("unsynced_each{tag}"), |b| {
            b.iter(|| log.append_unsynced(black_box(&rec)).unwrap())
        });
    }

    // A hook call's whole share: open the log (and, anchored, the store and the key),
    // write one record unsynced, close.
    for anchored in [false, true] {
        let tag = if anchored { "_anchored" } else { "" };
        let unsynced = Durability::Batched {
            max_records: u32::MAX,
            max_delay: Duration::MAX,
        };
        group.bench_function(format!("one_shot_open_append{tag}"), |b| {
            b.iter(|| {
                let mut log = open(dir.path(), &format!("oneshot{tag}"), unsynced, anchored);
                log.append_unsynced(black_box(&rec)).unwrap();
            })
        });
    }

    group.sample_size(10);
    for anchored in [false, true] {
        let tag = if anchored { "_anchored" } else { "" };
        let mut log = open(
            dir.path(),
            &format!("fsync{tag}"),
            Durability::FsyncEach,
            anchored,
        );
        group.bench_function(format!("fsync_each{tag}"), |b| {
            b.iter(|| log.append(black_box(&rec)).unwrap())
        });
    }
    group.finish();
}

fn lease(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("store.sqlite3")).unwrap();
    // A store with some history: 1000 leases of every kind.
    for i in 0..1000 {
        store
            .grant(&format!("fp-{i}"), Scope::Once, None, "bench")
            .unwrap();
        store
            .grant(
                &format!("fs-{i}"),
                Scope::Session(format!("s{i}")),
                None,
                "bench",
            )
            .unwrap();
    }
    store
        .grant("fp-session", Scope::Session("sess-1".into()), None, "bench")
        .unwrap();
    let mut group = c.benchmark_group("lease_check");
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    group.bench_function("consume_missing", |b| {
        b.iter(|| {
            assert!(
                store
                    .consume(black_box("fp-none"), Some("sess-1"))
                    .unwrap()
                    .is_none()
            )
        })
    });
    group.bench_function("consume_session", |b| {
        b.iter(|| {
            assert!(
                store
                    .consume(black_box("fp-session"), Some("sess-1"))
                    .unwrap()
                    .is_some()
            )
        })
    });
    group.finish();
}

criterion_group!(benches, audit, lease);
criterion_main!(benches);
