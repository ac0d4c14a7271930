//! The throwaway machine each corpus command runs in, and the decoys it holds.
//!
//! A command runs in new user, mount, network and PID namespaces (`unshare`), in a root
//! built by `contain.sh`: read-only binds of the system directories, a private tmpfs
//! home seeded with decoys, private `/tmp`, no network. It never touches the machine:
//! its writes land in tmpfs mounts that vanish with its namespaces. This is the test's
//! own containment, not cordon's sandbox (whose seccomp filter forbids the ptrace that
//! strace needs).
//!
//! The decoy home is built once per run on the host (the "seed") and copied into each
//! command's root, so every command starts from the same state, and the policy's
//! prediction is made against that same state through [`SeedFs`].

use cordon_policy::{FileFacts, FileMeta, RealFs};
use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// HOME inside the throwaway root.
pub const HOME: &str = "/home/user";
/// The workspace (and starting directory) inside the throwaway root.
pub const WORKSPACE: &str = "/home/user/proj";
/// The shell that runs each command (its start marks the end of the harness's own calls).
pub const SHELL: &str = "/bin/bash";
/// PATH inside the throwaway root.
pub const PATH: &[&str] = &["/usr/local/bin", "/usr/bin", "/bin"];

const CONTAIN: &str = include_str!("contain.sh");

/// How long one command may run.
pub const TIMEOUT: Duration = Duration::from_secs(5);
/// How much of a command's stdout and stderr is kept (the rest is read and dropped).
const OUTPUT_CAP: usize = 8 * 1024;

/// Why the harness cannot run here, if it cannot.
pub fn unavailable() -> Option<String> {
    for (tool, args) in [("unshare", &["--version"][..]), ("strace", &["-V"][..])] {
        match Command::new(tool).args(args).output() {
            Ok(o) if o.status.success() => {}
            Ok(o) => {
                return Some(format!(
                    "`{tool} {}` failed: {}",
                    args.join(" "),
                    String::from_utf8_lossy(&o.stderr).trim()
                ));
            }
            Err(e) => return Some(format!("`{tool}` cannot be run: {e}")),
        }
    }
    // A mount inside the new namespaces, as `contain.sh` makes: where user namespaces
    // exist but are restricted (AppArmor), creating one works and mounting does not.
    let o = Command::new("unshare")
        .args(UNSHARE)
        .args(["/bin/sh", "-c", "mount -t tmpfs probe /tmp"])
        .output();
    match o {
        Ok(o) if o.status.success() => None,
        Ok(o) => Some(format!(
            "`unshare --user --map-root-user … mount -t tmpfs` failed (no unprivileged user \
             namespaces, or restricted ones?): {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => Some(format!("`unshare` cannot be run: {e}")),
    }
}

const UNSHARE: &[&str] = &[
    "--user",
    "--map-root-user",
    "--mount",
    "--net",
    "--pid",
    "--fork",
    "--kill-child",
    "--",
];

/// The decoy home, built once.
pub struct Seed {
    /// Host directory holding `home/user/...` and an empty `tmp/`.
    pub dir: PathBuf,
    /// Every path that exists in the seed, as seen inside the root.
    pub before: BTreeSet<PathBuf>,
}

/// What one command did, as the harness saw it from outside.
pub struct Run {
    pub trace: String,
    /// The host path of the command's `/` (to map strace's paths back).
    pub root: PathBuf,
    pub status: Option<i32>,
    pub timed_out: bool,
    /// Paths under the writable mounts after the command ended.
    pub after: BTreeSet<PathBuf>,
    /// The start of stdout and stderr, for diagnosing harness failures.
    pub output: String,
}

impl Seed {
    /// Build the decoys beneath `dir` (an empty host directory).
    pub fn build(dir: &Path) -> Result<Seed, String> {
        let home = dir.join("home/user");
        let ws = home.join("proj");
        let files: &[(&str, &str)] = &[
            // Credentials and private data outside the workspace: any read of these the
            // analysis does not predict is a violation worth fixing.
            (
                ".ssh/id_rsa",
                "-----BEGIN OPENSSH PRIVATE KEY-----\ndecoy\n-----END OPENSSH PRIVATE KEY-----\n",
            ),
            (".ssh/id_rsa.pub", "ssh-rsa AAAAdecoy user@host\n"),
            (".ssh/known_hosts", "example.com ssh-ed25519 AAAAdecoy\n"),
            (".ssh/config", "Host *\n  IdentityFile ~/.ssh/id_rsa\n"),
            (
                ".aws/credentials",
                "[default]\naws_access_key_id = AKIADECOY\naws_secret_access_key = decoy\n",
            ),
            (".aws/config", "[default]\nregion = us-east-1\n"),
            (".netrc", "machine example.com login user password decoy\n"),
            (".npmrc", "//registry.npmjs.org/:_authToken=decoy\n"),
            (
                ".docker/config.json",
                "{\"auths\":{\"example.com\":{\"auth\":\"ZGVjb3k=\"}}}\n",
            ),
            (".kube/config", "apiVersion: v1\nkind: Config\n"),
            (
                ".config/gh/hosts.yml",
                "github.com:\n  oauth_token: decoy\n",
            ),
            (
                ".gitconfig",
                "[user]\n\tname = Decoy User\n\temail = user@example.com\n[init]\n\tdefaultBranch = main\n",
            ),
            (".bashrc", "# decoy\nalias ll='ls -l'\n"),
            (".profile", "# decoy\n"),
            (".bash_history", "cat ~/.ssh/id_rsa\n"),
            ("notes.txt", "a note outside the workspace\n"),
            ("other/file.txt", "another project\n"),
            // The workspace.
            ("proj/.env", "API_KEY=decoy-secret\nDEBUG=1\n"),
            ("proj/.gitignore", "target/\n*.log\nout/\n"),
            (
                "proj/README.md",
                "# proj\n\nA decoy project. TODO: write docs.\n",
            ),
            (
                "proj/Cargo.toml",
                "[package]\nname = \"proj\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            ),
            ("proj/Makefile", "all:\n\techo built\n"),
            (
                "proj/package.json",
                "{\n  \"name\": \"proj\",\n  \"version\": \"1.0.0\",\n  \"scripts\": {\"test\": \"echo ok\"}\n}\n",
            ),
            ("proj/notes.txt", "alpha\nbeta\ngamma\nalpha\n"),
            (
                "proj/data.csv",
                "name,count\napple,3\nbanana,5\ncherry,7\napple,3\n",
            ),
            ("proj/my file.txt", "a file name with a space\n"),
            (
                "proj/src/main.rs",
                "fn main() {\n    // TODO: more\n    println!(\"hi\");\n}\n",
            ),
            (
                "proj/src/lib.rs",
                "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
            ),
            ("proj/src/util.py", "def f(x):\n    return x * 2  # TODO\n"),
            ("proj/src/app.js", "console.log('hi');\n"),
            ("proj/docs/guide.md", "# Guide\n\nRead the source.\n"),
            ("proj/scripts/build.sh", "#!/bin/sh\necho building\n"),
            ("proj/a/b/c.txt", "deep\n"),
            ("proj/logs/app.log", "line 1\nline 2\n"),
            ("proj/logs/old.log", "old line\n"),
        ];
        for (rel, body) in files {
            let p = home.join(rel);
            std::fs::create_dir_all(p.parent().ok_or("no parent")?).map_err(|e| e.to_string())?;
            std::fs::write(&p, body).map_err(|e| format!("{}: {e}", p.display()))?;
        }
        std::fs::create_dir_all(dir.join("tmp")).map_err(|e| e.to_string())?;
        // The user the command runs as (root of its user namespace) has the decoy home.
        let passwd: String = std::fs::read_to_string("/etc/passwd")
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.starts_with("root:"))
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::create_dir_all(dir.join("etc")).map_err(|e| e.to_string())?;
        std::fs::write(
            dir.join("etc/passwd"),
            format!("root:x:0:0:Decoy User:{HOME}:/bin/bash\n{passwd}"),
        )
        .map_err(|e| e.to_string())?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            home.join(".ssh/id_rsa"),
            std::fs::Permissions::from_mode(0o600),
        )
        .map_err(|e| e.to_string())?;
        std::fs::set_permissions(
            ws.join("scripts/build.sh"),
            std::fs::Permissions::from_mode(0o755),
        )
        .map_err(|e| e.to_string())?;
        // A link from the workspace out to the keys (a path class the policy resolves).
        std::os::unix::fs::symlink("../.ssh", ws.join("ssh-link")).map_err(|e| e.to_string())?;
        std::os::unix::fs::symlink("README.md", ws.join("readme-link"))
            .map_err(|e| e.to_string())?;

        // A repository with history and a second branch; the host's git builds it with no
        // configuration but the seed's own.
        let git = |args: &[&str]| -> Result<(), String> {
            let o = Command::new("git")
                .args(args)
                .current_dir(&ws)
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("HOME", &home)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_AUTHOR_DATE", "2024-01-01T00:00:00Z")
                .env("GIT_COMMITTER_DATE", "2024-01-01T00:00:00Z")
                .output()
                .map_err(|e| format!("git: {e}"))?;
            if o.status.success() {
                Ok(())
            } else {
                Err(format!(
                    "git {}: {}",
                    args.join(" "),
                    String::from_utf8_lossy(&o.stderr)
                ))
            }
        };
        git(&["init", "-q", "-b", "main"])?;
        git(&[
            "add",
            "README.md",
            "Cargo.toml",
            "src",
            ".gitignore",
            "Makefile",
        ])?;
        git(&["commit", "-q", "-m", "first"])?;
        git(&["add", "-A"])?;
        git(&["commit", "-q", "-m", "second"])?;
        git(&["branch", "feature"])?;
        git(&["tag", "v1"])?;
        // Worked-on state: one modified file, one untracked file.
        std::fs::write(ws.join("README.md"), "# proj\n\nA decoy project, edited.\n")
            .map_err(|e| e.to_string())?;
        std::fs::write(ws.join("untracked.txt"), "new\n").map_err(|e| e.to_string())?;

        // Archives to list and unpack.
        let sh = |script: &str| -> Result<(), String> {
            let o = Command::new("sh")
                .args(["-c", script])
                .current_dir(&ws)
                .output()
                .map_err(|e| e.to_string())?;
            if o.status.success() {
                Ok(())
            } else {
                Err(format!("{script}: {}", String::from_utf8_lossy(&o.stderr)))
            }
        };
        sh("tar czf archive.tar.gz docs && gzip logs/old.log")?;

        let mut before = BTreeSet::new();
        walk(&dir.join("home"), Path::new("/home"), &mut before);
        for d in ["/home", "/tmp", "/var/tmp", "/dev/shm"] {
            before.insert(PathBuf::from(d));
        }
        Ok(Seed {
            dir: dir.to_path_buf(),
            before,
        })
    }

    /// Run `text` in a fresh throwaway root, with `slot` naming this worker's directories
    /// beneath `work`.
    pub fn run(&self, work: &Path, slot: usize, text: &str) -> Result<Run, String> {
        let root = work.join(format!("root{slot}"));
        let out = work.join(format!("out{slot}"));
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
        std::fs::create_dir_all(&root).map_err(|e| e.to_string())?;
        let mut child = Command::new("unshare")
            .args(UNSHARE)
            .args(["/bin/sh", "-c", CONTAIN, "contain"])
            .arg(&root)
            .arg(&self.dir)
            .arg(&out)
            .arg(text)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("unshare: {e}"))?;
        let drain = |r: Option<Box<dyn Read + Send>>| {
            std::thread::spawn(move || {
                let mut kept = Vec::new();
                if let Some(mut r) = r {
                    let mut buf = [0u8; 8192];
                    while let Ok(n) = r.read(&mut buf) {
                        if n == 0 {
                            break;
                        }
                        let room = OUTPUT_CAP.saturating_sub(kept.len());
                        kept.extend_from_slice(&buf[..n.min(room)]);
                    }
                }
                kept
            })
        };
        let so = drain(
            child
                .stdout
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>),
        );
        let se = drain(
            child
                .stderr
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>),
        );
        let start = Instant::now();
        let mut timed_out = false;
        // The namespaces' setup and strace's start count too; give them a second.
        let limit = TIMEOUT + Duration::from_secs(1);
        loop {
            match child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if start.elapsed() > limit => {
                    timed_out = true;
                    // `--kill-child`: the PID namespace's first process, and with it every
                    // process of the command, dies with unshare.
                    let _ = child.kill();
                    let _ = child.wait();
                    break;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                Err(e) => return Err(format!("wait: {e}")),
            }
        }
        let mut output = String::from_utf8_lossy(&so.join().unwrap_or_default()).into_owned();
        output.push_str(&String::from_utf8_lossy(&se.join().unwrap_or_default()));
        let trace = std::fs::read_to_string(out.join("trace")).unwrap_or_default();
        let status = std::fs::read_to_string(out.join("status"))
            .ok()
            .and_then(|s| s.trim().parse().ok());
        let after = std::fs::read_to_string(out.join("after"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split_once(' ').map(|(_, p)| PathBuf::from(p)))
            .collect();
        Ok(Run {
            trace,
            root,
            status,
            timed_out,
            after,
            output,
        })
    }
}

fn walk(host: &Path, inside: &Path, out: &mut BTreeSet<PathBuf>) {
    out.insert(inside.to_path_buf());
    let Ok(rd) = std::fs::read_dir(host) else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name();
        let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
        if is_dir {
            walk(&host.join(&name), &inside.join(&name), out);
        } else {
            out.insert(inside.join(&name));
        }
    }
}

/// The file system as a command sees it when it starts: the seed beneath `/home` and
/// the empty writable mounts, the host's system directories elsewhere (they are bound
/// read-only into the root).
pub struct SeedFs<'a> {
    pub seed: &'a Seed,
}

impl SeedFs<'_> {
    fn host(&self, p: &Path) -> PathBuf {
        for (inside, host) in [
            ("/home", "home"),
            ("/tmp", "tmp"),
            ("/var/tmp", "tmp"),
            ("/dev/shm", "tmp"),
        ] {
            if let Ok(rest) = p.strip_prefix(inside) {
                return self.seed.dir.join(host).join(rest);
            }
        }
        p.to_path_buf()
    }
}

impl FileFacts for SeedFs<'_> {
    fn metadata(&self, path: &Path) -> Option<FileMeta> {
        RealFs.metadata(&self.host(path))
    }
    fn read_link(&self, path: &Path) -> Option<PathBuf> {
        RealFs.read_link(&self.host(path))
    }
    fn read_small_file(&self, path: &Path, limit: u64) -> Option<Vec<u8>> {
        RealFs.read_small_file(&self.host(path), limit)
    }
}
