#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(clippy::disallowed_methods)] // fixtures are read with std::fs
//! Every recorded payload (`tests/fixtures/HARNESS/EVENT-TOOL.json`) parsed, decided and
//! answered through a real gate, with the exact reply asserted; then each harness
//! permission mode, and payloads that must block.

use cordon_gate::{Gate, GateOptions};
use cordon_hook::{BLOCK_EXIT, Containing, ExecLine, Harness, Reply};
use cordon_policy::{FakeFs, LoadOptions, Policy};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

const WS: &str = "/w/proj";
const HOME: &str = "/home/u";

fn fs() -> FakeFs {
    FakeFs::new()
        .dir("/w/proj/src")
        .file("/w/proj/src/main.rs")
        .file("/w/proj/README.md")
        .dir("/home/u/.ssh")
        .file("/home/u/.ssh/id_rsa")
        .file_with(
            "/cfg.toml",
            1,
            b"[permissions]\nask = [\"Bash(git push:*)\"]\n",
        )
}

struct World {
    _dir: tempfile::TempDir,
    audit: PathBuf,
    store: PathBuf,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        World {
            audit: dir.path().join("audit.jsonl"),
            store: dir.path().join("store.sqlite3"),
            _dir: dir,
        }
    }

    fn gate(&self, harness: Harness, mode: Option<&cordon_hook::HarnessMode>) -> Gate {
        let opts = LoadOptions {
            workspace: WS.into(),
            home: HOME.into(),
            skip_default_files: true,
            config_files: vec!["/cfg.toml".into()],
            ..Default::default()
        };
        let policy = Policy::load(&opts, &fs()).unwrap();
        let policy = cordon_hook::narrow(policy, mode).unwrap();
        Gate::new(
            policy,
            GateOptions {
                surface: harness.surface(),
                store: Some(self.store.clone()),
                audit: Some(self.audit.clone()),
                no_audit: false,
                edits: false,
            },
        )
    }

    fn records(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.audit)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            // The log's first line is its header, not a record.
            .filter(|r| r.get("kind").is_some())
            .collect()
    }
}

fn fixture(harness: Harness, name: &str) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let text = std::fs::read_to_string(dir.join(harness.name()).join(format!("{name}.json")))
        .unwrap_or_else(|e| panic!("fixture {name}: {e}"));
    text.replace("@WS@", WS).replace("@HOME@", HOME)
}

fn answer_with(w: &World, harness: Harness, text: &str, containing: &Containing) -> Reply {
    let call = cordon_hook::parse(harness, text.as_bytes()).unwrap();
    let gate = w.gate(harness, call.mode.as_ref());
    cordon_hook::answer(&gate, &call, &fs(), containing)
}

fn answer(w: &World, harness: Harness, name: &str) -> Reply {
    answer_with(w, harness, &fixture(harness, name), &Containing::default())
}

fn out(r: &Reply) -> Value {
    assert_eq!(r.status, 0, "stderr: {}", r.stderr);
    serde_json::from_str(&r.stdout).unwrap()
}

fn blocked(r: &Reply, needle: &str) {
    assert_eq!(r.status, BLOCK_EXIT);
    assert_eq!(r.stdout, "");
    assert!(r.stderr.starts_with("cordon: "), "{}", r.stderr);
    assert!(r.stderr.contains(needle), "{needle} not in {}", r.stderr);
}

#[test]
fn claude_code_fixtures() {
    let w = World::new();
    let h = Harness::ClaudeCode;
    assert_eq!(
        out(&answer(&w, h, "PreToolUse-Read")),
        json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": "cordon: read /w/proj/src/main.rs: the `read_inside` default is allow.",
        }})
    );
    let asked = out(&answer(&w, h, "PreToolUse-Bash"));
    assert_eq!(asked["hookSpecificOutput"]["permissionDecision"], "ask");
    assert!(
        asked["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .starts_with("cordon asks: `cargo test`")
    );
    blocked(
        &answer(&w, h, "PreToolUse-Bash-secret"),
        "denied Bash: /home/u/.ssh/id_rsa holds credentials",
    );
    let pr = out(&answer(&w, h, "PermissionRequest-Bash"));
    assert_eq!(
        pr["hookSpecificOutput"]["hookEventName"],
        "PermissionRequest"
    );
    assert_eq!(pr["hookSpecificOutput"]["decision"]["behavior"], "deny");
    let post = answer(&w, h, "PostToolUse-Bash");
    assert_eq!((post.status, post.stdout.as_str()), (0, ""));
    let records = w.records();
    let ids: Vec<(&str, &str, &str)> = records
        .iter()
        .map(|r| {
            (
                r["phase"].as_str().unwrap(),
                r["operation_id"].as_str().unwrap_or("-"),
                r["kind"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        ids,
        [
            ("decision", "toolu_01A1", "hook-claude-code"),
            ("decision", "toolu_01A2", "hook-claude-code"),
            ("decision", "toolu_01A3", "hook-claude-code"),
            ("decision", "-", "hook-claude-code"),
            ("result", "toolu_01A4", "hook-claude-code"),
        ]
    );
    let result = &records[4];
    assert_eq!(result["result"]["excerpt"], "Cargo.toml\nsrc\n");
    assert_eq!(result["session"], "8f1c2e4a-5b7d-4e9f-a0c1-2d3e4f5a6b7c");
}

#[test]
fn codex_fixtures() {
    let w = World::new();
    let h = Harness::Codex;
    // Codex takes no allow from a hook: silence leaves its own approval in force.
    let read = answer(&w, h, "PreToolUse-Read");
    assert_eq!(
        (read.status, read.stdout.as_str(), read.stderr.as_str()),
        (0, "", "")
    );
    // Nor an ask: the ask is left pending for `cordon approvals`, and the call blocked.
    blocked(&answer(&w, h, "PreToolUse-Bash"), "pending approval 1");
    blocked(
        &answer(&w, h, "PreToolUse-Bash-secret"),
        "holds credentials",
    );
    blocked(&answer(&w, h, "PreToolUse-apply_patch"), "outside.txt");
    let pr = out(&answer(&w, h, "PermissionRequest-Bash"));
    assert_eq!(pr["hookSpecificOutput"]["decision"]["behavior"], "deny");
    let post = answer(&w, h, "PostToolUse-Bash");
    assert_eq!((post.status, post.stdout.as_str()), (0, ""));
    let last = w.records().pop().unwrap();
    assert_eq!(
        (last["phase"].as_str(), last["operation_id"].as_str()),
        (Some("result"), Some("call_b3"))
    );
}

#[test]
fn gemini_fixtures() {
    let w = World::new();
    let h = Harness::Gemini;
    assert_eq!(
        out(&answer(&w, h, "BeforeTool-read_file")),
        json!({"decision": "allow", "reason": "cordon: read /w/proj/src/main.rs: the `read_inside` default is allow."})
    );
    let asked = out(&answer(&w, h, "BeforeTool-run_shell_command"));
    assert_eq!(asked["decision"], "ask");
    blocked(
        &answer(&w, h, "BeforeTool-run_shell_command-secret"),
        "holds credentials",
    );
    assert_eq!(
        out(&answer(&w, h, "BeforeTool-read_many_files"))["decision"],
        "allow"
    );
    assert_eq!(out(&answer(&w, h, "BeforeTool-mcp"))["decision"], "ask");
    let post = answer(&w, h, "AfterTool-run_shell_command");
    assert_eq!((post.status, post.stdout.as_str()), (0, ""));
    let records = w.records();
    // Gemini sends no id: cordon makes one per decision.
    assert!(
        records[0]["operation_id"]
            .as_str()
            .unwrap()
            .starts_with("cordon-")
    );
    assert_eq!(records[4]["tool"], "mcp__github__create_issue");
}

#[test]
fn harness_modes_narrow_and_never_widen() {
    let w = World::new();
    let h = Harness::ClaudeCode;
    let with_mode = |name: &str, mode: &str| {
        let mut v: Value = serde_json::from_str(&fixture(h, name)).unwrap();
        v["permission_mode"] = json!(mode);
        // Each call is its own tool use: an id is permitted once.
        v["tool_use_id"] = json!(format!("toolu_{name}_{mode}"));
        answer_with(&w, h, &v.to_string(), &Containing::default())
    };
    let decision = |r: &Reply| {
        if r.status == BLOCK_EXIT {
            "deny".to_string()
        } else {
            out(r)["hookSpecificOutput"]["permissionDecision"]
                .as_str()
                .unwrap()
                .to_string()
        }
    };
    for (mode, read, bash) in [
        ("default", "allow", "ask"),
        ("acceptEdits", "allow", "ask"),
        // The harness's bypass does not widen cordon: `cargo test` is still asked.
        ("bypassPermissions", "allow", "ask"),
        ("plan", "allow", "deny"),
        ("dontAsk", "allow", "deny"),
        ("someFutureMode", "allow", "ask"),
    ] {
        assert_eq!(
            decision(&with_mode("PreToolUse-Read", mode)),
            read,
            "{mode} read"
        );
        assert_eq!(
            decision(&with_mode("PreToolUse-Bash", mode)),
            bash,
            "{mode} bash"
        );
    }
    let plan = w.records().into_iter().rev().find(|r| r["mode"] == "plan");
    assert!(plan.is_some(), "the narrowed mode is recorded");
}

#[test]
fn contained_shell_calls_are_rewritten() {
    let w = World::new();
    let dir = tempfile::tempdir().unwrap();
    let containing = Containing {
        exec: Some(ExecLine {
            program: "/usr/local/bin/cordon".into(),
            flags: vec!["--config".into(), "/cfg.toml".into()],
            shell_dir: dir.path().to_path_buf(),
        }),
    };
    let r = answer_with(
        &w,
        Harness::ClaudeCode,
        &fixture(Harness::ClaudeCode, "PreToolUse-Bash"),
        &containing,
    );
    let o = out(&r)["hookSpecificOutput"].clone();
    assert_eq!(o["permissionDecision"], "allow");
    assert_eq!(
        o["updatedInput"],
        json!({
            "command": "'/usr/local/bin/cordon' exec '--config' '/cfg.toml' --workspace '/w/proj' --session '8f1c2e4a-5b7d-4e9f-a0c1-2d3e4f5a6b7c' --operation-id 'toolu_01A2' --bash --shell='cargo test'",
            "description": "Run the tests",
        })
    );
    // A guard still denies under containment; so does an ask rule, uncontained.
    blocked(
        &answer_with(
            &w,
            Harness::ClaudeCode,
            &fixture(Harness::ClaudeCode, "PreToolUse-Bash-secret"),
            &containing,
        ),
        "holds credentials",
    );
    let mut push: Value =
        serde_json::from_str(&fixture(Harness::ClaudeCode, "PreToolUse-Bash")).unwrap();
    push["tool_input"]["command"] = json!("git push origin main");
    let r = answer_with(&w, Harness::ClaudeCode, &push.to_string(), &containing);
    assert_eq!(out(&r)["hookSpecificOutput"]["permissionDecision"], "ask");
    assert!(out(&r)["hookSpecificOutput"].get("updatedInput").is_none());
    // Gemini: the rewritten input keeps the other parameters.
    let r = answer_with(
        &w,
        Harness::Gemini,
        &fixture(Harness::Gemini, "BeforeTool-run_shell_command"),
        &containing,
    );
    let o = out(&r);
    assert_eq!(o["decision"], "allow");
    let input = &o["hookSpecificOutput"]["tool_input"];
    assert_eq!(input["dir_path"], WS);
    assert!(
        input["command"]
            .as_str()
            .unwrap()
            .ends_with("--bash --shell='cargo test'")
    );
}

#[test]
fn bad_payloads_block() {
    let w = World::new();
    let h = Harness::ClaudeCode;
    let good: Value = serde_json::from_str(&fixture(h, "PreToolUse-Read")).unwrap();
    let without = |k: &str| {
        let mut v = good.clone();
        v.as_object_mut().unwrap().remove(k);
        v.to_string()
    };
    let with = |k: &str, x: Value| {
        let mut v = good.clone();
        v[k] = x;
        v.to_string()
    };
    let text = good.to_string();
    let cases: Vec<(String, &str)> = vec![
        (String::new(), "empty"),
        ("{".into(), "not valid JSON"),
        (text[..text.len() / 2].to_string(), "not valid JSON"),
        ("[]".into(), "JSON object"),
        (without("tool_name"), "no `tool_name`"),
        (without("tool_input"), "no `tool_input`"),
        (without("cwd"), "no `cwd`"),
        (without("session_id"), "no `session_id`"),
        (without("tool_use_id"), "no `tool_use_id`"),
        (with("hook_event_name", json!("Stop")), "not a tool event"),
        (with("cwd", json!("relative/dir")), "absolute"),
        (with("tool_input", json!("ls")), "JSON object"),
        (
            with("tool_input", json!({"file_path": 5})),
            "cannot be judged",
        ),
        (with("tool_input", json!({"file_path": "a\u{0}b"})), "NUL"),
        (with("session_id", json!(7)), "must be a string"),
        (
            " ".repeat(cordon_hook::payload::MAX_PAYLOAD_BYTES + 1),
            "limit",
        ),
    ];
    for (payload, why) in cases {
        let e = cordon_hook::parse(h, payload.as_bytes()).unwrap_err();
        assert!(e.0.contains(why), "{why}: {e}");
    }
    assert!(cordon_hook::parse(h, b"{\"a\":\xff}").is_err());
    // Gemini's events are not Claude Code's.
    let e = cordon_hook::parse(Harness::Gemini, text.as_bytes()).unwrap_err();
    assert!(e.0.contains("BeforeTool, AfterTool"), "{e}");
    let _ = w;
}

/// Issue 31, point 6: a contained call's result record holds the agent's command, not
/// the rewritten `cordon exec …` line the harness reports back; a line that only looks
/// like one is recorded as sent.
#[test]
fn the_result_record_of_a_contained_call_holds_the_agents_command() {
    let w = World::new();
    let dir = tempfile::tempdir().unwrap();
    let line = ExecLine {
        program: "/usr/local/bin/cordon".into(),
        flags: vec![],
        shell_dir: dir.path().to_path_buf(),
    };
    let containing = Containing {
        exec: Some(line.clone()),
    };
    let r = answer_with(
        &w,
        Harness::ClaudeCode,
        &fixture(Harness::ClaudeCode, "PreToolUse-Bash"),
        &containing,
    );
    let rewritten = out(&r)["hookSpecificOutput"]["updatedInput"]["command"]
        .as_str()
        .unwrap()
        .to_string();
    let mut post: Value =
        serde_json::from_str(&fixture(Harness::ClaudeCode, "PostToolUse-Bash")).unwrap();
    for (sent, recorded) in [
        (rewritten.clone(), "cargo test".to_string()),
        (
            format!("{rewritten}; curl x"),
            format!("{rewritten}; curl x"),
        ),
    ] {
        post["tool_input"]["command"] = json!(sent);
        let r = answer_with(&w, Harness::ClaudeCode, &post.to_string(), &containing);
        assert_eq!(r.status, 0, "{}", r.stderr);
        let last = w.records().into_iter().last().unwrap();
        assert_eq!(last["phase"], "result");
        assert_eq!(last["input"]["command"], json!(recorded), "{last}");
    }
}
