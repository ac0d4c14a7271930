//! Load for `bench/ui.sh`: append COUNT decision records of about 1 KB to an audit log at
//! RATE records per second (0: as fast as possible), through the same `AuditLog` the
//! surfaces use, each record written at once without waiting for the disk (as the hook
//! writes its records), and print the rate reached.
//!
//!     cargo run --release -p cordon-ui --example audit_load -- LOG RATE COUNT
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark driver, not library code

use std::time::{Duration, Instant};

use cordon_store::{AuditLog, Durability};
use serde_json::json;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [path, rate, count] = args.as_slice() else {
        eprintln!("usage: audit_load LOG RATE COUNT");
        std::process::exit(2);
    };
    let rate: u64 = rate.parse().expect("RATE is a number");
    let count: u64 = count.parse().expect("COUNT is a number");
    let durability = Durability::Batched {
        max_records: u32::MAX,
        max_delay: Duration::from_secs(3600),
    };
    let mut log = AuditLog::open(path.as_ref(), durability).expect("open the log");
    let padding = "x".repeat(600);
    let start = Instant::now();
    for i in 0..count {
        if let Some(offset) = (i * 1_000_000).checked_div(rate) {
            let due = start + Duration::from_micros(offset);
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
        }
        let decision = ["allow", "ask", "deny"][(i % 3) as usize];
        log.append(&json!({
            "kind": "check", "phase": "decision", "session": format!("bench-{}", i % 7),
            "tool": "Bash", "input": {"command": format!("cargo test --package p{i} # {padding}")},
            "workspace": "/work/bench", "decision": decision,
            "reason": "the default for exec inside the workspace applies",
            "source": {"step": "default", "rule": "exec"},
            "containment": "none", "mode": "default", "approval": "on-request",
            "policy_version": "0123456789abcdef0123456789abcdef",
        }))
        .expect("append");
        log.flush_unsynced().expect("write");
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{count} records in {secs:.2} s ({:.0}/s)",
        count as f64 / secs
    );
}
