//! The binary as a command-line program: a clean environment, standard input fed in
//! one piece, and `cordon serve` spoken to over stdio.

use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// `cordon ARGS` run in `cwd` with nothing of the caller's environment but a `HOME`,
/// a `PATH` and a state directory.
pub fn cordon(home: &Path, cwd: &Path, state: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(super::bin());
    cmd.args(args)
        .current_dir(cwd)
        .env_clear()
        .env("HOME", home)
        .env("PATH", "/usr/bin:/bin")
        .env("CORDON_STATE_DIR", state);
    cmd
}

/// Run `cmd` with `input` on its standard input; its output once it exits.
pub fn run_with_input(mut cmd: Command, input: &[u8]) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

/// One `check` frame of `cordon serve`, its asks answered to the caller (as `cordon
/// check` without `--pending` does).
pub fn check_frame(id: usize, req: &Value) -> String {
    let mut params = req.clone();
    params["on_ask"] = json!("caller");
    json!({"jsonrpc": "2.0", "id": id, "method": "check", "params": params}).to_string()
}

/// Send `reqs` as `check` frames to `serve` (a `cordon serve` command on stdio) and
/// return its answers, one JSON-RPC response per request, after it exits cleanly.
pub fn serve_stdio(serve: Command, reqs: &[Value]) -> Vec<Value> {
    let mut input = String::new();
    for (i, r) in reqs.iter().enumerate() {
        input.push_str(&check_frame(i, r));
        input.push('\n');
    }
    let out = run_with_input(serve, input.as_bytes());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect()
}
