#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! `cordon hook HARNESS --server SOCKET`: the hook hands its payload to a running
//! `cordon serve`. Through the service every recorded payload gets the reply the
//! standalone hook gives under the same policy (status, stdout and stderr alike), its
//! records carry the harness's surface, an operation id is claimed once whichever way it
//! came, and every failure of the service or of the way to it blocks the call.

mod common;

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::process::{Command, Output, Stdio};

use common::cli::{Served, run_with_input as feed, serve_socket};
use common::hook::{HookEnv as Env, blocks, fixtures};

impl Env {
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
    fn serve(&self, state: &str) -> Served {
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
        serve_socket(quiet(&mut c), socket)
    }
}

fn quiet(c: &mut Command) -> &mut Command {
    c.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
}

fn through(e: &Env, server: &Served, harness: &str, payload: &[u8]) -> Output {
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
    let ws = e.ws.to_str().unwrap().to_string();
    let mut compared = 0;
    for harness in ["claude-code", "codex", "gemini"] {
        let mut names: Vec<String> = std::fs::read_dir(fixtures(harness))
            .unwrap()
            .map(|d| d.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for name in names {
            let payload = e.fixture(harness, &name);
            let alone = feed(
                e.cmd(
                    "alone",
                    &[
                        "hook",
                        harness,
                        "--isolated",
                        "--config",
                        &config,
                        "--workspace",
                        &ws,
                    ],
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

/// The service resolves paths in its own process: another spelling of a key (through a
/// link in the workspace, `..`, the service's own `/proc/self/cwd`, a hard link) is judged
/// as the standalone hook judges it, and none is allowed.
#[test]
fn other_spellings_of_a_secret_are_judged_alike() {
    let e = Env::new();
    let server = e.serve("served");
    let key = e.home.join(".ssh/id_rsa");
    std::os::unix::fs::symlink(e.home.join(".ssh"), e.ws.join("keys")).unwrap();
    std::fs::hard_link(&key, e.ws.join("notes.txt")).unwrap();
    let config = e.config.to_str().unwrap().to_string();
    let ws = e.ws.to_str().unwrap().to_string();
    let read = e.fixture("claude-code", "PreToolUse-Read");
    let main = format!("\"{}\"", e.ws.join("src/main.rs").display());
    assert!(read.contains(&main), "the fixture reads {main}");
    let spellings = [
        key.display().to_string(),
        format!("{}/keys/id_rsa", e.ws.display()),
        format!("{}/src/../../home/.ssh/id_rsa", e.ws.display()),
        "/proc/self/cwd/../home/.ssh/id_rsa".to_string(),
        format!("{}/notes.txt", e.ws.display()),
    ];
    for (i, path) in spellings.iter().enumerate() {
        let payload = read
            .replace(&main, &format!("{path:?}"))
            .replace("toolu_01A1", &format!("toolu_spelling_{i}"));
        let alone = feed(
            e.cmd(
                "alone",
                &[
                    "hook",
                    "claude-code",
                    "--isolated",
                    "--config",
                    &config,
                    "--workspace",
                    &ws,
                ],
            ),
            payload.as_bytes(),
        );
        let served = through(&e, &server, "claude-code", payload.as_bytes());
        assert_eq!(
            (served.status.code(), common::text(&served)),
            (alone.status.code(), common::text(&alone)),
            "{path}"
        );
        let (out, _) = common::text(&served);
        assert!(!out.contains("\"allow\""), "{path} was allowed: {out}");
    }
}

#[test]
fn an_operation_id_is_claimed_once_either_way() {
    let e = Env::new();
    let server = e.serve("shared");
    let read = e.fixture("claude-code", "PreToolUse-Read");
    let first = through(&e, &server, "claude-code", read.as_bytes());
    assert_eq!(first.status.code(), Some(0), "{:?}", common::text(&first));
    blocks(
        &through(&e, &server, "claude-code", read.as_bytes()),
        "already permitted once",
    );
    // The standalone hook on the same store refuses it too.
    let config = e.config.to_str().unwrap().to_string();
    let ws = e.ws.to_str().unwrap().to_string();
    blocks(
        &feed(
            e.cmd(
                "shared",
                &[
                    "hook",
                    "claude-code",
                    "--isolated",
                    "--config",
                    &config,
                    "--workspace",
                    &ws,
                ],
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
    let read = e.fixture("claude-code", "PreToolUse-Read");
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

/// A judgement that hangs blocks the call before a harness's own timeout would let it
/// through: here a service that accepts the connection and never answers, with the
/// deadline shortened (the default, 45 s, is under every harness's default timeout).
#[test]
fn a_judgement_that_hangs_blocks_at_the_deadline() {
    let e = Env::new();
    let dir = e.root.join("run-silent");
    std::fs::DirBuilder::new().mode(0o700).create(&dir).unwrap();
    let socket = dir.join("silent.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let held = std::thread::spawn(move || {
        let conn = listener.accept().map(|(c, _)| c);
        std::thread::sleep(std::time::Duration::from_secs(20));
        drop(conn);
    });
    let read = e.fixture("claude-code", "PreToolUse-Read");
    let started = std::time::Instant::now();
    let mut c = e.cmd(
        "unused",
        &["hook", "claude-code", "--server", socket.to_str().unwrap()],
    );
    c.env("CORDON_HOOK_DEADLINE_MS", "500");
    blocks(&feed(c, read.as_bytes()), "had not answered after 500 ms");
    // Blocked by the deadline, not by the service's own 60 s timeout.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    drop(held);
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
    let _server = serve_socket(quiet(&mut c), socket.clone());
    let read = e.fixture("claude-code", "PreToolUse-Read");
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

/// Where no child can be made (a process limit reached), the call is judged in the
/// hook's own process, and the deadline still holds: a payload that never ends (stdin
/// left open) is blocked at it, by the timer signal's handler, with status 2.
#[test]
fn a_judgement_in_the_hooks_own_process_keeps_the_deadline() {
    let e = Env::new();
    let hook = e.cmd("unused", &["hook", "claude-code"]);
    // One process at most for the user running the hook: its fork fails. Root is exempt
    // from the limit, so root runs it as a user no other process has (`nobody` may have
    // others, which would make the exec itself fail), from a copy it can reach (the
    // checkout may be in a 0700 directory).
    let hook = if common::is_root() {
        let copy = e.root.join("cordon-for-a-lone-user");
        std::fs::copy(hook.get_program(), &copy).unwrap();
        std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut sp = Command::new("setpriv");
        sp.args(["--reuid=61234", "--regid=61234", "--clear-groups", "--"])
            .arg(&copy)
            .args(hook.get_args())
            .env_clear()
            .envs(hook.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))));
        sp
    } else {
        hook
    };
    let mut c = Command::new("prlimit");
    c.arg("--nproc=1")
        .arg("--")
        .arg(hook.get_program())
        .args(hook.get_args())
        .env_clear()
        .envs(hook.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))))
        .env("CORDON_HOOK_DEADLINE_MS", "500")
        .current_dir(hook.get_current_dir().unwrap_or(&e.ws))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = std::time::Instant::now();
    let mut child = c.spawn().unwrap();
    let held_open = child.stdin.take();
    // Without the deadline the hook would wait for its payload for ever: a hook killed
    // after 20 s fails the test instead of hanging it.
    let pid = child.id().to_string();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let waited = done.clone();
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(20));
        if !waited.load(std::sync::atomic::Ordering::SeqCst) {
            let _ = Command::new("kill").args(["-9", &pid]).status();
        }
    });
    let o = child.wait_with_output().unwrap();
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    drop(held_open);
    let (out, err) = common::text(&o);
    assert_eq!(o.status.code(), Some(2), "stdout {out} stderr {err}");
    assert_eq!(out, "");
    assert!(
        err.contains("cannot fork"),
        "judged in its own process: {err}"
    );
    assert!(
        err.contains("had not answered after 500 ms; the call is blocked"),
        "{err}"
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
}
