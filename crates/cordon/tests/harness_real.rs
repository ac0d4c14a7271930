#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code
//! The real Claude Code CLI (pinned by `scripts/install-test-deps.sh` in
//! `.test-deps/harness`) driven headless (`claude -p … --output-format json`) against a
//! local mock of the Anthropic Messages API (`tests/harness/mock-anthropic.py`), with
//! the hook entries `cordon setup claude-code --project WS` writes. The mock answers the
//! first turn with one scripted Bash `tool_use` and the next with the text `MOCK-DONE`,
//! and records every request body it receives: what the model would have seen.
//!
//! Claude Code runs in `bypassPermissions` (as root that needs `IS_SANDBOX=1`), so its
//! own permission checks allow everything and cordon's hook is the only thing between
//! the scripted call and the machine (the control test shows the secret then reaches the
//! mock). Nothing leaves the machine: the base URL is the mock's, non-essential traffic
//! and the auto-updater are off.
//!
//! Without the CLI or python3 the tests skip with a reason, except in CI (`CI=true` or
//! `CORDON_REQUIRE_SANDBOX_TESTS=1`), where that is a failure. A change in Claude Code's
//! protocol (the request, the tool, the hook payload) fails the assertions on what the
//! mock received and what the CLI printed.

mod common;

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

/// The mock's scripted call's id (see the mock), which the hook's audit records carry.
const TOOL_ID: &str = "toolu_cordon_mock_1";

/// The pinned Claude Code CLI, or `None` (a skip, or a failure in CI) when missing.
fn claude(test: &str) -> Option<PathBuf> {
    let base = std::env::var_os("CORDON_HARNESS_TEST_DEPS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.test-deps/harness"));
    let bin = base.join("node_modules/.bin/claude");
    let python = Command::new("python3").arg("--version").output();
    let mut missing = Vec::new();
    if !bin.exists() {
        missing.push(bin.display().to_string());
    }
    if !python.is_ok_and(|o| o.status.success()) {
        missing.push("python3".to_string());
    }
    if missing.is_empty() {
        return Some(bin);
    }
    let ci = std::env::var_os("CI").is_some_and(|v| v == "true")
        || std::env::var_os("CORDON_REQUIRE_SANDBOX_TESTS").is_some_and(|v| v == "1");
    assert!(
        !ci,
        "{test}: harness test tools missing ({}); run scripts/install-test-deps.sh",
        missing.join(", ")
    );
    eprintln!(
        "skipping {test}: harness test tools missing ({}); run scripts/install-test-deps.sh",
        missing.join(", ")
    );
    None
}

/// The mock model server; killed when dropped.
struct Mock {
    child: Child,
    port: u16,
    record: PathBuf,
}

impl Mock {
    /// A mock that scripts one Bash call of `command`, recording into `record`.
    fn start(record: &Path, command: &str) -> Mock {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/harness/mock-anthropic.py");
        let mut child = Command::new("python3")
            .arg(script)
            .arg(record)
            .arg(command)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("the mock printed no port ({e}): {line:?}"));
        Mock {
            child,
            port,
            record: record.to_path_buf(),
        }
    }

    /// Every request it received: path and body as text.
    fn requests(&self) -> Vec<(String, String)> {
        std::fs::read_to_string(&self.record)
            .unwrap_or_default()
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                (
                    v["path"].as_str().unwrap().to_string(),
                    v["body"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    /// The `tool_result` block Claude Code sent back for the scripted call (the last
    /// one found), or a failure saying what the mock received instead.
    fn tool_result(&self) -> Value {
        let reqs = self.requests();
        reqs.iter()
            .filter(|(p, _)| p.starts_with("/v1/messages"))
            .filter_map(|(_, b)| serde_json::from_str::<Value>(b).ok())
            .flat_map(|b| b["messages"].as_array().cloned().unwrap_or_default())
            .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
            .rfind(|c| c["type"] == "tool_result" && c["tool_use_id"] == TOOL_ID)
            .unwrap_or_else(|| {
                let paths: Vec<&String> = reqs.iter().map(|(p, _)| p).collect();
                panic!(
                    "Claude Code sent no tool_result for the scripted call (protocol change?); requests: {paths:?}"
                )
            })
    }
}

impl Drop for Mock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The text of a tool_result's content (a string or a list of text blocks).
fn result_text(r: &Value) -> String {
    match &r["content"] {
        Value::String(s) => s.clone(),
        Value::Array(a) => a
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}

/// A workspace, a fake HOME holding a fake SSH key with a unique marker, and cordon's
/// state directory, under a fresh temporary directory.
struct Scene {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    ws: PathBuf,
    home: PathBuf,
    /// Claude Code's TMPDIR (it keeps per-session files there).
    tmp: PathBuf,
    marker: String,
}

impl Scene {
    fn new() -> Scene {
        let tmp = tempfile::Builder::new()
            .prefix("cordon-harness-")
            .tempdir()
            .unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();
        let (ws, home) = (root.join("ws"), root.join("home"));
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::create_dir_all(root.join("tmp")).unwrap();
        let marker = format!(
            "CORDON-FAKE-KEY-{}-{}",
            std::process::id(),
            root.file_name().unwrap().to_string_lossy()
        );
        std::fs::write(
            home.join(".ssh/id_rsa"),
            format!(
                "-----BEGIN OPENSSH PRIVATE KEY-----\n{marker}\n-----END OPENSSH PRIVATE KEY-----\n"
            ),
        )
        .unwrap();
        Scene {
            _tmp: tmp,
            ws,
            home,
            tmp: root.join("tmp"),
            root,
            marker,
        }
    }

    /// `cordon setup claude-code --project WS [extra]`, as a user would run it.
    fn setup(&self, extra: &[&str]) {
        let out = Command::new(common::bin())
            .args(["setup", "claude-code", "--project"])
            .arg(&self.ws)
            .args(extra)
            .env_clear()
            .env("HOME", &self.home)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("CORDON_STATE_DIR", self.root.join("state"))
            .output()
            .unwrap();
        let (o, e) = common::text(&out);
        assert!(out.status.success(), "cordon setup failed: {e}\n{o}");
        let settings = std::fs::read_to_string(self.ws.join(".claude/settings.json")).unwrap();
        assert!(
            settings.contains("hook claude-code --workspace \\\"$CLAUDE_PROJECT_DIR\\\""),
            "setup wrote no hook with a pinned workspace: {settings}"
        );
    }

    /// Run `claude -p` in the workspace against `mock`; its JSON result.
    fn claude(&self, claude: &Path, mock: &Mock) -> Value {
        let started = Instant::now();
        // A request the mock cannot answer makes the CLI retry with back-off; `timeout`
        // turns that into a failure within two minutes instead of a hang.
        let out = Command::new("timeout")
            .args(["-k", "5", "120"])
            .arg(claude)
            .args([
                "-p",
                "Run the command you are given.",
                "--output-format",
                "json",
                "--permission-mode",
                "bypassPermissions",
            ])
            .current_dir(&self.ws)
            .env_clear()
            .env("HOME", &self.home)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("LANG", "C")
            .env("TMPDIR", &self.tmp)
            .env("CORDON_STATE_DIR", self.root.join("state"))
            .env(
                "ANTHROPIC_BASE_URL",
                format!("http://127.0.0.1:{}", mock.port),
            )
            .env("ANTHROPIC_API_KEY", "sk-ant-cordon-test-dummy")
            .env("IS_SANDBOX", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let (o, e) = common::text(&out);
        eprintln!("claude -p took {:?}", started.elapsed());
        assert!(out.status.success(), "claude failed: {e}\n{o}");
        let v: Value = serde_json::from_str(o.trim())
            .unwrap_or_else(|err| panic!("claude printed no JSON result ({err}): {o}\n{e}"));
        assert_eq!(
            v["result"], "MOCK-DONE",
            "the session did not end on the mock's final text: {v}"
        );
        v
    }

    /// The audit records of the scripted call: kind, phase and decision.
    fn audit(&self) -> Vec<(String, String, String)> {
        std::fs::read_to_string(self.root.join("state/audit.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|r| r["operation_id"] == TOOL_ID)
            .map(|r| {
                let s = |k: &str| r[k].as_str().unwrap_or("").to_string();
                (s("kind"), s("phase"), s("decision"))
            })
            .collect()
    }
}

/// Does any request body the mock received hold `needle`?
fn reached_model(mock: &Mock, needle: &str) -> bool {
    mock.requests().iter().any(|(_, b)| b.contains(needle))
}

#[test]
fn an_allowed_call_runs_through_claude_code() {
    let Some(claude) = claude("an_allowed_call_runs_through_claude_code") else {
        return;
    };
    let s = Scene::new();
    s.setup(&[]);
    std::fs::write(s.ws.join("listed-by-ls.txt"), "x").unwrap();
    let mock = Mock::start(&s.root.join("requests.jsonl"), "ls");
    s.claude(&claude, &mock);
    let r = mock.tool_result();
    assert_ne!(r["is_error"], true, "ls was refused: {r}");
    assert!(
        result_text(&r).contains("listed-by-ls.txt"),
        "ls did not run in the workspace: {r}"
    );
    let audit = s.audit();
    assert!(
        audit
            .iter()
            .any(|(k, p, d)| k == "hook-claude-code" && p == "decision" && d == "allow"),
        "no allow decision of the hook for the call: {audit:?}"
    );
}

#[test]
fn a_denied_secret_read_never_reaches_the_model() {
    let Some(claude) = claude("a_denied_secret_read_never_reaches_the_model") else {
        return;
    };
    // Two spellings of the same read: by `~`, and by changing into the directory.
    for command in ["cat ~/.ssh/id_rsa", "cd \"$HOME/.ssh\" && cat id_rsa"] {
        let s = Scene::new();
        s.setup(&[]);
        let mock = Mock::start(&s.root.join("requests.jsonl"), command);
        s.claude(&claude, &mock);
        let r = mock.tool_result();
        assert_eq!(r["is_error"], true, "{command}: not blocked: {r}");
        assert!(
            result_text(&r).contains("cordon"),
            "{command}: blocked, but not by cordon: {r}"
        );
        assert!(
            !reached_model(&mock, &s.marker),
            "{command}: the fake key reached the model"
        );
        let audit = s.audit();
        assert!(
            audit
                .iter()
                .any(|(k, _, d)| k == "hook-claude-code" && d == "deny"),
            "{command}: no deny decision of the hook: {audit:?}"
        );
    }
}

/// The control of the test above: without cordon's hook the same call runs and the fake
/// key reaches the mock, so the absence above is cordon's doing and the check can fail.
#[test]
fn without_the_hook_the_secret_reaches_the_model() {
    let Some(claude) = claude("without_the_hook_the_secret_reaches_the_model") else {
        return;
    };
    let s = Scene::new();
    let mock = Mock::start(&s.root.join("requests.jsonl"), "cat ~/.ssh/id_rsa");
    s.claude(&claude, &mock);
    assert!(
        reached_model(&mock, &s.marker),
        "without cordon the key should have reached the mock: {}",
        mock.tool_result()
    );
}

#[test]
fn a_contained_call_runs_inside_the_sandbox() {
    let Some(claude) = claude("a_contained_call_runs_inside_the_sandbox") else {
        return;
    };
    need_sandbox!("a_contained_call_runs_inside_the_sandbox");
    let s = Scene::new();
    s.setup(&["--contain"]);
    // A file in the host's /tmp, which the sandbox hides: listed outside, absent inside.
    let host_only = tempfile::Builder::new()
        .prefix("cordon-harness-host-only-")
        .tempfile_in("/tmp")
        .unwrap();
    let host_name = host_only
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let mock = Mock::start(
        &s.root.join("requests.jsonl"),
        "ls -A /tmp > tmp-seen.txt; echo contained-run-done",
    );
    s.claude(&claude, &mock);
    let r = mock.tool_result();
    assert_ne!(r["is_error"], true, "the contained call failed: {r}");
    assert!(
        result_text(&r).contains("contained-run-done"),
        "the contained call's output did not reach Claude Code: {r}"
    );
    let seen = std::fs::read_to_string(s.ws.join("tmp-seen.txt"))
        .expect("the sandbox's write was not merged into the workspace");
    assert!(
        !seen.contains(&host_name),
        "the command saw the host's /tmp, so it did not run in the sandbox: {seen}"
    );
    let audit = s.audit();
    for want in ["start", "end"] {
        assert!(
            audit.iter().any(|(k, p, _)| k == "exec" && p == want),
            "no `exec` {want} record for the call: {audit:?}"
        );
    }
}
