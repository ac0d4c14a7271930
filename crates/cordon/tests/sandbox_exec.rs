#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! `cordon exec` containment, tested with real processes: every test runs the built
//! binary on a temporary workspace with a fake HOME, and checks what the command could
//! and could not do, inside and on the host afterwards.
//!
//! Tests that need user namespaces skip with a printed reason when the host cannot
//! create them, unless `CORDON_REQUIRE_SANDBOX_TESTS=1` (set in CI), which turns the
//! skip into a failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code

use std::os::linux::net::SocketAddrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A policy that allows what these tests run, so that containment, not policy, is what
/// they observe.
const ALLOW_ALL: &str = r#"
mode = "bypass"
[defaults]
read_inside = "allow"
read_outside = "allow"
write_inside = "allow"
write_outside = "allow"
exec = "allow"
network = "allow"
[permissions]
allow = ["Bash(./t.sh)"]
"#;

/// A C program that performs one attack and prints `OK` or `ERR <errno>`.
const PROBE_C: &str = r#"
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>
static int report(long rc) {
    if (rc < 0) { printf("ERR %d\n", errno); return 1; }
    printf("OK\n"); return 0;
}
int main(int argc, char **argv) {
    if (argc < 2) return 2;
    const char *what = argv[1];
    if (!strcmp(what, "io_uring")) {
        char params[120]; memset(params, 0, sizeof params);
        return report(syscall(425, 8, params));
    }
    if (!strcmp(what, "ptrace-parent")) return report(ptrace(PTRACE_ATTACH, getppid(), 0, 0));
    if (!strcmp(what, "tiocsti")) {
        int m = posix_openpt(O_RDWR | O_NOCTTY);
        if (m < 0 || grantpt(m) || unlockpt(m)) { printf("NOPTY %d\n", errno); return 3; }
        int s = open(ptsname(m), O_RDWR | O_NOCTTY);
        if (s < 0) { printf("NOPTY %d\n", errno); return 3; }
        char c = 'x';
        return report(ioctl(s, TIOCSTI, &c));
    }
    if (!strcmp(what, "abstract") || !strcmp(what, "unix-path")) {
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        struct sockaddr_un a; memset(&a, 0, sizeof a); a.sun_family = AF_UNIX;
        socklen_t len;
        if (!strcmp(what, "abstract")) {
            strncpy(a.sun_path + 1, argv[2], sizeof a.sun_path - 2);
            len = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(argv[2]);
        } else {
            strncpy(a.sun_path, argv[2], sizeof a.sun_path - 1);
            len = sizeof a;
        }
        return report(connect(fd, (struct sockaddr *)&a, len));
    }
    if (!strcmp(what, "tcp")) return report(socket(AF_INET, SOCK_STREAM, 0));
    if (!strcmp(what, "udp")) return report(socket(AF_INET, SOCK_DGRAM, 0));
    if (!strcmp(what, "tcp6")) return report(socket(AF_INET6, SOCK_STREAM, 0));
    if (!strcmp(what, "netlink")) return report(socket(AF_NETLINK, SOCK_RAW, 0));
    if (!strcmp(what, "unshare-user")) return report(syscall(SYS_unshare, 0x10000000));
    if (!strcmp(what, "mount")) return report(syscall(SYS_mount, "none", "/tmp", "tmpfs", 0, 0));
    if (!strcmp(what, "bpf")) return report(syscall(SYS_bpf, 0, 0, 0));
    if (!strcmp(what, "x32-getpid")) return report(syscall(0x40000000 | 39));
    if (!strcmp(what, "kill-init")) return report(kill(1, 9));
    if (!strcmp(what, "clone3")) return report(syscall(435, NULL, 0));
    return 2;
}
"#;

/// A copy of the binary under test in `dir`, for tests that start cordon from inside the
/// sandbox: the sandbox hides `/tmp` (and more), where a checkout's target directory may
/// well be, but always shows the workspace. A copy, not a link: the command may write
/// its workspace, and must not reach the build's own binary.
fn bin_in(dir: &Path) -> PathBuf {
    let dst = dir.join("cordon-under-test");
    std::fs::copy(bin(), &dst).unwrap();
    dst
}

fn required() -> bool {
    std::env::var_os("CORDON_REQUIRE_SANDBOX_TESTS").is_some_and(|v| v == "1")
}

/// Whether the full tier is available; when it is not, either skip (print why) or fail
/// when CI requires these tests.
fn full_tier_or_skip(test: &str) -> bool {
    static PROBE: OnceLock<(bool, String)> = OnceLock::new();
    let (ok, why) = PROBE.get_or_init(|| {
        let out = Command::new(bin())
            .args(["doctor", "--json"])
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (
            v["user_namespaces"].as_bool().unwrap_or(false),
            v["user_namespaces_error"]
                .as_str()
                .unwrap_or("")
                .to_string(),
        )
    });
    if *ok {
        return true;
    }
    assert!(
        !required(),
        "{test}: CORDON_REQUIRE_SANDBOX_TESTS=1 but user namespaces are unavailable: {why}"
    );
    eprintln!("skipping {test}: user namespaces are unavailable on this host ({why})");
    false
}

fn is_root() -> bool {
    nix_uid() == 0
}

fn nix_uid() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap()
}

mod common;
use common::visible_base;
use common::{World, as_nobody, bin};

/// Compile the probe program once, into a directory the sandbox sees read-only.
fn probe_bin() -> PathBuf {
    static BIN_PATH: OnceLock<PathBuf> = OnceLock::new();
    BIN_PATH
        .get_or_init(|| {
            let dir = tempfile::Builder::new()
                .prefix("cordon-probe-")
                .tempdir_in(visible_base())
                .unwrap()
                .keep();
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
            let src = dir.join("probe.c");
            std::fs::write(&src, PROBE_C).unwrap();
            let out = dir.join("probe");
            let st = Command::new("cc")
                .arg("-O1")
                .arg("-o")
                .arg(&out)
                .arg(&src)
                .status()
                .expect("a C compiler (cc) is needed to build the attack probes");
            assert!(st.success(), "compiling the probe failed");
            out
        })
        .clone()
}

/// A temporary world ([`World`], its policy [`ALLOW_ALL`]) with a fake HOME holding
/// credentials, a sibling project with a `.env`, a workspace with a `.env` and a `.git`,
/// and a read-only-visible directory outside every root.
struct SecretWorld {
    world: World,
    _outside_tmp: tempfile::TempDir,
    outside: PathBuf,
}

impl std::ops::Deref for SecretWorld {
    type Target = World;
    fn deref(&self) -> &World {
        &self.world
    }
}

impl SecretWorld {
    fn new() -> SecretWorld {
        let world = World::made("cordon-sbx-", None, Some(ALLOW_ALL));
        let (ws, home) = (&world.ws, &world.home);
        for d in [
            home.join(".ssh"),
            home.join(".aws"),
            home.join("other"),
            ws.join(".git/hooks"),
        ] {
            std::fs::create_dir_all(&d).unwrap();
        }
        std::fs::write(home.join(".ssh/id_rsa"), "PRIVATE-KEY-MATERIAL").unwrap();
        std::fs::write(home.join(".aws/credentials"), "AWS-SECRET").unwrap();
        std::fs::write(home.join(".netrc"), "NETRC-SECRET").unwrap();
        std::fs::write(home.join("other/.env"), "SIBLING-SECRET").unwrap();
        std::fs::write(ws.join(".env"), "WORKSPACE-SECRET").unwrap();
        std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
        let outside_tmp = tempfile::Builder::new()
            .prefix("cordon-outside-")
            .tempdir_in(visible_base())
            .unwrap();
        let outside = outside_tmp.path().canonicalize().unwrap();
        std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o777)).unwrap();
        std::fs::write(outside.join("target.txt"), "ORIGINAL").unwrap();
        SecretWorld {
            world,
            _outside_tmp: outside_tmp,
            outside,
        }
    }

    /// Hand the whole world to `nobody` (for the unprivileged runs).
    fn give_to_nobody(&self) {
        let st = Command::new("chown")
            .args(["-R", "nobody:nogroup"])
            .arg(self.ws.parent().unwrap())
            .arg(&self.outside)
            .status()
            .unwrap();
        assert!(st.success());
    }

    fn command(&self, extra: &[&str]) -> Command {
        let mut c = Command::new(bin());
        c.arg("exec")
            .arg("--isolated")
            .arg("--config")
            .arg(&self.config)
            .arg("--workspace")
            .arg(&self.ws)
            .args(["--env", "PROBE", "--env", "OUTSIDE"])
            .args(extra)
            .arg("--")
            .arg("./t.sh")
            .current_dir(&self.ws)
            .env_clear()
            .env("HOME", &self.home)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("LANG", "C")
            .env("GITHUB_TOKEN", "ghp_HOST_TOKEN_VALUE")
            .env("UNLISTED_VAR", "host-only-value")
            .env("PROBE", probe_bin())
            .env("OUTSIDE", &self.outside)
            .stdin(Stdio::null());
        c
    }

    /// Run `body` as a shell script inside the sandbox.
    fn run(&self, body: &str, extra: &[&str]) -> Output {
        self.script(body);
        self.command(extra).output().unwrap()
    }

    /// The same, as `nobody`.
    fn run_as_nobody(&self, body: &str, extra: &[&str]) -> Output {
        self.script(body);
        self.give_to_nobody();
        as_nobody(&self.command(extra)).output().unwrap()
    }
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

macro_rules! need_sandbox {
    ($name:expr) => {
        if !full_tier_or_skip($name) {
            return;
        }
    };
}

#[test]
fn writes_outside_roots_fail_and_inside_succeed() {
    need_sandbox!("writes_outside_roots_fail_and_inside_succeed");
    let w = SecretWorld::new();
    let o = w.run(
        r#"echo x > /usr/cordon-escape && echo WROTE-USR
echo x > "$OUTSIDE/new.txt" && echo WROTE-OUTSIDE
echo x >> "$OUTSIDE/target.txt" && echo APPENDED-OUTSIDE
echo x > "$HOME/planted"
echo inside > inside.txt && echo WROTE-INSIDE
echo tmp > /tmp/t && cat /tmp/t"#,
        &[],
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(!out.contains("WROTE-USR"), "{out}");
    assert!(!out.contains("WROTE-OUTSIDE"), "{out}");
    assert!(!out.contains("APPENDED-OUTSIDE"), "{out}");
    assert!(out.contains("WROTE-INSIDE"), "{out}");
    assert!(out.contains("tmp"), "{out}");
    assert!(!Path::new("/usr/cordon-escape").exists());
    assert!(err.contains("containment blocked"), "{err}");
    assert!(!w.outside.join("new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(w.outside.join("target.txt")).unwrap(),
        "ORIGINAL"
    );
    // The hidden HOME is a private, throwaway tmpfs: nothing reaches the host's.
    assert!(!w.home.join("planted").exists());
    assert_eq!(
        std::fs::read_to_string(w.ws.join("inside.txt")).unwrap(),
        "inside\n"
    );
}

#[test]
fn read_only_mode_makes_the_workspace_read_only() {
    need_sandbox!("read_only_mode_makes_the_workspace_read_only");
    let w = SecretWorld::new();
    let o = w.run(
        "cat t.sh > /dev/null && echo READ; echo x > new.txt && echo WROTE",
        &["--sandbox", "read-only"],
    );
    let (out, err) = text(&o);
    assert!(out.contains("READ"), "{out}\n{err}");
    assert!(!out.contains("WROTE"), "{out}");
    assert!(!w.ws.join("new.txt").exists());
}

#[test]
fn protected_paths_can_be_neither_written_nor_created() {
    need_sandbox!("protected_paths_can_be_neither_written_nor_created");
    let w = SecretWorld::new();
    let report = w.ws.parent().unwrap().join("report.json");
    let o = w.run(
        r#"echo evil > .git/hooks/pre-commit && echo WROTE-HOOK
echo '[core] fsmonitor = evil' >> .git/config && echo WROTE-GITCONFIG
mkdir -p .vscode && echo '{}' > .vscode/tasks.json
echo '{}' > .mcp.json
mkdir -p .claude && echo '{}' > .claude/settings.json
exit 0"#,
        &["--report", report.to_str().unwrap()],
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    // Inside, the copy-on-write workspace takes the writes; none reaches the host.
    assert!(out.contains("WROTE-HOOK"), "{out}");
    assert!(!w.ws.join(".git/hooks/pre-commit").exists());
    assert_eq!(
        std::fs::read_to_string(w.ws.join(".git/config")).unwrap(),
        "[core]\n"
    );
    for p in [".vscode", ".mcp.json", ".claude"] {
        assert!(!w.ws.join(p).exists(), "{p} survived the run");
    }
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let targets: Vec<String> = r["blocked"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["kind"] == "not-merged")
        .map(|b| b["target"].as_str().unwrap().to_string())
        .collect();
    for p in [
        ".vscode",
        ".mcp.json",
        ".claude",
        ".git/hooks/pre-commit",
        ".git/config",
    ] {
        assert!(
            targets.iter().any(|t| t.ends_with(p)),
            "{p} not reported: {targets:?}"
        );
    }
    // Writes inside the roots are not reported.
    assert!(!targets.iter().any(|t| t.ends_with("t.sh")), "{targets:?}");
    assert_eq!(r["tier"], "full");
    assert!(r["landlock_abi"].is_number());
    assert_eq!(r["enforced"]["seccomp"], true);
}

#[test]
fn protected_paths_created_inside_never_reach_the_host() {
    need_sandbox!("protected_paths_created_inside_never_reach_the_host");
    let w = SecretWorld::new();
    let o = w.run(
        r#"mkdir .vscode && echo '{}' > .vscode/tasks.json && echo MADE-DIR
echo '{}' > .mcp.json && echo MADE-FILE
ln -s /etc/passwd .cursor && echo MADE-LINK
mkdir ordinary && echo MADE-ORDINARY
exit 0"#,
        &[],
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    for want in ["MADE-DIR", "MADE-FILE", "MADE-LINK", "MADE-ORDINARY"] {
        assert!(out.contains(want), "{want} missing: {out}\n{err}");
    }
    for p in [".vscode", ".mcp.json", ".cursor"] {
        assert!(
            std::fs::symlink_metadata(w.ws.join(p)).is_err(),
            "{p} reached the host"
        );
    }
    assert!(w.ws.join("ordinary").is_dir());
    assert!(err.contains("not merged"), "{err}");
}

#[test]
fn a_protected_path_that_is_a_symlink_refuses_to_start() {
    need_sandbox!("a_protected_path_that_is_a_symlink_refuses_to_start");
    let w = SecretWorld::new();
    std::os::unix::fs::symlink(&w.outside, w.ws.join(".vscode")).unwrap();
    let o = w.run("echo RAN", &[]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(125), "{out}\n{err}");
    assert!(!out.contains("RAN"));
    assert!(err.contains("symlink") && err.contains(".vscode"), "{err}");
}

#[test]
fn masked_secrets_read_as_empty_or_fail() {
    need_sandbox!("masked_secrets_read_as_empty_or_fail");
    let w = SecretWorld::new();
    let body = r#"cat "$HOME/.ssh/id_rsa" "$HOME/.aws/credentials" "$HOME/.netrc" .env "$HOME/other/.env" 2>&1; ls -a "$HOME/.ssh" 2>&1; (echo planted >> .env) 2>/dev/null && echo WROTE-MASK; echo END"#;
    for home in ["hidden", "visible"] {
        let o = w.run(body, &["--home", home]);
        let (out, err) = text(&o);
        assert!(out.contains("END"), "{out}\n{err}");
        for secret in [
            "PRIVATE-KEY-MATERIAL",
            "AWS-SECRET",
            "NETRC-SECRET",
            "WORKSPACE-SECRET",
        ] {
            assert!(
                !out.contains(secret),
                "--home {home}: {secret} leaked: {out}"
            );
        }
        // A masked file is read-only, not a sink that swallows writes.
        assert!(!out.contains("WROTE-MASK"), "--home {home}: {out}");
        if home == "hidden" {
            // A sibling project's .env under HOME is invisible, not just masked.
            assert!(!out.contains("SIBLING-SECRET"), "{out}");
        }
    }
    // The host's files are untouched.
    assert_eq!(
        std::fs::read_to_string(w.ws.join(".env")).unwrap(),
        "WORKSPACE-SECRET"
    );
}

/// The sandbox's PID 1 is cordon's own helper, forked from cordon (not executed again):
/// its `/proc/1/cmdline`, which every process inside may read, and its `environ` show
/// nothing of cordon's command line or environment; neither does any other process the
/// command can see. As root and as an unprivileged user.
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
fn system_secrets_stay_unreadable_even_as_root() {
    need_sandbox!("system_secrets_stay_unreadable_even_as_root");
    // Run as root, the command is uid 0 in its namespace: without the masks, the owner's
    // bits would let it read password hashes and private keys.
    if !is_root() {
        eprintln!("system_secrets_stay_unreadable_even_as_root: runs only as root");
        return;
    }
    let mut secrets: Vec<PathBuf> = ["/etc/shadow", "/etc/gshadow"]
        .iter()
        .map(PathBuf::from)
        .collect();
    for dir in ["/etc/ssl/private", "/etc/ssh"] {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if dir == "/etc/ssl/private"
                || (name.starts_with("ssh_host_") && name.ends_with("_key"))
            {
                secrets.push(e.path());
            }
        }
    }
    let w = SecretWorld::new();
    let mut tested = 0;
    for p in &secrets {
        let host = std::fs::read_to_string(p).unwrap_or_default();
        let Some(line) = host.lines().find(|l| l.len() > 8) else {
            continue;
        };
        tested += 1;
        // What the host can read must not come out of the sandbox.
        let o = w.run(&format!("cat {} 2>&1; echo END", p.display()), &[]);
        let (out, err) = text(&o);
        assert!(out.contains("END"), "{}: {err}", p.display());
        // Never print the secret itself, not even in a failing test's log.
        assert!(
            !out.contains(line),
            "{} leaked out of the sandbox",
            p.display()
        );
    }
    assert!(tested > 0, "no system secret to test on this host");
}

#[test]
fn symlinks_in_the_workspace_do_not_allow_writing_outside() {
    need_sandbox!("symlinks_in_the_workspace_do_not_allow_writing_outside");
    let w = SecretWorld::new();
    std::os::unix::fs::symlink(w.outside.join("target.txt"), w.ws.join("link")).unwrap();
    std::os::unix::fs::symlink(&w.outside, w.ws.join("dirlink")).unwrap();
    let o = w.run(
        r#"echo evil > link && echo WROTE-FILE-LINK
echo evil > dirlink/new.txt && echo WROTE-DIR-LINK
cat link"#,
        &[],
    );
    let (out, err) = text(&o);
    assert!(!out.contains("WROTE-FILE-LINK"), "{out}\n{err}");
    assert!(!out.contains("WROTE-DIR-LINK"), "{out}");
    assert!(
        out.contains("ORIGINAL"),
        "reading through the link works: {out}"
    );
    assert_eq!(
        std::fs::read_to_string(w.outside.join("target.txt")).unwrap(),
        "ORIGINAL"
    );
    assert!(!w.outside.join("new.txt").exists());
}

#[test]
fn a_tool_call_chosen_cwd_does_not_widen_roots() {
    need_sandbox!("a_tool_call_chosen_cwd_does_not_widen_roots");
    let w = SecretWorld::new();
    w.script("echo x > here.txt && echo WROTE; pwd");
    let o = Command::new(bin())
        .arg("exec")
        .arg("--isolated")
        .arg("--config")
        .arg(&w.config)
        .arg("--workspace")
        .arg(&w.ws)
        .arg("--cwd")
        .arg(&w.outside)
        .arg("--")
        .arg(w.ws.join("t.sh"))
        .env_clear()
        .env("HOME", &w.home)
        .env("PATH", "/usr/bin:/bin")
        .current_dir(&w.ws)
        .output()
        .unwrap();
    let (out, err) = text(&o);
    // The policy may refuse the absolute script path; either way nothing is written.
    assert!(!out.contains("WROTE"), "{out}\n{err}");
    assert!(!w.outside.join("here.txt").exists());
}

#[test]
fn hard_links_to_files_outside_the_roots_cannot_be_created() {
    need_sandbox!("hard_links_to_files_outside_the_roots_cannot_be_created");
    let w = SecretWorld::new();
    let o = w.run(
        r#"ln "$OUTSIDE/target.txt" hl && echo LINKED
ln /etc/passwd hl2 && echo LINKED2
echo done"#,
        &[],
    );
    let (out, err) = text(&o);
    assert!(out.contains("done"), "{out}\n{err}");
    assert!(!out.contains("LINKED"), "{out}");
    assert!(!w.ws.join("hl").exists() && !w.ws.join("hl2").exists());
}

/// Without network, the full tier's IP sockets live in a namespace of their own: they
/// can be made (a test suite's local server, see `sandbox_net.rs`), but nothing
/// answers there, and a netlink socket, which could reconfigure it, cannot be made.
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
fn unprivileged_user_gets_the_same_containment() {
    need_sandbox!("unprivileged_user_gets_the_same_containment");
    if !is_root() {
        // Already unprivileged: the other tests cover this case.
        return;
    }
    let w = SecretWorld::new();
    let o = w.run_as_nobody(
        r#"id -u
echo x > "$OUTSIDE/new.txt" && echo WROTE-OUTSIDE
cat "$HOME/.ssh/id_rsa" .env 2>/dev/null
echo ok > inside.txt && echo WROTE-INSIDE
ls /proc | grep -c '^[0-9]'
"$PROBE" netlink; "$PROBE" ptrace-parent; exit 0"#,
        &[],
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "65534", "{out}\n{err}");
    assert!(!out.contains("WROTE-OUTSIDE"), "{out}");
    assert!(
        !out.contains("PRIVATE-KEY") && !out.contains("WORKSPACE-SECRET"),
        "{out}"
    );
    assert!(out.contains("WROTE-INSIDE"), "{out}");
    assert!(
        lines.iter().filter(|l| l.starts_with("ERR")).count() == 2,
        "{out}"
    );
    assert!(!w.outside.join("new.txt").exists());
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
fn read_only_holds_on_host_submounts() {
    need_sandbox!("read_only_holds_on_host_submounts");
    if !is_root() {
        eprintln!("skipping read_only_holds_on_host_submounts: mounting a host tmpfs needs root");
        return;
    }
    let w = SecretWorld::new();
    // A writable host mount beneath a visible, read-only directory.
    let sub = w.outside.join("submount");
    std::fs::create_dir(&sub).unwrap();
    let st = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "mode=0777", "tmpfs"])
        .arg(&sub)
        .status()
        .unwrap();
    assert!(st.success(), "mount failed");
    std::fs::write(sub.join("probe"), "host").unwrap();
    let o = w.run(
        "echo x > \"$OUTSIDE/submount/new\" && echo WROTE-NEW; echo x >> \"$OUTSIDE/submount/probe\" && echo WROTE-OLD; cat \"$OUTSIDE/submount/probe\"",
        &[],
    );
    let new_exists = sub.join("new").exists();
    let probe = std::fs::read_to_string(sub.join("probe")).unwrap();
    let _ = Command::new("umount").arg(&sub).status();
    let (out, err) = text(&o);
    assert!(
        out.contains("host"),
        "the submount is visible: {out}\n{err}"
    );
    assert!(
        !out.contains("WROTE-NEW") && !out.contains("WROTE-OLD"),
        "{out}"
    );
    assert!(!new_exists);
    assert_eq!(probe, "host");
}

#[test]
fn host_mounts_made_during_the_run_do_not_appear() {
    need_sandbox!("host_mounts_made_during_the_run_do_not_appear");
    if !is_root() {
        eprintln!("skipping host_mounts_made_during_the_run_do_not_appear: mounting needs root");
        return;
    }
    let w = SecretWorld::new();
    let late = w.outside.join("late");
    std::fs::create_dir(&late).unwrap();
    w.script(
        r#"i=0; while [ ! -e "$OUTSIDE/late/ready" ] && [ $i -lt 20 ]; do sleep 0.1; i=$((i+1)); done
echo x > "$OUTSIDE/late/new" && echo WROTE"#,
    );
    let child = w.command(&[]).stdout(Stdio::piped()).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let st = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "mode=0777", "tmpfs"])
        .arg(&late)
        .status()
        .unwrap();
    assert!(st.success());
    std::fs::write(late.join("ready"), "").unwrap();
    let o = child.wait_with_output().unwrap();
    let wrote = late.join("new").exists();
    let _ = Command::new("umount").arg(&late).status();
    let (out, err) = text(&o);
    assert!(!out.contains("WROTE"), "{out}\n{err}");
    assert!(!wrote);
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
