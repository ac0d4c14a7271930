#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code
//! The real harness CLIs, pinned by `scripts/install-test-deps.sh` in
//! `.test-deps/harness`, driven headless against a local mock model server, with the
//! hook entries `cordon setup` writes:
//!
//! - Claude Code (`claude -p … --output-format json`) against a mock of the Anthropic
//!   Messages API (`tests/harness/mock-anthropic.py`), hooks from `cordon setup
//!   claude-code --project WS`;
//! - Gemini CLI (`gemini -p … --output-format json --yolo --skip-trust`) against a mock of
//!   the Gemini API (`tests/harness/mock-gemini.py`), hooks from `cordon setup gemini`
//!   (the user's settings: docs/guide/hook.md's advice for headless runs, where `--skip-trust`
//!   drops project hooks).
//!
//! Each mock answers the first turn with one scripted shell call and the next with the
//! text `MOCK-DONE`, and records every request body it receives: what the model would
//! have seen. The harnesses' own approval is off (Claude Code's `bypassPermissions`,
//! which as root needs `IS_SANDBOX=1`; Gemini CLI's `--yolo`), so cordon's hook is the
//! only thing between the scripted call and the machine (the control test shows the
//! secret then reaches the mock). Nothing leaves the machine: the base URL is the mock's,
//! non-essential traffic and the auto-updater are off.
//!
//! Without a CLI or python3 the tests skip with a reason, except in CI (`CI=true` or
//! `CORDON_REQUIRE_SANDBOX_TESTS=1`), where that is a failure. A change in a harness's
//! protocol (its requests, its tool, its hook payload) fails the assertions on what the
//! mock received and what the CLI printed.

mod common;

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

/// A harness under test.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Harness {
    Claude,
    Gemini,
    Codex,
}

impl Harness {
    /// Its executable in `node_modules/.bin`.
    fn program(self) -> &'static str {
        match self {
            Harness::Claude => "claude",
            Harness::Gemini => "gemini",
            Harness::Codex => "codex",
        }
    }

    /// Its mock model server in `tests/harness`.
    fn mock(self) -> &'static str {
        match self {
            Harness::Claude => "mock-anthropic.py",
            Harness::Gemini => "mock-gemini.py",
            Harness::Codex => "mock-openai.py",
        }
    }

    /// The `kind` of the hook's audit records.
    fn kind(self) -> &'static str {
        match self {
            Harness::Claude => "hook-claude-code",
            Harness::Gemini => "hook-gemini",
            Harness::Codex => "hook-codex",
        }
    }

    /// The pinned CLI, or `None` (a skip, or a failure in CI) when missing.
    fn cli(self, test: &str) -> Option<PathBuf> {
        let base = std::env::var_os("CORDON_HARNESS_TEST_DEPS")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.test-deps/harness")
            });
        let bin = base.join("node_modules/.bin").join(self.program());
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
}

/// The mock model server; killed when dropped.
struct Mock {
    child: Child,
    port: u16,
    record: PathBuf,
    harness: Harness,
}

impl Mock {
    /// A mock that scripts one shell call of `command`, recording into `record`.
    fn start(harness: Harness, record: &Path, command: &str) -> Mock {
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/harness")
            .join(harness.mock());
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
            harness,
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

    /// What the harness sent back to the model for the scripted call (the last one
    /// found): whether it is an error, and its text. A failure saying what the mock
    /// received when there is none.
    fn tool_result(&self) -> (bool, String) {
        let reqs = self.requests();
        let bodies = reqs
            .iter()
            .filter_map(|(_, b)| serde_json::from_str::<Value>(b).ok());
        let found = match self.harness {
            Harness::Claude => bodies
                .flat_map(|b| b["messages"].as_array().cloned().unwrap_or_default())
                .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
                .rfind(|c| c["type"] == "tool_result" && c["tool_use_id"] == TOOL_ID)
                .map(|r| (r["is_error"] == true, text_of(&r["content"]))),
            Harness::Gemini => bodies
                .flat_map(|b| b["contents"].as_array().cloned().unwrap_or_default())
                .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
                .rfind(|p| p["functionResponse"]["name"] == "run_shell_command")
                .map(|p| {
                    let r = &p["functionResponse"]["response"];
                    (r.get("error").is_some(), r.to_string())
                }),
            // Codex sends the output text alone; a hook's block is said in it.
            Harness::Codex => bodies
                .flat_map(|b| b["input"].as_array().cloned().unwrap_or_default())
                .rfind(|i| i["type"] == "function_call_output")
                .map(|i| {
                    let t = text_of(&i["output"]);
                    (t.contains("blocked by PreToolUse hook"), t)
                }),
        };
        found.unwrap_or_else(|| {
            let paths: Vec<&String> = reqs.iter().map(|(p, _)| p).collect();
            panic!(
                "{:?} sent no result for the scripted call (protocol change?); requests: {paths:?}",
                self.harness
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

/// The mock's scripted Claude Code call's id (see the mock).
const TOOL_ID: &str = "toolu_cordon_mock_1";

/// The text of a tool_result's content (a string or a list of text blocks).
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(a) => a
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}

/// A workspace, a fake HOME holding a fake SSH key with a unique marker, a TMPDIR and
/// cordon's state directory, under a fresh temporary directory.
struct Scene {
    _tmp: tempfile::TempDir,
    harness: Harness,
    cli: PathBuf,
    root: PathBuf,
    ws: PathBuf,
    home: PathBuf,
    marker: String,
}

impl Scene {
    fn new(harness: Harness, cli: &Path) -> Scene {
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
        if harness == Harness::Codex {
            // A model provider at the mock (its port is given at each run), updates off.
            std::fs::create_dir_all(home.join(".codex")).unwrap();
            std::fs::write(
                home.join(".codex/config.toml"),
                "model = \"mock-model\"\nmodel_provider = \"mock\"\ncheck_for_update_on_startup = false\n\
                 [model_providers.mock]\nname = \"mock\"\nwire_api = \"responses\"\nenv_key = \"OPENAI_API_KEY\"\n",
            )
            .unwrap();
        }
        if harness == Harness::Gemini {
            // Gemini CLI's API-key login, chosen as its first run would save it, with
            // usage statistics and updates off; `cordon setup` must keep these when it
            // merges its hooks in.
            std::fs::create_dir_all(home.join(".gemini")).unwrap();
            std::fs::write(
                home.join(".gemini/settings.json"),
                r#"{"security": {"auth": {"selectedType": "gemini-api-key"}},
                    "privacy": {"usageStatisticsEnabled": false},
                    "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false}}"#,
            )
            .unwrap();
        }
        Scene {
            _tmp: tmp,
            harness,
            cli: cli.to_path_buf(),
            root,
            ws,
            home,
            marker,
        }
    }

    /// `cordon setup` for this harness, as a user would run it (`--project WS` for
    /// Claude Code, the user's settings for Gemini CLI), with `extra`.
    fn setup(&self, extra: &[&str]) {
        let mut c = Command::new(common::bin());
        match self.harness {
            Harness::Claude => c.args(["setup", "claude-code", "--project"]).arg(&self.ws),
            Harness::Gemini => c.args(["setup", "gemini", "--user"]),
            Harness::Codex => c.args(["setup", "codex", "--user"]),
        };
        let out = c
            .args(extra)
            .env_clear()
            .env("HOME", &self.home)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("CORDON_STATE_DIR", self.root.join("state"))
            .output()
            .unwrap();
        let (o, e) = common::text(&out);
        assert!(out.status.success(), "cordon setup failed: {e}\n{o}");
        let (file, pin) = match self.harness {
            Harness::Claude => (
                self.ws.join(".claude/settings.json"),
                r#"hook claude-code --workspace \"$CLAUDE_PROJECT_DIR\""#,
            ),
            Harness::Gemini => (
                self.home.join(".gemini/settings.json"),
                r#"hook gemini --workspace \"$GEMINI_PROJECT_DIR\""#,
            ),
            Harness::Codex => (
                self.home.join(".codex/hooks.json"),
                r#"hook codex --workspace \"$PWD\""#,
            ),
        };
        let settings = std::fs::read_to_string(file).unwrap();
        assert!(
            settings.contains(pin),
            "setup wrote no hook with a pinned workspace: {settings}"
        );
        if self.harness == Harness::Gemini {
            assert!(
                settings.contains("gemini-api-key"),
                "setup dropped the login: {settings}"
            );
        }
    }

    /// Run the harness headless in the workspace against `mock` and check that its
    /// session ended on the mock's final text.
    fn run(&self, mock: &Mock) {
        let started = Instant::now();
        let out = self.command(mock).output().unwrap();
        self.finish(started, &out);
    }

    /// The harness's headless command in the workspace against `mock`.
    fn command(&self, mock: &Mock) -> Command {
        // A request the mock cannot answer makes the CLI retry with back-off; `timeout`
        // turns that into a failure within two minutes instead of a hang.
        let mut c = Command::new("timeout");
        c.args(["-k", "5", "120"])
            .arg(&self.cli)
            .current_dir(&self.ws)
            .env_clear()
            .env("HOME", &self.home)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("LANG", "C")
            .env("TMPDIR", self.root.join("tmp"))
            .env("CORDON_STATE_DIR", self.root.join("state"))
            .stdin(Stdio::null());
        let base = format!("http://127.0.0.1:{}", mock.port);
        match self.harness {
            Harness::Claude => c
                .args(["-p", "Run the command you are given."])
                .args(["--output-format", "json"])
                .args(["--permission-mode", "bypassPermissions"])
                .env("ANTHROPIC_BASE_URL", base)
                .env("ANTHROPIC_API_KEY", "sk-ant-cordon-test-dummy")
                .env("IS_SANDBOX", "1")
                .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
                .env("DISABLE_AUTOUPDATER", "1"),
            Harness::Gemini => c
                .args(["-p", "Run the command you are given."])
                .args(["--output-format", "json", "--yolo", "--skip-trust"])
                .env("GOOGLE_GEMINI_BASE_URL", base)
                .env("GEMINI_API_KEY", "cordon-test-dummy")
                .env("GEMINI_TELEMETRY_ENABLED", "false"),
            // Codex skips hooks the user has not trusted in its UI (`/hooks`); a test has
            // no UI, so trust is bypassed for the run (what the trust step gives a user).
            Harness::Codex => c
                .args(["exec", "--skip-git-repo-check", "--json"])
                .args(["--dangerously-bypass-approvals-and-sandbox"])
                .arg("--dangerously-bypass-hook-trust")
                .arg("-c")
                .arg(format!("model_providers.mock.base_url=\"{base}/v1\""))
                .arg("Run the command you are given.")
                .env("CODEX_HOME", self.home.join(".codex"))
                .env("OPENAI_API_KEY", "cordon-test-dummy"),
        };
        c
    }

    /// Check a headless run's output: it succeeded and ended on the mock's final text.
    fn finish(&self, started: Instant, out: &std::process::Output) {
        let (o, e) = common::text(out);
        eprintln!(
            "{:?} headless run took {:?}",
            self.harness,
            started.elapsed()
        );
        assert!(out.status.success(), "{:?} failed: {e}\n{o}", self.harness);
        let v: Value = match self.harness {
            // One JSON event a line; the final agent message is the last message item.
            Harness::Codex => o
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .rfind(|v| v["item"]["type"] == "agent_message")
                .map(|v| v["item"].clone())
                .unwrap_or_else(|| panic!("no agent message: {o}\n{e}")),
            _ => serde_json::from_str(o.trim())
                .unwrap_or_else(|err| panic!("no JSON result ({err}): {o}\n{e}")),
        };
        let last = match self.harness {
            Harness::Claude => &v["result"],
            Harness::Gemini => &v["response"],
            Harness::Codex => &v["text"],
        };
        assert_eq!(
            last, "MOCK-DONE",
            "the session did not end on the mock's final text: {v}"
        );
    }

    /// The audit records: kind, phase, decision and operation id.
    fn audit(&self) -> Vec<[String; 4]> {
        std::fs::read_to_string(self.root.join("state/audit.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .map(|r| {
                ["kind", "phase", "decision", "operation_id"]
                    .map(|k| r[k].as_str().unwrap_or("").to_string())
            })
            .collect()
    }

    /// The hook's decision records for the call.
    fn decisions(&self) -> Vec<String> {
        self.audit()
            .into_iter()
            .filter(|[k, p, _, _]| k == self.harness.kind() && p == "decision")
            .map(|[_, _, d, _]| d)
            .collect()
    }
}

/// Does any request body the mock received hold `needle`?
fn reached_model(mock: &Mock, needle: &str) -> bool {
    mock.requests().iter().any(|(_, b)| b.contains(needle))
}

fn allowed_call_runs(h: Harness, test: &str) {
    let Some(cli) = h.cli(test) else {
        return;
    };
    let s = Scene::new(h, &cli);
    s.setup(&[]);
    std::fs::write(s.ws.join("listed-by-ls.txt"), "x").unwrap();
    let mock = Mock::start(h, &s.root.join("requests.jsonl"), "ls");
    s.run(&mock);
    let (error, text) = mock.tool_result();
    assert!(!error, "ls was refused: {text}");
    assert!(
        text.contains("listed-by-ls.txt"),
        "ls did not run in the workspace: {text}"
    );
    assert_eq!(s.decisions(), ["allow"], "the hook's decisions");
}

fn denied_secret_read_never_reaches_the_model(h: Harness, test: &str) {
    let Some(cli) = h.cli(test) else {
        return;
    };
    // Two spellings of the same read: by `~`, and by changing into the directory.
    for command in ["cat ~/.ssh/id_rsa", "cd \"$HOME/.ssh\" && cat id_rsa"] {
        let s = Scene::new(h, &cli);
        s.setup(&[]);
        let mock = Mock::start(h, &s.root.join("requests.jsonl"), command);
        s.run(&mock);
        let (error, text) = mock.tool_result();
        assert!(error, "{command}: not blocked: {text}");
        assert!(
            text.contains("cordon"),
            "{command}: blocked, but not by cordon: {text}"
        );
        assert!(
            !reached_model(&mock, &s.marker),
            "{command}: the fake key reached the model"
        );
        assert_eq!(s.decisions(), ["deny"], "{command}: the hook's decisions");
    }
}

/// The control of the test above: without cordon's hook the same call runs and the fake
/// key reaches the mock, so the absence above is cordon's doing and the check can fail.
fn without_the_hook_the_secret_reaches_the_model(h: Harness, test: &str) {
    let Some(cli) = h.cli(test) else {
        return;
    };
    let s = Scene::new(h, &cli);
    let mock = Mock::start(h, &s.root.join("requests.jsonl"), "cat ~/.ssh/id_rsa");
    s.run(&mock);
    assert!(
        reached_model(&mock, &s.marker),
        "without cordon the key should have reached the mock: {:?}",
        mock.tool_result()
    );
}

fn contained_call_runs_inside_the_sandbox(h: Harness, test: &str) {
    let Some(cli) = h.cli(test) else {
        return;
    };
    if !common::full_tier_or_skip(test) {
        return;
    }
    let s = Scene::new(h, &cli);
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
        h,
        &s.root.join("requests.jsonl"),
        "ls -A /tmp > tmp-seen.txt; echo contained-run-done",
    );
    s.run(&mock);
    let (error, text) = mock.tool_result();
    assert!(!error, "the contained call failed: {text}");
    assert!(
        text.contains("contained-run-done"),
        "the contained call's output did not reach the harness: {text}"
    );
    let seen = std::fs::read_to_string(s.ws.join("tmp-seen.txt"))
        .expect("the sandbox's write was not merged into the workspace");
    assert!(
        !seen.contains(&host_name),
        "the command saw the host's /tmp, so it did not run in the sandbox: {seen}"
    );
    // The hook's allow and the sandboxed run are one operation.
    let audit = s.audit();
    let id = audit
        .iter()
        .find(|[k, p, d, _]| k == h.kind() && p == "decision" && d == "allow")
        .map(|r| r[3].clone())
        .unwrap_or_else(|| panic!("no allow decision of the hook: {audit:?}"));
    for want in ["start", "end"] {
        assert!(
            audit
                .iter()
                .any(|[k, p, _, op]| k == "exec" && p == want && *op == id),
            "no `exec` {want} record for the call {id}: {audit:?}"
        );
    }
}

#[test]
fn claude_code_an_allowed_call_runs() {
    allowed_call_runs(Harness::Claude, "claude_code_an_allowed_call_runs");
}

#[test]
fn claude_code_a_denied_secret_read_never_reaches_the_model() {
    denied_secret_read_never_reaches_the_model(
        Harness::Claude,
        "claude_code_a_denied_secret_read_never_reaches_the_model",
    );
}

#[test]
fn claude_code_without_the_hook_the_secret_reaches_the_model() {
    without_the_hook_the_secret_reaches_the_model(
        Harness::Claude,
        "claude_code_without_the_hook_the_secret_reaches_the_model",
    );
}

#[test]
fn claude_code_a_contained_call_runs_inside_the_sandbox() {
    contained_call_runs_inside_the_sandbox(
        Harness::Claude,
        "claude_code_a_contained_call_runs_inside_the_sandbox",
    );
}

#[test]
fn gemini_an_allowed_call_runs() {
    allowed_call_runs(Harness::Gemini, "gemini_an_allowed_call_runs");
}

#[test]
fn gemini_a_denied_secret_read_never_reaches_the_model() {
    denied_secret_read_never_reaches_the_model(
        Harness::Gemini,
        "gemini_a_denied_secret_read_never_reaches_the_model",
    );
}

#[test]
fn gemini_without_the_hook_the_secret_reaches_the_model() {
    without_the_hook_the_secret_reaches_the_model(
        Harness::Gemini,
        "gemini_without_the_hook_the_secret_reaches_the_model",
    );
}

#[test]
fn gemini_a_contained_call_runs_inside_the_sandbox() {
    contained_call_runs_inside_the_sandbox(
        Harness::Gemini,
        "gemini_a_contained_call_runs_inside_the_sandbox",
    );
}

#[test]
fn codex_an_allowed_call_runs() {
    allowed_call_runs(Harness::Codex, "codex_an_allowed_call_runs");
}

#[test]
fn codex_a_denied_secret_read_never_reaches_the_model() {
    denied_secret_read_never_reaches_the_model(
        Harness::Codex,
        "codex_a_denied_secret_read_never_reaches_the_model",
    );
}

#[test]
fn codex_without_the_hook_the_secret_reaches_the_model() {
    without_the_hook_the_secret_reaches_the_model(
        Harness::Codex,
        "codex_without_the_hook_the_secret_reaches_the_model",
    );
}

/// The id in "pending approval N" of a text, if any.
fn pending_id(text: &str) -> Option<String> {
    let at = text.find("pending approval ")? + "pending approval ".len();
    let id: String = text[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    (!id.is_empty()).then_some(id)
}

/// Codex takes no allow from a hook, so an ask blocks the call with a pending approval;
/// the human approves it at a second terminal and the agent's retry, under a new call
/// id, runs on the lease (the flow docs/guide/hook.md documents, one human action).
#[test]
fn codex_approve_then_retry_runs_the_call() {
    let test = "codex_approve_then_retry_runs_the_call";
    let Some(cli) = Harness::Codex.cli(test) else {
        return;
    };
    let s = Scene::new(Harness::Codex, &cli);
    s.setup(&[]);
    let record = s.root.join("requests.jsonl");
    // A read outside the workspace: asked by default.
    let mock = Mock::start(
        Harness::Codex,
        &record,
        "ls -d /tmp && echo approved-run-done",
    );
    let started = Instant::now();
    let child = s
        .command(&mock)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let id = loop {
        if let Some(id) = mock.requests().iter().find_map(|(_, b)| pending_id(b)) {
            break id;
        }
        assert!(
            started.elapsed().as_secs() < 90,
            "no pending approval reached the model: {:?}",
            mock.requests()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let out = Command::new(common::bin())
        .args(["approvals", "approve", &id])
        .env_clear()
        .env("HOME", &s.home)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("CORDON_STATE_DIR", s.root.join("state"))
        .output()
        .unwrap();
    let (o, e) = common::text(&out);
    assert!(out.status.success(), "approving {id} failed: {e}\n{o}");
    // The mock holds the retry until now.
    std::fs::write(s.root.join("requests.jsonl.go"), "").unwrap();
    s.finish(started, &child.wait_with_output().unwrap());
    let (blocked, text) = mock.tool_result();
    assert!(!blocked, "the retry was blocked: {text}");
    assert!(
        text.contains("approved-run-done"),
        "the approved call did not run: {text}"
    );
    let calls: Vec<[String; 4]> = s
        .audit()
        .into_iter()
        .filter(|[k, p, _, _]| k == "hook-codex" && p == "decision")
        .collect();
    assert_eq!(calls.len(), 2, "one ask and one retry: {calls:?}");
    assert_ne!(calls[0][2], "allow", "the first attempt: {calls:?}");
    assert_eq!(calls[1][2], "allow", "the retry: {calls:?}");
    assert_ne!(
        calls[0][3], calls[1][3],
        "the retry's call id is new: {calls:?}"
    );
}
