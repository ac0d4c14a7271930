#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! `cordon hook` as the harnesses run it: the real binary, a payload on stdin, and the
//! exit code and output each harness reads. Every failure must block (exit 2, one
//! sentence on stderr, nothing on stdout); no path may exit 0 silently or with a code a
//! harness treats as "proceed".

mod common;

use serde_json::{Value, json};
use std::process::{Command, Output};

use common::hook::{HookEnv as Env, blocks};

impl Env {
    fn hook(&self, harness: &str, extra: &[&str], stdin: &[u8]) -> Output {
        let mut c = Command::new(common::bin());
        c.args(["hook", harness, "--isolated", "--config"])
            .arg(&self.config)
            .arg("--workspace")
            .arg(&self.ws)
            .args(extra)
            .current_dir(&self.ws)
            .env_clear()
            .env("HOME", &self.home)
            .env("CORDON_STATE_DIR", &self.state)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin");
        common::cli::run_with_input(c, stdin)
    }
}

fn json_out(o: &Output) -> Value {
    let (out, err) = common::text(o);
    assert_eq!(o.status.code(), Some(0), "stderr {err}");
    serde_json::from_str(&out).unwrap()
}

#[test]
fn decisions_through_the_binary() {
    let e = Env::new();
    let read = json_out(&e.hook(
        "claude-code",
        &[],
        e.fixture("claude-code", "PreToolUse-Read").as_bytes(),
    ));
    assert_eq!(read["hookSpecificOutput"]["permissionDecision"], "allow");
    let ask = json_out(&e.hook(
        "claude-code",
        &[],
        e.fixture("claude-code", "PreToolUse-Bash").as_bytes(),
    ));
    assert_eq!(ask["hookSpecificOutput"]["permissionDecision"], "ask");
    blocks(
        &e.hook(
            "claude-code",
            &[],
            e.fixture("claude-code", "PreToolUse-Bash-secret")
                .as_bytes(),
        ),
        "holds credentials",
    );
    let codex = e.hook(
        "codex",
        &[],
        e.fixture("codex", "PreToolUse-Read").as_bytes(),
    );
    assert_eq!(
        (codex.status.code(), codex.stdout.is_empty()),
        (Some(0), true)
    );
    blocks(
        &e.hook(
            "codex",
            &[],
            e.fixture("codex", "PreToolUse-Bash").as_bytes(),
        ),
        "cordon approvals approve",
    );
    let gemini = json_out(&e.hook(
        "gemini",
        &[],
        e.fixture("gemini", "BeforeTool-read_file").as_bytes(),
    ));
    assert_eq!(gemini["decision"], "allow");
    blocks(
        &e.hook(
            "gemini",
            &[],
            e.fixture("gemini", "BeforeTool-run_shell_command-secret")
                .as_bytes(),
        ),
        "holds credentials",
    );
}

#[test]
fn every_failure_blocks_in_every_harness() {
    let e = Env::new();
    for (harness, good) in [
        ("claude-code", e.fixture("claude-code", "PreToolUse-Read")),
        ("codex", e.fixture("codex", "PreToolUse-Read")),
        ("gemini", e.fixture("gemini", "BeforeTool-read_file")),
    ] {
        let v: Value = serde_json::from_str(&good).unwrap();
        let without = |k: &str| {
            let mut v = v.clone();
            v.as_object_mut().unwrap().remove(k);
            v.to_string()
        };
        let mut unknown = v.clone();
        unknown["hook_event_name"] = json!("SessionStart");
        let big = format!("{{\"x\":\"{}\"}}", "a".repeat(2 << 20));
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (b"".to_vec(), "empty"),
            (b"not json".to_vec(), "not valid JSON"),
            (good.as_bytes()[..good.len() / 2].to_vec(), "not valid JSON"),
            (b"\xff\xfe".to_vec(), "UTF-8"),
            (big.into_bytes(), "limit"),
            (unknown.to_string().into_bytes(), "not a tool event"),
            (without("tool_name").into_bytes(), "no `tool_name`"),
            (without("cwd").into_bytes(), "no `cwd`"),
        ];
        for (payload, why) in cases {
            blocks(&e.hook(harness, &[], &payload), why);
        }
        // A command line the hook does not understand (it is parsed apart from the other
        // subcommands): blocked with clap's usage error, exit 2, nothing on stdout.
        let o = e.hook(harness, &["--no-such-flag"], good.as_bytes());
        let (out, err) = common::text(&o);
        assert_eq!(o.status.code(), Some(2), "stderr {err}");
        assert_eq!(out, "");
        assert!(err.contains("--no-such-flag"), "{err}");
        // A policy that does not load.
        let bad = e.ws.join("bad.toml");
        std::fs::write(&bad, "mode = \"sideways\"\n").unwrap();
        blocks(
            &e.hook(
                harness,
                &["--config", bad.to_str().unwrap()],
                good.as_bytes(),
            ),
            "invalid config",
        );
        // An audit log that cannot be written: the call is not let through unrecorded.
        let audit = e.ws.join("not-a-dir/audit.jsonl");
        std::fs::write(e.ws.join("not-a-dir"), "file").unwrap();
        blocks(
            &e.hook(
                harness,
                &["--audit-file", audit.to_str().unwrap()],
                good.as_bytes(),
            ),
            "no-audit",
        );
        std::fs::remove_file(e.ws.join("not-a-dir")).unwrap();
    }
}

#[test]
fn post_tool_results_are_recorded_and_failures_block() {
    let e = Env::new();
    let audit = e.state.join("audit.jsonl");
    let o = e.hook(
        "claude-code",
        &[],
        e.fixture("claude-code", "PostToolUse-Bash").as_bytes(),
    );
    assert_eq!((o.status.code(), o.stdout.is_empty()), (Some(0), true));
    let last: Value = serde_json::from_str(
        std::fs::read_to_string(&audit)
            .unwrap()
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(last["phase"], "result");
    assert_eq!(last["operation_id"], "toolu_01A4");
    std::fs::write(e.ws.join("f"), "").unwrap();
    blocks(
        &e.hook(
            "gemini",
            &["--audit-file", e.ws.join("f/audit.jsonl").to_str().unwrap()],
            e.fixture("gemini", "AfterTool-run_shell_command")
                .as_bytes(),
        ),
        "not recorded",
    );
}

/// A tool-use id is permitted once: the harness sending the same pre-tool event again (a
/// duplicated confirmation, a replay) is blocked, while its permission request for the
/// same call is no replay and only ever denies.
#[test]
fn a_replayed_tool_use_id_is_blocked() {
    let e = Env::new();
    let payload = e.fixture("claude-code", "PreToolUse-Read");
    let first = json_out(&e.hook("claude-code", &[], payload.as_bytes()));
    assert_eq!(first["hookSpecificOutput"]["permissionDecision"], "allow");

    let mut asking: Value = serde_json::from_str(&payload).unwrap();
    asking["hook_event_name"] = json!("PermissionRequest");
    let o = e.hook("claude-code", &[], asking.to_string().as_bytes());
    assert_eq!(o.status.code(), Some(0), "{}", common::text(&o).1);
    assert!(
        o.stdout.is_empty(),
        "no answer: the harness's human decides"
    );

    blocks(
        &e.hook("claude-code", &[], payload.as_bytes()),
        "already permitted once",
    );
}

/// The judgement runs in a child process: when it dies the way no panic hook sees (here
/// SIGKILL, as the OOM killer sends; an abort or a stack overflow alike), the hook still
/// blocks the call with a sentence, instead of ending with a status a harness reads as
/// "proceed".
#[test]
fn a_judgement_that_dies_still_blocks() {
    use std::io::Write;
    use std::process::Stdio;
    let e = Env::new();
    for harness in ["claude-code", "codex", "gemini"] {
        let mut child = Command::new(common::bin())
            .args(["hook", harness, "--isolated", "--config"])
            .arg(&e.config)
            .arg("--workspace")
            .arg(&e.ws)
            .current_dir(&e.ws)
            .env_clear()
            .env("HOME", &e.home)
            .env("CORDON_STATE_DIR", &e.state)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The judging child waits for the payload on stdin: find it and kill it.
        let children = format!("/proc/{0}/task/{0}/children", child.id());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let judge = loop {
            let text = std::fs::read_to_string(&children).unwrap_or_default();
            if let Some(pid) = text.split_whitespace().next() {
                break pid.to_string();
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{harness}: the hook started no judging process"
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        let killed = Command::new("kill")
            .args(["-KILL", &judge])
            .status()
            .unwrap();
        assert!(killed.success());
        // The payload arrives after the judge is gone: nobody reads it.
        let mut stdin = child.stdin.take().unwrap();
        let _ = stdin.write_all(b"{}");
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        blocks(&out, "the judgement process was killed by signal 9");
    }
}
