#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! `cordon check` through the real binary, on real temporary directories with real symlinks
//! and hard links.
// Test code: a failed setup step should stop the test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    ws: PathBuf,
    root: PathBuf,
}

fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let home = root.join("home");
    let ws = home.join("src/proj");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(home.join(".config/cordon")).unwrap();
    std::fs::create_dir_all(root.join("outside")).unwrap();
    std::fs::create_dir_all(home.join("src/proj_evil")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "KEY").unwrap();
    std::fs::write(ws.join("src/main.rs"), "fn main(){}").unwrap();
    std::fs::write(ws.join(".env"), "SECRET=1").unwrap();
    std::fs::write(root.join("outside/file"), "x").unwrap();
    Env {
        _tmp: tmp,
        home,
        ws,
        root,
    }
}

impl Env {
    fn user_config(&self, text: &str) {
        std::fs::write(self.home.join(".config/cordon/policy.toml"), text).unwrap();
    }

    fn check(&self, args: &[&str], stdin: Option<&[u8]>) -> Output {
        let mut cmd = Command::new(common::bin());
        cmd.arg("check")
            .args(args)
            .current_dir(&self.ws)
            .env_clear()
            .env("HOME", &self.home)
            .env("PATH", "/usr/bin:/bin")
            .env("CORDON_STATE_DIR", self.root.join("state"))
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        if let Some(input) = stdin {
            use std::io::Write;
            let mut s = child.stdin.take().unwrap();
            let _ = s.write_all(input);
        }
        child.wait_with_output().unwrap()
    }

    /// Run a request and return (exit code, verdict JSON).
    fn req(&self, json: &str) -> (i32, serde_json::Value) {
        let out = self.check(&[json], None);
        let code = out.status.code().unwrap();
        let v = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
        (code, v)
    }

    fn read(&self, path: &Path) -> (i32, serde_json::Value) {
        self.req(&format!(
            r#"{{"tool":"Read","input":{{"file_path":"{}"}}}}"#,
            path.display()
        ))
    }

    fn write(&self, path: &Path) -> (i32, serde_json::Value) {
        self.req(&format!(
            r#"{{"tool":"Write","input":{{"file_path":"{}","content":""}}}}"#,
            path.display()
        ))
    }
}

const ALLOW: i32 = 0;
const ASK: i32 = 3;
const DENY: i32 = 4;
const INVALID: i32 = 2;

#[test]
fn read_inside_is_allowed_and_prints_a_verdict() {
    let e = env();
    let (code, v) = e.read(&e.ws.join("src/main.rs"));
    assert_eq!(code, ALLOW, "{v}");
    assert_eq!(v["decision"], "allow");
    assert!(v["reason"].as_str().is_some_and(|r| !r.is_empty()));
    assert!(v["source"]["step"].is_string());
    assert!(v["findings"].is_array());
}

#[test]
fn secrets_are_denied_literally_and_through_links() {
    let e = env();
    assert_eq!(e.read(&e.home.join(".ssh/id_rsa")).0, DENY);
    assert_eq!(e.read(Path::new("~/.ssh/id_rsa")).0, DENY);
    assert_eq!(e.read(&e.ws.join(".env")).0, DENY);
    // A directory symlink inside the workspace pointing at ~/.ssh.
    std::os::unix::fs::symlink(e.home.join(".ssh"), e.ws.join("keys")).unwrap();
    assert_eq!(e.read(&e.ws.join("keys/id_rsa")).0, DENY);
    // A file symlink.
    std::os::unix::fs::symlink(e.home.join(".ssh/id_rsa"), e.ws.join("k")).unwrap();
    assert_eq!(e.read(&e.ws.join("k")).0, DENY);
    // /proc/self/root and a case variant.
    let via_proc = format!("/proc/self/root{}", e.home.join(".ssh/id_rsa").display());
    assert_eq!(e.read(Path::new(&via_proc)).0, DENY);
    assert_eq!(e.read(&e.home.join(".SSH/id_rsa")).0, DENY);
}

#[test]
fn writes_through_links_are_judged_where_they_land() {
    let e = env();
    e.user_config("[defaults]\nwrite_inside = \"allow\"\nwrite_outside = \"deny\"\n");
    assert_eq!(e.write(&e.ws.join("src/new.rs")).0, ALLOW);
    std::os::unix::fs::symlink(e.root.join("outside"), e.ws.join("out")).unwrap();
    assert_eq!(e.write(&e.ws.join("out/file")).0, DENY);
    std::os::unix::fs::symlink(e.root.join("outside/file"), e.ws.join("f")).unwrap();
    assert_eq!(e.write(&e.ws.join("f")).0, DENY);
    // String-prefix sibling.
    assert_eq!(e.write(&e.home.join("src/proj_evil/x")).0, DENY);
    // A hard link to a file outside: never a silent allow.
    std::fs::hard_link(e.root.join("outside/file"), e.ws.join("hl")).unwrap();
    let (code, v) = e.write(&e.ws.join("hl"));
    assert_ne!(code, ALLOW, "{v}");
}

#[test]
fn protected_paths_that_do_not_exist_yet_are_denied() {
    let e = env();
    e.user_config("[defaults]\nwrite_inside = \"allow\"\nwrite_outside = \"allow\"\n");
    for p in [
        ".git/hooks/pre-commit",
        ".claude/settings.json",
        ".vscode/tasks.json",
        ".mcp.json",
    ] {
        assert_eq!(e.write(&e.ws.join(p)).0, DENY, "{p}");
    }
    assert_eq!(e.write(&e.home.join(".bashrc")).0, DENY);
    assert_eq!(e.write(&e.home.join(".ssh/authorized_keys")).0, DENY);
}

#[test]
fn project_config_cannot_widen_until_trusted() {
    let e = env();
    std::fs::create_dir_all(e.ws.join(".cordon")).unwrap();
    std::fs::write(
        e.ws.join(".cordon/policy.toml"),
        "[permissions]\nallow = [\"Read(//**)\"]\ndeny = [\"Read(./src/**)\"]\n",
    )
    .unwrap();
    let outside = e.root.join("outside/file");
    assert_eq!(e.read(&outside).0, ASK);
    assert_eq!(e.read(&e.ws.join("src/main.rs")).0, DENY);
    e.user_config(&format!("trusted_workspaces = [\"{}\"]\n", e.ws.display()));
    assert_eq!(e.read(&outside).0, ALLOW);
    assert_eq!(e.read(&e.ws.join("src/main.rs")).0, DENY, "deny still wins");
}

#[test]
fn request_from_stdin_and_modes() {
    let e = env();
    let req = format!(
        r#"{{"tool":"Write","input":{{"file_path":"{}/src/x.rs"}}}}"#,
        e.ws.display()
    );
    let out = e.check(&["-"], Some(req.as_bytes()));
    assert_eq!(out.status.code(), Some(ASK));
    let out = e.check(&["--mode", "accept-edits", &req], None);
    assert_eq!(out.status.code(), Some(ALLOW));
    let out = e.check(&["--mode", "plan", &req], None);
    assert_eq!(out.status.code(), Some(DENY));
    let out = e.check(&["--mode", "dont-ask", &req], None);
    assert_eq!(out.status.code(), Some(DENY));
}

#[test]
fn explain_prints_the_trail() {
    let e = env();
    let req = format!(
        r#"{{"tool":"Read","input":{{"file_path":"{}/src/main.rs"}}}}"#,
        e.ws.display()
    );
    let out = e.check(&["--explain", &req], None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("guard -> no decision"), "{err}");
    assert!(err.contains("default -> allow"), "{err}");
}

#[test]
fn bad_input_is_exit_2_never_allow() {
    let e = env();
    for bad in [
        "not json",
        "[]",
        r#"{"tool":"Read"}"#,
        r#"{"tool":"Read","input":{"file_path":""}}"#,
        r#"{"tool":"Read","input":{"file_path":7}}"#,
        r#"{"tool":"Read","input":{"file_path":"a","extra":true}}"#,
        r#"{"tool":"Read","input":{"file_path":"a\u0000b"}}"#,
        r#"{"tool":"Read","input":{"file_path":"a"},"bogus":1}"#,
    ] {
        let out = e.check(&[bad], None);
        assert_eq!(out.status.code(), Some(INVALID), "{bad}");
        assert!(out.stdout.is_empty(), "{bad}: no verdict may be printed");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("cordon: "), "{bad}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "one sentence: {err}");
    }
    // Non-UTF-8 and oversize input on stdin.
    let out = e.check(
        &["-"],
        Some(b"{\"tool\":\"Read\",\"input\":{\"file_path\":\"\xff\"}}"),
    );
    assert_eq!(out.status.code(), Some(INVALID));
    let big = vec![b' '; (1 << 20) + 10];
    let out = e.check(&["-"], Some(&big));
    assert_eq!(out.status.code(), Some(INVALID));
    // Invalid and unreadable config.
    e.user_config("[permissions]\nallow = [\"Nope(x)\"]\n");
    let out = e.check(&[r#"{"tool":"Read","input":{"file_path":"a"}}"#], None);
    assert_eq!(out.status.code(), Some(INVALID));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("policy.toml:2:"), "{err}");
    let out = e.check(
        &[
            "--config",
            "/nonexistent/cordon.toml",
            r#"{"tool":"Read","input":{"file_path":"a"}}"#,
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(INVALID));
}

#[test]
fn pending_round_trip_and_audit() {
    let e = env();
    let req = format!(
        r#"{{"tool":"Write","input":{{"file_path":"{}/src/x.rs"}},"session":"s1"}}"#,
        e.ws.display()
    );
    // Ask with --pending: recorded, exit 5, the id in the verdict.
    let out = e.check(&["--pending", &req], None);
    assert_eq!(
        out.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["decision"], "ask");
    let id = v["pending"].as_i64().expect("pending id");
    // Still an ask until a human answers.
    assert_eq!(e.check(&[&req], None).status.code(), Some(ASK));
    let approve = Command::new(common::bin())
        .args(["approvals", "approve", &id.to_string()])
        .env("HOME", &e.home)
        .env("CORDON_STATE_DIR", e.root.join("state"))
        .output()
        .unwrap();
    assert!(
        approve.status.success(),
        "{}",
        String::from_utf8_lossy(&approve.stderr)
    );
    // The same call is allowed once, then asks again.
    let out = e.check(&[&req], None);
    assert_eq!(
        out.status.code(),
        Some(ALLOW),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["source"]["step"], "approval");
    assert_eq!(
        e.check(&[&req], None).status.code(),
        Some(ASK),
        "a once-lease is single-use"
    );
    // A different call is not covered.
    let other = req.replace("x.rs", "y.rs");
    assert_eq!(e.check(&[&other], None).status.code(), Some(ASK));
    // Every decision went to the audit log, and the chain verifies.
    let log = std::fs::read_to_string(e.root.join("state/audit.jsonl")).unwrap();
    assert!(log.lines().count() >= 5, "{log}");
    let verify = Command::new(common::bin())
        .args(["audit", "verify", "--file"])
        .arg(e.root.join("state/audit.jsonl"))
        .env("HOME", &e.home)
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "{}{}",
        String::from_utf8_lossy(&verify.stdout),
        String::from_utf8_lossy(&verify.stderr)
    );
}

#[test]
fn unwritable_audit_log_never_allows() {
    let e = env();
    let state = e.root.join("state");
    std::fs::create_dir_all(&state).unwrap();
    // A directory where the log file should be: appends fail.
    std::fs::create_dir_all(state.join("audit.jsonl")).unwrap();
    let (code, v) = e.read(&e.ws.join("src/main.rs"));
    assert_eq!(code, DENY, "{v}");
}
