#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The contained rewrite run for real: `cordon hook claude-code --contain` turns hostile
//! shell texts into `cordon exec` command lines, the harness's `bash -c` runs them, and
//! the command's own stdout, stderr and exit status must reach the caller unchanged. The
//! audit log ties the hook's decision to the run by operation id.

mod common;

use common::World;
use serde_json::{Value, json};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn payload(w: &World, text: &str, id: &str) -> String {
    json!({
        "session_id": "sess-1",
        "transcript_path": "/dev/null",
        "cwd": w.ws,
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": text, "description": "hostile"},
        "tool_use_id": id,
    })
    .to_string()
}

fn env(c: &mut Command, w: &World) {
    c.current_dir(&w.ws)
        .env_clear()
        .env("HOME", &w.home)
        .env("CORDON_STATE_DIR", w.root.join("state"))
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("LANG", "C");
}

/// The hook's rewritten command for `text`.
fn rewrite(w: &World, bin: &Path, text: &str, id: &str, as_nobody: bool) -> String {
    let mut c = Command::new(bin);
    c.args(["hook", "claude-code", "--contain", "--isolated", "--config"])
        .arg(&w.config)
        .arg("--workspace")
        .arg(&w.ws);
    env(&mut c, w);
    let mut c = if as_nobody { common::as_nobody(&c) } else { c };
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload(w, text, id).as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let (out, err) = common::text(&o);
    assert_eq!(o.status.code(), Some(0), "hook failed: {err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let h = &v["hookSpecificOutput"];
    assert_eq!(h["permissionDecision"], "allow", "{out}");
    assert_eq!(h["updatedInput"]["description"], "hostile");
    h["updatedInput"]["command"].as_str().unwrap().to_string()
}

/// Run shell text as the harness does (`bash -c`); text longer than one argument may be
/// goes through a script file, as no harness could pass it as one argument either.
fn bash(w: &World, text: &str, as_nobody: bool) -> Output {
    let mut c = Command::new("bash");
    if text.len() > 100_000 {
        let script = w.ws.join("expected.sh");
        std::fs::write(&script, text).unwrap();
        c.arg(script);
    } else {
        c.arg("-c")
            .arg(std::ffi::OsStr::from_bytes(text.as_bytes()));
    }
    env(&mut c, w);
    let mut c = if as_nobody { common::as_nobody(&c) } else { c };
    c.stdin(Stdio::null()).output().unwrap()
}

fn hostile() -> Vec<(&'static str, String)> {
    let binary: String = (1u8..=0x7f)
        .filter(|b| *b != b'\'' && *b != b'\n')
        .map(char::from)
        .chain("é漢🙂\u{202e}".chars())
        .collect();
    vec![
        (
            "quotes",
            r#"echo 'single' "double" it\'s "a'b" 'c"d'"#.to_string(),
        ),
        (
            "escaped quote",
            r#"printf '%s\n' 'x'\''y' "'\''""#.to_string(),
        ),
        ("newlines", "echo one\necho two\n\necho three".to_string()),
        (
            "substitutions",
            "echo $(echo sub) `echo tick` $((6*7)) \"$(printf '%s' \"$(echo nest)\")\"".to_string(),
        ),
        (
            "binary bytes",
            format!("printf '%s' '{binary}' | od -An -tx1 | tr -s ' \\n' ' '"),
        ),
        (
            "heredocs",
            "cat <<'EOF'\nliteral $HOME `x` $(y) '\\''\nEOF\ncat <<EOF\nexpanded $((2+3))\nEOF"
                .to_string(),
        ),
        (
            "status and stderr",
            "echo out; echo err >&2; exit 42".to_string(),
        ),
        (
            "ends in a backslash and a quote",
            "echo \\\\ \"'\"".to_string(),
        ),
        ("positional parameters", "echo \"[$#][$*]\"".to_string()),
        (
            "200 KiB",
            format!("x='{}'; echo ${{#x}}; echo tail", "y".repeat(200 * 1024)),
        ),
    ]
}

fn check(as_nobody: bool) {
    let w = World::new();
    // `nobody` runs the binary it rewrites to, so it must reach it wherever the checkout
    // is (a 0700 directory under /tmp in CI): a copy in the world it is given.
    let bin = if as_nobody {
        let copy = w.root.join("cordon");
        std::fs::copy(common::bin(), &copy).unwrap();
        w.give_to_nobody();
        copy
    } else {
        common::bin()
    };
    for (i, (name, text)) in hostile().into_iter().enumerate() {
        let id = format!("toolu_{i}");
        let command = rewrite(&w, &bin, &text, &id, as_nobody);
        assert!(
            command.len() < 100 * 1024,
            "{name}: the rewritten line must fit one argument"
        );
        let want = bash(&w, &text, as_nobody);
        let got = bash(&w, &command, as_nobody);
        let (wo, we) = common::text(&want);
        let (go, ge) = common::text(&got);
        assert_eq!(
            got.status.code(),
            want.status.code(),
            "{name}: status; stderr {ge}"
        );
        assert_eq!(go, wo, "{name}: stdout");
        assert_eq!(ge, we, "{name}: stderr");
        // The hook's decision and the run's records carry the same operation id.
        let audit = std::fs::read_to_string(w.root.join("state/audit.jsonl")).unwrap();
        let phases: Vec<(String, String)> = audit
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|r| r["operation_id"] == id.as_str())
            .map(|r| {
                (
                    r["kind"].as_str().unwrap().to_string(),
                    r["phase"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let want_phases = [
            ("hook-claude-code", "decision"),
            ("exec", "start"),
            ("exec", "end"),
        ]
        .map(|(k, p)| (k.to_string(), p.to_string()));
        assert_eq!(phases, want_phases, "{name}: audit records");
    }
}

#[test]
fn hostile_commands_run_contained_unchanged() {
    need_sandbox!("hostile_commands_run_contained_unchanged");
    check(false);
}

#[test]
fn hostile_commands_run_contained_unchanged_as_nobody() {
    need_sandbox!("hostile_commands_run_contained_unchanged_as_nobody");
    if !common::is_root() {
        eprintln!("skipping: running as nobody needs root");
        return;
    }
    check(true);
}

#[test]
fn a_swapped_shell_file_is_refused() {
    need_sandbox!("a_swapped_shell_file_is_refused");
    let w = World::new();
    let text = format!("echo {}", "z".repeat(80 * 1024));
    let command = rewrite(&w, &common::bin(), &text, "toolu_swap", false);
    let file = command
        .split("--shell-file='")
        .nth(1)
        .and_then(|r| r.split('\'').next())
        .expect("long text goes through a shell file")
        .to_string();
    std::fs::write(&file, "echo swapped").unwrap();
    let o = bash(&w, &command, false);
    let (out, err) = common::text(&o);
    assert_eq!(o.status.code(), Some(125), "{out} {err}");
    assert!(!out.contains("swapped"));
    assert!(err.contains("changed after cordon wrote it"), "{err}");
}

/// Issue 31, point 6: a contained command whose text starts with `-` (`--version`) was
/// allowed but its rewrite failed (clap: "a value is required for '--shell'"). It is now
/// rewritten whole and the sandbox's shell runs it as a command (`bash -c -- TEXT`).
#[test]
fn a_command_starting_with_a_dash_is_rewritten_whole() {
    need_sandbox!("a_command_starting_with_a_dash_is_rewritten_whole");
    let w = World::new();
    for (i, text) in ["--version", "-x; echo after"].into_iter().enumerate() {
        let command = rewrite(&w, &common::bin(), text, &format!("toolu_dash{i}"), false);
        assert!(command.contains(" --shell='-"), "{command}");
        let o = bash(&w, &command, false);
        let (out, err) = common::text(&o);
        assert!(!err.contains("a value is required"), "{err}");
        assert!(!err.contains("cordon:"), "cordon refused it: {err}");
        let first = text.split(';').next().unwrap();
        assert!(err.contains(first) && err.contains("not found"), "{err}");
        if text.contains("after") {
            assert_eq!(out, "after\n");
        } else {
            assert_eq!(o.status.code(), Some(127), "{out} {err}");
        }
    }
}
