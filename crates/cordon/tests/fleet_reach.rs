#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code
#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! The shared store stays out of a command's reach through the real binary, in the
//! spellings an attacker tried: a loopback exemption written as an IPv4-mapped IPv6
//! address, the TCP port of a store named by its Unix socket, a standalone `cordon proxy`
//! with the same allowances, a hard link to the store's socket, and `exec --isolated`
//! (which ignores the user's config for the policy, not for the store's secrets).

mod common;

use std::os::unix::fs::PermissionsExt;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use common::World;
use common::cli::cordon;

/// The shared fixture, with the user's config directory, the store's socket directory
/// (`home/pg`) and an allow-all policy file in the workspace.
fn world() -> World {
    let w = World::made("cordon-fleet-", None, None);
    for d in [w.home.join(".config/cordon"), w.home.join("pg")] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(w.ws.join("allow.toml"), common::ALLOW_ALL).unwrap();
    w
}

impl World {
    fn user_config(&self, text: &str) {
        let all = format!("{}\n{text}", common::ALLOW_ALL);
        std::fs::write(self.home.join(".config/cordon/policy.toml"), all).unwrap();
    }

    fn socket_url(&self) -> String {
        format!(
            "postgresql:///cordon?host={}&user=m1",
            self.home.join("pg").display()
        )
    }

    fn cordon_with(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut cmd = cordon(&self.home, &self.ws, &self.state, args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    }

    /// `cordon exec FLAGS -- sh -c SCRIPT`; stdout and stderr.
    fn exec(&self, flags: &[&str], script: &str, env: &[(&str, &str)]) -> (String, String) {
        let mut args = vec!["exec", "--home", "visible"];
        args.extend_from_slice(flags);
        args.extend_from_slice(&["--", "sh", "-c", script]);
        common::text(&self.cordon_with(&args, env))
    }
}

/// A loopback exemption spelled as IPv4-mapped IPv6 (two spellings) with the store's
/// port allowed is refused like `127.0.0.1/32`; a store named by its Unix socket has its
/// TCP port checked too.
#[test]
fn mapped_loopback_and_a_sockets_port_are_refused() {
    if !common::full_tier_or_skip("mapped_loopback_and_a_sockets_port_are_refused") {
        return;
    }
    let e = world();
    e.user_config("[store]\nurl = \"postgres://m1@127.0.0.1:5499/cordon\"\nmachine = \"m1\"\n");
    for (private, allow) in [
        ("::ffff:127.0.0.1/128", "[::ffff:127.0.0.1]:5499"),
        ("::ffff:0:0/96", "[::ffff:7f00:1]:5499"),
    ] {
        let (stdout, stderr) = e.exec(
            &["--allow-private", private, "--allow-net", allow],
            "echo CONTROL-OK",
            &[],
        );
        assert!(
            !stdout.contains("CONTROL-OK"),
            "{private}: {stdout} {stderr}"
        );
        assert!(
            stderr.contains("listens on loopback port 5499"),
            "{private}: {stderr}"
        );
    }
    e.user_config(&format!(
        "[store]\nurl = \"{}&port=5498\"\n",
        e.socket_url()
    ));
    let (stdout, stderr) = e.exec(
        &[
            "--allow-private",
            "127.0.0.1/32",
            "--allow-net",
            "127.0.0.1:5498",
        ],
        "echo CONTROL-OK",
        &[],
    );
    assert!(!stdout.contains("CONTROL-OK"), "{stdout} {stderr}");
    assert!(stderr.contains("loopback port 5498"), "{stderr}");
    // Another port with the same exemption runs.
    let (stdout, stderr) = e.exec(
        &[
            "--allow-private",
            "127.0.0.1/32",
            "--allow-net",
            "127.0.0.1:8080",
        ],
        "echo CONTROL-OK",
        &[],
    );
    assert!(stdout.contains("CONTROL-OK"), "{stdout} {stderr}");
}

/// `cordon proxy` reads the same user config and refuses the same allowances, with and
/// without `--isolated`, before it listens.
#[test]
fn the_standalone_proxy_refuses_to_reach_the_store() {
    let e = world();
    e.user_config("[store]\nurl = \"postgres://m1@127.0.0.1:5499/cordon\"\nmachine = \"m1\"\n");
    let sock = e.ws.join("proxy.sock");
    let proxy = |extra: &[&str], private: &str, allow: &str| {
        let mut args = vec![
            "proxy",
            "--unix",
            sock.to_str().unwrap(),
            "--allow",
            allow,
            "--allow-private",
            private,
        ];
        args.extend_from_slice(extra);
        let mut child = cordon(&e.home, &e.ws, &e.state, &args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while child.try_wait().unwrap().is_none() && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let running = child.try_wait().unwrap().is_none();
        if running {
            child.kill().unwrap();
        }
        let out = child.wait_with_output().unwrap();
        let _ = std::fs::remove_file(&sock);
        (running, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    for (extra, private, allow) in [
        (&[][..], "127.0.0.1/32", "127.0.0.1:5499"),
        (&[][..], "::ffff:127.0.0.1/128", "[::ffff:127.0.0.1]:5499"),
        (&["--isolated"][..], "127.0.0.0/8", "any.example:5499"),
    ] {
        let (running, stderr) = proxy(extra, private, allow);
        assert!(!running, "{private}: the proxy served: {stderr}");
        assert!(
            stderr.contains("listens on loopback port 5499"),
            "{private}: {stderr}"
        );
    }
    let (running, stderr) = proxy(&[], "127.0.0.1/32", "127.0.0.1:8080");
    assert!(running, "another port is served: {stderr}");
}

/// A hard link to the store's socket, allowed with `--allow-unix-socket` under its other
/// name, is refused.
#[test]
fn a_hard_link_to_the_store_socket_is_refused() {
    if !common::full_tier_or_skip("a_hard_link_to_the_store_socket_is_refused") {
        return;
    }
    let e = world();
    let socket = e.home.join("pg/.s.PGSQL.5432");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let link = e.ws.join("innocent.sock");
    std::fs::hard_link(&socket, &link).unwrap();
    e.user_config(&format!("[store]\nurl = \"{}\"\n", e.socket_url()));
    let (stdout, stderr) = e.exec(
        &["--allow-unix-socket", link.to_str().unwrap()],
        "echo CONTROL-OK",
        &[],
    );
    assert!(!stdout.contains("CONTROL-OK"), "{stdout} {stderr}");
    assert!(stderr.contains("under another name"), "{stderr}");
}

/// `exec --isolated` takes its policy from the flags alone, yet still masks the password
/// file and the socket directory the user's `[store]` names, and never passes the
/// password's variable, whatever `--env` says.
#[test]
fn isolated_exec_still_keeps_the_store_out_of_reach() {
    if !common::full_tier_or_skip("isolated_exec_still_keeps_the_store_out_of_reach") {
        return;
    }
    let e = world();
    let pw = e.home.join("store-password");
    std::fs::write(&pw, "ISO-PW-SECRET\n").unwrap();
    std::fs::set_permissions(&pw, std::fs::Permissions::from_mode(0o600)).unwrap();
    let socket = e.home.join("pg/.s.PGSQL.5432");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let script = format!(
        "echo CONTROL-OK; cat {}; test -S {} && echo SOCKET-VISIBLE; echo \"env:${{FLEET_PW:-unset}}\"",
        pw.display(),
        socket.display()
    );
    let iso = ["--isolated", "--config", "allow.toml", "--env", "FLEET_PW"];
    e.user_config(&format!(
        "[store]\nurl = \"{}\"\npassword_file = \"{}\"\n",
        e.socket_url(),
        pw.display()
    ));
    let (stdout, stderr) = e.exec(&iso, &script, &[]);
    assert!(stdout.contains("CONTROL-OK"), "{stdout} {stderr}");
    assert!(!stdout.contains("ISO-PW-SECRET"), "{stdout}");
    assert!(!stdout.contains("SOCKET-VISIBLE"), "{stdout}");
    e.user_config(&format!(
        "[store]\nurl = \"{}\"\npassword_env = \"FLEET_PW\"\n",
        e.socket_url()
    ));
    let (stdout, stderr) = e.exec(&iso, &script, &[("FLEET_PW", "ISO-ENV-SECRET")]);
    assert!(stdout.contains("CONTROL-OK"), "{stdout} {stderr}");
    assert!(stdout.contains("env:unset"), "{stdout}");
    assert!(!format!("{stdout}{stderr}").contains("ISO-ENV-SECRET"));
    // The check of the allowances applies too.
    let (stdout, stderr) = e.exec(
        &[
            "--isolated",
            "--config",
            "allow.toml",
            "--allow-unix-socket",
            socket.to_str().unwrap(),
        ],
        "echo CONTROL-OK",
        &[],
    );
    assert!(!stdout.contains("CONTROL-OK"), "{stdout} {stderr}");
    assert!(stderr.contains("socket directory"), "{stderr}");
}

/// A FIFO where cordon reads a file (the project's `.cordon/policy.toml`, the store's
/// `ca_file`) would block a plain open for ever, and Claude Code lets a call through a
/// hook that timed out: the hook answers at once, blocking the call with one sentence.
#[test]
fn a_fifo_where_a_file_is_read_never_hangs_the_hook() {
    let fifo = |p: &std::path::Path| {
        let made = std::process::Command::new("mkfifo")
            .arg(p)
            .status()
            .unwrap();
        assert!(made.success(), "mkfifo {}", p.display());
    };
    let e = world();
    let payload = |ws: &std::path::Path| {
        serde_json::json!({
            "session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": "ls"}, "cwd": ws, "transcript_path": "/dev/null",
            "tool_use_id": "t1"
        })
        .to_string()
    };
    let hook = |ws: &std::path::Path| {
        let mut cmd = cordon(
            &e.home,
            ws,
            &e.state,
            &["hook", "claude-code", "--workspace", ws.to_str().unwrap()],
        );
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // Its own process group, so that whatever it started goes with it when it hangs.
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd.spawn().unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(payload(ws).as_bytes())
            .unwrap();
        let start = Instant::now();
        while child.try_wait().unwrap().is_none() && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let hung = child.try_wait().unwrap().is_none();
        if hung {
            let group = format!("-{}", child.id());
            let _ = std::process::Command::new("kill")
                .args(["-KILL", "--", &group])
                .status();
        }
        (hung, child.wait_with_output().unwrap())
    };
    // The project's policy file is a FIFO.
    let proj = e.ws.join("proj");
    std::fs::create_dir_all(proj.join(".cordon")).unwrap();
    fifo(&proj.join(".cordon/policy.toml"));
    let (hung, out) = hook(&proj);
    assert!(!hung, "the hook waited on the FIFO");
    common::hook::blocks(&out, "cannot read this config file");
    // The store's CA file is a FIFO.
    let ca = e.home.join("ca.pem");
    fifo(&ca);
    e.user_config(&format!(
        "[store]\nurl = \"postgres://m1@localhost:5499/cordon\"\nmachine = \"m1\"\nca_file = \"{}\"\n",
        ca.display()
    ));
    let (hung, out) = hook(&e.ws);
    assert!(!hung, "the hook waited on the FIFO");
    common::hook::blocks(&out, "not a regular file");
}
