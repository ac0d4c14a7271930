#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! No code planted for the host: a contained command writes its workspace through a
//! copy-on-write layer, and what it leaves is merged back by cordon, which refuses git
//! hooks, code-running git keys, git redirections, agent and IDE configuration and
//! start-up files. Each test runs the real binary on a real repository and then asks
//! the *host* (a `git status`, a `git commit`, a `python3` outside any sandbox) whether
//! anything ran; as root and as `nobody`.
//!
//! The scripts run under a permissive policy on purpose: these tests are about what
//! containment holds when the policy let a hostile command through.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code

mod common;
use common::{World, bin};

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

const PERMISSIVE: &str = r#"
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

/// Whether sandbox tests can run here (user namespaces); a skip is a failure when
/// `CORDON_REQUIRE_SANDBOX_TESTS=1`.
fn sandbox_available(test: &str) -> bool {
    let out = Command::new(bin())
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    if v["user_namespaces"].as_bool().unwrap_or(false) {
        return true;
    }
    assert!(
        std::env::var_os("CORDON_REQUIRE_SANDBOX_TESTS").is_none_or(|v| v != "1"),
        "{test}: sandbox tests are required but user namespaces are unavailable"
    );
    eprintln!("skipping {test}: user namespaces are unavailable");
    false
}

fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    // `/proc/self` belongs to the effective user.
    std::fs::metadata("/proc/self").unwrap().uid() == 0
}

/// Who runs cordon: the test's own user, or `nobody` (only when the test runs as root).
#[derive(Clone, Copy, Debug, PartialEq)]
enum As {
    Me,
    Nobody,
}

fn users() -> Vec<As> {
    if is_root() {
        vec![As::Me, As::Nobody]
    } else {
        vec![As::Me]
    }
}

/// A repository with one commit, a HOME, a policy file and a place for the marker
/// that a planted payload would create.
struct Repo {
    world: World,
    marker: PathBuf,
    who: As,
}

impl std::ops::Deref for Repo {
    type Target = World;
    fn deref(&self) -> &World {
        &self.world
    }
}

fn git(dir: &Path, home: &Path, args: &[&str]) -> Output {
    Command::new("git")
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("HOME", home)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .unwrap()
}

fn ok(o: &Output) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{text}");
    text
}

impl Repo {
    fn new(who: As) -> Repo {
        let world = World::made("cordon-planted-", None, Some(PERMISSIVE));
        world.put(
            &world.home,
            ".gitconfig",
            "[user]\n\temail = t@example.com\n\tname = T\n[init]\n\tdefaultBranch = main\n",
        );
        let repo = Repo {
            marker: world.root.join("PWNED"),
            world,
            who,
        };
        // Made by the test's user, then handed over.
        ok(&git(&repo.ws, &repo.home, &["init", "-q"]));
        std::fs::write(repo.ws.join("README"), "hello\n").unwrap();
        ok(&git(&repo.ws, &repo.home, &["add", "README"]));
        ok(&git(&repo.ws, &repo.home, &["commit", "-qm", "first"]));
        if who == As::Nobody {
            let st = Command::new("chown")
                .args(["-R", "nobody:nogroup"])
                .arg(&repo.root)
                .status()
                .unwrap();
            assert!(st.success());
        }
        repo
    }

    /// git on the host, as the user the run belongs to.
    fn host_git(&self, args: &[&str]) -> Output {
        match self.who {
            As::Me => git(&self.ws, &self.home, args),
            As::Nobody => {
                let mut full = vec!["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"];
                full.push("git");
                full.extend_from_slice(args);
                Command::new("setpriv")
                    .args(&full)
                    .current_dir(&self.ws)
                    .env_clear()
                    .env("HOME", &self.home)
                    .env("PATH", "/usr/local/bin:/usr/bin:/bin")
                    .env("GIT_CONFIG_NOSYSTEM", "1")
                    .output()
                    .unwrap()
            }
        }
    }

    /// `cordon exec` of a script in the workspace, as the test's user or `nobody`.
    fn exec_cmd(&self, script: &str, extra: &[&str]) -> Command {
        let t = self.ws.join("t.sh");
        std::fs::write(&t, format!("#!/bin/sh\n{script}\n")).unwrap();
        std::fs::set_permissions(&t, std::fs::Permissions::from_mode(0o755)).unwrap();
        if self.who == As::Nobody {
            Command::new("chown")
                .args(["nobody:nogroup"])
                .arg(&t)
                .status()
                .unwrap();
        }
        let mut args: Vec<String> = Vec::new();
        if self.who == As::Nobody {
            args.extend(
                ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"].map(String::from),
            );
            args.push(bin().display().to_string());
        }
        args.extend(
            [
                "exec",
                "--isolated",
                "--config",
                self.config.to_str().unwrap(),
            ]
            .map(String::from),
        );
        args.extend(extra.iter().map(|s| s.to_string()));
        args.extend(["--", "./t.sh"].map(String::from));
        let program = match self.who {
            As::Me => bin(),
            As::Nobody => PathBuf::from("setpriv"),
        };
        let mut c = Command::new(program);
        let path = format!(
            "{}:/usr/local/bin:/usr/bin:/bin",
            self.root.join("bin").display()
        );
        c.args(&args)
            .current_dir(&self.ws)
            .env_clear()
            .env("HOME", &self.home)
            .env("PATH", path)
            .env("MARKER", &self.marker)
            .stdin(Stdio::null());
        c
    }

    fn exec(&self, script: &str) -> Output {
        self.exec_cmd(script, &["--env", "MARKER"])
            .output()
            .unwrap()
    }

    /// The host's own git commands, which must run nothing planted.
    fn host_git_runs_nothing(&self, context: &str) {
        let _ = self.host_git(&["status"]);
        let _ = self.host_git(&["commit", "--allow-empty", "-qm", "host commit"]);
        let _ = self.host_git(&["diff", "HEAD"]);
        let _ = self.host_git(&["log", "-1", "-p"]);
        assert!(
            !self.marker.exists(),
            "{context} ({:?}): a host git command ran a planted payload",
            self.who
        );
    }
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Reproduction 1: a copy of the repository elsewhere, with a `core.fsmonitor`
/// payload, and `.git/commondir` pointing at it.
#[test]
fn a_commondir_redirection_plants_nothing() {
    if !sandbox_available("a_commondir_redirection_plants_nothing") {
        return;
    }
    for who in users() {
        let r = Repo::new(who);
        let o = r.exec(
            r#"mkdir evilgit && cp -r .git/objects .git/refs .git/HEAD evilgit/
printf '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "touch $MARKER; false"\n' > evilgit/config
echo ../evilgit > .git/commondir && echo PLANTED"#,
        );
        let (out, err) = text(&o);
        assert!(out.contains("PLANTED"), "{who:?}: {out}{err}");
        assert!(!r.ws.join(".git/commondir").exists(), "{who:?}");
        assert!(
            !r.ws.join("evilgit/config").exists(),
            "{who:?}: a git config with fsmonitor was merged"
        );
        r.host_git_runs_nothing("commondir");
        // The bare repository left in `evilgit` (HEAD, objects, refs) runs nothing
        // either, even when the host's git is started inside it.
        let _ = git(&r.ws.join("evilgit"), &r.home, &["status"]);
        assert!(!r.marker.exists(), "{who:?}: evilgit ran");
    }
}

/// Reproduction 2: `.git` renamed away and a new one put in its place, with a config
/// payload and a hook.
#[test]
fn a_replaced_git_directory_plants_nothing() {
    if !sandbox_available("a_replaced_git_directory_plants_nothing") {
        return;
    }
    for who in users() {
        let r = Repo::new(who);
        let o = r.exec(
            r#"python3 -c 'import os; os.rename(".git", ".git-old")' 2>/dev/null || mv .git .git-old
mkdir .git && cp -r .git-old/objects .git-old/refs .git-old/HEAD .git/
printf '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "touch $MARKER; false"\n' > .git/config
mkdir .git/hooks && printf '#!/bin/sh\ntouch "%s"\n' "$MARKER" > .git/hooks/pre-commit
chmod +x .git/hooks/pre-commit
mkdir -p sub/.git/hooks && cp .git/hooks/pre-commit sub/.git/hooks/post-checkout
echo REPLACED"#,
        );
        let (out, err) = text(&o);
        assert!(out.contains("REPLACED"), "{who:?}: {out}{err}");
        assert!(!r.ws.join(".git/hooks/pre-commit").exists(), "{who:?}");
        assert!(
            !r.ws.join("sub/.git/hooks/post-checkout").exists(),
            "{who:?}"
        );
        let config = std::fs::read_to_string(r.ws.join(".git/config")).unwrap_or_default();
        assert!(!config.contains("fsmonitor"), "{who:?}: {config}");
        assert!(err.contains("not merged"), "{who:?}: {err}");
        r.host_git_runs_nothing("replaced .git");
    }
}

/// Reproduction 3: protected names created through other spellings (`/proc/self/cwd`,
/// symlinks), a directory made unremovable, and nothing on the host while the command
/// still runs.
#[test]
fn other_spellings_of_protected_names_plant_nothing_even_while_running() {
    if !sandbox_available("other_spellings_of_protected_names_plant_nothing_even_while_running") {
        return;
    }
    for who in users() {
        let r = Repo::new(who);
        let mut child = r
            .exec_cmd(
                r#"printf '#!/bin/sh\ntouch "%s"\n' "$MARKER" > /proc/self/cwd/.git/hooks/pre-commit
chmod +x .git/hooks/pre-commit
ln -s .envrc foo && echo 'touch "$MARKER"' > foo
ln -s .git gg && mkdir -p gg/hooks && cp .git/hooks/pre-commit gg/hooks/post-commit
mkdir -p .vscode && echo '{}' > .vscode/tasks.json && chmod 0111 .vscode
echo READY
sleep 30"#,
                &["--env", "MARKER"],
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let first = lines.next().and_then(Result::ok).unwrap_or_default();
        assert_eq!(first, "READY", "{who:?}");
        // While the command runs, the host sees none of it.
        for p in [
            ".git/hooks/pre-commit",
            ".git/hooks/post-commit",
            ".envrc",
            ".vscode",
        ] {
            assert!(
                std::fs::symlink_metadata(r.ws.join(p)).is_err(),
                "{who:?}: {p} is on the host while the command runs"
            );
        }
        r.host_git_runs_nothing("while running");
        // Killed: nothing is merged, and the change set stays for review.
        child.kill().unwrap();
        let _ = child.wait();
        std::thread::sleep(Duration::from_millis(300));
        for p in [
            ".git/hooks/pre-commit",
            ".git/hooks/post-commit",
            ".envrc",
            ".vscode",
            "foo",
        ] {
            assert!(
                std::fs::symlink_metadata(r.ws.join(p)).is_err(),
                "{who:?}: {p} reached the host after cordon was killed"
            );
        }
        r.host_git_runs_nothing("after SIGKILL");
        let list = r.changes(&["list", "--json"]);
        // Other tests' runs may have sets under the shared fallback base in /var/tmp.
        let ws = r.ws.display().to_string();
        let left: Vec<serde_json::Value> = list
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|v| v["roots"][0] == ws.as_str())
            .collect();
        assert_eq!(left.len(), 1, "{who:?}: {list}");
        let id = left[0]["id"].as_str().unwrap().to_string();
        let shown = r.changes(&["show", &id]);
        assert!(
            shown.contains("refuse") && shown.contains("pre-commit"),
            "{who:?}: {shown}"
        );
        // Applying it merges the harmless part and still refuses the hook.
        r.changes(&["apply", &id]);
        assert!(!r.ws.join(".git/hooks/pre-commit").exists(), "{who:?}");
        assert!(r.ws.join("t.sh").exists());
        assert!(!r.changes(&["list"]).contains(&ws), "{who:?}");
        r.host_git_runs_nothing("after apply");
    }
}

impl Repo {
    fn changes(&self, args: &[&str]) -> String {
        let mut c = match self.who {
            As::Me => Command::new(bin()),
            As::Nobody => {
                let mut c = Command::new("setpriv");
                c.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"])
                    .arg(bin());
                c
            }
        };
        let o = c
            .arg("changes")
            .args(args)
            .env_clear()
            .env("HOME", &self.home)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .output()
            .unwrap();
        let (out, err) = text(&o);
        assert!(o.status.success(), "changes {args:?}: {out}{err}");
        out
    }
}

/// Reproduction 4: with HOME as the workspace, language and tool start-up files.
#[test]
fn start_up_files_in_home_are_not_merged() {
    if !sandbox_available("start_up_files_in_home_are_not_merged") {
        return;
    }
    for who in users() {
        let r = Repo::new(who);
        let t = r.home.join("t.sh");
        std::fs::write(
            &t,
            r#"#!/bin/sh
site=$HOME/.local/lib/python3.11/site-packages
mkdir -p "$site" && echo "open('$MARKER','w')" > "$site/usercustomize.py"
echo "import os; os.system('touch $MARKER')" > "$site/evil.pth"
echo 'script-shell=/bin/evil' > "$HOME/.npmrc"
mkdir -p "$HOME/.cargo" && echo '[build]' > "$HOME/.cargo/config.toml"
echo 'touch "$MARKER"' >> "$HOME/.bashrc"
echo notes > "$HOME/notes.txt"
echo DONE
"#,
        )
        .unwrap();
        std::fs::set_permissions(&t, std::fs::Permissions::from_mode(0o755)).unwrap();
        if who == As::Nobody {
            Command::new("chown")
                .args(["-R", "nobody:nogroup"])
                .arg(&r.home)
                .status()
                .unwrap();
        }
        let mut c = r.exec_cmd("true", &["--env", "MARKER", "--workspace"]);
        // `--workspace HOME`, and the script in HOME instead of the repository.
        let args: Vec<_> = c.get_args().map(|a| a.to_os_string()).collect();
        let mut fixed = Vec::new();
        for a in &args {
            fixed.push(a.clone());
            if a == "--workspace" {
                fixed.push(r.home.clone().into_os_string());
            }
        }
        let last = fixed.len() - 1;
        fixed[last] = "./t.sh".into();
        let prog = c.get_program().to_os_string();
        c = Command::new(prog);
        c.args(&fixed)
            .current_dir(&r.home)
            .env_clear()
            .env("HOME", &r.home)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("MARKER", &r.marker)
            .stdin(Stdio::null());
        let o = c.output().unwrap();
        let (out, err) = text(&o);
        assert!(out.contains("DONE"), "{who:?}: {out}{err}");
        for p in [
            ".local/lib/python3.11/site-packages/usercustomize.py",
            ".local/lib/python3.11/site-packages/evil.pth",
            ".npmrc",
            ".cargo/config.toml",
        ] {
            assert!(!r.home.join(p).exists(), "{who:?}: {p} was merged");
        }
        let bashrc = std::fs::read_to_string(r.home.join(".bashrc")).unwrap_or_default();
        assert!(!bashrc.contains("MARKER"), "{who:?}");
        assert_eq!(
            std::fs::read_to_string(r.home.join("notes.txt")).unwrap(),
            "notes\n"
        );
        // The host's python3 with this HOME loads no planted start-up code.
        let _ = Command::new("python3")
            .args(["-c", "pass"])
            .env("HOME", &r.home)
            .status();
        assert!(!r.marker.exists(), "{who:?}: host python3 ran planted code");
    }
}

/// The developer's git loop under `cordon exec` with no flags and no config: every
/// step is its own contained call, as an agent makes them.
#[test]
fn git_works_inside_with_no_flags() {
    if !sandbox_available("git_works_inside_with_no_flags") {
        return;
    }
    let tmp = tempfile::Builder::new()
        .prefix("cordon-git-")
        .tempdir()
        .unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let ws = root.join("ws");
    let home = root.join("home");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let exec = |dir: &Path, argv: &[&str]| {
        let o = Command::new(bin())
            .arg("exec")
            .arg("--")
            .args(argv)
            .current_dir(dir)
            .env_clear()
            .env("HOME", &home)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let (out, err) = text(&o);
        assert!(o.status.success(), "{argv:?}: {out}{err}");
        out
    };
    exec(&ws, &["git", "init", "-q", "-b", "main"]);
    assert!(
        ws.join(".git/HEAD").is_file(),
        "git init did not reach the host"
    );
    exec(&ws, &["git", "config", "user.email", "agent@example.com"]);
    exec(&ws, &["git", "config", "user.name", "Agent"]);
    std::fs::write(ws.join("a.txt"), "one\n").unwrap();
    exec(&ws, &["git", "add", "a.txt"]);
    exec(&ws, &["git", "commit", "-qm", "one"]);
    exec(&ws, &["git", "branch", "feature"]);
    exec(&ws, &["git", "checkout", "-q", "feature"]);
    std::fs::write(ws.join("a.txt"), "two\n").unwrap();
    exec(&ws, &["git", "stash", "-q"]);
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "one\n");
    exec(&ws, &["git", "stash", "pop", "-q"]);
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "two\n");
    exec(&ws, &["git", "commit", "-qam", "two"]);
    exec(
        &ws,
        &[
            "git",
            "remote",
            "add",
            "origin",
            "https://example.com/x.git",
        ],
    );
    // A new remote of a repository the host already has redirects where the host's git
    // fetches and pushes: it waits for review, then lands when applied.
    let none = git(&ws, &home, &["config", "--get", "remote.origin.url"]);
    assert!(!none.status.success(), "the remote landed unreviewed");
    let changes = |args: &[&str]| {
        let o = Command::new(bin())
            .arg("changes")
            .args(args)
            .env_clear()
            .env("HOME", &home)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .output()
            .unwrap();
        let (out, err) = text(&o);
        assert!(o.status.success(), "changes {args:?}: {out}{err}");
        out
    };
    let listed = changes(&["list"]);
    let id = listed.split('\t').next().unwrap().trim().to_string();
    assert!(changes(&["show", &id]).contains("remote"), "{listed}");
    changes(&["apply", &id]);
    // The host's git sees all of it.
    let log = ok(&git(&ws, &home, &["log", "--format=%s", "feature"]));
    assert_eq!(log, "two\none\n");
    let cfg = ok(&git(&ws, &home, &["config", "--get", "remote.origin.url"]));
    assert_eq!(cfg.trim(), "https://example.com/x.git");
    let who = ok(&git(&ws, &home, &["config", "--get", "user.email"]));
    assert_eq!(who.trim(), "agent@example.com");
    // A linked worktree whose common git directory is outside the workspace.
    ok(&git(
        &ws,
        &home,
        &["worktree", "add", "-q", "../wt", "main"],
    ));
    let wt = root.join("wt");
    std::fs::write(wt.join("b.txt"), "b\n").unwrap();
    exec(&wt, &["git", "add", "b.txt"]);
    exec(&wt, &["git", "commit", "-qm", "from the worktree"]);
    let log = ok(&git(&ws, &home, &["log", "--format=%s", "main"]));
    assert_eq!(log, "from the worktree\none\n");
    // Nothing was left behind unmerged (an emptied set kept as the next run's spare is
    // not a leftover).
    let sets = std::fs::read_dir(home.join(".local/state/cordon/changes"))
        .map(|rd| {
            rd.filter(|e| {
                !e.as_ref()
                    .is_ok_and(|e| e.file_name().to_string_lossy().starts_with("spare-"))
            })
            .count()
        })
        .unwrap_or(0);
    assert_eq!(sets, 0);
}

/// Builds write their caches: each run gets writable ones from a cache slot, the
/// host's are never written, and the next run finds what the last one left.
#[test]
fn developer_caches_are_writable_and_never_the_hosts() {
    if !sandbox_available("developer_caches_are_writable_and_never_the_hosts") {
        return;
    }
    for who in users() {
        let r = Repo::new(who);
        // A cache the host lacks is made when a program that writes it is installed:
        // stand-ins for npm and pip on cordon's PATH.
        std::fs::create_dir_all(r.root.join("bin")).unwrap();
        for tool in ["npm", "pip"] {
            let p = r.root.join("bin").join(tool);
            std::fs::write(&p, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        std::fs::create_dir_all(r.home.join(".cargo/registry")).unwrap();
        std::fs::write(r.home.join(".cargo/registry/host-crate"), "host").unwrap();
        if who == As::Nobody {
            Command::new("chown")
                .args(["-R", "nobody:nogroup"])
                .arg(&r.home)
                .status()
                .unwrap();
        }
        let o = r.exec(
            r#"cat "$HOME/.cargo/registry/host-crate" && echo
: > "$HOME/.cargo/.package-cache" && echo CARGO-LOCK
echo fetched > "$HOME/.cargo/registry/new-crate" && echo CARGO-REGISTRY
mkdir -p "$HOME/.npm/_cacache" && echo x > "$HOME/.npm/_cacache/entry" && echo NPM
mkdir -p "$HOME/.cache/pip/http" && echo x > "$HOME/.cache/pip/http/entry" && echo PIP
echo planted >> "$HOME/.cargo/registry/host-crate"
true"#,
        );
        let (out, err) = text(&o);
        for want in ["host", "CARGO-LOCK", "CARGO-REGISTRY", "NPM", "PIP"] {
            assert!(out.contains(want), "{who:?}: {want}: {out}{err}");
        }
        // The host's caches are as they were.
        assert!(!r.home.join(".cargo/.package-cache").exists(), "{who:?}");
        assert!(
            !r.home.join(".cargo/registry/new-crate").exists(),
            "{who:?}"
        );
        assert!(!r.home.join(".npm").exists(), "{who:?}");
        assert_eq!(
            std::fs::read_to_string(r.home.join(".cargo/registry/host-crate")).unwrap(),
            "host"
        );
        // The next run on the slot finds the last run's downloads.
        let o = r.exec(r#"cat "$HOME/.cargo/registry/new-crate" "$HOME/.npm/_cacache/entry""#);
        let (out, err) = text(&o);
        assert!(out.contains("fetched"), "{who:?}: {out}{err}");
    }
}

/// A host service's socket inside the workspace is out of reach through the
/// copy-on-write layer, while a socket the command makes there works.
#[test]
fn a_host_socket_in_the_workspace_is_unreachable() {
    if !sandbox_available("a_host_socket_in_the_workspace_is_unreachable") {
        return;
    }
    let r = Repo::new(As::Me);
    let sock = r.ws.join("host.sock");
    let listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    listener.set_nonblocking(true).unwrap();
    let o = r.exec(
        r#"python3 - <<'PY'
import socket
c = socket.socket(socket.AF_UNIX)
try:
    c.connect("host.sock"); print("HOST-REACHED")
except OSError as e:
    print("HOST-REFUSED", e.errno)
s = socket.socket(socket.AF_UNIX); s.bind("mine.sock"); s.listen()
c = socket.socket(socket.AF_UNIX); c.connect("mine.sock"); print("OWN-OK")
PY"#,
    );
    let (out, err) = text(&o);
    assert!(out.contains("HOST-REFUSED"), "{out}{err}");
    assert!(out.contains("OWN-OK"), "{out}{err}");
    assert!(
        listener.accept().is_err(),
        "the host's socket got a connection"
    );
    // The command's socket is not left in the host's tree.
    assert!(!r.ws.join("mine.sock").exists());
}

/// SIGKILL leaves the killed run's egress socket directory; the next run with a proxy
/// removes it.
#[test]
fn a_killed_runs_egress_directory_is_swept_by_the_next_run() {
    if !sandbox_available("a_killed_runs_egress_directory_is_swept_by_the_next_run") {
        return;
    }
    let r = Repo::new(As::Me);
    let runtime = r.root.join("runtime");
    std::fs::create_dir(&runtime).unwrap();
    std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
    let mut c = r.exec_cmd("echo READY; sleep 30", &["--allow-net", "127.0.0.1:9"]);
    c.env("XDG_RUNTIME_DIR", &runtime)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = c.spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().and_then(Result::ok).as_deref(), Some("READY"));
    child.kill().unwrap();
    let _ = child.wait();
    let parent = std::fs::read_dir(&runtime)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let left = |p: &Path| std::fs::read_dir(p).unwrap().count();
    assert_eq!(
        left(&parent),
        1,
        "the killed run left no directory to sweep"
    );
    std::thread::sleep(Duration::from_millis(200));
    let mut c = r.exec_cmd("true", &["--allow-net", "127.0.0.1:9"]);
    let o = c.env("XDG_RUNTIME_DIR", &runtime).output().unwrap();
    assert!(o.status.success(), "{:?}", text(&o));
    assert_eq!(
        left(&parent),
        0,
        "the stale egress directory is still there"
    );
}
