//! A throwaway PostgreSQL cluster for the fleet tests: Debian's `postgresql` binaries,
//! a data directory and a Unix socket in a temporary directory, trust authentication,
//! no TCP listener. Run as the `postgres` user when the tests run as root (initdb refuses
//! root). Without the binaries the tests skip with a reason, unless
//! `CORDON_REQUIRE_PG_TESTS=1`, which makes a missing server a failure.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A running (or stopped) cluster; stopped for good when dropped.
pub struct Cluster {
    bin: PathBuf,
    data: PathBuf,
    /// The directory holding the server's Unix socket.
    pub socket_dir: PathBuf,
    log: PathBuf,
    owner: Option<(u32, u32)>,
}

/// The newest installed `/usr/lib/postgresql/N/bin`.
fn bin_dir() -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let v = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("pg_ctl").exists().then_some((v, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, b)| b)
}

fn required() -> bool {
    std::env::var_os("CORDON_REQUIRE_PG_TESTS").is_some_and(|v| v == "1")
}

/// The `postgres` user's uid and gid, read from `/etc/passwd`.
fn postgres_user() -> Option<(u32, u32)> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.first() == Some(&"postgres"))
            .then(|| Some((f.get(2)?.parse().ok()?, f.get(3)?.parse().ok()?)))?
    })
}

impl Cluster {
    /// A new cluster under `dir` with database `cordon` owned by role `cordon`, started;
    /// `None` (the test skips, said on stderr) when PostgreSQL is not installed.
    pub fn start(dir: &Path, test: &str) -> Option<Cluster> {
        let Some(bin) = bin_dir() else {
            assert!(
                !required(),
                "{test}: PostgreSQL is not installed and CORDON_REQUIRE_PG_TESTS=1 (apt-get install postgresql)"
            );
            eprintln!("{test}: skipped: PostgreSQL is not installed (apt-get install postgresql)");
            return None;
        };
        let root = super::common::is_root();
        let owner = if root {
            Some(
                postgres_user()
                    .expect("root runs the server as the postgres user, which is missing"),
            )
        } else {
            None
        };
        let pg = dir.join("pg");
        std::fs::create_dir_all(&pg).unwrap();
        // The server's user must reach its directory through the test's.
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(&pg, Some(uid), Some(gid)).unwrap();
        }
        let c = Cluster {
            bin,
            data: pg.join("data"),
            socket_dir: pg.clone(),
            log: pg.join("server.log"),
            owner,
        };
        let out = c
            .cmd("initdb")
            .args([
                "-A",
                "trust",
                "-U",
                "cordon",
                "--no-sync",
                "-E",
                "UTF8",
                "-D",
            ])
            .arg(&c.data)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        c.up();
        let out = c
            .cmd("createdb")
            .args(["-h"])
            .arg(&c.socket_dir)
            .args(["-U", "cordon", "cordon"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "createdb: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Some(c)
    }

    fn cmd(&self, program: &str) -> Command {
        let mut cmd = Command::new(self.bin.join(program));
        cmd.env_clear()
            .env("PATH", "/usr/bin:/bin")
            .current_dir(&self.socket_dir);
        if let Some((uid, gid)) = self.owner {
            cmd.uid(uid).gid(gid);
        }
        cmd
    }

    /// The URL of database `cordon` over the socket.
    pub fn url(&self) -> String {
        format!(
            "postgresql:///cordon?host={}&user=cordon",
            self.socket_dir.display()
        )
    }

    /// Start the server (again) and wait until it takes connections.
    pub fn up(&self) {
        let out = self
            .cmd("pg_ctl")
            .args(["-w", "-t", "60", "-D"])
            .arg(&self.data)
            .arg("-l")
            .arg(&self.log)
            .arg("-o")
            .arg(format!(
                "-k {} -c listen_addresses='' -c fsync=off -c max_connections=200",
                self.socket_dir.display()
            ))
            .arg("start")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "pg_ctl start: {} {}",
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(&self.log).unwrap_or_default()
        );
    }

    /// Stop the server (fast: open connections are cut, committed work is kept).
    pub fn down(&self) {
        let out = self
            .cmd("pg_ctl")
            .args(["-w", "-t", "60", "-m", "fast", "-D"])
            .arg(&self.data)
            .arg("stop")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "pg_ctl stop: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self
            .cmd("pg_ctl")
            .args(["-w", "-m", "immediate", "-D"])
            .arg(&self.data)
            .arg("stop")
            .output();
    }
}
