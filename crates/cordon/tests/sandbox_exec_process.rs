#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! `cordon exec` containment of processes, signals, system calls and the network, and
//! the exit contract, tested with real processes on a temporary workspace with a fake
//! HOME ([`SecretWorld`]). The file system is in `sandbox_exec.rs`.
//!
//! Tests that need user namespaces skip with a printed reason when the host cannot
//! create them, unless `CORDON_REQUIRE_SANDBOX_TESTS=1` (set in CI), which turns the
//! skip into a failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code

mod common;

use common::secret_world::{SecretWorld, bin_in};
use common::{ALLOW_ALL, bin, is_root, text};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

#[test]
fn the_helper_shows_nothing_of_cordons_arguments_or_environment() {
    need_sandbox!("the_helper_shows_nothing_of_cordons_arguments_or_environment");
    let body = r#"for f in /proc/[0-9]*/cmdline /proc/[0-9]*/environ; do echo "== $f"; tr '\0' ' ' < "$f" 2>&1; echo; done; echo "PID1=$(tr '\0' '_' < /proc/1/cmdline)"; echo END"#;
    let w = SecretWorld::new();
    let check = |o: &Output, who: &str| {
        let (out, err) = text(o);
        assert!(
            out.contains("END") && out.contains("PID1="),
            "{who}: {out}\n{err}"
        );
        // The command's own process shows its arguments (the probe works) …
        assert!(out.contains("./t.sh"), "{who}: {out}");
        // … PID 1 nothing of cordon's, and no process the host's variables.
        for leak in [
            "--isolated",
            "--workspace",
            "ghp_HOST_TOKEN_VALUE",
            "host-only-value",
        ] {
            assert!(!out.contains(leak), "{who}: {leak} visible inside: {out}");
        }
        let pid1 = out.lines().find_map(|l| l.strip_prefix("PID1=")).unwrap();
        assert!(
            pid1.chars().all(|c| c == '_'),
            "{who}: PID 1's cmdline: {pid1}"
        );
    };
    check(&w.run(body, &[]), "root");
    if is_root() {
        check(&w.run_as_nobody(body, &[]), "nobody");
    }
}

#[test]
fn sockets_reach_nothing_without_network() {
    need_sandbox!("sockets_reach_nothing_without_network");
    let w = SecretWorld::new();
    let o = w.run(
        r#"for k in tcp udp tcp6 netlink; do printf '%s ' $k; "$PROBE" $k; done
bash -c 'echo > /dev/tcp/127.0.0.1/80' 2>/dev/null && echo BASH-TCP
bash -c 'echo > /dev/tcp/1.1.1.1/80' 2>/dev/null && echo BASH-INTERNET
echo end"#,
        &[],
    );
    let (out, err) = text(&o);
    assert!(out.contains("end"), "{out}\n{err}");
    for k in ["tcp", "udp", "tcp6"] {
        let line = out.lines().find(|l| l.starts_with(k)).unwrap();
        assert!(line.ends_with("OK"), "{line}");
    }
    let netlink = out.lines().find(|l| l.starts_with("netlink")).unwrap();
    assert!(netlink.contains("ERR"), "{netlink}");
    assert!(
        !out.contains("BASH-TCP") && !out.contains("BASH-INTERNET"),
        "{out}"
    );
}

#[test]
fn dangerous_syscalls_are_refused() {
    need_sandbox!("dangerous_syscalls_are_refused");
    let w = SecretWorld::new();
    let o = w.run(
        r#"for k in io_uring ptrace-parent tiocsti unshare-user mount bpf x32-getpid kill-init; do printf '%s ' $k; "$PROBE" $k; done"#,
        &[],
    );
    let (out, err) = text(&o);
    for k in [
        "io_uring",
        "ptrace-parent",
        "tiocsti",
        "unshare-user",
        "mount",
        "bpf",
        "x32-getpid",
        "kill-init",
    ] {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("{k} ")))
            .unwrap_or_else(|| panic!("no line for {k}: {out}\n{err}"));
        assert!(line.contains("ERR"), "{k} was not refused: {line}");
    }
    // clone3 answers ENOSYS, so libc falls back to clone, whose flags are checked.
    let clone3 = w.run("\"$PROBE\" clone3", &[]);
    assert_eq!(text(&clone3).0.trim(), "ERR 38");
    // The pty was really opened, so TIOCSTI's refusal is the filter's, not ENOTTY.
    let tiocsti = out.lines().find(|l| l.starts_with("tiocsti ")).unwrap();
    assert_eq!(tiocsti, "tiocsti ERR 1", "{out}");
}

#[test]
fn host_unix_sockets_are_unreachable() {
    need_sandbox!("host_unix_sockets_are_unreachable");
    let w = SecretWorld::new();
    let name = format!("cordon-test-{}", std::process::id());
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let _abstract = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
    // A stand-in for /run/docker.sock.
    let run_dir = if is_root() {
        let d = PathBuf::from(format!("/run/cordon-test-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    } else {
        match std::env::var_os("XDG_RUNTIME_DIR") {
            Some(d) => PathBuf::from(d),
            None => {
                eprintln!("skipping the path-socket half: no writable directory under /run");
                w.outside.clone()
            }
        }
    };
    let sock = run_dir.join("docker.sock");
    let _path = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    // Both are reachable from the host, so a refusal inside is the sandbox's doing.
    assert!(std::os::unix::net::UnixStream::connect_addr(&addr).is_ok());
    assert!(std::os::unix::net::UnixStream::connect(&sock).is_ok());
    let o = w.run(
        &format!(
            r#"printf 'abstract '; "$PROBE" abstract {name}
printf 'path '; "$PROBE" unix-path {}
find /run /var/run -type s 2>/dev/null | wc -l
ls -A /run | wc -l"#,
            sock.display()
        ),
        &[],
    );
    let (out, err) = text(&o);
    if run_dir.starts_with("/run") && is_root() {
        let _ = std::fs::remove_dir_all(&run_dir);
    }
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.len() >= 4, "{out}\n{err}");
    assert!(lines[0].starts_with("abstract ERR"), "{out}");
    if sock.starts_with("/run") {
        assert!(lines[1].starts_with("path ERR"), "{out}");
    }
    assert_eq!(lines[2].trim(), "0", "sockets under /run: {out}");
    assert_eq!(lines[3].trim(), "0", "/run is not empty: {out}");
}

#[test]
fn host_processes_are_invisible() {
    need_sandbox!("host_processes_are_invisible");
    let w = SecretWorld::new();
    let mut host = Command::new("sleep").arg("60").spawn().unwrap();
    let pid = host.id();
    let o = w.run(
        &format!(
            "ls /proc | grep -c '^[0-9]'; cat /proc/{pid}/cmdline 2>/dev/null | tr '\\0' ' '; echo; kill -0 {pid} 2>/dev/null && echo SIGNALLED"
        ),
        &[],
    );
    let _ = host.kill();
    let _ = host.wait();
    let (out, err) = text(&o);
    let count: usize = out.lines().next().unwrap().trim().parse().unwrap();
    assert!(count <= 6, "{count} processes visible: {out}\n{err}");
    assert!(!out.contains("sleep 60"), "{out}");
    assert!(!out.contains("SIGNALLED"), "{out}");
}

#[test]
fn environ_holds_only_allowlisted_names() {
    need_sandbox!("environ_holds_only_allowlisted_names");
    let w = SecretWorld::new();
    let o = w.run(
        "tr '\\0' '\\n' < /proc/self/environ; echo ---; tr '\\0' '\\n' < /proc/1/environ 2>/dev/null; echo ---",
        &[],
    );
    let (out, err) = text(&o);
    assert!(!out.contains("ghp_HOST_TOKEN_VALUE"), "{out}");
    assert!(!out.contains("host-only-value"), "{out}");
    let mut parts = out.split("---\n");
    let own = parts.next().unwrap();
    let init = parts.next().unwrap_or("");
    // Names the shell itself adds to its children's environment.
    let shell_added = ["PWD", "OLDPWD", "SHLVL", "_"];
    for line in own.lines().filter(|l| !l.is_empty()) {
        let name = line.split('=').next().unwrap();
        assert!(
            cordon_allowlisted(name) || shell_added.contains(&name),
            "{name} is not allowlisted: {out}\n{err}"
        );
    }
    assert!(init.trim().is_empty(), "/proc/1/environ leaked: {init}");
}

fn cordon_allowlisted(name: &str) -> bool {
    [
        "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "TZ", "TMPDIR",
    ]
    .contains(&name)
        || name.starts_with("LC_")
        // Passed with --env by the harness.
        || name == "PROBE"
        || name == "OUTSIDE"
}

#[test]
fn the_timeout_kills_the_whole_tree() {
    need_sandbox!("the_timeout_kills_the_whole_tree");
    let w = SecretWorld::new();
    let start = Instant::now();
    let o = w.run(
        "(sleep 2; echo alive > late1) & setsid sh -c 'sleep 2; echo alive > late2' & sleep 60",
        &["--timeout", "500ms"],
    );
    let took = start.elapsed();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(124), "{out}\n{err}");
    assert!(took < Duration::from_secs(10), "took {took:?}");
    std::thread::sleep(Duration::from_millis(2500));
    assert!(!w.ws.join("late1").exists(), "a background child survived");
    assert!(!w.ws.join("late2").exists(), "a setsid child survived");
}

#[test]
fn no_process_survives_the_command() {
    need_sandbox!("no_process_survives_the_command");
    let w = SecretWorld::new();
    let start = Instant::now();
    let o = w.run(
        "(sleep 1; echo alive > late1) & nohup sh -c 'sleep 1; echo alive > late2' >/dev/null 2>&1 & setsid sh -c 'sleep 1; echo alive > late3' & exit 7",
        &[],
    );
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(7), "{out}\n{err}");
    assert!(start.elapsed() < Duration::from_secs(5));
    std::thread::sleep(Duration::from_millis(1800));
    for f in ["late1", "late2", "late3"] {
        assert!(!w.ws.join(f).exists(), "{f}: a background process survived");
    }
}

#[test]
fn setuid_binaries_do_not_elevate() {
    need_sandbox!("setuid_binaries_do_not_elevate");
    if !is_root() {
        eprintln!(
            "skipping setuid_binaries_do_not_elevate: creating a setuid-root file needs root"
        );
        return;
    }
    let w = SecretWorld::new();
    // A setuid-root copy of `id`, outside the workspace (visible read-only).
    let suid = w.outside.join("suid-id");
    std::fs::copy("/usr/bin/id", &suid).unwrap();
    std::fs::set_permissions(&suid, std::fs::Permissions::from_mode(0o4755)).unwrap();
    let o = w.run_as_nobody(
        &format!("{} -u; {} -u -r", suid.display(), suid.display()),
        &[],
    );
    let (out, err) = text(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines, ["65534", "65534"], "{out}\n{err}");
}

#[test]
fn exit_codes_follow_the_contract() {
    need_sandbox!("exit_codes_follow_the_contract");
    let w = SecretWorld::new();
    assert_eq!(w.run("exit 3", &[]).status.code(), Some(3));
    // Killed by a signal: 128 + signal number.
    assert_eq!(w.run("kill -TERM $$", &[]).status.code(), Some(128 + 15));
    // Not found: 127 (the policy is told to allow the unknown program).
    let nf_config = w.ws.parent().unwrap().join("notfound.toml");
    std::fs::write(
        &nf_config,
        "mode = \"bypass\"\n[permissions]\nallow = [\"Bash(definitely-not-a-command-xyz)\"]\n",
    )
    .unwrap();
    let o = Command::new(bin())
        .args(["exec", "--isolated", "--config"])
        .arg(&nf_config)
        .arg("--workspace")
        .arg(&w.ws)
        .args(["--", "definitely-not-a-command-xyz"])
        .env("HOME", &w.home)
        .current_dir(&w.ws)
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(127), "{out}\n{err}");
    assert!(err.contains("command not found"), "{err}");
    // Denied by policy: a credential read is a non-disableable guard.
    let o = Command::new(bin())
        .args(["exec", "--isolated", "--config"])
        .arg(&w.config)
        .arg("--workspace")
        .arg(&w.ws)
        .arg("--")
        .arg("cat")
        .arg(w.home.join(".ssh/id_rsa"))
        .env("HOME", &w.home)
        .current_dir(&w.ws)
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(126), "{out}\n{err}");
    assert!(err.contains("denied"), "{err}");
    assert!(!out.contains("PRIVATE-KEY"));
}

#[test]
fn proxy_mode_reaches_only_the_proxy() {
    need_sandbox!("proxy_mode_reaches_only_the_proxy");
    let w = SecretWorld::new();
    let sock = w.ws.parent().unwrap().join("egress.sock");
    let listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let server = std::thread::spawn(move || {
        use std::io::{Read, Write};
        if let Ok((mut c, _)) = listener.accept() {
            let mut buf = [0u8; 4096];
            let n = c.read(&mut buf).unwrap_or(0);
            let line = String::from_utf8_lossy(&buf[..n])
                .lines()
                .next()
                .unwrap_or("")
                .to_string();
            let _ = write!(
                c,
                "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nvia-proxy {line}\n"
            );
        }
    });
    let o = w.run(
        r#"echo "$HTTP_PROXY $HTTPS_PROXY $ALL_PROXY $http_proxy"
bash -c 'exec 3<>/dev/tcp/127.0.0.1/3128; printf "GET http://example.com/hello HTTP/1.1\r\nHost: example.com\r\n\r\n" >&3; cat <&3'
bash -c 'echo > /dev/tcp/127.0.0.1/80' 2>/dev/null && echo DIRECT-LOOPBACK
bash -c 'echo > /dev/tcp/1.1.1.1/80' 2>/dev/null && echo DIRECT-INTERNET
"$PROBE" udp
echo end"#,
        &["--proxy-socket", sock.to_str().unwrap()],
    );
    let _ = server.join();
    let (out, err) = text(&o);
    assert!(out.contains("end"), "{out}\n{err}");
    let first = out.lines().next().unwrap();
    assert_eq!(
        first,
        "http://127.0.0.1:3128 http://127.0.0.1:3128 http://127.0.0.1:3128 http://127.0.0.1:3128"
    );
    assert!(
        out.contains("via-proxy GET http://example.com/hello"),
        "{out}\n{err}"
    );
    assert!(!out.contains("DIRECT-LOOPBACK"), "{out}");
    assert!(!out.contains("DIRECT-INTERNET"), "{out}");
}

#[test]
fn doctor_reports_the_host() {
    // Its own state directory: doctor probes (and makes) the change sets' place there,
    // which must never be the real user's.
    let state = tempfile::tempdir().unwrap();
    let o = Command::new(bin())
        .args(["doctor"])
        .env("CORDON_STATE_DIR", state.path())
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    for key in [
        "user namespaces:",
        "landlock:",
        "seccomp:",
        "cgroups:",
        "tier:",
    ] {
        assert!(out.contains(key), "{key} missing: {out}");
    }
}

#[test]
fn fallback_tier_without_user_namespaces_and_require_full() {
    need_sandbox!("fallback_tier_without_user_namespaces_and_require_full");
    let w = SecretWorld::new();
    // Inside the sandbox, seccomp refuses new user namespaces: a nested cordon finds
    // none and refuses (the default, or --require full), or falls back when it is told
    // to accept that (--require any).
    // Its state goes to the sandbox's private /tmp: HOME, like every hidden directory,
    // is read-only, and the fallback tier refuses a state directory inside its
    // writable root.
    let inner_cfg = w.ws.join("inner.toml");
    std::fs::write(&inner_cfg, ALLOW_ALL.replace("./t.sh", "./inner.sh")).unwrap();
    std::fs::write(w.ws.join("inner.sh"), "#!/bin/sh\necho x > /usr/fallback-escape && echo WROTE-USR\necho ok > fallback.txt && echo INNER-OK\n").unwrap();
    std::fs::set_permissions(
        w.ws.join("inner.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let o = w.run(
        &format!(
            r#"export CORDON_STATE_DIR=/tmp/inner-state
{bin} exec --isolated --config inner.toml --workspace . --require any -- ./inner.sh; echo "rc=$?"
{bin} exec --isolated --config inner.toml --workspace . --require full -- ./inner.sh; echo "rc=$?"
{bin} exec --isolated --config inner.toml --workspace . -- ./inner.sh; echo "rc=$?""#,
            bin = bin_in(&w.ws).display()
        ),
        &[],
    );
    let (out, err) = text(&o);
    assert!(out.contains("INNER-OK"), "{out}\n{err}");
    assert!(!out.contains("WROTE-USR"), "{out}");
    assert!(err.contains("fallback tier"), "{err}");
    let rcs: Vec<&str> = out.lines().filter(|l| l.starts_with("rc=")).collect();
    assert_eq!(rcs, ["rc=0", "rc=125", "rc=125"], "{out}\n{err}");
    assert_eq!(out.matches("INNER-OK").count(), 1, "{out}\n{err}");
    assert_eq!(
        err.matches("cordon refuses to run without them; pass --require any")
            .count(),
        2,
        "{err}"
    );
}

#[test]
fn output_is_capped_and_the_command_keeps_running() {
    need_sandbox!("output_is_capped_and_the_command_keeps_running");
    let w = SecretWorld::new();
    let o = w.run(
        "yes cordon | head -c 100000; echo done > finished.txt",
        &["--max-output", "1000"],
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert_eq!(out.len(), 1000, "{}", out.len());
    assert!(err.contains("--max-output"), "{err}");
    assert!(w.ws.join("finished.txt").exists());
}

#[test]
fn an_ask_without_a_terminal_is_a_deny() {
    // No sandbox needed: the policy refuses before anything runs.
    let w = SecretWorld::new();
    // Contained, `exec` is decided by `[contained]`: make it ask there.
    std::fs::write(&w.config, "[contained]\nexec = \"ask\"\n").unwrap();
    w.script("echo RAN > ran.txt");
    let c = w.command(&[]);
    // Detach from any controlling terminal, so no human can be asked.
    let o = Command::new("setsid")
        .arg("-w")
        .arg(c.get_program())
        .args(c.get_args())
        .current_dir(&w.ws)
        .env_clear()
        .envs(c.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(126), "{out}\n{err}");
    assert!(err.contains("approval needed"), "{err}");
    assert!(!w.ws.join("ran.txt").exists());
}

#[test]
fn shell_text_is_judged_before_it_runs() {
    let w = SecretWorld::new();
    // The policy denies reading a credential even in bypass mode; the text never runs.
    let o = Command::new(bin())
        .args(["exec", "--isolated", "--config"])
        .arg(&w.config)
        .arg("--workspace")
        .arg(&w.ws)
        .arg("--shell")
        .arg(format!(
            "echo RAN > ran.txt; cat {}",
            w.home.join(".ssh/id_rsa").display()
        ))
        .env_clear()
        .env("HOME", &w.home)
        .env("PATH", "/usr/bin:/bin")
        .current_dir(&w.ws)
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(126), "{out}\n{err}");
    assert!(err.contains("denied by policy"), "{err}");
    assert!(!w.ws.join("ran.txt").exists());
}

#[test]
fn full_network_reaches_the_host_and_none_does_not() {
    need_sandbox!("full_network_reaches_the_host_and_none_does_not");
    let w = SecretWorld::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for c in listener.incoming() {
            drop(c);
        }
    });
    let body = format!(
        "bash -c 'echo > /dev/tcp/127.0.0.1/{port}' 2>/dev/null && echo CONNECTED; echo end"
    );
    let o = w.run(&body, &["--net", "full"]);
    let (out, err) = text(&o);
    assert!(out.contains("CONNECTED"), "--net full: {out}\n{err}");
    let o = w.run(&body, &[]);
    let (out, err) = text(&o);
    assert!(
        out.contains("end") && !out.contains("CONNECTED"),
        "no network: {out}\n{err}"
    );
}

#[test]
fn signals_to_cordon_reach_the_command() {
    need_sandbox!("signals_to_cordon_reach_the_command");
    // Also while the egress proxy's threads run in cordon (`--allow-net`): a signal must
    // not land on one of them and end cordon before it reaches the command.
    for extra in [&[][..], &["--allow-net", "example.com"][..]] {
        let w = SecretWorld::new();
        w.script("trap 'echo GOT-TERM; exit 42' TERM; echo ready; while :; do sleep 0.05; done");
        let mut child = w.command(extra).stdout(Stdio::piped()).spawn().unwrap();
        let mut out = child.stdout.take().unwrap();
        let mut first = [0u8; 6];
        std::io::Read::read_exact(&mut out, &mut first).unwrap();
        assert_eq!(&first, b"ready\n");
        let st = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(st.success());
        let status = child.wait().unwrap();
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
        assert!(rest.contains("GOT-TERM"), "{extra:?}: {rest}");
        assert_eq!(status.code(), Some(42), "{extra:?}");
    }
}

#[test]
fn nothing_outlives_a_killed_cordon() {
    need_sandbox!("nothing_outlives_a_killed_cordon");
    let w = SecretWorld::new();
    w.script("echo ready; (sleep 2; echo alive > late1) & sleep 2; echo alive > late2");
    let mut child = w.command(&[]).stdout(Stdio::piped()).spawn().unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut first = [0u8; 6];
    std::io::Read::read_exact(&mut out, &mut first).unwrap();
    child.kill().unwrap();
    let _ = child.wait();
    std::thread::sleep(Duration::from_millis(2800));
    assert!(
        !w.ws.join("late1").exists(),
        "a background process outlived cordon"
    );
    assert!(!w.ws.join("late2").exists(), "the command outlived cordon");
}

#[test]
fn the_real_egress_proxy_decides_for_the_sandbox() {
    need_sandbox!("the_real_egress_proxy_decides_for_the_sandbox");
    let w = SecretWorld::new();
    let sock = w.ws.parent().unwrap().join("egress.sock");
    let mut proxy = Command::new(bin())
        .args(["proxy", "--isolated", "--allow", "example.com", "--unix"])
        .arg(&sock)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !sock.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = w.run(
        r#"for url in http://not-allowed.example.net/ http://127.0.0.1:9/; do
  bash -c 'exec 3<>/dev/tcp/127.0.0.1/3128; printf "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" "$1" >&3; head -n 1 <&3' _ "$url" | cut -d' ' -f2
done"#,
        &["--proxy-socket", sock.to_str().unwrap()],
    );
    let _ = proxy.kill();
    let _ = proxy.wait();
    let (out, err) = text(&o);
    // Both answers come from the proxy (403), not from a failed connection (000).
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        ["403", "403"],
        "{out}\n{err}"
    );
}

/// A read that only the full tier contains (HOME hidden, secrets masked) is allowed
/// there without a human, but where the full tier is unavailable the call is judged again
/// for the fallback tier, and that ask, with nobody to answer it, is refused: the
/// decision reached for one tier never runs at another.
#[test]
fn a_full_tier_allow_is_judged_again_for_the_fallback_tier() {
    need_sandbox!("a_full_tier_allow_is_judged_again_for_the_fallback_tier");
    let w = SecretWorld::new();
    // Inside the sandbox, seccomp refuses new user namespaces: a nested cordon can only
    // have the fallback tier, which it accepts (--require any). Its own config is empty
    // (built-in defaults); its state goes to the sandbox's private /tmp: HOME, like
    // every hidden directory, is read-only.
    std::fs::write(w.ws.join("empty.toml"), "").unwrap();
    let o = w.run(
        &format!(
            r#"export CORDON_STATE_DIR=/tmp/inner-state
{bin} exec --isolated --config empty.toml --workspace . --require any -- cat /etc/hostname </dev/null; echo "rc=$?"
{bin} exec --isolated --config empty.toml --workspace . --require any -- sh -c 'echo in > inner.txt' </dev/null; echo "rc=$?""#,
            bin = bin_in(&w.ws).display()
        ),
        &[],
    );
    let (out, err) = text(&o);
    let rcs: Vec<&str> = out.lines().filter(|l| l.starts_with("rc=")).collect();
    assert_eq!(rcs, ["rc=126", "rc=0"], "{out}\n{err}");
    assert!(err.contains("no human can be asked"), "{err}");
    assert_eq!(
        std::fs::read_to_string(w.ws.join("inner.txt")).unwrap(),
        "in\n"
    );
}
