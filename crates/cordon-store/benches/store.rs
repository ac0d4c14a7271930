//! Store and audit benchmarks: audit appends per second (hash chain included) with
//! batched syncs and with an fsync per record, and the latency of a lease check
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

fn audit(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("audit_append");
    group.throughput(Throughput::Elements(1));
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));

    for (name, max_records, max_delay_ms) in
        [("batched_1024", 1024, 100), ("batched_8192", 8192, 1000)]
    {
        let durability = Durability::Batched {
            max_records,
            max_delay: Duration::from_millis(max_delay_ms),
        };
        let mut log =
            AuditLog::open(&dir.path().join(format!("{name}.jsonl")), durability).unwrap();
        let rec = record(1);
        group.bench_function(name, |b| b.iter(|| log.append(black_box(&rec)).unwrap()));
    }

    group.sample_size(10);
    let mut log = AuditLog::open(&dir.path().join("fsync.jsonl"), Durability::FsyncEach).unwrap();
    let rec = record(1);
    group.bench_function("fsync_each", |b| {
        b.iter(|| log.append(black_box(&rec)).unwrap())
    });
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
