#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code
//! Issue 31, the hook's reproductions: a workspace is never taken from the payload (no
//! pin blocks; `/`, HOME and what holds HOME are refused; a cwd outside the pinned
//! workspace is judged as outside), and Glob/Grep are judged by every file their path,
//! pattern and glob can select.

mod common;

use common::hook::{HookEnv as Env, blocks};
use serde_json::{Value, json};
use std::process::{Command, Output};

/// `cordon hook HARNESS` with `flags` and the environment `vars` (no pin unless given).
fn hook(e: &Env, harness: &str, flags: &[&str], vars: &[(&str, &str)], stdin: &[u8]) -> Output {
    let mut c = Command::new(common::bin());
    c.args(["hook", harness, "--isolated", "--config"])
        .arg(&e.config)
        .args(flags)
        .current_dir(&e.ws)
        .env_clear()
        .env("HOME", &e.home)
        .env("CORDON_STATE_DIR", &e.state)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin");
    for (k, v) in vars {
        c.env(k, v);
    }
    common::cli::run_with_input(c, stdin)
}

fn claude(tool: &str, input: Value, cwd: &str, id: &str) -> String {
    json!({
        "session_id": "s1", "cwd": cwd, "permission_mode": "default",
        "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input,
        "tool_use_id": id,
    })
    .to_string()
}

fn gemini(tool: &str, input: Value, cwd: &str) -> String {
    json!({
        "session_id": "s1", "cwd": cwd, "hook_event_name": "BeforeTool",
        "tool_name": tool, "tool_input": input,
    })
    .to_string()
}

fn decision(o: &Output) -> String {
    let (out, err) = common::text(o);
    if o.status.code() == Some(2) {
        return format!("block: {err}");
    }
    assert_eq!(o.status.code(), Some(0), "stderr {err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let d = v["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .or(v["decision"].as_str())
        .unwrap();
    format!("{d}: {out}")
}

/// Reproduction 4 of the issue: with no `--workspace` and no project variable, a payload
/// whose cwd is `/` or HOME used to make that the workspace; now every harness blocks.
#[test]
fn an_unpinned_hook_blocks_whatever_the_payload_cwd() {
    let e = Env::new();
    let home = e.home.to_str().unwrap();
    std::fs::create_dir_all(e.home.join("notes")).unwrap();
    std::fs::write(e.home.join("notes/diary.txt"), "secret\n").unwrap();
    for cwd in ["/", home, e.ws.to_str().unwrap()] {
        let read = json!({"command": "cat notes/diary.txt"});
        let o = hook(
            &e,
            "claude-code",
            &[],
            &[],
            claude("Bash", read.clone(), cwd, "t1").as_bytes(),
        );
        blocks(&o, "--workspace \"$CLAUDE_PROJECT_DIR\"");
        let o = hook(
            &e,
            "codex",
            &[],
            &[],
            claude("Bash", read.clone(), cwd, "t2").as_bytes(),
        );
        blocks(&o, "--workspace \"$PWD\"");
        let o = hook(
            &e,
            "gemini",
            &[],
            &[],
            gemini("run_shell_command", read, cwd).as_bytes(),
        );
        blocks(&o, "--workspace \"$GEMINI_PROJECT_DIR\"");
    }
    // Another harness's variable does not pin Codex.
    let o = hook(
        &e,
        "codex",
        &[],
        &[("CLAUDE_PROJECT_DIR", e.ws.to_str().unwrap())],
        claude("Bash", json!({"command": "ls"}), "/", "t3").as_bytes(),
    );
    blocks(&o, "not pinned");
}

/// `/`, HOME and a directory holding HOME are refused as workspaces, by flag or by
/// variable, in several spellings.
#[test]
fn root_and_home_are_refused_as_workspaces() {
    let e = Env::new();
    let home = e.home.to_str().unwrap().to_string();
    let payload = claude("Bash", json!({"command": "ls"}), &home, "t1");
    for w in [
        "/",
        "//",
        &home,
        &format!("{home}/"),
        &format!("{home}/.ssh/.."),
        e.root.to_str().unwrap(),
    ] {
        blocks(
            &hook(&e, "codex", &["--workspace", w], &[], payload.as_bytes()),
            "pin the hook to a project directory",
        );
        blocks(
            &hook(
                &e,
                "claude-code",
                &[],
                &[("CLAUDE_PROJECT_DIR", w)],
                payload.as_bytes(),
            ),
            "pin the hook to a project directory",
        );
    }
    std::os::unix::fs::symlink(&e.home, e.root.join("h")).unwrap();
    let link = e.root.join("h");
    blocks(
        &hook(
            &e,
            "gemini",
            &[],
            &[("GEMINI_PROJECT_DIR", link.to_str().unwrap())],
            gemini("run_shell_command", json!({"command": "ls"}), &home).as_bytes(),
        ),
        "is your home directory",
    );
}

/// A payload cwd outside the pinned workspace is a cwd outside it: `cat notes/diary.txt`
/// from HOME is a read outside the workspace, not "read_inside: allow".
#[test]
fn a_payload_cwd_outside_the_pinned_workspace_is_judged_outside() {
    let e = Env::new();
    std::fs::create_dir_all(e.home.join("notes")).unwrap();
    std::fs::write(e.home.join("notes/diary.txt"), "secret\n").unwrap();
    let home = e.home.to_str().unwrap();
    let ws = e.ws.to_str().unwrap();
    let read = json!({"command": "cat notes/diary.txt"});
    let inside = hook(
        &e,
        "claude-code",
        &[],
        &[("CLAUDE_PROJECT_DIR", ws)],
        claude("Bash", json!({"command": "cat src/main.rs"}), ws, "t0").as_bytes(),
    );
    assert!(
        decision(&inside).starts_with("allow"),
        "{}",
        decision(&inside)
    );
    for (flags, vars) in [
        (vec!["--workspace", ws], vec![]),
        (vec![], vec![("CLAUDE_PROJECT_DIR", ws)]),
    ] {
        let o = hook(
            &e,
            "claude-code",
            &flags,
            &vars,
            claude("Bash", read.clone(), home, &format!("t{}", flags.len())).as_bytes(),
        );
        let d = decision(&o);
        assert!(d.starts_with("ask"), "{d}");
        assert!(d.contains("outside"), "{d}");
    }
    // Contained: the rewrite (if any) runs in the pinned workspace, never HOME.
    let write = json!({"command": "echo x > notes/x.txt"});
    let o = hook(
        &e,
        "claude-code",
        &["--contain", "--workspace", ws],
        &[],
        claude("Bash", write, home, "t9").as_bytes(),
    );
    let d = decision(&o);
    assert!(!d.contains(&format!("--workspace '{home}'")), "{d}");
    assert!(
        !d.starts_with("allow") || d.contains(&format!("--workspace '{ws}'")),
        "{d}"
    );
}

/// Reproduction 5 of the issue: Glob and Grep select files by pattern and glob as well
/// as by path. Each of these used to be "a read inside the workspace".
#[test]
fn glob_and_grep_are_judged_by_what_their_patterns_can_read() {
    let e = Env::new();
    let ws = e.ws.to_str().unwrap();
    let home = e.home.to_str().unwrap();
    // The workspace sits beside HOME here, so `../home/.ssh/*` is the issue's
    // `../.ssh/*` (the workspace is HOME's child there); both spellings are tried.
    std::fs::create_dir_all(e.home.join("proj")).unwrap();
    std::fs::create_dir_all(e.home.join(".aws")).unwrap();
    std::fs::write(e.home.join(".aws/credentials"), "k\n").unwrap();
    let proj = e.home.join("proj");
    let proj = proj.to_str().unwrap();
    let cases: Vec<(&str, &str, Value, &str)> = vec![
        (
            "claude-code",
            "Glob",
            json!({"pattern": "../home/.ssh/*"}),
            ws,
        ),
        ("claude-code", "Glob", json!({"pattern": "../.ssh/*"}), proj),
        (
            "claude-code",
            "Glob",
            json!({"pattern": format!("{home}/.aws/**")}),
            ws,
        ),
        ("claude-code", "Glob", json!({"pattern": "~/.ssh/id_*"}), ws),
        (
            "claude-code",
            "Glob",
            json!({"pattern": ".ssh/{id_*,config}", "path": home}),
            ws,
        ),
        (
            "claude-code",
            "Grep",
            json!({"pattern": "PRIVATE KEY", "path": home, "glob": "**/id_*"}),
            ws,
        ),
        (
            "claude-code",
            "Grep",
            json!({"pattern": "PRIVATE KEY", "path": home, "glob": "id_*"}),
            ws,
        ),
        (
            "claude-code",
            "Grep",
            json!({"pattern": "x", "path": home, "glob": "*.md **/credentials"}),
            ws,
        ),
        (
            "gemini",
            "glob",
            json!({"pattern": "**/.aws/*", "dir_path": home}),
            ws,
        ),
        (
            "gemini",
            "grep_search",
            json!({"pattern": "KEY", "dir_path": home, "include_pattern": "id_*"}),
            ws,
        ),
        (
            "gemini",
            "search_file_content",
            json!({"pattern": "KEY", "path": home, "include": "*/id_rsa"}),
            ws,
        ),
    ];
    for (i, (harness, tool, input, cwd)) in cases.into_iter().enumerate() {
        let payload = match harness {
            "gemini" => gemini(tool, input.clone(), cwd),
            _ => claude(tool, input.clone(), cwd, &format!("g{i}")),
        };
        let flags = ["--workspace", if cwd == proj { proj } else { ws }];
        let o = hook(&e, harness, &flags, &[], payload.as_bytes());
        let (_, err) = common::text(&o);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{tool} {input} was not denied: {}",
            decision(&o)
        );
        assert!(err.contains("holds credentials"), "{tool} {input}: {err}");
    }
    // A glob that reaches outside the workspace is a read outside (asked), not inside.
    let outside = claude("Glob", json!({"pattern": "/etc/*.conf"}), ws, "o1");
    let d = decision(&hook(
        &e,
        "claude-code",
        &["--workspace", ws],
        &[],
        outside.as_bytes(),
    ));
    assert!(d.starts_with("ask") && d.contains("outside"), "{d}");
    // Ordinary searches of the workspace still run.
    for (i, input) in [
        json!({"pattern": "**/*.rs"}),
        json!({"pattern": "src/**/*.{ts,tsx}"}),
    ]
    .into_iter()
    .enumerate()
    {
        let o = hook(
            &e,
            "claude-code",
            &["--workspace", ws],
            &[],
            claude("Glob", input, ws, &format!("ok{i}")).as_bytes(),
        );
        assert!(decision(&o).starts_with("allow"), "{}", decision(&o));
    }
    let grep = claude(
        "Grep",
        json!({"pattern": "fn main", "glob": "*.rs"}),
        ws,
        "ok9",
    );
    let o = hook(
        &e,
        "claude-code",
        &["--workspace", ws],
        &[],
        grep.as_bytes(),
    );
    assert!(decision(&o).starts_with("allow"), "{}", decision(&o));
}

/// Issue 31, point 6: the harness's `acceptEdits` counts only where the user opted in
/// (`[hook] accept_edits = true`); a repository's own config cannot opt in, and guards
/// and writes outside the workspace are unchanged.
#[test]
fn accept_edits_is_an_explicit_opt_in() {
    let e = Env::new();
    let ws = e.ws.to_str().unwrap();
    let write = |path: &str, id: &str| {
        let mut v: Value = serde_json::from_str(&claude(
            "Write",
            json!({"file_path": path, "content": "x"}),
            ws,
            id,
        ))
        .unwrap();
        v["permission_mode"] = json!("acceptEdits");
        v.to_string()
    };
    let opt_in = e.root.join("accept.toml");
    std::fs::write(&opt_in, "[hook]\naccept_edits = true\n").unwrap();
    let run = |extra: &[&str], payload: String| {
        decision(&hook(
            &e,
            "claude-code",
            &[&["--workspace", ws][..], extra].concat(),
            &[],
            payload.as_bytes(),
        ))
    };
    let inside = format!("{ws}/src/new.rs");
    assert!(
        run(&[], write(&inside, "a1")).starts_with("ask"),
        "not opted in"
    );
    // A repository's own file cannot opt in.
    std::fs::create_dir_all(e.ws.join(".cordon")).unwrap();
    std::fs::write(
        e.ws.join(".cordon/policy.toml"),
        "[hook]\naccept_edits = true\n",
    )
    .unwrap();
    let mut c = Command::new(common::bin());
    c.args(["hook", "claude-code", "--workspace", ws])
        .current_dir(&e.ws)
        .env_clear()
        .env("HOME", &e.home)
        .env("CORDON_STATE_DIR", &e.state);
    let o = common::cli::run_with_input(c, write(&inside, "a2").as_bytes());
    assert!(decision(&o).starts_with("ask"), "{}", decision(&o));
    let opt = opt_in.to_str().unwrap();
    let d = run(&["--config", opt], write(&inside, "a3"));
    assert!(d.starts_with("allow"), "{d}");
    let home_file = format!("{}/notes.txt", e.home.display());
    assert!(!run(&["--config", opt], write(&home_file, "a4")).starts_with("allow"));
    let hooks = format!("{ws}/.claude/settings.json");
    assert!(run(&["--config", opt], write(&hooks, "a5")).starts_with("block"));
}
