#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! Presets and edited approvals through the real binary: `cordon check --pending`, then
//! `cordon approvals approve ID --input FILE`, then the same call again.
// Test helpers outside #[test] functions may unwrap and panic: a failure is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::{World, bin};

use std::process::{Command, Output};

use serde_json::{Value, json};

/// A world with a key in HOME, whose policy asks before `git push` and presets a Bash
/// call's timeout.
fn world() -> World {
    let w = World::made(
        "cordon-edited-",
        None,
        Some(
            "[permissions]\nask = [\"Bash(git push:*)\"]\n\n\
             [[preset]]\ntool = \"Bash\"\nset = { timeout = 120000 }\n",
        ),
    );
    w.put(&w.home, ".ssh/id_rsa", "KEY");
    w
}

impl World {
    fn cordon(&self, args: &[&str], stdin: Option<&str>) -> Output {
        let mut c = Command::new(bin());
        // The policy flags go right after the subcommand (before an exec's `--`).
        let at = if args[0] == "approvals" { 2 } else { 1 };
        c.args(&args[..at]);
        if args[..2] != ["approvals", "list"] {
            c.args(["--isolated", "--config", self.config.to_str().unwrap()]);
        }
        c.args(&args[at..])
            .env("HOME", &self.home)
            .env("CORDON_STATE_DIR", &self.state)
            .env_remove("XDG_STATE_HOME")
            .env_remove("XDG_CONFIG_HOME")
            .current_dir(&self.ws);
        if let Some(text) = stdin {
            let path = self.root.join("stdin.json");
            std::fs::write(&path, text).unwrap();
            c.stdin(std::fs::File::open(path).unwrap());
        }
        c.output().unwrap()
    }

    fn check(&self, command: &str, op: &str) -> (Option<i32>, Value) {
        let req = json!({
            "tool": "Bash",
            "input": {"command": command, "timeout": 5},
            "cwd": self.ws,
            "operation_id": op,
        })
        .to_string();
        let out = self.cordon(&["check", "--pending", &req], None);
        let text = String::from_utf8_lossy(&out.stdout);
        let v = serde_json::from_str(text.trim()).unwrap_or_else(|_| {
            panic!(
                "not JSON: {text} / {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        (out.status.code(), v)
    }

    fn approve_with(&self, id: i64, input: Value) -> Output {
        let file = self.root.join(format!("edit-{id}.json"));
        std::fs::write(&file, input.to_string()).unwrap();
        self.cordon(
            &[
                "approvals",
                "approve",
                &id.to_string(),
                "--input",
                file.to_str().unwrap(),
            ],
            None,
        )
    }
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn an_edited_approval_reaches_the_caller_and_cannot_escalate() {
    let w = world();
    let (code, v) = w.check("git push origin main", "op-1");
    assert_eq!(code, Some(5), "{v}");
    let id = v["pending"].as_i64().unwrap();

    // An edit into a guarded read is refused (exit 4) and leaves the request pending.
    let key = w.home.join(".ssh/id_rsa");
    let o = w.approve_with(id, json!({"command": format!("cat {}", key.display())}));
    assert_eq!(o.status.code(), Some(4), "{}", err(&o));
    assert!(err(&o).contains("denied"), "{}", err(&o));
    let list = w.cordon(&["approvals", "list", "--json"], None);
    assert!(String::from_utf8_lossy(&list.stdout).contains(&format!("\"id\":{id}")));

    // An edit that stays within policy is approved.
    let o = w.approve_with(id, json!({"command": "git push --dry-run origin main"}));
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));

    // The same call (same operation id) comes back: the edit is what the caller must run,
    // with the preset over it.
    let (code, v) = w.check("git push origin main", "op-1");
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(
        v["updated_input"]["command"],
        "git push --dry-run origin main"
    );
    assert_eq!(v["updated_input"]["timeout"], 120000);

    // Spent; a replay of the id with an allowed call is refused (exit 4).
    let (code, v) = w.check("ls", "op-1");
    assert_eq!(code, Some(4), "{v}");
    assert!(
        v["reason"].as_str().unwrap().contains("already permitted"),
        "{v}"
    );
}

#[test]
fn a_preset_is_returned_to_the_caller_and_exec_refuses_it() {
    let w = world();
    let (code, v) = w.check("ls", "op-x");
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["updated_input"]["timeout"], 120000);
    assert_eq!(v["updated_input"]["command"], "ls");

    // `cordon exec` runs what it was given; a preset on its tool would change that.
    std::fs::write(
        &w.config,
        "[[preset]]\ntool = \"bash\"\nset = { timeout = 1 }\n",
    )
    .unwrap();
    let o = w.cordon(&["exec", "--require", "any", "--", "true"], None);
    assert_eq!(o.status.code(), Some(126), "{}", err(&o));
    assert!(err(&o).contains("preset"), "{}", err(&o));
}
