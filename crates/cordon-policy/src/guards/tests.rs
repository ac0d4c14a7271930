//! The guards against the paths they must and must not match.
use super::*;

const HOME: &str = "/home/u";

fn read(p: &str) -> bool {
    sensitive_read(Path::new(p), Path::new(HOME)).is_some()
}
fn write(p: &str) -> bool {
    protected_write(Path::new(p), Path::new(HOME)).is_some()
}

#[test]
fn sensitive_reads() {
    for p in [
        "/home/u/.ssh",
        "/home/u/.ssh/id_rsa",
        "/home/u/.SSH/config",
        "/home/u/.aws/credentials",
        "/home/u/.kube/config",
        "/home/u/.docker/config.json",
        "/home/u/.config/gh/hosts.yml",
        "/home/u/.netrc",
        "/home/u/.git-credentials",
        "/w/proj/.env",
        "/w/proj/.ENV.local",
        "/w/proj/sub/.env.production",
        "/w/proj/certs/server.pem",
        "/tmp/id_ed25519",
        "/proc/self/environ",
        "/proc/1/mem",
        "/proc/self/root/etc/passwd",
        "/proc/12/task/13/environ",
        "/proc/self/fd/3",
        "/etc/shadow",
        "/etc/gshadow-",
        "/etc/ssl/private/server.key.bak",
        "/etc/ssh/ssh_host_ed25519_key",
        "/home/u/.bash_history",
        "/home/u/.mozilla/firefox/abc.default/cookies.sqlite",
        "/home/u/.config/google-chrome/Default/Login Data",
        "/home/u/.claude/.credentials.json",
        "/home/u/.codex/auth.json",
        "/home/u/.pgpass",
        "/home/u/.pg_service.conf",
        "/home/u/.postgresql/postgresql.key",
    ] {
        assert!(read(p), "{p} should be sensitive");
    }
}

#[test]
fn not_sensitive() {
    for p in [
        "/home/u/.sshx",
        "/home/u/src/ssh",
        "/w/proj/.env.example",
        "/w/proj/.env.sample",
        "/w/proj/.env.template",
        "/w/proj/environment.rs",
        "/home/u/.kube/cache",
        "/proc/cpuinfo",
        "/proc/self/status",
        "/w/proj/README.md",
        "/etc/passwd",
        "/etc/shadowsocks.json",
        "/etc/ssh/ssh_host_ed25519_key.pub",
        "/etc/ssh/sshd_config",
        "/w/etc/ssh/ssh_host_rsa_key_notes",
    ] {
        assert!(!read(p), "{p} should not be sensitive");
    }
}

#[test]
fn protected_writes() {
    for p in [
        "/home/u/.bashrc",
        "/home/u/.ZSHRC",
        "/home/u/.ssh/authorized_keys",
        "/home/u/.config/autostart/x.desktop",
        "/home/u/.config/systemd/user/evil.service",
        "/w/proj/.git/hooks/pre-commit",
        "/w/proj/.git/config",
        "/w/proj/.GIT/Config",
        "/w/proj/.claude/settings.json",
        "/w/proj/.vscode/tasks.json",
        "/w/proj/.cordon/policy.toml",
        "/w/proj/sub/.mcp.json",
        "/etc/cron.d/x",
        "/var/spool/cron/crontabs/u",
        "/w/proj/.env",
        "/w/proj/.husky/pre-commit",
        "/w/proj/.devcontainer/devcontainer.json",
        "/dev/sda",
        "/dev/nvme0n1p2",
        "/dev/mapper/root",
        "/dev/mem",
    ] {
        assert!(write(p), "{p} should be protected");
    }
}

#[test]
fn ordinary_writes() {
    for p in [
        "/w/proj/src/main.rs",
        "/w/proj/.git/objects/ab",
        "/w/proj/.github/workflows/ci.yml",
        "/w/proj/bashrc",
        "/home/u/notes.txt",
        "/dev/null",
        "/dev/stdout",
        "/dev/tty",
        "/dev/shm/x",
    ] {
        assert!(!write(p), "{p} should not be protected");
    }
}

#[test]
fn critical_deletes() {
    let h = Path::new(HOME);
    let w = Path::new("/home/u/src/proj");
    for p in [
        "/",
        "/usr",
        "/home",
        "/home/u",
        "/home/u/src",
        "/home/u/src/proj",
    ] {
        assert!(critical_delete(Path::new(p), h, w).is_some(), "{p}");
    }
    for p in ["/home/u/src/proj/target", "/home/u/src/proj_evil", "/tmp/x"] {
        assert!(critical_delete(Path::new(p), h, w).is_none(), "{p}");
    }
}

#[test]
fn cordon_state_is_protected_wherever_the_shared_resolver_puts_it() {
    use crate::state_dir::state_dir_from;
    let envs: [&[(&str, &str)]; 4] = [
        &[
            ("CORDON_STATE_DIR", "/srv/cs"),
            ("XDG_STATE_HOME", "/srv/x"),
        ],
        &[("XDG_STATE_HOME", "/srv/x"), ("HOME", "/home/u")],
        // HOME in the environment is not the home the call is judged for.
        &[("HOME", "/home/other")],
        &[("CORDON_STATE_DIR", "rel"), ("HOME", "/home/other")],
    ];
    for env in envs {
        let var = |name: &str| {
            env.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| std::ffi::OsString::from(v))
        };
        let dir = state_dir_from(var).unwrap();
        let dirs = StateDirs::with(Path::new(HOME), Some(dir.clone()));
        for p in [
            dir.join("store.sqlite3"),
            dir.join("slots/user/0/venv.lock"),
            // A second spelling of the same file.
            dir.join("slots/../audit.jsonl"),
        ] {
            let hit = protected_write_in(&p, Path::new(HOME), &dirs);
            assert!(
                hit.is_some_and(|h| h.pattern.contains("cordon's own state")),
                "{}",
                p.display()
            );
        }
        // The default under the judged home stays protected whatever the environment.
        assert!(
            protected_write_in(
                Path::new("/home/u/.local/state/cordon/audit.jsonl"),
                Path::new(HOME),
                &dirs
            )
            .is_some()
        );
        assert!(
            protected_write_in(Path::new("/srv/elsewhere/f"), Path::new(HOME), &dirs).is_none()
        );
    }
}
