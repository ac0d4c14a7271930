#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! `cordon hook HARNESS --server SOCKET`: the hook hands its payload to a running
//! `cordon serve`. Through the service every recorded payload gets the reply the
//! standalone hook gives under the same policy (status, stdout and stderr alike), its
//! records carry the harness's surface, an operation id is claimed once whichever way it
//! came, and every failure of the service or of the way to it blocks the call.

mod common;

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

struct Env {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    ws: PathBuf,
    home: PathBuf,
    config: PathBuf,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let (ws, home) = (root.join("ws"), root.join("home"));
        for d in [&ws.join("src"), &home.join(".ssh")] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(ws.join("src/main.rs"), "fn main() {}\n").unwrap();
        std::fs::write(home.join(".ssh/id_rsa"), "key\n").unwrap();
        let config = root.join("policy.toml");
        std::fs::write(&config, "[permissions]\nask = [\"Bash(git push:*)\"]\n").unwrap();
        Env {
            _tmp: tmp,
            root,
            ws,
            home,
            config,
        }
    }

    fn fixture(&self, harness: &str, name: &str) -> String {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../cordon-hook/tests/fixtures")
            .join(harness)
            .join(name);
        std::fs::read_to_string(p)
            .unwrap()
            .replace("@WS@", &self.ws.to_string_lossy())
            .replace("@HOME@", &self.home.to_string_lossy())
    }

    fn cmd(&self, state: &str, args: &[&str]) -> Command {
        let mut c = Command::new(common::bin());
        c.args(args)
            .current_dir(&self.ws)
            .env_clear()
            .env("HOME", &self.home)
            .env("CORDON_STATE_DIR", self.root.join(state))
            .env("PATH", "/usr/local/bin:/usr/bin:/bin");
        c
    }

    /// `cordon serve` on a socket in a fresh 0700 directory, with the hook's policy.
    fn serve(&self, state: &str) -> Server {
        let dir = self.root.join(format!("run-{state}"));
        std::fs::DirBuilder::new().mode(0o700).create(&dir).unwrap();
        let socket = dir.join("cordon.sock");
        let config = self.config.to_str().unwrap().to_string();
        let ws = self.ws.to_str().unwrap().to_string();
        let mut c = self.cmd(
            state,
            &[
                "serve",
                "--isolated",
                "--config",
                &config,
                "--workspace",
                &ws,
                "--socket",
                socket.to_str().unwrap(),
            ],
        );
        Server::start(&mut c, socket)
    }
}

struct Server {
    child: Child,
    socket: PathBuf,
}

impl Server {
    fn start(c: &mut Command, socket: PathBuf) -> Server {
        let child = c
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while UnixStream::connect(&socket).is_err() {
            assert!(Instant::now() < deadline, "the server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Server { child, socket }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn feed(mut c: Command, stdin: &[u8]) -> Output {
    let mut child = c
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(stdin);
    child.wait_with_output().unwrap()
}

fn blocks(o: &Output, needle: &str) {
    let (out, err) = common::text(o);
    assert_eq!(o.status.code(), Some(2), "stdout {out} stderr {err}");
    assert_eq!(out, "");
    assert!(err.starts_with("cordon: "), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one sentence: {err}");
    assert!(err.contains(needle), "`{needle}` not in {err}");
}

fn through(e: &Env, server: &Server, harness: &str, payload: &[u8]) -> Output {
    let socket = server.socket.to_str().unwrap().to_string();
    feed(
        e.cmd("unused", &["hook", harness, "--server", &socket]),
        payload,
    )
}

#[test]
fn every_fixture_gets_the_standalone_reply() {
    let e = Env::new();
    let server = e.serve("served");
    let config = e.config.to_str().unwrap().to_string();
    let mut compared = 0;
    for harness in ["claude-code", "codex", "gemini"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../cordon-hook/tests/fixtures")
            .join(harness);
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|d| d.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for name in names {
            let payload = e.fixture(harness, &name);
            let alone = feed(
                e.cmd(
                    "alone",
                    &["hook", harness, "--isolated", "--config", &config],
                ),
                payload.as_bytes(),
            );
            let served = through(&e, &server, harness, payload.as_bytes());
            assert_eq!(
                (served.status.code(), common::text(&served)),
                (alone.status.code(), common::text(&alone)),
                "{harness}/{name}"
            );
            compared += 1;
        }
    }
    assert!(compared >= 15, "only {compared} fixtures");
    // The service wrote the records, under each harness's own surface.
    let log = std::fs::read_to_string(e.root.join("served/audit.jsonl")).unwrap();
    for surface in ["hook-claude-code", "hook-codex", "hook-gemini"] {
        assert!(
            log.contains(&format!("\"kind\":\"{surface}\"")),
            "no {surface} record"
        );
    }
    assert!(!e.root.join("unused").exists(), "the client wrote state");
}

#[test]
fn an_operation_id_is_claimed_once_either_way() {
    let e = Env::new();
    let server = e.serve("shared");
    let read = e.fixture("claude-code", "PreToolUse-Read.json");
    let first = through(&e, &server, "claude-code", read.as_bytes());
    assert_eq!(first.status.code(), Some(0), "{:?}", common::text(&first));
    blocks(
        &through(&e, &server, "claude-code", read.as_bytes()),
        "already permitted once",
    );
    // The standalone hook on the same store refuses it too.
    let config = e.config.to_str().unwrap().to_string();
    blocks(
        &feed(
            e.cmd(
                "shared",
                &["hook", "claude-code", "--isolated", "--config", &config],
            ),
            read.as_bytes(),
        ),
        "already permitted once",
    );
}

#[test]
fn every_failure_blocks() {
    let e = Env::new();
    let server = e.serve("served");
    let read = e.fixture("claude-code", "PreToolUse-Read.json");
    // Nobody listens.
    let gone = e.root.join("run-served/nobody.sock");
    blocks(
        &feed(
            e.cmd(
                "unused",
                &["hook", "claude-code", "--server", gone.to_str().unwrap()],
            ),
            read.as_bytes(),
        ),
        "did not answer",
    );
    // A call outside the service's workspace.
    let elsewhere = read.replace(
        &format!("\"cwd\": \"{}\"", e.ws.display()),
        &format!("\"cwd\": \"{}\"", e.home.display()),
    );
    assert_ne!(elsewhere, read, "the fixture's cwd was not replaced");
    blocks(
        &through(&e, &server, "claude-code", elsewhere.as_bytes()),
        "start a service for that workspace",
    );
    // What the standalone hook refuses, the service refuses in the same words.
    blocks(
        &through(&e, &server, "claude-code", b"{not json"),
        "not valid JSON",
    );
    blocks(
        &through(&e, &server, "claude-code", &vec![b' '; 2 << 20]),
        "limit",
    );
    // The policy flags belong to the service: combining them is a usage error, which
    // exits 2 as well.
    let socket = server.socket.to_str().unwrap().to_string();
    let mixed = feed(
        e.cmd(
            "unused",
            &["hook", "claude-code", "--server", &socket, "--no-audit"],
        ),
        read.as_bytes(),
    );
    assert_eq!(mixed.status.code(), Some(2));
    assert!(mixed.stdout.is_empty());
    // The service is killed: the next call blocks.
    drop(server);
    blocks(
        &feed(
            e.cmd("unused", &["hook", "claude-code", "--server", &socket]),
            read.as_bytes(),
        ),
        "did not answer",
    );
}

/// A socket another user listens on is never asked, even where this user can reach it
/// (root can connect to anyone's socket): the kernel's word on the peer decides.
#[test]
fn a_service_of_another_user_is_not_asked() {
    if !common::is_root() {
        eprintln!("skipped: only root can reach a socket another user keeps private");
        return;
    }
    let e = Env::new();
    let theirs = e.root.join("theirs");
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&theirs)
        .unwrap();
    for p in [&e.root, &e.ws, &e.ws.join("src"), &e.home] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::set_permissions(&e.config, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
    let socket = theirs.join("cordon.sock");
    let mut c = Command::new("setpriv");
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(common::bin())
        .args(["serve", "--isolated", "--no-audit", "--workspace"])
        .arg(&e.ws)
        .arg("--socket")
        .arg(&socket)
        .current_dir(&e.ws)
        .env_clear()
        .env("HOME", &theirs)
        .env("CORDON_STATE_DIR", theirs.join("state"))
        .env("PATH", "/usr/bin:/bin");
    let _server = Server::start(&mut c, socket.clone());
    let read = e.fixture("claude-code", "PreToolUse-Read.json");
    blocks(
        &feed(
            e.cmd(
                "unused",
                &["hook", "claude-code", "--server", socket.to_str().unwrap()],
            ),
            read.as_bytes(),
        ),
        "not to you",
    );
}
