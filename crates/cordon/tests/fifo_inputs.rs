//! Files cordon finds by itself (a harness's settings in a project, its configuration) are
//! read only when they are regular files: a FIFO at such a path (an unpacked archive can
//! carry one into a project) would block a plain read for ever. Every such reader goes
//! through `cordon_fs::read_regular` (clippy refuses `std::fs::read`, `read_to_string` and `File::open`
//! elsewhere, but for the kernel's files and for a file the user names on the command
//! line, which may be a pipe); the command ends at once with one sentence instead of
//! hanging.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Run `cordon ARGS` with its state and HOME in `dir`, killed after 20 s: its exit code
/// (None when it had to be killed) and stderr.
fn run_bounded(dir: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(common::bin())
        .args(args)
        .env("HOME", dir)
        .env("CORDON_STATE_DIR", dir.join("state"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            child.wait().unwrap();
            return (None, String::new());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_fifo_where_a_project_keeps_harness_settings_is_refused_at_once() {
    let t = tempfile::tempdir().unwrap();
    let project = t.path().join("project");
    for dir in [".claude", ".gemini"] {
        let d = project.join(dir);
        cordon_fs::Dir::create_ambient(&d, 0o700).unwrap();
        let made = Command::new("mkfifo")
            .arg(d.join("settings.json"))
            .status()
            .unwrap();
        assert!(made.success());
    }
    let p = project.to_str().unwrap();
    for harness in ["claude-code", "gemini"] {
        let args = ["setup", harness, "--project", p];
        let (code, err) = run_bounded(t.path(), &args);
        let code = code.unwrap_or_else(|| panic!("`cordon {}` hung on a FIFO", args.join(" ")));
        assert_ne!(code, 0, "`cordon {}` succeeded: {err}", args.join(" "));
        assert!(
            err.contains("settings.json") && err.contains("left untouched"),
            "`cordon {}`: {err}",
            args.join(" ")
        );
    }
}

/// A skill package and a slot snapshot are read twice (sniffed, then read; hashed, then
/// unpacked), so only a regular file can be one: a FIFO named on the command line is
/// refused at once, not waited on (`std::fs::File::open` is refused by clippy too).
#[test]
fn a_fifo_given_as_a_package_or_a_snapshot_is_refused_at_once() {
    let t = tempfile::tempdir().unwrap();
    let fifo = t.path().join("pkg.tar.gz");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let f = fifo.to_str().unwrap();
    for args in [
        vec!["skill", "inspect", f],
        vec!["slots", "restore", "k", f],
    ] {
        let (code, err) = run_bounded(t.path(), &args);
        let code = code.unwrap_or_else(|| panic!("`cordon {}` hung on a FIFO", args.join(" ")));
        assert_ne!(code, 0, "`cordon {}` succeeded: {err}", args.join(" "));
        assert!(
            err.contains("pkg.tar.gz") && err.contains("regular file"),
            "`cordon {}`: {err}",
            args.join(" ")
        );
    }
}
