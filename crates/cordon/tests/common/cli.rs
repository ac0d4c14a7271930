//! The binary as a command-line program: a clean environment, standard input fed in
//! one piece, and `cordon serve` spoken to over stdio.

use serde_json::{Value, json};
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

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
    // The program may stop reading early (an oversize payload, a refusal): a broken pipe
    // is then expected, and its output says what it did.
    let _ = child.stdin.take().unwrap().write_all(input);
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

/// A `cordon serve --socket` started by [`serve_socket`]; killed when dropped.
pub struct Served {
    /// The server process (its stdio as the caller set it up).
    pub child: Child,
    /// The socket it listens on.
    pub socket: PathBuf,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Start `serve` (a `cordon serve --socket SOCKET` command) and wait until `socket`
/// takes connections.
pub fn serve_socket(serve: &mut Command, socket: PathBuf) -> Served {
    let child = serve.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while UnixStream::connect(&socket).is_err() {
        assert!(Instant::now() < deadline, "the server did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    Served { child, socket }
}
