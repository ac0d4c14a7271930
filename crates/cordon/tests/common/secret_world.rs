#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! The world of the containment tests (`sandbox_exec*.rs`): a HOME holding credentials,
//! a sibling project and a workspace with a `.env`, a directory outside every root, the
//! attack probe compiled once, and `cordon exec` of the workspace's `t.sh` in it.

use super::{ALLOW_ALL, World, as_nobody, bin, visible_base};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

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
pub fn bin_in(dir: &Path) -> PathBuf {
    let dst = dir.join("cordon-under-test");
    std::fs::copy(bin(), &dst).unwrap();
    dst
}

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
pub struct SecretWorld {
    world: World,
    _outside_tmp: tempfile::TempDir,
    pub outside: PathBuf,
}

impl std::ops::Deref for SecretWorld {
    type Target = World;
    fn deref(&self) -> &World {
        &self.world
    }
}

impl SecretWorld {
    pub fn new() -> SecretWorld {
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
    pub fn give_to_nobody(&self) {
        let st = Command::new("chown")
            .args(["-R", "nobody:nogroup"])
            .arg(self.ws.parent().unwrap())
            .arg(&self.outside)
            .status()
            .unwrap();
        assert!(st.success());
    }

    pub fn command(&self, extra: &[&str]) -> Command {
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
    pub fn run(&self, body: &str, extra: &[&str]) -> Output {
        self.script(body);
        self.command(extra).output().unwrap()
    }

    /// The same, as `nobody`.
    pub fn run_as_nobody(&self, body: &str, extra: &[&str]) -> Output {
        self.script(body);
        self.give_to_nobody();
        as_nobody(&self.command(extra)).output().unwrap()
    }
}
