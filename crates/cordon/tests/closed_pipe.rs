//! A reader that stops early (`cordon approvals list --json | head -c 600`) ends a
//! printing command quietly, the way it ends `cat`: killed by SIGPIPE (141 in a
//! shell), nothing on stderr. Both ways a command prints are covered: the print macros
//! (`approvals list`) and a write whose error is returned (`label`).
// Test helpers outside #[test] functions may unwrap and panic: a failure is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::{Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

use cordon_store::Store;
use serde_json::json;

/// A store with enough pending approvals that `approvals list --json` prints far more
/// than a pipe holds (64 KiB), so the command is still writing when the reader leaves.
fn crowded_state() -> tempfile::TempDir {
    let state = tempfile::tempdir().unwrap();
    let store = Store::open(&state.path().join("store.sqlite3")).unwrap();
    for i in 0..600 {
        store
            .add_pending(
                &format!("fp-{i}"),
                Some("sess"),
                &json!({"tool": "Bash", "input": {"command": format!("make target-{i} {}", "x".repeat(200))}}),
                &json!({"decision": "ask", "reason": "exec asks by default"}),
                Some("Bash(make)"),
            )
            .unwrap();
    }
    state
}

/// Run `cordon ARGS` with `stdin`, read `keep` bytes of its stdout, close the pipe, and
/// return the exit status and everything it wrote on stderr.
fn read_then_close(
    state: &std::path::Path,
    args: &[&str],
    stdin: &[u8],
    keep: usize,
) -> (std::process::ExitStatus, String) {
    let mut child = Command::new(common::bin())
        .args(args)
        .env("CORDON_STATE_DIR", state)
        .env_remove("XDG_STATE_HOME")
        .env("RUST_BACKTRACE", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let mut out = child.stdout.take().unwrap();
    let mut buf = vec![0u8; keep];
    out.read_exact(&mut buf).unwrap();
    drop(out);
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    feeder.join().unwrap();
    (status, err)
}

#[test]
fn approvals_list_into_a_closed_pipe_ends_by_sigpipe_and_says_nothing() {
    let state = crowded_state();
    let (status, err) = read_then_close(state.path(), &["approvals", "list", "--json"], b"", 600);
    assert_eq!(status.signal(), Some(libc::SIGPIPE), "{status:?}: {err}");
    assert_eq!(err, "");
    // The text listing too (a second printer).
    let (status, err) = read_then_close(state.path(), &["approvals", "list"], b"", 600);
    assert_eq!(status.signal(), Some(libc::SIGPIPE), "{status:?}: {err}");
    assert_eq!(err, "");
}

#[test]
fn a_returned_write_error_on_a_closed_pipe_ends_the_same_way() {
    let state = tempfile::tempdir().unwrap();
    // `label` reads everything, then writes it back with `writeln!(…)?`.
    let input = "line of text\n".repeat(40_000);
    let (status, err) = read_then_close(
        state.path(),
        &["label", "--source", "file:x"],
        input.as_bytes(),
        100,
    );
    assert_eq!(status.signal(), Some(libc::SIGPIPE), "{status:?}: {err}");
    assert_eq!(err, "");
}

#[test]
fn a_shell_pipeline_sees_141_and_an_empty_stderr() {
    let state = crowded_state();
    let script = format!(
        "set -o pipefail; '{}' approvals list --json 2>err | head -c 600 >/dev/null",
        common::bin().display()
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(state.path())
        .env("CORDON_STATE_DIR", state.path())
        .env_remove("XDG_STATE_HOME")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(141), "{out:?}");
    let err = cordon_fs_read(&state.path().join("err"));
    assert_eq!(err, "", "stderr of the command");
}

#[allow(clippy::disallowed_methods)] // reading a fixture with std::fs
fn cordon_fs_read(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap()
}
