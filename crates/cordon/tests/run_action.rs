//! `cordon run-action`: an action runs contained by a sandbox derived from its own request.
//! A request that declares one path cannot write another (the host file is unchanged);
//! an ask needs a named approver, who is recorded, and approval never widens the sandbox.
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
        Command::new(common::bin())
            .arg("run-action")
            .arg(self.ws.join("req.json"))
            .arg("--policy")
            .arg(self.ws.join("policy.toml"))
            .arg("--isolated")
            .args(extra)
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
    // Beside a declared path, in its directory, a write lands (the sandbox binds
    // directories) but is reported and recorded.
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
}

#[test]
fn an_ask_needs_an_approver_who_is_recorded() {
    need_sandbox!("an_ask_needs_an_approver_who_is_recorded");
    let a = Action::new("rm -f \"$(dirname \"$0\")/out/old.txt\"\n", "");
    a.request(serde_json::json!([path(
        &a.ws.join("out/old.txt"),
        "delete"
    )]));
    let o = a.run(&[]);
    assert_eq!(o.status.code(), Some(126));
    assert!(
        common::text(&o).1.contains("approval required"),
        "{:?}",
        common::text(&o)
    );
    assert_eq!(a.read("out/old.txt").as_deref(), Some("old\n"));
    let o = a.run(&["--approved-by", "alice"]);
    assert_eq!(o.status.code(), Some(0), "{:?}", common::text(&o));
    assert_eq!(a.read("out/old.txt"), None);
    assert!(
        a.audit().contains("\"approved_by\":\"alice\""),
        "{}",
        a.audit()
    );
}

#[test]
fn a_denied_action_never_runs_even_when_approved() {
    let a = Action::new("echo ran > \"$(dirname \"$0\")/out/ran.txt\"\n", "");
    a.request(serde_json::json!([path(
        &a.ws.join("other/b.txt"),
        "overwrite"
    )]));
    let o = a.run(&["--approved-by", "alice"]);
    assert_eq!(o.status.code(), Some(126), "{:?}", common::text(&o));
    assert_eq!(a.read("out/ran.txt"), None);
    assert_eq!(a.read("other/b.txt").as_deref(), Some("original\n"));
}
