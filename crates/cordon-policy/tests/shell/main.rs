//! Shell commands judged end to end: analysis classifies, the policy's steps decide.
//! One line per command: the expected decision (and, where it matters, the deciding step).
// Test code: a failed setup step should stop the test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use cordon_policy::{
    Containment, Decision, FakeFs, LoadOptions, Mode, Policy, Request, Step, Verdict,
};

const CONFIG: &str = r#"
[permissions]
allow = [
  "Bash(cargo test:*)",
  "Bash(cargo build:*)",
  "Bash(npm run lint:*)",
  "Bash(find . -name:*)",
  "Bash(find . -exec grep:*)",
  "Bash(git commit:*)",
  "Bash(mkdir -p build)",
  "Bash(python3 scripts/check.py)",
  "Bash(curl:*)",
  "Bash(make:*)",
]
ask = ["Bash(git push:*)"]
deny = ["Bash(git push --force:*)", "Read(./secrets/**)", "Bash(terraform destroy:*)"]

[network]
allow = ["github.com", "*.npmjs.org", "example.com"]
deny = ["pastebin.com"]
"#;

fn fs() -> FakeFs {
    FakeFs::new()
        .dir("/w/proj/src")
        .dir("/w/proj/.git")
        .file("/w/proj/.git/config")
        .file("/w/proj/src/main.rs")
        .file("/w/proj/README.md")
        .file("/w/proj/Makefile")
        .file_with("/w/proj/.env", 1, b"X=1")
        .dir("/w/proj/secrets")
        .file("/w/proj/secrets/k")
        .dir("/w/proj/vendor/evil/.git")
        .file_with(
            "/w/proj/vendor/evil/.git/config",
            1,
            b"[core]\n\tfsmonitor = ./run-me.sh\n",
        )
        .file("/home/u/.ssh/id_rsa")
        .file("/home/u/.bashrc")
        .dir("/home/u/other/sub")
        .dir("/home/u/other/.git")
        .file("/etc/passwd")
        .symlink("/w/proj/link", "/home/u/.ssh")
        .file_with("/home/u/.config/cordon/policy.toml", 1, CONFIG.as_bytes())
}

fn verdict_in(cwd: &str, mode: Option<Mode>, cmd: &str) -> Verdict {
    let f = fs();
    let opts = LoadOptions {
        workspace: "/w/proj".into(),
        home: "/home/u".into(),
        managed: Some("/none".into()),
        mode,
        ..Default::default()
    };
    let policy = Policy::load(&opts, &f).expect("config loads");
    policy.decide(&Request::shell(cmd, Some(cwd.into())), &f)
}

fn verdict(cmd: &str) -> Verdict {
    verdict_in("/w/proj", None, cmd)
}

/// The verdict for a call `cordon exec` runs at the full tier.
fn contained_in(cwd: &str, cmd: &str) -> Verdict {
    let f = fs();
    let opts = LoadOptions {
        workspace: "/w/proj".into(),
        home: "/home/u".into(),
        managed: Some("/none".into()),
        ..Default::default()
    };
    let policy = Policy::load(&opts, &f).expect("config loads");
    let ops = policy.operations(&Request::shell(cmd, Some(cwd.into())), &f);
    policy
        .judge_with(&ops, Containment::Full, false)
        .into_verdict()
}

/// Deny under both `check` and `exec`, by a guard, with a reason containing `why`.
macro_rules! guarded {
    ($name:ident, $cmd:expr, $why:expr) => {
        #[test]
        fn $name() {
            for v in [verdict($cmd), contained_in("/w/proj", $cmd)] {
                assert_eq!(v.decision, Decision::Deny, "{}\n{:#?}", $cmd, v);
                assert_eq!(v.source.step, Step::Guard, "{}\n{:#?}", $cmd, v);
                assert!(v.reason.contains($why), "{}: {}", $cmd, v.reason);
            }
        }
    };
}

macro_rules! shell {
    ($name:ident, $cmd:expr, $want:ident) => {
        #[test]
        fn $name() {
            let v = verdict($cmd);
            assert_eq!(v.decision, Decision::$want, "{}\n{:#?}", $cmd, v);
        }
    };
    ($name:ident, $cmd:expr, $want:ident, $step:ident) => {
        #[test]
        fn $name() {
            let v = verdict($cmd);
            assert_eq!(v.decision, Decision::$want, "{}\n{:#?}", $cmd, v);
            assert_eq!(v.source.step, Step::$step, "{}\n{:#?}", $cmd, v);
        }
    };
}

mod code;
mod executing;
mod network;
mod operations;
mod paths;
