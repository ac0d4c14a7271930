#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! `cordon run-action`: an action runs contained by a sandbox derived from its own request.
//! A request that declares one path cannot write another (only declared paths reach the
//! host; the rest waits in `cordon changes`); an ask runs only after a human approved the
//! pending approval recorded for exactly that request, once; approval never widens the
//! sandbox; an action reaches no network it did not declare and sees no host secret.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;
use std::process::{Command, Output};

struct Action {
    _ws: tempfile::TempDir,
    ws: std::path::PathBuf,
    state: tempfile::TempDir,
}

impl Action {
    fn new(script: &str, policy_extra: &str) -> Action {
        let ws_dir = common::visible_dir("cordon-action-");
        let ws = ws_dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(ws.join("out")).unwrap();
        std::fs::create_dir_all(ws.join("other")).unwrap();
        std::fs::write(ws.join("other/b.txt"), "original\n").unwrap();
        std::fs::write(ws.join("out/old.txt"), "old\n").unwrap();
        std::fs::write(ws.join("gen.sh"), script).unwrap();
        let w = ws.display();
        let policy = format!(
            "workspace = \"{w}\"\n[paths]\nread = [\"{w}/**\"]\ncreate = [\"{w}/out/**\"]\ndelete = [\"{w}/out/**\"]\n[executables]\nallow = [\"/bin/sh\"]\n{policy_extra}"
        );
        std::fs::write(ws.join("policy.toml"), policy).unwrap();
        Action {
            _ws: ws_dir,
            ws,
            state: tempfile::tempdir().unwrap(),
        }
    }

    fn request(&self, paths: serde_json::Value) {
        let req = serde_json::json!({"actor": "agent-7", "capability": "report.generate",
            "argv": ["/bin/sh", self.ws.join("gen.sh")], "cwd": self.ws,
            "paths": paths, "side_effect": "none", "reason": "write the report"});
        std::fs::write(self.ws.join("req.json"), req.to_string()).unwrap();
    }

    fn run(&self, extra: &[&str]) -> Output {
        self.run_env(extra, &[])
    }

    fn run_env(&self, extra: &[&str], env: &[(&str, &str)]) -> Output {
        Command::new(common::bin())
            .arg("run-action")
            .arg(self.ws.join("req.json"))
            .arg("--policy")
            .arg(self.ws.join("policy.toml"))
            .arg("--isolated")
            .args(extra)
            .envs(env.iter().copied())
            .env("CORDON_STATE_DIR", self.state.path())
            .env("HOME", self.state.path())
            .output()
            .unwrap()
    }

    /// Another cordon command with the same state directory.
    fn cordon(&self, args: &[&str]) -> Output {
        Command::new(common::bin())
            .args(args)
            .env("CORDON_STATE_DIR", self.state.path())
            .env("HOME", self.state.path())
            .output()
            .unwrap()
    }

    fn audit(&self) -> String {
        std::fs::read_to_string(self.state.path().join("audit.jsonl")).unwrap_or_default()
    }

    fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.ws.join(rel)).ok()
    }
}

fn path(p: &Path, access: &str) -> serde_json::Value {
    serde_json::json!({"path": p, "access": access})
}

#[test]
fn a_declared_path_does_not_open_another() {
    need_sandbox!("a_declared_path_does_not_open_another");
    let a = Action::new(
        "echo made > \"$(dirname \"$0\")/out/a.txt\"\necho evil > \"$(dirname \"$0\")/other/b.txt\"\necho evil > \"$(dirname \"$0\")/gen.sh\"\necho beside > \"$(dirname \"$0\")/out/beside.txt\"\nexit 0\n",
        "",
    );
    a.request(serde_json::json!([
        path(&a.ws.join("out/a.txt"), "create"),
        path(&a.ws.join("gen.sh"), "read")
    ]));
    let o = a.run(&[]);
    let (out, err) = common::text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    assert_eq!(
        a.read("other/b.txt").as_deref(),
        Some("original\n"),
        "an undeclared file was written"
    );
    assert!(
        a.read("gen.sh").unwrap().starts_with("echo made"),
        "the read-only script was changed"
    );
    assert_eq!(a.read("out/a.txt").as_deref(), Some("made\n"), "{err}");
    // Beside a declared path, in its directory, a write is made in the copy-on-write
    // layer but never merged: the host has no such file, and the change waits for a
    // human in `cordon changes`.
    assert_eq!(
        a.read("out/beside.txt"),
        None,
        "an undeclared sibling reached the host"
    );
    assert!(
        err.contains("did not declare") && err.contains("beside.txt"),
        "{err}"
    );
    let log = a.audit();
    assert!(log.contains("beside.txt"), "{log}");
    assert!(
        log.contains("\"phase\":\"notice\"") && log.contains("report.generate"),
        "{log}"
    );
    assert!(log.contains("\"phase\":\"result\""), "{log}");
    let listed = a.cordon(&["changes", "list"]);
    let (out, err) = common::text(&listed);
    assert!(listed.status.success(), "{out}\n{err}");
    assert!(
        !out.trim().is_empty() && !out.contains("no change"),
        "{out}"
    );
}

/// The id in "cordon approvals approve ID" of a refusal.
fn pending_id(err: &str) -> String {
    let at = err.find("cordon approvals approve ").expect(err) + "cordon approvals approve ".len();
    err[at..].chars().take_while(char::is_ascii_digit).collect()
}

#[test]
fn an_ask_runs_only_after_a_human_approves_exactly_that_request() {
    need_sandbox!("an_ask_runs_only_after_a_human_approves_exactly_that_request");
    let a = Action::new("rm -f \"$(dirname \"$0\")/out/old.txt\"\n", "");
    a.request(serde_json::json!([path(
        &a.ws.join("out/old.txt"),
        "delete"
    )]));
    // A name on the command line approves nothing.
    let o = a.run(&["--approved-by", "alice"]);
    assert_eq!(o.status.code(), Some(2), "{:?}", common::text(&o));
    let o = a.run(&[]);
    let (_, err) = common::text(&o);
    assert_eq!(o.status.code(), Some(126), "{err}");
    assert!(err.contains("approval required"), "{err}");
    let id = pending_id(&err);
    assert_eq!(a.read("out/old.txt").as_deref(), Some("old\n"));
    // Asking again does not pile up approvals: the same one is named.
    let o = a.run(&[]);
    assert_eq!(pending_id(&common::text(&o).1), id);
    let list = a.cordon(&["approvals", "list"]);
    assert!(
        common::text(&list).0.contains("run-action"),
        "{:?}",
        common::text(&list)
    );
    // An approval of another request (here: another reason) does not let this one run.
    let approved = a.cordon(&["approvals", "approve", &id]);
    assert!(approved.status.success(), "{:?}", common::text(&approved));
    let other = std::fs::read_to_string(a.ws.join("req.json"))
        .unwrap()
        .replace("write the report", "write the report again");
    let kept = std::fs::read_to_string(a.ws.join("req.json")).unwrap();
    std::fs::write(a.ws.join("req.json"), &other).unwrap();
    let o = a.run(&[]);
    assert_eq!(o.status.code(), Some(126), "{:?}", common::text(&o));
    assert_eq!(a.read("out/old.txt").as_deref(), Some("old\n"));
    // The approved request runs, once.
    std::fs::write(a.ws.join("req.json"), &kept).unwrap();
    let o = a.run(&[]);
    assert_eq!(o.status.code(), Some(0), "{:?}", common::text(&o));
    assert_eq!(a.read("out/old.txt"), None);
    let log = a.audit();
    assert!(log.contains("\"lease\":"), "{log}");
    std::fs::write(a.ws.join("out/old.txt"), "old\n").unwrap();
    let o = a.run(&[]);
    let (_, err) = common::text(&o);
    assert_eq!(o.status.code(), Some(126), "{err}");
    assert!(
        err.contains("approval required"),
        "the approval was spent: {err}"
    );
    assert_eq!(a.read("out/old.txt").as_deref(), Some("old\n"));
}

#[test]
fn an_action_reaches_no_undeclared_network_and_sees_no_host_secret() {
    need_sandbox!("an_action_reaches_no_undeclared_network_and_sees_no_host_secret");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = if Path::new("/bin/bash").exists() {
        format!("/bin/bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}'")
    } else {
        format!("python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 2)'")
    };
    let script = format!(
        "d=\"$(dirname \"$0\")/out\"\nenv > \"$d/env.txt\"\nif {connect} 2>/dev/null; then echo connected > \"$d/net.txt\"; else echo refused > \"$d/net.txt\"; fi\nexit 0\n"
    );
    let a = Action::new(
        &script,
        "[secrets]\nDEPLOY_TOKEN = [\"https://deploy.example\"]\n",
    );
    let req = serde_json::json!({"actor": "agent-7", "capability": "report.generate",
        "argv": ["/bin/sh", a.ws.join("gen.sh")], "cwd": a.ws,
        "paths": [path(&a.ws.join("out/env.txt"), "create"), path(&a.ws.join("out/net.txt"), "create")],
        "credentials": ["DEPLOY_TOKEN"],
        "side_effect": "none", "reason": "write the report"});
    std::fs::write(a.ws.join("req.json"), req.to_string()).unwrap();
    let o = a.run_env(
        &[],
        &[
            ("GITHUB_TOKEN", "ghp_hostsecret1"),
            ("AWS_SECRET_ACCESS_KEY", "hostsecret2"),
            ("OPENAI_API_KEY", "hostsecret3"),
            ("DB_PASSWORD", "hostsecret4"),
            ("DEPLOY_TOKEN", "declared-deploy-token"),
        ],
    );
    let (out, err) = common::text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    let env = a.read("out/env.txt").expect(&err);
    assert!(
        !env.contains("hostsecret"),
        "a host secret reached the action:\n{env}"
    );
    assert!(
        env.contains("DEPLOY_TOKEN=declared-deploy-token"),
        "the declared credential is passed:\n{env}"
    );
    assert_eq!(a.read("out/net.txt").as_deref(), Some("refused\n"), "{err}");
    match listener.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("the action reached the loopback listener: {other:?}"),
    }
}

#[test]
fn a_denied_action_never_runs_even_when_approved() {
    let a = Action::new("echo ran > \"$(dirname \"$0\")/out/ran.txt\"\n", "");
    a.request(serde_json::json!([path(
        &a.ws.join("other/b.txt"),
        "overwrite"
    )]));
    let o = a.run(&[]);
    assert_eq!(o.status.code(), Some(126), "{:?}", common::text(&o));
    assert_eq!(a.read("out/ran.txt"), None);
    assert_eq!(a.read("other/b.txt").as_deref(), Some("original\n"));
}
