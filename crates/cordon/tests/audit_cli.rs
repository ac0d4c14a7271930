#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! `cordon audit verify | tail | export` on real logs, intact and tampered.
// Test helpers outside #[test] functions may unwrap and panic: a failure is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::process::{Command, Output};

use cordon_store::{AuditLog, Durability};
use serde_json::{Value, json};

fn cordon(state: &std::path::Path, args: &[&str]) -> Output {
    Command::new(common::bin())
        .args(args)
        .env("CORDON_STATE_DIR", state)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn write_log(state: &std::path::Path) -> std::path::PathBuf {
    let path = state.join("audit.jsonl");
    let mut log = AuditLog::open(&path, Durability::FsyncEach).unwrap();
    for (i, (session, tool, decision)) in [
        ("s1", "Bash", "allow"),
        ("s1", "Read", "allow"),
        ("s2", "Bash", "deny"),
        ("s2", "WebFetch", "ask"),
        ("s1", "Bash", "deny"),
    ]
    .into_iter()
    .enumerate()
    {
        log.append(
            &json!({"session": session, "tool": tool, "verdict": {"decision": decision}, "i": i}),
        )
        .unwrap();
    }
    path
}

#[test]
fn verify_ok_then_broken() {
    let state = tempfile::tempdir().unwrap();
    let path = write_log(state.path());
    let out = cordon(state.path(), &["audit", "verify"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("OK:") && text(&out.stdout).contains("5 records"));

    let original = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, original.replacen("\"i\":2", "\"i\":7", 1)).unwrap();
    let out = cordon(
        state.path(),
        &["audit", "verify", "--file", path.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(4));
    let report = text(&out.stdout);
    assert!(report.contains("line 4 (edit)"), "{report}");

    let mut lines: Vec<&str> = original.lines().collect();
    lines.remove(2);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let out = cordon(state.path(), &["audit", "verify"]);
    assert_eq!(out.status.code(), Some(4));
    assert!(
        text(&out.stdout).contains("(deletion)"),
        "{}",
        text(&out.stdout)
    );

    let out = cordon(
        state.path(),
        &["audit", "verify", "--file", "/nonexistent/audit.jsonl"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("/nonexistent/audit.jsonl"));
}

#[test]
fn tail_and_export() {
    let state = tempfile::tempdir().unwrap();
    write_log(state.path());
    let out = cordon(state.path(), &["audit", "tail", "-n", "2"]);
    assert_eq!(out.status.code(), Some(0));
    let seqs: Vec<u64> = text(&out.stdout)
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["seq"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(seqs, vec![4, 5]);

    let out = cordon(
        state.path(),
        &[
            "audit",
            "export",
            "--json",
            "--session",
            "s1",
            "--tool",
            "Bash",
            "--decision",
            "deny",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let rows: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["i"], 4);

    let out = cordon(
        state.path(),
        &["audit", "export", "--json", "--since", "1h"],
    );
    assert_eq!(text(&out.stdout).lines().count(), 5);
    let out = cordon(
        state.path(),
        &["audit", "export", "--json", "--until", "1h"],
    );
    assert_eq!(text(&out.stdout).lines().count(), 0);
    let out = cordon(
        state.path(),
        &["audit", "export", "--json", "--since", "last tuesday"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--since"));
}

#[test]
fn tail_is_json_when_piped_or_asked_and_readable_on_a_terminal() {
    let state = tempfile::tempdir().unwrap();
    let path = state.path().join("audit.jsonl");
    let mut log = AuditLog::open(&path, Durability::FsyncEach).unwrap();
    log.append(&json!({
        "kind": "check", "session": "s9", "tool": "Bash",
        "input": {"command": "rm -rf build\u{1b}[2J"}, "decision": "deny",
        "source": {"step": "deny-rule", "rule": "Bash(rm:*)", "file": "/p/policy.toml", "line": 7}
    }))
    .unwrap();
    for args in [&["audit", "tail"][..], &["audit", "tail", "--json"][..]] {
        let out = cordon(state.path(), args);
        let v: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
        assert_eq!(v["session"], "s9");
    }
    // On a terminal (util-linux `script` gives the command a pty): one readable line.
    let bin = common::bin();
    let Ok(out) = Command::new("script")
        .args([
            "-qec",
            &format!("{} audit tail", bin.display()),
            "/dev/null",
        ])
        .env("CORDON_STATE_DIR", state.path())
        .output()
    else {
        eprintln!("skipped the terminal half: util-linux `script` is not installed");
        return;
    };
    let shown = text(&out.stdout);
    assert!(
        shown.contains(
            "s9  Bash  deny  rm -rf build\\u{1b}[2J  deny-rule: Bash(rm:*) (/p/policy.toml:7)"
        ),
        "{shown:?}"
    );
    assert!(!shown.contains('\u{1b}'), "escapes are stripped: {shown:?}");
    assert!(!shown.contains("\"session\""), "not JSON: {shown:?}");
}

#[test]
fn tail_follow_prints_the_last_records_then_each_appended_one() {
    use std::io::{BufRead, BufReader};
    let state = tempfile::tempdir().unwrap();
    let path = write_log(state.path());
    let mut child = Command::new(common::bin())
        .args(["audit", "tail", "-n", "2", "--follow", "--json"])
        .env("CORDON_STATE_DIR", state.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = || -> Value { serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap() };
    assert_eq!(next()["i"], 3);
    assert_eq!(next()["i"], 4);
    // Another process appends while it follows.
    let mut log = AuditLog::open(&path, Durability::FsyncEach).unwrap();
    log.append(&json!({"session": "s3", "tool": "Bash", "i": 5, "phase": "end", "exit_status": 2}))
        .unwrap();
    let appended = next();
    assert_eq!(appended["i"], 5);
    assert_eq!(appended["exit_status"], 2);
    child.kill().unwrap();
    child.wait().unwrap();
}
