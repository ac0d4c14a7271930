//! The cost of session lookups on a decision: `Gate::decide` (what `cordon check` runs
//! after loading the policy) for the same calls without a session, with an empty one,
//! and with one that recorded 10,000 writes, side by side in one run. Prints p50 and p90
//! per case. Run: `cargo bench -p cordon-gate --bench session`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::{Duration, Instant};

use cordon_gate::{Containment, Gate, GateOptions, Human, Outcome};
use cordon_policy::{FakeFs, LoadOptions, Policy, Request};
use cordon_store::{CallRef, SessionLimits, SessionRecord, Store};
use serde_json::json;

/// Decisions per case, after a twentieth more for warm-up; `CORDON_BENCH_ITERS` overrides it.
const ITERS: usize = 2000;
const WRITES: usize = 10_000;

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite3");
    let fs = FakeFs::new()
        .dir("/w/proj/pkg")
        .dir("/w/proj/data")
        .file_with(
            "/cfg.toml",
            1,
            b"[permissions]\nallow = [\"Bash(go test:*)\", \"Bash(cargo test:*)\"]\n[sessions]\nprivate = [\"data/**\"]\n",
        );
    let opts = LoadOptions {
        workspace: "/w/proj".into(),
        home: "/home/u".into(),
        skip_default_files: true,
        config_files: vec!["/cfg.toml".into()],
        ..Default::default()
    };
    let gate = Gate::new(
        Policy::load(&opts, &fs).unwrap(),
        GateOptions {
            surface: cordon_gate::Surface::Check,
            store: Some(store.clone()),
            audit: None,
            no_audit: true,
            edits: false,
        },
    );
    // The full session: 10,000 distinct files written across the tree, none in `pkg`.
    let s = Store::open(&store).unwrap();
    let limits = SessionLimits {
        max_writes: 20_000,
        expire_after: Duration::from_secs(3600),
    };
    let by = CallRef {
        tool: "Write".into(),
        call: "seed".into(),
        operation_id: None,
    };
    for chunk in 0..WRITES / 1000 {
        let rec = SessionRecord {
            writes: (0..1000)
                .map(|i| {
                    (
                        format!("/w/proj/src/m{chunk}/f{i}.rs"),
                        Some("h".repeat(64)),
                    )
                })
                .collect(),
            ..SessionRecord::default()
        };
        s.record_session("full", &by, &rec, limits).unwrap();
    }
    drop(s);

    let req = |session: Option<&str>, tool: &str, input: serde_json::Value| {
        let mut v = json!({"tool": tool, "input": input, "cwd": "/w/proj"});
        if let Some(s) = session {
            v["session"] = json!(s);
        }
        Request::from_value(v).unwrap()
    };
    let go = json!({"command": "go test ./pkg"});
    let cargo = json!({"command": "cargo test"});
    let read = json!({"file_path": "/w/proj/data/x.csv"});
    let cases: Vec<(&str, Request)> = vec![
        ("go test ./pkg, no session", req(None, "Bash", go.clone())),
        (
            "go test ./pkg, session with 0 writes",
            req(Some("empty"), "Bash", go.clone()),
        ),
        (
            "go test ./pkg, session with 10,000 writes",
            req(Some("full"), "Bash", go),
        ),
        ("cargo test, no session", req(None, "Bash", cargo.clone())),
        (
            "cargo test, session with 10,000 writes (all match **/*.rs's prefix)",
            req(Some("full"), "Bash", cargo),
        ),
        (
            "Read private file, no session",
            req(None, "Read", read.clone()),
        ),
        (
            "Read private file, session with 10,000 writes",
            req(Some("full"), "Read", read),
        ),
    ];
    let iters = std::env::var("CORDON_BENCH_ITERS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|n| *n > 0)
        .unwrap_or(ITERS);
    let warm = iters.div_ceil(20);
    println!("| call | p50 | p90 |");
    println!("|---|---|---|");
    for (name, r) in &cases {
        let mut times = Vec::with_capacity(iters);
        for i in 0..iters + warm {
            let t = Instant::now();
            let o = gate.decide(r, &fs, Containment::None, Human::caller(), false);
            let el = t.elapsed();
            // Running tests in a session that wrote `.rs` files is asked, as it must be
            // (every `*.rs` is code `cargo test` runs); every other case is allowed.
            let asked = name.starts_with("cargo test, session");
            assert!(
                matches!(o, Outcome::Permitted(_)) != asked,
                "{name}: {:?}",
                o.decided().verdict.reason
            );
            if i >= warm {
                times.push(el);
            }
        }
        times.sort();
        let p = |q: f64| times[((times.len() as f64 - 1.0) * q) as usize];
        println!("| {name} | {:.1} µs | {:.1} µs |", us(p(0.5)), us(p(0.9)));
    }
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}
