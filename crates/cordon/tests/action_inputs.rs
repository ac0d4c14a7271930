#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code
//! A structured action's approval is bound to the content of its inputs (issue 41, item
//! 4 and reproduction 6): a script replaced after the approval does not run on it, and a
//! declared read path under `/tmp` is readable inside the sandbox.

mod common;

use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

struct Action {
    _ws: tempfile::TempDir,
    ws: PathBuf,
    state: tempfile::TempDir,
}

impl Action {
    /// A workspace at `ws` (kept alive by the returned value) with `gen.sh`, `out/` and
    /// a policy that lets the action read `reads` too.
    fn new(ws_dir: tempfile::TempDir, script: &str, reads: &[&Path]) -> Action {
        let ws = ws_dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(ws.join("out")).unwrap();
        std::fs::write(ws.join("out/old.txt"), "old\n").unwrap();
        std::fs::write(ws.join("gen.sh"), script).unwrap();
        let w = ws.display();
        let mut read = vec![format!("\"{w}/**\"")];
        read.extend(reads.iter().map(|r| format!("\"{}\"", r.display())));
        let policy = format!(
            "workspace = \"{w}\"\n[paths]\nread = [{}]\ncreate = [\"{w}/out/**\"]\ndelete = [\"{w}/out/**\"]\n[executables]\nallow = [\"/bin/sh\"]\n",
            read.join(", ")
        );
        std::fs::write(ws.join("policy.toml"), policy).unwrap();
        Action {
            _ws: ws_dir,
            ws,
            state: tempfile::tempdir().unwrap(),
        }
    }

    fn request(&self, paths: serde_json::Value) {
        let req = json!({"actor": "agent-7", "capability": "report.generate",
            "argv": ["/bin/sh", self.ws.join("gen.sh")], "cwd": self.ws,
            "paths": paths, "side_effect": "none", "reason": "write the report"});
        std::fs::write(self.ws.join("req.json"), req.to_string()).unwrap();
    }

    fn run(&self) -> Output {
        Command::new(common::bin())
            .arg("run-action")
            .arg(self.ws.join("req.json"))
            .arg("--policy")
            .arg(self.ws.join("policy.toml"))
            .arg("--isolated")
            .env("CORDON_STATE_DIR", self.state.path())
            .env("HOME", self.state.path())
            .output()
            .unwrap()
    }

    fn cordon(&self, args: &[&str]) -> Output {
        Command::new(common::bin())
            .args(args)
            .env("CORDON_STATE_DIR", self.state.path())
            .env("HOME", self.state.path())
            .output()
            .unwrap()
    }

    fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.ws.join(rel)).ok()
    }
}

fn path(p: &Path, access: &str) -> serde_json::Value {
    json!({"path": p, "access": access})
}

/// The id in "cordon approvals approve ID" of a refusal.
fn pending_id(err: &str) -> String {
    let at = err.find("cordon approvals approve ").expect(err) + "cordon approvals approve ".len();
    err[at..].chars().take_while(char::is_ascii_digit).collect()
}

#[test]
fn a_script_replaced_after_the_approval_does_not_run_on_it() {
    if !common::full_tier_or_skip("a_script_replaced_after_the_approval_does_not_run_on_it") {
        return;
    }
    let a = Action::new(
        common::visible_dir("cordon-inputs-"),
        "rm -f \"$(dirname \"$0\")/out/old.txt\"\n",
        &[],
    );
    a.request(json!([path(&a.ws.join("out/old.txt"), "delete")]));
    let o = a.run();
    let (out, err) = common::text(&o);
    assert_eq!(o.status.code(), Some(126), "{err}");
    assert!(
        err.contains("approval required"),
        "{out} {err} {}",
        a.ws.display()
    );
    let id = pending_id(&err);
    assert!(a.cordon(&["approvals", "approve", &id]).status.success());

    // The script is replaced after the approval: the request is the same, its input not.
    std::fs::write(
        a.ws.join("gen.sh"),
        "d=\"$(dirname \"$0\")\"\necho replaced > \"$d/out/old.txt\"\necho pwned > \"$d/out/pwned.txt\"\n",
    )
    .unwrap();
    let o = a.run();
    let (_, err) = common::text(&o);
    assert_eq!(o.status.code(), Some(126), "the replaced script ran: {err}");
    assert!(err.contains("approval required"), "{err}");
    let second = pending_id(&err);
    assert_ne!(second, id, "a new question");
    assert_eq!(a.read("out/old.txt").as_deref(), Some("old\n"));
    assert_eq!(a.read("out/pwned.txt"), None);
    // The human sees the script's state with the approval.
    let shown = a.cordon(&["approvals", "show", &second, "--json"]);
    let (out, _) = common::text(&shown);
    assert!(out.contains("gen.sh") && out.contains("blake3 "), "{out}");

    // Put back as approved: the first approval runs it, once.
    std::fs::write(
        a.ws.join("gen.sh"),
        "rm -f \"$(dirname \"$0\")/out/old.txt\"\n",
    )
    .unwrap();
    let o = a.run();
    assert_eq!(o.status.code(), Some(0), "{:?}", common::text(&o));
    assert_eq!(a.read("out/old.txt"), None);

    // A second spelling: approved, then the script replaced by a symlink to another file.
    std::fs::write(a.ws.join("out/old.txt"), "old\n").unwrap();
    std::fs::write(
        a.ws.join("evil.sh"),
        "echo pwned > \"$(dirname \"$0\")/out/pwned.txt\"\n",
    )
    .unwrap();
    let o = a.run();
    let id = pending_id(&common::text(&o).1);
    assert!(a.cordon(&["approvals", "approve", &id]).status.success());
    std::fs::remove_file(a.ws.join("gen.sh")).unwrap();
    std::os::unix::fs::symlink(a.ws.join("evil.sh"), a.ws.join("gen.sh")).unwrap();
    let o = a.run();
    assert_eq!(o.status.code(), Some(126), "{:?}", common::text(&o));
    assert!(common::text(&o).1.contains("approval required"));
    assert_eq!(a.read("out/pwned.txt"), None);
    assert_eq!(a.read("out/old.txt").as_deref(), Some("old\n"));
}

#[test]
fn a_declared_read_path_under_tmp_is_readable_inside() {
    if !common::full_tier_or_skip("a_declared_read_path_under_tmp_is_readable_inside") {
        return;
    }
    // The workspace and the data both under the host's /tmp, which the sandbox replaces.
    let data_dir = tempfile::Builder::new()
        .prefix("cordon-data-")
        .tempdir_in("/tmp")
        .unwrap();
    let data_dir_path = data_dir.path().canonicalize().unwrap();
    let data = data_dir_path.join("data.csv");
    std::fs::write(&data, "a,b\n1,2\n").unwrap();
    // A directory of inputs too (bound from the host, not pinned).
    std::fs::create_dir(data_dir_path.join("more")).unwrap();
    std::fs::write(data_dir_path.join("more/x.txt"), "x\n").unwrap();
    let ws = tempfile::Builder::new()
        .prefix("cordon-ws-")
        .tempdir_in("/tmp")
        .unwrap();
    let a = Action::new(
        ws,
        &format!(
            "d=\"$(dirname \"$0\")\"\ncat {} > \"$d/out/a.txt\" && cat {}/more/x.txt >> \"$d/out/a.txt\"\n",
            data.display(),
            data_dir_path.display()
        ),
        &[&data_dir_path.join("**")],
    );
    a.request(json!([
        path(&a.ws.join("out/a.txt"), "create"),
        path(&data, "read"),
        path(&data_dir_path.join("more"), "read"),
    ]));
    let mut o = a.run();
    if o.status.code() == Some(126) {
        let id = pending_id(&common::text(&o).1);
        assert!(a.cordon(&["approvals", "approve", &id]).status.success());
        o = a.run();
    }
    assert_eq!(o.status.code(), Some(0), "{:?}", common::text(&o));
    assert_eq!(a.read("out/a.txt").as_deref(), Some("a,b\n1,2\nx\n"));
}

#[test]
fn the_bytes_hashed_are_what_runs() {
    if !common::full_tier_or_skip("the_bytes_hashed_are_what_runs") {
        return;
    }
    // The script reads its declared input after a pause; the host's copy changes during
    // the run. A pinned input is the one that was hashed.
    let a = Action::new(
        common::visible_dir("cordon-pins-"),
        "sleep 3\ncat \"$(dirname \"$0\")/data.txt\" > \"$(dirname \"$0\")/out/a.txt\"\n",
        &[],
    );
    std::fs::write(a.ws.join("data.txt"), "approved\n").unwrap();
    a.request(json!([
        path(&a.ws.join("out/a.txt"), "create"),
        path(&a.ws.join("data.txt"), "read"),
    ]));
    let mut cmd = Command::new(common::bin());
    cmd.arg("run-action")
        .arg(a.ws.join("req.json"))
        .arg("--policy")
        .arg(a.ws.join("policy.toml"))
        .arg("--isolated")
        .env("CORDON_STATE_DIR", a.state.path())
        .env("HOME", a.state.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    std::fs::write(a.ws.join("data.txt"), "changed during the run\n").unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{:?}", common::text(&o));
    assert_eq!(a.read("out/a.txt").as_deref(), Some("approved\n"));
}
