//! `cordon import`: TOML on stdout, the report on stderr, and the documented exit codes.
// Test code: a failed setup step should stop the test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::process::{Command, Output};

fn run(args: &[&str], stdin: &str) -> Output {
    let mut cmd = Command::new(common::bin());
    cmd.args(args);
    common::cli::run_with_input(cmd, stdin.as_bytes())
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn everything_converted_exits_zero() {
    let o = run(
        &["import", "claude-settings", "-"],
        r#"{"permissions":{"allow":["Bash(cargo test:*)"],"deny":["Read(./secrets/**)"]}}"#,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("\"Bash(cargo test:*)\""), "{out}");
    assert!(out.contains("\"Read(./secrets/**)\""), "{out}");
    assert!(o.stderr.is_empty(), "{}", text(&o.stderr));
}

#[test]
fn skipped_entries_still_print_the_config_and_exit_six() {
    let o = run(
        &["import", "codex-rules", "-"],
        "prefix_rule(pattern = [\"git\", \"push\"], decision = \"prompt\")\nX = 1\n",
    );
    assert_eq!(o.status.code(), Some(6), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("Bash(git push:*)"));
    let err = text(&o.stderr);
    assert!(err.contains("skipped: line 2"), "{err}");
}

#[test]
fn invalid_input_prints_nothing_and_exits_two() {
    for (kind, input) in [
        ("claude-settings", "{ nope"),
        ("codex-rules", "prefix_rule(pattern = [\"a\""),
    ] {
        let o = run(&["import", kind, "-"], input);
        assert_eq!(o.status.code(), Some(2), "{kind}: {}", text(&o.stderr));
        assert!(o.stdout.is_empty(), "{kind}: {}", text(&o.stdout));
        assert!(
            text(&o.stderr).contains("<stdin>:1:"),
            "{kind}: {}",
            text(&o.stderr)
        );
    }
    let o = run(&["import", "codex-rules", "/nonexistent/default.rules"], "");
    assert_eq!(o.status.code(), Some(2));
}
