#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! git and ssh over the egress proxy, through the real binary: a real `sshd` (Debian's
//! openssh-server) on the host's loopback, started by the test with its own config,
//! host key and authorized key, serving a bare repository through `git-upload-pack`;
//! an `ssh-agent` holding the test key. Inside `cordon exec`, `git clone` over ssh works
//! with `--ssh-agent` and fails without it, an unknown host key is refused by ssh, a port
//! off the allowlist is refused by the proxy and reported, and the private key on disk
//! is never readable. The sshd options are those of sshd_config(5); `-D -e -f` and the
//! absolute path that sshd needs for re-execution are from sshd(8).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code

mod common;

use common::{World, as_nobody, is_root, text};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const SSHD: &str = "/usr/sbin/sshd";

/// Whether sshd is installed (`scripts/install-test-deps.sh` installs it); CI requires it.
fn sshd_or_skip(test: &str) -> bool {
    if Path::new(SSHD).exists() {
        return true;
    }
    assert!(
        std::env::var_os("CORDON_REQUIRE_SANDBOX_TESTS").is_none_or(|v| v != "1"),
        "{test}: {SSHD} is missing; run scripts/install-test-deps.sh"
    );
    eprintln!("skipping {test}: {SSHD} is missing (Debian's openssh-server)");
    false
}

/// A child process killed when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn run_ok(c: &mut Command) -> String {
    let o = c.output().unwrap();
    assert!(o.status.success(), "{c:?}: {}", text(&o).1);
    text(&o).0
}

fn keygen(path: &Path) {
    run_ok(
        Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-C", "t", "-f"])
            .arg(path),
    );
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// sshd on 127.0.0.1, its user key, and a bare repository with one commit.
struct Server {
    dir: tempfile::TempDir,
    port: u16,
    /// The account ssh logs in as: the one sshd runs as.
    user: String,
    _sshd: Running,
}

impl Server {
    fn start() -> Server {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
        keygen(&d.join("host_key"));
        keygen(&d.join("user_key"));
        std::fs::copy(d.join("user_key.pub"), d.join("authorized_keys")).unwrap();
        let git = |dir: &Path, args: &[&str]| {
            run_ok(
                Command::new("git")
                    .args(args)
                    .current_dir(dir)
                    .env("GIT_AUTHOR_NAME", "t")
                    .env("GIT_AUTHOR_EMAIL", "t@example.com")
                    .env("GIT_COMMITTER_NAME", "t")
                    .env("GIT_COMMITTER_EMAIL", "t@example.com"),
            )
        };
        git(d, &["init", "-q", "--bare", "-b", "main", "repo.git"]);
        git(d, &["init", "-q", "-b", "main", "seed"]);
        std::fs::write(d.join("seed/a.txt"), "over ssh\n").unwrap();
        git(&d.join("seed"), &["add", "a.txt"]);
        git(&d.join("seed"), &["commit", "-q", "-m", "seed"]);
        git(&d.join("seed"), &["push", "-q", "../repo.git", "main"]);
        let port = free_port();
        std::fs::write(
            d.join("sshd_config"),
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {hk}\nAuthorizedKeysFile {ak}\n\
                 PidFile {pid}\nUsePAM no\nStrictModes no\nPasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n\
                 LogLevel INFO\n",
                hk = d.join("host_key").display(),
                ak = d.join("authorized_keys").display(),
                pid = d.join("sshd.pid").display(),
            ),
        )
        .unwrap();
        // Run as root, sshd wants its privilege separation directory (a systemd unit
        // would make it); unprivileged, it needs none.
        if is_root() {
            std::fs::create_dir_all("/run/sshd").unwrap();
        }
        let log = d.join("sshd.log");
        let sshd = Running(
            Command::new(SSHD)
                .args(["-D", "-f"])
                .arg(d.join("sshd_config"))
                .arg("-E")
                .arg(&log)
                .stdin(Stdio::null())
                .spawn()
                .unwrap(),
        );
        let deadline = Instant::now() + Duration::from_secs(10);
        while !std::fs::read_to_string(&log).is_ok_and(|l| l.contains("Server listening")) {
            assert!(
                Instant::now() < deadline,
                "sshd did not start: {}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let user = run_ok(Command::new("id").arg("-un")).trim().to_string();
        Server {
            dir,
            port,
            user,
            _sshd: sshd,
        }
    }

    fn host_key_line(&self) -> String {
        let pubkey = std::fs::read_to_string(self.dir.path().join("host_key.pub")).unwrap();
        let key: Vec<&str> = pubkey.split_whitespace().take(2).collect();
        format!("[127.0.0.1]:{} {}\n", self.port, key.join(" "))
    }

    fn url(&self) -> String {
        format!(
            "ssh://{}@127.0.0.1:{}{}",
            self.user,
            self.port,
            self.dir.path().join("repo.git").display()
        )
    }
}

/// A world whose HOME holds the user key (as `~/.ssh/id_ed25519`, ssh's default
/// identity, so that only the mask of `~/.ssh` keeps ssh from using it) and, when given,
/// a known_hosts.
fn world(srv: &Server, known_hosts: Option<&str>) -> World {
    let w = World::new();
    let ssh = w.home.join(".ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    std::fs::set_permissions(&ssh, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::copy(srv.dir.path().join("user_key"), ssh.join("id_ed25519")).unwrap();
    std::fs::set_permissions(
        ssh.join("id_ed25519"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    if let Some(kh) = known_hosts {
        std::fs::write(ssh.join("known_hosts"), kh).unwrap();
    }
    w
}

/// An ssh-agent (run as `nobody` when asked: an agent serves only its own user) with the
/// test key, on a socket in a directory of the host's `/tmp`, which the sandbox hides.
struct Agent {
    dir: tempfile::TempDir,
    _agent: Running,
}

impl Agent {
    fn start(key: &Path, nobody: bool) -> Agent {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let sock = dir.path().join("agent.sock");
        let key_copy = dir.path().join("key");
        std::fs::copy(key, &key_copy).unwrap();
        std::fs::set_permissions(&key_copy, std::fs::Permissions::from_mode(0o600)).unwrap();
        let wrap = |c: Command| {
            if nobody {
                run_ok(
                    Command::new("chown")
                        .args(["-R", "nobody:nogroup"])
                        .arg(dir.path()),
                );
                as_nobody(&c)
            } else {
                c
            }
        };
        let mut c = Command::new("ssh-agent");
        c.args(["-D", "-a"]).arg(&sock);
        let agent = Running(wrap(c).stdout(Stdio::null()).spawn().unwrap());
        let deadline = Instant::now() + Duration::from_secs(10);
        while !sock.exists() {
            assert!(Instant::now() < deadline, "ssh-agent did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut add = Command::new("ssh-add");
        add.arg("-q").arg(&key_copy).env("SSH_AUTH_SOCK", &sock);
        run_ok(&mut wrap(add));
        std::fs::remove_file(&key_copy).unwrap();
        Agent { dir, _agent: agent }
    }

    fn socket(&self) -> PathBuf {
        self.dir.path().join("agent.sock")
    }
}

/// A copy of the binary under test in a directory only root may search (`0700`, owned
/// by root), as when cordon lives in another user's home or a private build directory.
/// `nobody` can still be started from it (root starts it), but cannot look its path up.
fn bin_closed_to_nobody() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let cordon = d.path().join("cordon");
    std::fs::copy(common::bin(), &cordon).unwrap();
    let mut look = Command::new("test");
    look.arg("-e").arg(&cordon);
    assert!(
        !as_nobody(&look).status().unwrap().success(),
        "nobody can look up {}",
        cordon.display()
    );
    d
}

/// Run `body` in the world's sandbox with cordon's `SSH_AUTH_SOCK` set to the agent's.
/// As `nobody`, cordon is started from a directory `nobody` cannot search.
fn run(w: &World, agent: &Agent, body: &str, extra: &[&str], nobody: bool) -> Output {
    w.script(body);
    let closed = nobody.then(bin_closed_to_nobody);
    let mut c = match &closed {
        Some(d) => w.command_using(&d.path().join("cordon"), extra),
        None => w.command(extra),
    };
    c.env("SSH_AUTH_SOCK", agent.socket())
        .env("CORDON_STATE_DIR", w.root.join("state"));
    if nobody {
        w.give_to_nobody();
        c = as_nobody(&c);
    }
    c.output().unwrap()
}

fn clone_with_and_without_the_agent(nobody: bool) {
    let srv = Server::start();
    let w = world(&srv, Some(&srv.host_key_line()));
    let agent = Agent::start(&srv.dir.path().join("user_key"), nobody);
    let allow = format!("127.0.0.1:{}", srv.port);
    let flags = ["--allow-net", &allow, "--allow-private", "127.0.0.0/8"];
    let known_before = std::fs::read(w.home.join(".ssh/known_hosts")).unwrap();
    let body = format!(
        r#"
echo "sock=[$SSH_AUTH_SOCK]"
test -S {agent} && echo AGENT-PATH-VISIBLE
cat "$HOME/.ssh/id_ed25519" >/dev/null 2>&1 && echo KEY-READABLE || echo KEY-HIDDEN
rm -rf clone
git clone -q {url} clone && cat clone/a.txt && echo CLONED || echo CLONE-FAILED
ssh -T -p {port} {user}@127.0.0.1 echo ssh-said-hello
echo x >> /run/cordon/ssh/known_hosts 2>/dev/null && echo KNOWN-HOSTS-WRITTEN
echo "relay-inode=$(stat -c %i /run/cordon/ssh/cordon)"
"#,
        agent = agent.socket().display(),
        url = srv.url(),
        port = srv.port,
        user = srv.user,
    );

    let mut with = flags.to_vec();
    with.push("--ssh-agent");
    let o = run(&w, &agent, &body, &with, nobody);
    let (out, err) = text(&o);
    assert!(out.contains("over ssh\nCLONED"), "{out}\n{err}");
    assert!(out.contains("ssh-said-hello"), "{out}\n{err}");
    assert!(out.contains("sock=[/run/cordon/ssh/agent.sock]"), "{out}");
    assert!(out.contains("KEY-HIDDEN"), "{out}");
    assert!(!out.contains("AGENT-PATH-VISIBLE"), "{out}");
    assert!(!out.contains("KNOWN-HOSTS-WRITTEN"), "{out}");
    // Where cordon's own path is reachable (root), the relay is the binary itself,
    // bound, not a copy; as nobody, started from a directory it cannot search, a copy
    // made once in the state directory.
    use std::os::unix::fs::MetadataExt;
    let relay_inode = |p: &Path| format!("relay-inode={}\n", std::fs::metadata(p).unwrap().ino());
    assert_eq!(out.contains(&relay_inode(&common::bin())), !nobody, "{out}");
    let copies = w.root.join("state/ssh-relay");
    if nobody {
        let made: Vec<PathBuf> = std::fs::read_dir(&copies)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(made.len(), 1, "{made:?}");
        assert!(out.contains(&relay_inode(&made[0])), "{out}");
        // Where no copy can be made there, the helper copies the running image for
        // the run (the next run's ssh reaches sshd, which refuses it its key).
        std::fs::remove_dir_all(&copies).unwrap();
        std::fs::write(&copies, "not a directory").unwrap();
    } else {
        assert!(!copies.exists());
    }

    let o = run(&w, &agent, &body, &flags, nobody);
    let (out, err) = text(&o);
    assert!(out.contains("CLONE-FAILED"), "{out}\n{err}");
    assert!(err.contains("Permission denied (publickey)"), "{err}");
    assert!(!out.contains("ssh-said-hello"), "{out}");
    assert!(out.contains("sock=[]"), "{out}");
    assert!(out.contains("KEY-HIDDEN"), "{out}");
    assert!(!out.contains("AGENT-PATH-VISIBLE"), "{out}");
    assert_eq!(
        std::fs::read(w.home.join(".ssh/known_hosts")).unwrap(),
        known_before
    );
}

#[test]
fn git_clone_over_ssh_needs_the_agent_passed_explicitly() {
    need_sandbox!("git_clone_over_ssh_needs_the_agent_passed_explicitly");
    if !sshd_or_skip("git_clone_over_ssh_needs_the_agent_passed_explicitly") {
        return;
    }
    clone_with_and_without_the_agent(false);
}

#[test]
fn git_clone_over_ssh_as_an_unprivileged_user() {
    need_sandbox!("git_clone_over_ssh_as_an_unprivileged_user");
    if !sshd_or_skip("git_clone_over_ssh_as_an_unprivileged_user") {
        return;
    }
    if !is_root() {
        eprintln!(
            "skipping git_clone_over_ssh_as_an_unprivileged_user: it runs cordon as nobody, which needs root"
        );
        return;
    }
    clone_with_and_without_the_agent(true);
}

#[test]
fn unknown_host_keys_unlisted_ports_and_no_network_fail_with_a_sentence() {
    need_sandbox!("unknown_host_keys_unlisted_ports_and_no_network_fail_with_a_sentence");
    if !sshd_or_skip("unknown_host_keys_unlisted_ports_and_no_network_fail_with_a_sentence") {
        return;
    }
    let srv = Server::start();
    let agent = Agent::start(&srv.dir.path().join("user_key"), false);
    let allow = format!("127.0.0.1:{}", srv.port);
    let flags = [
        "--allow-net",
        &allow,
        "--allow-private",
        "127.0.0.0/8",
        "--ssh-agent",
    ];
    let ssh_to = |port: u16| {
        format!(
            "ssh -T -p {port} {}@127.0.0.1 echo ssh-said-hello; echo rc=$?",
            srv.user
        )
    };

    // A known_hosts that knows another host only: ssh's own refusal.
    let other = "[127.0.0.1]:1 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFzkmAoRvXtmzUx1yFM4t03xBTSBD1jobwmMvoWJOjKd\n";
    let w = world(&srv, Some(other));
    let o = run(&w, &agent, &ssh_to(srv.port), &flags, false);
    let (out, err) = text(&o);
    assert!(
        out.contains("rc=255") && !out.contains("ssh-said-hello"),
        "{out}\n{err}"
    );
    assert!(err.contains("Host key verification failed"), "{err}");
    assert_eq!(
        std::fs::read_to_string(w.home.join(".ssh/known_hosts")).unwrap(),
        other
    );

    // A port off the allowlist: the proxy refuses, the report says so.
    let w = world(&srv, Some(&srv.host_key_line()));
    let unlisted = free_port();
    let report = w.root.join("report.json");
    let mut with_report = flags.to_vec();
    with_report.extend(["--report", report.to_str().unwrap()]);
    let o = run(&w, &agent, &ssh_to(unlisted), &with_report, false);
    let (out, err) = text(&o);
    assert!(out.contains("rc=255"), "{out}\n{err}");
    assert!(
        err.contains(&format!(
            "cordon: the egress proxy refused ssh to 127.0.0.1:{unlisted}"
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!("--allow-net 127.0.0.1:{unlisted}")),
        "{err}"
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert!(
        r["blocked"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["kind"] == "connect" && b["target"] == format!("127.0.0.1:{unlisted}")),
        "{r}"
    );
    // … and so does the audit log's record of the run's end.
    let audit = std::fs::read_to_string(w.root.join("state/audit.jsonl")).unwrap();
    assert!(
        audit
            .lines()
            .any(|l| l.contains("\"end\"") && l.contains(&format!("\"127.0.0.1:{unlisted}\""))),
        "{audit}"
    );

    // No known_hosts at all: one sentence before any connection (unless the system
    // has its own known hosts, which ssh reads too).
    if !Path::new("/etc/ssh/ssh_known_hosts").exists() {
        let w = world(&srv, None);
        let o = run(&w, &agent, &ssh_to(srv.port), &flags, false);
        let (out, err) = text(&o);
        assert!(out.contains("rc=255"), "{out}\n{err}");
        assert!(err.contains("there is no known_hosts"), "{err}");
    }

    // No allowlist, so no proxy: ssh's configuration says so instead of dialing.
    let w = world(&srv, Some(&srv.host_key_line()));
    let o = run(&w, &agent, &ssh_to(srv.port), &["--ssh-agent"], false);
    let (out, err) = text(&o);
    assert!(out.contains("rc=255"), "{out}\n{err}");
    assert!(
        err.contains("cordon: this sandbox has no network, so ssh cannot reach any host"),
        "{err}"
    );
}

#[test]
fn ssh_agent_without_an_agent_is_refused_before_anything_runs() {
    let w = World::new();
    w.script("echo RAN");
    let mut c = w.command(&["--ssh-agent"]);
    c.env_remove("SSH_AUTH_SOCK");
    let o = c.output().unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(125), "{out}\n{err}");
    assert!(!out.contains("RAN"), "{out}");
    assert!(
        err.contains("--ssh-agent: SSH_AUTH_SOCK is not set"),
        "{err}"
    );
}

#[test]
fn a_known_hosts_file_named_on_the_command_line_replaces_the_users() {
    need_sandbox!("a_known_hosts_file_named_on_the_command_line_replaces_the_users");
    if !sshd_or_skip("a_known_hosts_file_named_on_the_command_line_replaces_the_users") {
        return;
    }
    let srv = Server::start();
    let agent = Agent::start(&srv.dir.path().join("user_key"), false);
    let allow = format!("127.0.0.1:{}", srv.port);
    let ssh = format!(
        "ssh -T -p {} {}@127.0.0.1 echo ssh-said-hello; echo rc=$?",
        srv.port, srv.user
    );
    let other = "[127.0.0.1]:1 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFzkmAoRvXtmzUx1yFM4t03xBTSBD1jobwmMvoWJOjKd\n";

    // The server's key only in the named file (the user's knows another host): accepted.
    let w = world(&srv, Some(other));
    let chosen = w.root.join("project_known_hosts");
    std::fs::write(&chosen, srv.host_key_line()).unwrap();
    let flags = [
        "--allow-net",
        &allow,
        "--allow-private",
        "127.0.0.0/8",
        "--ssh-agent",
        "--ssh-known-hosts",
        chosen.to_str().unwrap(),
    ];
    let o = run(&w, &agent, &ssh, &flags, false);
    let (out, err) = text(&o);
    assert!(
        out.contains("ssh-said-hello") && out.contains("rc=0"),
        "{out}\n{err}"
    );

    // The server's key only in the user's file, the named one knows another host: ssh
    // refuses, as the user's file is not read.
    let w = world(&srv, Some(&srv.host_key_line()));
    let chosen = w.root.join("project_known_hosts");
    std::fs::write(&chosen, other).unwrap();
    let mut flags = flags.to_vec();
    *flags.last_mut().unwrap() = chosen.to_str().unwrap();
    let o = run(&w, &agent, &ssh, &flags, false);
    let (out, err) = text(&o);
    assert!(
        out.contains("rc=255") && !out.contains("ssh-said-hello"),
        "{out}\n{err}"
    );
    assert!(err.contains("Host key verification failed"), "{err}");
    assert_eq!(std::fs::read_to_string(&chosen).unwrap(), other);
}

#[test]
fn a_known_hosts_file_that_holds_a_key_or_is_missing_is_refused_before_anything_runs() {
    let w = World::new();
    w.script("echo RAN");
    let key = w.root.join("hosts");
    std::fs::write(&key, "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbg==\n").unwrap();
    let missing = w.root.join("missing_known_hosts");
    for (file, says) in [(&key, "holds one"), (&missing, "name an existing file")] {
        let o = w
            .command(&[
                "--allow-net",
                "127.0.0.1:22",
                "--ssh-known-hosts",
                file.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(125), "{out}\n{err}");
        assert!(!out.contains("RAN"), "{out}");
        assert!(
            err.contains(&format!(
                "the ssh known_hosts file {} cannot be used",
                file.display()
            )) && err.contains(says),
            "{err}"
        );
    }
}
