#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! The egress log of a `cordon exec` run in its end audit record: curl inside the
//! sandbox reaches an allowed upstream on the host's loopback through the egress proxy and
//! is refused a host that is not on the allowlist; the run's `end` record carries both,
//! counted and listed, in the shape `schemas/audit-record.schema.json` describes.
//!
//! Needs user namespaces; skips with a reason when the host has none, unless
//! `CORDON_REQUIRE_SANDBOX_TESTS=1`, which turns the skip into a failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::{Command, Stdio};

mod common;
use common::{World, bin, text};

/// A loopback upstream that answers every request with `hello`.
fn upstream() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(8) {
            let Ok(mut s) = stream else { continue };
            s.set_read_timeout(Some(std::time::Duration::from_secs(5)))
                .ok();
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let _ = s.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
            );
        }
    });
    port
}

#[test]
fn the_end_record_of_a_run_carries_its_egress_log() {
    if !common::full_tier_or_skip("the_end_record_of_a_run_carries_its_egress_log") {
        return;
    }
    // The sandbox hides /tmp and /var/tmp and binds the workspace back in.
    let w = World::made(
        "cordon-egress-log-",
        Some(std::path::Path::new("/var/tmp")),
        Some("[defaults]\nexec = \"allow\"\nnetwork = \"allow\"\n"),
    );
    std::fs::create_dir_all(&w.state).unwrap();
    let (ws, home, state, config) = (&w.ws, &w.home, &w.state, &w.config);
    let port = upstream();
    let allowed = format!("127.0.0.1:{port}");
    let script = format!(
        "curl -s --max-time 10 http://{allowed}/ok; echo; \
         curl -s -o /dev/null -w '%{{http_code}}' --max-time 10 http://refused.example/leak"
    );
    let o = Command::new(bin())
        .args(["exec", "--isolated", "--config"])
        .arg(config)
        .args([
            "--allow-net",
            &allowed,
            "--allow-private",
            "127.0.0.1/32",
            "--session",
            "s-egress",
            "--",
            "sh",
            "-c",
            &script,
        ])
        .current_dir(ws)
        .env_clear()
        .env("HOME", home)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("CORDON_STATE_DIR", state)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("hello\n403"), "{out}");

    let log = std::fs::read_to_string(state.join("audit.jsonl")).unwrap();
    let records: Vec<serde_json::Value> = log
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let end = records
        .iter()
        .find(|r| r["kind"] == "exec" && r["phase"] == "end")
        .unwrap_or_else(|| panic!("no end record in {log}"));
    let egress = &end["egress"];
    assert_eq!(egress["total"], 2, "{end}");
    assert_eq!(egress["allowed"], 1, "{end}");
    assert_eq!(egress["refused"], 1, "{end}");
    let events = egress["events"].as_array().unwrap();
    assert!(
        events
            .iter()
            .any(|e| e["decision"] == "allow" && e["host"] == "127.0.0.1" && e["port"] == port),
        "{end}"
    );
    let refused = events
        .iter()
        .find(|e| e["decision"] == "deny")
        .unwrap_or_else(|| panic!("{end}"));
    assert_eq!(refused["host"], "refused.example", "{end}");
    assert_eq!(refused["code"], "not-allowed", "{end}");
    assert!(!refused["reason"].as_str().unwrap().is_empty(), "{end}");
    let hosts: Vec<&str> = egress["destinations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["host"].as_str().unwrap())
        .collect();
    assert_eq!(hosts, ["127.0.0.1", "refused.example"], "{end}");
    // The decision and start records carry no egress; the end record matches the schema.
    assert!(
        records
            .iter()
            .filter(|r| r["phase"] != "end")
            .all(|r| r.get("egress").is_none())
    );
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../schemas/audit-record.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(end)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{end}\n{errors:#?}");
}
