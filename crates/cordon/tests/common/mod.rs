#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! The harness of the process tests that run cordon for real: the binary under test, the
//! one temporary world ([`World`]: a workspace with a fake HOME and a state directory
//! under the host's `/tmp`, hidden in the sandbox, the workspace bound back), a policy
//! that allows what the tests run, and runs as the unprivileged `nobody`.
//!
//! Tests that need user namespaces skip with a printed reason when the host cannot
//! create them, unless `CORDON_REQUIRE_SANDBOX_TESTS=1` (set in CI), which turns the
//! skip into a failure.
#![allow(dead_code)] // each test binary uses its own part of the harness

pub mod cli;
pub mod hook;
pub mod mcp;
pub mod secret_world;
mod world;

#[allow(unused_imports)] // each test binary uses its own part of the harness
pub use world::World;

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// The binary under test: `CORDON_TEST_BIN` when set (CI points it at the static
/// release build), else the one cargo built for these tests.
pub fn bin() -> PathBuf {
    std::env::var_os("CORDON_TEST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_cordon").into())
}

/// A policy that allows what these tests run, so that containment, not policy, is what
/// they observe.
pub const ALLOW_ALL: &str = r#"
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

fn required() -> bool {
    std::env::var_os("CORDON_REQUIRE_SANDBOX_TESTS").is_some_and(|v| v == "1")
}

/// Whether the full tier is available; when it is not, either skip (print why) or fail
/// when CI requires these tests.
pub fn full_tier_or_skip(test: &str) -> bool {
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

/// Whether Landlock can restrict TCP here (ABI 4, Linux 6.7), which the fallback tier
/// needs to run with a proxy; when it cannot, skip (print why) or fail when CI requires
/// these tests.
pub fn landlock_tcp_or_skip(test: &str) -> bool {
    let out = Command::new(bin())
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let abi = v["landlock_abi"].as_i64().unwrap_or(0);
    if abi >= 4 {
        return true;
    }
    assert!(
        !required(),
        "{test}: CORDON_REQUIRE_SANDBOX_TESTS=1 but Landlock ABI {abi} cannot restrict TCP"
    );
    eprintln!("skipping {test}: Landlock ABI {abi} cannot restrict TCP (4 is needed)");
    false
}

/// Skip the test (return) unless the full tier is available.
#[macro_export]
macro_rules! need_sandbox {
    ($name:expr) => {
        if !common::full_tier_or_skip($name) {
            return;
        }
    };
}

/// The real uid of this process.
pub fn uid() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap()
}

/// Whether the tests run as root (and can therefore also run cordon as `nobody`).
pub fn is_root() -> bool {
    uid() == 0
}

/// stdout and stderr as text.
pub fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Where the tests keep files the sandbox must show read-only, outside every writable
/// root. The sandbox hides `/tmp`, `/var/tmp`, `/run` and the homes, so cargo's temporary
/// directory in the target directory serves unless the checkout is in one of those (a
/// clone under `/tmp`); then a directory under `/var/lib` (the tests run as root there,
/// as CI does). Nothing else about the tests depends on where the checkout is.
pub fn visible_base() -> PathBuf {
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let hidden = ["/tmp", "/var/tmp", "/run", "/var/run", "/home", "/root"]
        .iter()
        .map(PathBuf::from)
        .chain(home)
        .any(|h| target.starts_with(&h));
    let base = if hidden {
        PathBuf::from("/var/lib/cordon-tests")
    } else {
        target
    };
    std::fs::create_dir_all(&base).unwrap_or_else(|e| {
        panic!(
            "cannot create {}, a directory the sandbox shows ({e}); run the tests from a checkout outside /tmp and the homes, or as root",
            base.display()
        )
    });
    std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
    base
}

/// A directory for the tests' own files that the sandbox shows read-only
/// ([`visible_base`]).
pub fn visible_dir(prefix: &str) -> tempfile::TempDir {
    let base = visible_base();
    let d = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(base)
        .unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    d
}

/// The same command, run as `nobody:nogroup` with no supplementary groups.
pub fn as_nobody(c: &Command) -> Command {
    let mut sp = Command::new("setpriv");
    sp.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"])
        .arg(c.get_program())
        .args(c.get_args())
        .env_clear()
        .envs(c.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))))
        .stdin(Stdio::null());
    if let Some(d) = c.get_current_dir() {
        sp.current_dir(d);
    }
    sp
}

/// Runs its arguments where no user namespace can be made (seccomp: `unshare` and
/// `clone` with `CLONE_NEWUSER` refused, `clone3` answered `ENOSYS`), so that cordon runs
/// in the fallback tier on this host's own network, with no supervisor above it. The
/// filter follows seccomp(2) and the kernel's `samples/seccomp` layout.
const NO_USERNS_C: &str = r#"
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(int argc, char **argv) {
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unshare, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWUSER, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { sizeof f / sizeof f[0], f };
    if (argc < 2 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) { perror("no-userns"); return 126; }
    execv(argv[1], argv + 1);
    perror("no-userns: exec"); return 127;
}
"#;

/// `c`, run through the no-user-namespace wrapper built in `dir`.
pub fn without_user_namespaces(dir: &std::path::Path, c: &Command) -> Command {
    let (src, wrapper) = (dir.join("no-userns.c"), dir.join("no-userns"));
    std::fs::write(&src, NO_USERNS_C).unwrap();
    let st = Command::new("cc")
        .arg("-o")
        .arg(&wrapper)
        .arg(&src)
        .status()
        .expect("a C compiler (cc) is needed to build the test's wrapper");
    assert!(st.success(), "compiling the wrapper failed");
    let mut w = Command::new(wrapper);
    w.arg(c.get_program())
        .args(c.get_args())
        .env_clear()
        .envs(c.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))))
        .stdin(Stdio::null());
    if let Some(d) = c.get_current_dir() {
        w.current_dir(d);
    }
    w
}
