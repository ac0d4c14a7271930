#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! `cordon review-action`: exit codes per verdict, and proof that reviewing runs nothing
//! and connects nowhere (the binary is traced with strace: one execve, its own, and no
//! connect, even for a request whose argv and URLs would do both).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::process::Command;

const POLICY: &str = r#"
workspace = "/w"
[paths]
read = ["/w/**"]
[executables]
allow = ["curl", "python3"]
[network]
allow = ["https://api.example.com"]
[side_effects]
approve = ["external-write"]
"#;

fn setup(req: &serde_json::Value) -> (tempfile::TempDir, String, String) {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path().join("req.json");
    let p = tmp.path().join("policy.toml");
    std::fs::write(&r, req.to_string()).unwrap();
    std::fs::write(&p, POLICY).unwrap();
    let (r, p) = (
        r.to_str().unwrap().to_string(),
        p.to_str().unwrap().to_string(),
    );
    (tmp, r, p)
}

fn req(argv: &[&str], effect: &str, key: Option<&str>) -> serde_json::Value {
    serde_json::json!({"actor": "a", "capability": "c", "argv": argv, "cwd": "/w",
        "network": [{"url": "https://api.example.com/v1", "method": if effect == "external-write" { "POST" } else { "GET" }}],
        "side_effect": effect, "reason": "r", "idempotency_key": key})
}

fn run(req: &serde_json::Value) -> (i32, serde_json::Value) {
    let (_t, r, p) = setup(req);
    let o = Command::new(common::bin())
        .args(["review-action", &r, "--policy", &p])
        .output()
        .unwrap();
    let v = serde_json::from_slice(&o.stdout).unwrap_or(serde_json::Value::Null);
    (o.status.code().unwrap(), v)
}

#[test]
fn exit_codes_per_verdict() {
    let (code, v) = run(&req(
        &["curl", "https://api.example.com/v1"],
        "external-read",
        None,
    ));
    assert_eq!((code, v["verdict"].as_str()), (0, Some("allow")), "{v}");
    let (code, v) = run(&req(
        &["curl", "-X", "POST", "https://api.example.com/v1"],
        "external-write",
        Some("k1"),
    ));
    assert_eq!((code, v["verdict"].as_str()), (3, Some("ask")), "{v}");
    assert_eq!(
        v["required_approvals"][0]["target"],
        "https://api.example.com:443"
    );
    let (code, v) = run(&req(&["python3", "-c", "import os"], "none", None));
    assert_eq!((code, v["verdict"].as_str()), (4, Some("deny")), "{v}");
    assert!(
        v["reasons"][0]
            .as_str()
            .unwrap()
            .contains("arbitrary execution"),
        "{v}"
    );
    let (_t, _, p) = setup(&req(&["x"], "none", None));
    let o = Command::new(common::bin())
        .args(["review-action", "/nonexistent.json", "--policy", &p])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let bad = serde_json::json!({"actor": "a"});
    let (code, _) = run(&bad);
    assert_eq!(code, 2);
}

#[test]
fn reviewing_never_executes_or_connects() {
    if Command::new("strace").arg("-V").output().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "strace is required in CI (scripts/install-test-deps.sh)"
        );
        eprintln!("skipping: strace is not installed");
        return;
    }
    let r = req(
        &["curl", "-X", "POST", "https://api.example.com/v1"],
        "external-write",
        Some("k1"),
    );
    let (t, r, p) = setup(&r);
    let trace = t.path().join("trace.txt");
    let o = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=execve,execveat,connect", "-o"])
        .arg(&trace)
        .arg(common::bin())
        .args(["review-action", &r, "--policy", &p])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let log = std::fs::read_to_string(&trace).unwrap();
    let execs: Vec<_> = log.lines().filter(|l| l.contains("execve")).collect();
    assert_eq!(execs.len(), 1, "only cordon itself may be executed:\n{log}");
    assert!(execs[0].contains("cordon"), "{log}");
    assert!(
        !log.contains("connect("),
        "the review opened a connection:\n{log}"
    );
}
