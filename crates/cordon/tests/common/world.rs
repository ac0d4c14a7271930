//! The process tests' temporary world ([`World`]): one fixture for every test file that
//! runs cordon against a workspace, a HOME and a state directory of its own. A test file
//! adds the commands it runs in an `impl World` block of its own.

use super::{ALLOW_ALL, as_nobody, bin};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A temporary world: a workspace and a fake HOME in a temporary directory (under the
/// host's `/tmp` unless made elsewhere), a state directory's path and a policy file.
pub struct World {
    _tmp: tempfile::TempDir,
    /// The directory holding the rest (hidden in the sandbox but for the workspace).
    pub root: PathBuf,
    /// The workspace.
    pub ws: PathBuf,
    /// The fake HOME.
    pub home: PathBuf,
    /// A state directory for `CORDON_STATE_DIR` (`root/state`, made by cordon on first use).
    pub state: PathBuf,
    /// The policy file (`root/policy.toml`).
    pub config: PathBuf,
}

impl World {
    /// A fresh world whose policy allows what the tests run ([`ALLOW_ALL`]).
    pub fn new() -> World {
        World::made("cordon-sbx-", None, Some(ALLOW_ALL))
    }

    /// A fresh world in a temporary directory named `prefix…` in `base` (else the
    /// system's temporary directory), searchable by every user, with `ws` and `home`
    /// made, and the policy file holding `config` when given (else not written).
    pub fn made(prefix: &str, base: Option<&Path>, config: Option<&str>) -> World {
        let mut b = tempfile::Builder::new();
        b.prefix(prefix);
        let tmp = match base {
            Some(dir) => b.tempdir_in(dir),
            None => b.tempdir(),
        }
        .unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();
        let ws = root.join("ws");
        let home = root.join("home");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let config_path = root.join("policy.toml");
        if let Some(text) = config {
            std::fs::write(&config_path, text).unwrap();
        }
        World {
            _tmp: tmp,
            state: root.join("state"),
            root,
            ws,
            home,
            config: config_path,
        }
    }

    /// Write `content` to `rel` beneath `base`, making its parent directories.
    pub fn put(&self, base: &Path, rel: &str, content: &str) {
        let p = base.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }

    /// Write the workspace's `t.sh`.
    pub fn script(&self, body: &str) {
        let p = self.ws.join("t.sh");
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// `cordon exec [extra] -- ./t.sh` in the workspace, with a clean environment.
    pub fn command(&self, extra: &[&str]) -> Command {
        self.command_using(&bin(), extra)
    }

    /// [`World::command`] with the cordon binary at `cordon`.
    pub fn command_using(&self, cordon: &std::path::Path, extra: &[&str]) -> Command {
        let mut c = Command::new(cordon);
        c.arg("exec")
            .arg("--isolated")
            .arg("--config")
            .arg(&self.config)
            .arg("--workspace")
            .arg(&self.ws)
            .args(extra)
            .arg("--")
            .arg("./t.sh")
            .current_dir(&self.ws)
            .env_clear()
            .env("HOME", &self.home)
            // Where a test sets another HOME (the toolchain's), cordon's state still
            // stays in this world, never in the real user's state directory.
            .env("CORDON_STATE_DIR", self.home.join(".local/state/cordon"))
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("LANG", "C")
            .stdin(Stdio::null());
        c
    }

    /// Run `body` as a shell script inside the sandbox.
    pub fn run(&self, body: &str, extra: &[&str]) -> Output {
        self.script(body);
        self.command(extra).output().unwrap()
    }

    /// Hand the whole world to `nobody` (for the unprivileged runs).
    pub fn give_to_nobody(&self) {
        let st = Command::new("chown")
            .args(["-R", "nobody:nogroup"])
            .arg(&self.root)
            .status()
            .unwrap();
        assert!(st.success());
    }

    /// `command` as `nobody` (the tests must run as root).
    pub fn command_as_nobody(&self, extra: &[&str]) -> Command {
        self.give_to_nobody();
        as_nobody(&self.command(extra))
    }

    /// Run `body` as `nobody` (the tests must run as root).
    pub fn run_as_nobody(&self, body: &str, extra: &[&str]) -> Output {
        self.script(body);
        self.command_as_nobody(extra).output().unwrap()
    }
}
