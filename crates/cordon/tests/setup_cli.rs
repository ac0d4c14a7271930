#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code
//! `cordon setup` and the harness part of `cordon doctor` (issue 31, item 2): the hook
//! entries merged into each harness's settings without clobbering them, idempotent, a
//! broken file left untouched; the entries it writes really run (through `sh -c`, as the
//! harnesses run hook commands) with the workspace pinned; doctor says where the hook
//! is and whether the harness will run it.

mod common;

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

struct Env {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    ws: PathBuf,
    bin: PathBuf,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let (home, ws, bin) = (root.join("home"), root.join("ws"), root.join("bin"));
        for d in [&home, &ws, &bin, &ws.join("src")] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(ws.join("src/main.rs"), "fn main() {}\n").unwrap();
        Env {
            _tmp: tmp,
            root,
            home,
            ws,
            bin,
        }
    }

    fn cordon(&self, args: &[&str]) -> Output {
        Command::new(common::bin())
            .args(args)
            .current_dir(&self.ws)
            .env_clear()
            .env("HOME", &self.home)
            .env("CORDON_STATE_DIR", self.root.join("state"))
            .env("CODEX_HOME", self.home.join("codex-home"))
            .env("XDG_RUNTIME_DIR", self.root.join("run"))
            .env("PATH", format!("{}:/usr/bin:/bin", self.bin.display()))
            .output()
            .unwrap()
    }

    fn json(&self, path: &Path) -> Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    /// A harness CLI on PATH (a stub: doctor only looks for it).
    fn put_on_path(&self, name: &str) {
        use std::os::unix::fs::PermissionsExt;
        let p = self.bin.join(name);
        std::fs::write(&p, "#!/bin/sh\nexit 0\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

fn ok(o: &Output) -> String {
    let (out, err) = common::text(o);
    assert_eq!(o.status.code(), Some(0), "stdout {out} stderr {err}");
    out
}

fn commands(v: &Value, event: &str) -> Vec<String> {
    v["hooks"][event]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["hooks"].as_array().unwrap().clone())
        .map(|h| h["command"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn setup_merges_keeps_others_replaces_its_own_and_is_idempotent() {
    let e = Env::new();
    let file = e.home.join(".claude/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let before = json!({
        "model": "opus",
        "permissions": {"deny": ["Read(./.env)"]},
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/bin/audit-bash"}]},
                {"matcher": "*", "hooks": [{"type": "command", "command": "cordon hook claude-code"}]}
            ],
            "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
        }
    });
    std::fs::write(&file, serde_json::to_string_pretty(&before).unwrap()).unwrap();
    let out = ok(&e.cordon(&["setup", "claude-code", "--contain"]));
    assert!(out.contains("replacing 1 earlier"), "{out}");
    let v = e.json(&file);
    assert_eq!(v["model"], "opus");
    assert_eq!(v["permissions"], before["permissions"]);
    assert_eq!(v["hooks"]["Stop"], before["hooks"]["Stop"]);
    let pre = commands(&v, "PreToolUse");
    assert_eq!(pre.len(), 2, "{pre:?}");
    assert_eq!(pre[0], "/usr/bin/audit-bash");
    let bin = std::fs::canonicalize(common::bin()).unwrap();
    assert_eq!(
        pre[1],
        format!(
            "'{}' hook claude-code --workspace \"$CLAUDE_PROJECT_DIR\" --contain",
            bin.display()
        )
    );
    for event in ["PermissionRequest", "PostToolUse"] {
        let c = commands(&v, event);
        assert_eq!(c.len(), 1);
        assert!(
            c[0].ends_with("--workspace \"$CLAUDE_PROJECT_DIR\""),
            "{c:?}"
        );
    }
    // Again: nothing changes, byte for byte.
    let bytes = std::fs::read(&file).unwrap();
    let out = ok(&e.cordon(&["setup", "claude-code", "--contain"]));
    assert!(out.contains("nothing changed"), "{out}");
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
    // Without --contain: its own entries replaced, not added to.
    ok(&e.cordon(&["setup", "claude-code"]));
    let pre = commands(&e.json(&file), "PreToolUse");
    assert_eq!(pre.len(), 2, "{pre:?}");
    assert!(!pre[1].contains("--contain"));
}

#[test]
fn a_broken_settings_file_is_left_untouched() {
    let e = Env::new();
    let file = e.ws.join(".claude/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    for broken in [
        "{\"hooks\": {\"PreToolUse\": [",
        "// a comment\n{}",
        "[1, 2]",
        "{\"hooks\": []}",
        "{\"hooks\": {\"PreToolUse\": {}}}",
    ] {
        std::fs::write(&file, broken).unwrap();
        let o = e.cordon(&["setup", "claude-code", "--project", "."]);
        let (out, err) = common::text(&o);
        assert_eq!(o.status.code(), Some(2), "{broken}: {out} {err}");
        assert!(err.contains("left untouched"), "{err}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), broken);
    }
    // --dry-run prints and writes nothing.
    std::fs::remove_file(&file).unwrap();
    let out = ok(&e.cordon(&["setup", "claude-code", "--project", ".", "--dry-run"]));
    assert!(out.contains("CLAUDE_PROJECT_DIR"), "{out}");
    assert!(!file.exists());
}

/// The entries as written run: the harness hands the command to `sh -c` (Codex:
/// `$SHELL -lc`) in the session's directory, with its project variable set.
#[test]
fn the_written_entries_run_with_the_workspace_pinned() {
    let e = Env::new();
    let out = ok(&e.cordon(&["setup", "codex", "--contain"]));
    assert!(out.contains("/hooks"), "the trust step is said: {out}");
    let codex = e.json(&e.home.join("codex-home/hooks.json"));
    ok(&e.cordon(&["setup", "gemini", "--project", ".", "--contain"]));
    let gemini = e.json(&e.ws.join(".gemini/settings.json"));
    assert_eq!(
        gemini["hooks"]["BeforeTool"][0]["hooks"][0]["name"],
        "cordon"
    );
    ok(&e.cordon(&["setup", "claude-code", "--contain"]));
    let claude = e.json(&e.home.join(".claude/settings.json"));
    let ws = e.ws.to_str().unwrap();
    let read = |harness: &str| {
        let mut p = json!({
            "session_id": "s", "cwd": ws, "hook_event_name": "PreToolUse",
            "tool_name": "Read", "tool_input": {"file_path": "src/main.rs"},
            "tool_use_id": format!("t-{harness}"),
        });
        if harness == "gemini" {
            p["hook_event_name"] = json!("BeforeTool");
            p["tool_name"] = json!("read_file");
        }
        p.to_string()
    };
    for (harness, settings, event, var) in [
        (
            "claude-code",
            &claude,
            "PreToolUse",
            Some("CLAUDE_PROJECT_DIR"),
        ),
        ("codex", &codex, "PreToolUse", None),
        ("gemini", &gemini, "BeforeTool", Some("GEMINI_PROJECT_DIR")),
    ] {
        let command = commands(settings, event)[0].clone();
        assert_eq!(
            harness == "codex",
            !command.contains("--contain"),
            "{command}"
        );
        let mut c = Command::new("sh");
        c.args(["-c", &command])
            .current_dir(&e.ws)
            .env_clear()
            .env("HOME", &e.home)
            .env("CORDON_STATE_DIR", e.root.join("state"))
            .env("PATH", "/usr/bin:/bin");
        if let Some(v) = var {
            c.env(v, &e.ws);
        }
        let o = common::cli::run_with_input(c, read(harness).as_bytes());
        let (out, err) = common::text(&o);
        assert_eq!(o.status.code(), Some(0), "{harness}: {err}");
        assert!(
            harness == "codex" || out.contains("\"allow\""),
            "{harness}: {out}"
        );
    }
}

#[test]
fn doctor_reports_where_the_hook_is_and_whether_the_harness_runs_it() {
    let e = Env::new();
    let o = e.cordon(&["doctor"]);
    assert!(ok(&o).contains("none of claude, codex, gemini is on PATH"));
    for h in ["claude", "codex", "gemini"] {
        e.put_on_path(h);
    }
    let out = ok(&e.cordon(&["doctor"]));
    for h in ["claude-code", "codex", "gemini"] {
        assert!(out.contains(&format!("run `cordon setup {h}`")), "{out}");
    }
    ok(&e.cordon(&["setup", "codex"]));
    ok(&e.cordon(&["setup", "gemini", "--project", "."]));
    let out = ok(&e.cordon(&["doctor"]));
    assert!(
        out.contains("Codex has not trusted cordon's hooks (0 of 3"),
        "{out}"
    );
    assert!(out.contains("--skip-trust"), "{out}");
    // Codex's record of the user's trust, as `/hooks` writes it.
    let hooks_json = e.home.join("codex-home/hooks.json");
    let mut config = String::new();
    for event in ["pre_tool_use", "permission_request", "post_tool_use"] {
        config.push_str(&format!(
            "[hooks.state.\"{}:{event}:0:0\"]\ntrusted_hash = \"sha256:x\"\n",
            hooks_json.display()
        ));
    }
    std::fs::write(e.home.join("codex-home/config.toml"), config).unwrap();
    ok(&e.cordon(&["setup", "gemini"]));
    std::fs::remove_file(e.ws.join(".gemini/settings.json")).unwrap();
    // Claude Code through a service: a socket that does not answer, then one that does.
    let settings = e.home.join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let socket = "\"$XDG_RUNTIME_DIR/serve.sock\"";
    let entry = json!([{"matcher": "*", "hooks": [{"type": "command", "command": format!("cordon hook claude-code --server {socket}")}]}]);
    let v =
        json!({"hooks": {"PreToolUse": entry, "PermissionRequest": entry, "PostToolUse": entry}});
    std::fs::write(&settings, v.to_string()).unwrap();
    let out = ok(&e.cordon(&["doctor"]));
    assert!(!out.contains("Codex has not trusted"), "{out}");
    assert!(!out.contains("--skip-trust"), "{out}");
    assert!(out.contains("serve.sock: does not answer"), "{out}");
    std::fs::create_dir_all(e.root.join("run")).unwrap();
    let listener = std::os::unix::net::UnixListener::bind(e.root.join("run/serve.sock")).unwrap();
    let server = std::thread::spawn(move || {
        let (s, _) = listener.accept().unwrap();
        let mut line = String::new();
        BufReader::new(&s).read_line(&mut line).unwrap();
        assert!(line.contains("\"jsonrpc\""));
        (&s).write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"no method\"}}\n")
            .unwrap();
    });
    let out = ok(&e.cordon(&["doctor"]));
    server.join().unwrap();
    assert!(out.contains("serve.sock: answers"), "{out}");
    assert_eq!(out.matches("runs cordon's hook").count(), 3, "{out}");
    let j: Value = serde_json::from_str(&ok(&e.cordon(&["doctor", "--json"]))).unwrap();
    let codex = j["harnesses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["harness"] == "codex")
        .unwrap();
    assert_eq!(codex["files"][0]["installed"], true);
    assert_eq!(codex["problems"], json!([]));
}
