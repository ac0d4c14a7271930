#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! The allowlist judged against git itself: every key git documents, the files ordinary
//! git commands write, and the redirections the review found.

use super::*;
use cordon_policy::gitallow::{allowed_keys, judge_config};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A `git` that reads no configuration but the repository's and writes nothing outside
/// `home` (a temporary directory), with a fixed identity.
fn git_command(cwd: &Path, home: &Path) -> Command {
    let mut c = Command::new("git");
    c.current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "A")
        .env("GIT_AUTHOR_EMAIL", "a@example.com")
        .env("GIT_COMMITTER_NAME", "A")
        .env("GIT_COMMITTER_EMAIL", "a@example.com")
        .env("LC_ALL", "C");
    c
}

struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("home")).unwrap();
        Sandbox { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Run git in `rel` (made if missing); the test fails if git does.
    fn git(&self, rel: &str, args: &[&str]) {
        let cwd = self.path(rel);
        std::fs::create_dir_all(&cwd).unwrap();
        let out = git_command(&cwd, &self.path("home"))
            .args(args)
            .output()
            .expect("git must be installed to run this test");
        assert!(
            out.status.success(),
            "git {args:?} in {rel}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The repository's configuration file, `None` before there is one.
    fn config(&self, rel: &str) -> Option<Vec<u8>> {
        std::fs::read(self.path(rel).join(".git/config")).ok()
    }

    /// What the merge would decide for the repository's configuration after `step`,
    /// against the file before it.
    fn judge_step(&self, rel: &str, step: impl FnOnce(&Self)) -> GitConfigVerdict {
        let before = self.config(rel);
        step(self);
        let after = self.config(rel).unwrap();
        git_config_judgement(&after, before.as_deref())
    }
}

#[test]
fn ordinary_git_use_merges() {
    let s = Sandbox::new();
    std::fs::create_dir_all(s.path("a")).unwrap();
    std::fs::write(s.path("a/f.txt"), "one\n").unwrap();
    for (what, verdict) in [
        ("init", s.judge_step("a", |s| s.git("a", &["init", "-q"]))),
        (
            "init --object-format=sha256",
            s.judge_step("b", |s| {
                s.git(
                    "b",
                    &[
                        "-c",
                        "init.defaultBranch=main",
                        "init",
                        "-q",
                        "--object-format=sha256",
                    ],
                )
            }),
        ),
        (
            "commit",
            s.judge_step("a", |s| {
                s.git("a", &["add", "f.txt"]);
                s.git("a", &["commit", "-q", "-m", "one"]);
            }),
        ),
        (
            "branch",
            s.judge_step("a", |s| s.git("a", &["branch", "feat"])),
        ),
        (
            "checkout -b",
            s.judge_step("a", |s| s.git("a", &["checkout", "-q", "-b", "side"])),
        ),
        (
            "stash",
            s.judge_step("a", |s| {
                std::fs::write(s.path("a/f.txt"), "two\n").unwrap();
                s.git("a", &["stash", "-q"]);
            }),
        ),
        (
            "config user.email",
            s.judge_step("a", |s| {
                s.git("a", &["config", "user.email", "b@example.com"])
            }),
        ),
        (
            "init and remote add in a new repository",
            s.judge_step("n", |s| {
                s.git("n", &["init", "-q"]);
                s.git(
                    "n",
                    &["remote", "add", "origin", "https://example.com/p.git"],
                );
            }),
        ),
        (
            "clone of a local repository",
            s.judge_step("cl", |s| s.git(".", &["clone", "-q", "a", "cl"])),
        ),
        (
            "branch --set-upstream-to an existing remote",
            s.judge_step("cl", |s| {
                s.git("cl", &["checkout", "-q", "-b", "x"]);
                s.git("cl", &["branch", "-q", "--set-upstream-to=origin/side"]);
            }),
        ),
        (
            "pull.rebase",
            s.judge_step("cl", |s| s.git("cl", &["config", "pull.rebase", "true"])),
        ),
    ] {
        assert_eq!(verdict, GitConfigVerdict::Merge, "{what}");
    }
}

#[test]
fn redirections_of_an_existing_repository_are_held() {
    let s = Sandbox::new();
    s.git("a", &["init", "-q"]);
    s.git(".", &["clone", "-q", "a", "cl"]);
    let original = s.config("cl").unwrap();
    for (args, want) in [
        (
            &["config", "http.proxy", "http://127.0.0.1:18080"][..],
            "hold",
        ),
        (&["config", "http.sslVerify", "false"], "hold"),
        (
            &["remote", "set-url", "origin", "https://evil.example/p.git"],
            "hold",
        ),
        (
            &["remote", "add", "evil", "https://evil.example/p.git"],
            "hold",
        ),
        (&["config", "remote.pushDefault", "evil"], "hold"),
        (
            &["config", "alias.st", "-c core.fsmonitor=./x status"],
            "hold",
        ),
        (&["config", "core.fsmonitor", "./x"], "refuse"),
    ] {
        std::fs::write(s.path("cl/.git/config"), &original).unwrap();
        let verdict = s.judge_step("cl", |s| s.git("cl", args));
        let got = match &verdict {
            GitConfigVerdict::Merge => "merge",
            GitConfigVerdict::Hold(_) => "hold",
            GitConfigVerdict::Refuse(_) => "refuse",
        };
        assert_eq!(got, want, "git {args:?}: {verdict:?}");
    }
    let held = s.judge_step("cl", |s| s.git("cl", &["config", "http.proxy", "http://x"]));
    assert_eq!(
        held,
        GitConfigVerdict::Hold(
            "it sets http.proxy, which is not a git setting known to be harmless".into()
        )
    );
}

#[test]
fn gitmodules_by_git() {
    let s = Sandbox::new();
    s.git("lib", &["init", "-q"]);
    s.git("lib", &["commit", "-q", "--allow-empty", "-m", "lib"]);
    s.git("a", &["init", "-q"]);
    s.git(
        "a",
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            "../lib",
            "lib",
        ],
    );
    let modules = std::fs::read(s.path("a/.gitmodules")).unwrap();
    // A new submodule waits for review; the same file again merges.
    assert!(matches!(
        gitmodules_judgement(&modules, None),
        GitConfigVerdict::Hold(_)
    ));
    assert_eq!(
        gitmodules_judgement(&modules, Some(&modules)),
        GitConfigVerdict::Merge
    );
    s.git(
        "a",
        &[
            "config",
            "-f",
            ".gitmodules",
            "submodule.lib.shallow",
            "true",
        ],
    );
    let shallow = std::fs::read(s.path("a/.gitmodules")).unwrap();
    assert_eq!(
        gitmodules_judgement(&shallow, Some(&modules)),
        GitConfigVerdict::Merge
    );
    s.git(
        "a",
        &[
            "config",
            "-f",
            ".gitmodules",
            "submodule.lib.url",
            "https://evil.example/l",
        ],
    );
    let moved = std::fs::read(s.path("a/.gitmodules")).unwrap();
    assert!(matches!(
        gitmodules_judgement(&moved, Some(&modules)),
        GitConfigVerdict::Hold(_)
    ));
    s.git(
        "a",
        &[
            "config",
            "-f",
            ".gitmodules",
            "submodule.lib.update",
            "!sh -c x",
        ],
    );
    let runs = std::fs::read(s.path("a/.gitmodules")).unwrap();
    assert!(matches!(
        gitmodules_judgement(&runs, Some(&modules)),
        GitConfigVerdict::Refuse(_)
    ));
}

#[test]
fn files_git_cannot_parse() {
    let ok = b"[user]\n\temail = a@b\n".as_slice();
    let broken = b"[user\n".as_slice();
    let GitConfigVerdict::Refuse(why) = git_config_judgement(broken, Some(ok)) else {
        panic!("an unparseable run file must be refused");
    };
    assert!(why.contains("not valid"), "{why}");
    // An unparseable host file: every key of the run's counts as changed.
    assert_eq!(
        git_config_judgement(ok, Some(broken)),
        GitConfigVerdict::Merge
    );
    let remote = b"[remote \"origin\"]\n\turl = https://example.com/p.git\n".as_slice();
    assert_eq!(
        git_config_judgement(remote, Some(remote)),
        GitConfigVerdict::Merge
    );
    assert!(matches!(
        git_config_judgement(remote, Some(broken)),
        GitConfigVerdict::Hold(_)
    ));
    let GitConfigVerdict::Refuse(why) = judgement(
        OsStr::new("/nonexistent/git"),
        ok,
        None,
        cordon_policy::gitallow::judge_config,
    ) else {
        panic!("without git nothing can be judged");
    };
    assert_eq!(
        why,
        "git is not installed on the host to check this git configuration"
    );
}

#[test]
fn values_that_are_not_utf8() {
    let host = b"[remote \"origin\"]\n\turl = /srv/\xff\n".as_slice();
    let other = b"[remote \"origin\"]\n\turl = /srv/\xfe\n".as_slice();
    assert_eq!(
        git_config_judgement(host, Some(host)),
        GitConfigVerdict::Merge
    );
    assert!(matches!(
        git_config_judgement(other, Some(host)),
        GitConfigVerdict::Hold(_)
    ));
    // What a lossy conversion of the host's value would spell is a change too, and so is
    // the hex cordon shows for the host's value.
    for text in ["/srv/\u{fffd}", "\u{fffd}2f7372762fff"] {
        let run = format!("[remote \"origin\"]\n\turl = {text}\n");
        assert!(
            matches!(
                git_config_judgement(run.as_bytes(), Some(host)),
                GitConfigVerdict::Hold(_)
            ),
            "{text}"
        );
    }
    let name = b"[user]\n\tname = J\xf6rg\n".as_slice();
    assert_eq!(git_config_judgement(name, None), GitConfigVerdict::Merge);
}

/// `git help --config`'s names, each with its placeholders filled with a sample that
/// fits its section (`branch.<name>` with a branch the repository has).
fn documented_names() -> Vec<(String, String)> {
    let home = tempfile::tempdir().unwrap();
    let out = git_command(home.path(), home.path())
        .args(["help", "--config"])
        .output()
        .expect("git must be installed to read its documented configuration keys");
    assert!(out.status.success(), "git help --config failed");
    let text = String::from_utf8(out.stdout).unwrap();
    let names: Vec<(String, String)> = text
        .lines()
        .map(str::trim)
        // The last line is a hint in prose, not a key.
        .filter(|l| (l.contains('.') && !l.contains(' ')) || l.contains("<vimdiff variant>"))
        .map(|pattern| (pattern.to_owned(), fill(pattern)))
        .collect();
    assert!(
        names.len() > 500,
        "git help --config listed {}",
        names.len()
    );
    names
}

fn fill(pattern: &str) -> String {
    let section = pattern.split('.').next().unwrap_or("").to_ascii_lowercase();
    let mut name = String::new();
    let mut rest = pattern;
    while let Some(start) = rest.find('<') {
        name.push_str(&rest[..start]);
        let end = rest[start..]
            .find('>')
            .map_or(rest.len(), |e| start + e + 1);
        name.push_str(match (&rest[start..end], section.as_str()) {
            ("<name>", "branch") => "main",
            ("<name>", "remote") => "origin",
            ("<name>", "submodule") => "lib",
            ("<url>" | "<base>", _) => "https://example.com/",
            ("<pattern>", _) => "refs/stash",
            ("<format>", _) => "ssh",
            ("<task>", _) => "gc",
            ("<cmd>", _) => "log",
            ("<command>", _) => "amend",
            ("<group>", _) => "all",
            ("<condition>", _) => "gitdir:/x/",
            ("<msg-id>", _) => "missingEmail",
            ("<filter>", _) => "blob:none",
            ("<vimdiff variant>", _) => "vimdiff",
            _ => "x",
        });
        rest = &rest[end..];
    }
    name.push_str(rest);
    if let Some(stem) = name.strip_suffix(".*") {
        let key = match section.as_str() {
            "http" => "proxy",
            "credential" => "helper",
            "alias" => "st",
            "bundle" => "uri",
            "sendemail" => "smtpServer",
            "feature" => "experimental",
            _ => "x",
        };
        name = format!("{stem}.{key}");
    }
    name
}

/// A repository the host has, as `git config --list` prints it.
fn typical() -> Vec<(String, Option<String>)> {
    [
        ("core.repositoryformatversion", "0"),
        ("core.filemode", "true"),
        ("core.bare", "false"),
        ("core.logallrefupdates", "true"),
        ("remote.origin.url", "https://github.com/u/p.git"),
        ("remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*"),
        ("branch.main.remote", "origin"),
        ("branch.main.merge", "refs/heads/main"),
        ("user.email", "u@example.com"),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_owned(), Some((*v).to_owned())))
    .collect()
}

/// Values a key may plausibly be set to: booleans, numbers, words the allowlist knows,
/// a refspec, a URL, a path.
const VALUES: &[&str] = &[
    "true",
    "false",
    "0",
    "1",
    "x",
    "only",
    "always",
    "origin",
    "sha256",
    "reftable",
    "zdiff3",
    "--no-tags",
    "warn",
    "never",
    "rebase-cousins",
    "blob:none",
    "+refs/heads/x:refs/remotes/origin/x",
    "https://example.com/p.git",
    "/tmp/x",
];

/// As `git config --list` spells a key: section and last part in lower case.
fn listed(name: &str) -> String {
    match (name.split_once('.'), name.rsplit_once('.')) {
        (Some((section, _)), Some((head, key))) if head.len() > section.len() => format!(
            "{}{}.{}",
            section.to_ascii_lowercase(),
            &head[section.len()..],
            key.to_ascii_lowercase()
        ),
        _ => name.to_ascii_lowercase(),
    }
}

/// Every key git documents, set to each plausible value in a typical repository the host
/// has and in one the run made: only the allowlisted keys may merge, and each of them
/// does with some value.
#[test]
fn allowlist_against_git_documentation() {
    let documented = documented_names();
    let allowed: BTreeSet<String> = allowed_keys()
        .map(|(name, _)| name.to_ascii_lowercase())
        .collect();
    let base = typical();
    let (mut merge, mut hold, mut refuse) = (Vec::new(), 0, 0);
    for (pattern, name) in &documented {
        let key = listed(name);
        let is_allowed = allowed.contains(&pattern.to_ascii_lowercase());
        let mut merged_with = None;
        let mut refused = false;
        for value in VALUES {
            let mut run = base.clone();
            run.push((key.clone(), Some((*value).to_owned())));
            for host in [Some(base.as_slice()), None] {
                match judge_config(host, &run) {
                    GitConfigVerdict::Merge => {
                        assert!(
                            is_allowed,
                            "{key}={value} merges (host: {}) but is not allowlisted",
                            host.is_some()
                        );
                        merged_with.get_or_insert(*value);
                    }
                    GitConfigVerdict::Refuse(_) => refused = true,
                    GitConfigVerdict::Hold(_) => {}
                }
            }
        }
        match merged_with {
            Some(value) => merge.push(format!("{key}={value}")),
            None if refused => refuse += 1,
            None => hold += 1,
        }
        assert!(
            !is_allowed || merged_with.is_some(),
            "{pattern} is allowlisted but merges with no plausible value"
        );
    }
    // Every allowlisted key is one git documents, so none is misspelled; these two are
    // documented elsewhere (gitrepository-layout(5), git-lfs-config(5)).
    let documented_patterns: BTreeSet<String> = documented
        .iter()
        .map(|(p, _)| p.to_ascii_lowercase())
        .collect();
    for name in &allowed {
        assert!(
            documented_patterns.contains(name)
                || ["extensions.partialclone", "lfs.repositoryformatversion"]
                    .contains(&name.as_str()),
            "{name} is allowlisted but git does not document it"
        );
    }
    println!(
        "{} keys from git help --config: {} may merge, {} are held, {} refused for some value",
        documented.len(),
        merge.len(),
        hold,
        refuse
    );
    println!("may merge: {}", merge.join(" "));
    assert_eq!(merge.len() + hold + refuse, documented.len());
}
