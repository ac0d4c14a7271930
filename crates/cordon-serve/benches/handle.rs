#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! The service's own cost per call, without the socket: `Connection::handle` on one frame
//! (parse, decide, write the audit record, build the answer) for an unknown method (the
//! floor), a Read inside the workspace and a Bash call, with and without the audit log,
//! side by side in one run on a real workspace and a real log. Prints p50 and p90 per
//! case. Run: `cargo bench -p cordon-serve --bench handle` (`CORDON_BENCH_ITERS` sets the
//! calls per case).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use cordon_policy::LoadOptions;
use cordon_serve::{AuditSync, ServeOptions, Service};
use serde_json::json;
use std::time::{Duration, Instant};

const ITERS: usize = 20_000;

fn service(dir: &std::path::Path, ws: &std::path::Path, no_audit: bool) -> Service {
    let config = dir.join("policy.toml");
    std::fs::write(&config, "[permissions]\nallow = [\"Bash(cargo test:*)\"]\n").unwrap();
    let load = LoadOptions {
        workspace: ws.to_path_buf(),
        home: dir.join("home"),
        skip_default_files: true,
        config_files: vec![config],
        ..Default::default()
    };
    let mut options = ServeOptions::new(load);
    options.store = Some(dir.join("store.sqlite3"));
    options.audit = Some(dir.join(if no_audit {
        "none.jsonl"
    } else {
        "audit.jsonl"
    }));
    options.no_audit = no_audit;
    options.audit_sync = AuditSync::default();
    Service::start(options).unwrap()
}

fn main() {
    let iters: usize = std::env::var("CORDON_BENCH_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(ITERS);
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/main.rs"), "fn main() {}\n").unwrap();
    let frame = |method: &str, params: serde_json::Value| {
        json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
            .to_string()
            .into_bytes()
    };
    let read = frame(
        "check",
        json!({"tool": "Read", "input": {"file_path": ws.join("src/main.rs")}, "cwd": ws}),
    );
    let bash = frame(
        "check",
        json!({"tool": "Bash", "input": {"command": "cargo test --all"}, "cwd": ws}),
    );
    let nop = frame("bench.nop", json!({}));
    // `CORDON_BENCH_CASE=Read` (or `Bash`, `unknown`) keeps one case, for a profiler.
    let only = std::env::var("CORDON_BENCH_CASE").unwrap_or_default();
    let cases: Vec<(&str, &[u8], &str)> = [
        ("unknown method (floor)", &nop[..], "\"error\""),
        ("Read (file tool)", &read[..], "\"decision\":\"allow\""),
        (
            "Bash `cargo test --all`",
            &bash[..],
            "\"decision\":\"allow\"",
        ),
    ]
    .into_iter()
    .filter(|(name, _, _)| name.starts_with(only.as_str()))
    .collect();
    let audited = service(dir.path(), &ws, false);
    let bare = service(dir.path(), &ws, true);
    let mut conns = [("audited", audited.connect()), ("no audit", bare.connect())];
    let mut times: Vec<Vec<Vec<Duration>>> = vec![vec![Vec::new(); conns.len()]; cases.len()];
    // Interleaved call by call, so that both services see the same machine.
    for i in 0..iters + iters / 20 {
        for (c, (_, line, want)) in cases.iter().enumerate() {
            for (s, (_, conn)) in conns.iter_mut().enumerate() {
                let t = Instant::now();
                let answer = conn.handle(line).unwrap();
                let took = t.elapsed();
                assert!(answer.contains(want), "unexpected answer: {answer}");
                if i >= iters / 20 {
                    times[c][s].push(took);
                }
            }
        }
    }
    println!("| case | service | p50 | p90 |");
    println!("|---|---|---:|---:|");
    for (c, (name, _, _)) in cases.iter().enumerate() {
        for (s, (label, _)) in conns.iter().enumerate() {
            let t = &mut times[c][s];
            t.sort();
            let at = |p: f64| t[((t.len() - 1) as f64 * p) as usize].as_secs_f64() * 1e6;
            println!(
                "| {name} | {label} | {:.1} µs | {:.1} µs |",
                at(0.5),
                at(0.9)
            );
        }
    }
    drop(conns);
    audited.shutdown();
    bare.shutdown();
}
