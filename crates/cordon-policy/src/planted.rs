//! What a contained run may leave behind for the host.
//!
//! A command in the sandbox writes its workspace through a copy-on-write layer; its
//! changes reach the host only when cordon merges them after the run. This module is the
//! merge's rule book: for each entry the run left, whether it may reach the host as is,
//! only after its content is checked as git configuration, or not at all. The rules
//! refuse what makes a program run later on the host without anyone asking for it (a git
//! hook, a code-running git key, a `.git` file or `commondir` that sends git to another
//! directory, a shell or language start-up file) and whatever the write guards protect
//! (agent and IDE configuration, credentials).
//!
//! The git rules hold wherever a git directory can be, not only under `.git`: git treats
//! any directory holding `HEAD`, `objects/` and `refs/` as a repository (a bare one), so a
//! `config` or `hooks/pre-commit` planted in `sub/` runs on the next `git status` there.

use crate::guards::{self, GuardHit};
use std::ffi::OsStr;
use std::path::{Component, Path};

/// The kind of an entry a run left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeftKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link.
    Symlink,
    /// Anything else (a fifo, a socket, a device).
    Other,
}

/// What the merge does with one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Leave {
    /// It may reach the host.
    Keep,
    /// It may reach the host only if it parses as git configuration and sets no key that
    /// [`crate::gitconfig::risky_key`] refuses.
    CheckGitConfig,
    /// It reaches the host only through a change set a human reviewed and applied
    /// (`cordon changes apply`): a host tool would obey or run it without being asked.
    /// Without review it waits in the change set; the reason is one sentence.
    Hold(String),
    /// It stays out of the host's tree; the reason is one sentence for the report.
    Refuse(String),
}

/// Hooks git runs by name (githooks(5)), from `.git/hooks` or a bare repository's `hooks`.
pub const GIT_HOOK_NAMES: &[&str] = &[
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-receive",
    "update",
    "proc-receive",
    "post-receive",
    "post-update",
    "reference-transaction",
    "push-to-checkout",
    "pre-auto-gc",
    "post-rewrite",
    "sendemail-validate",
    "fsmonitor-watchman",
    "p4-changelist",
    "p4-prepare-changelist",
    "p4-post-changelist",
    "p4-pre-submit",
    "post-index-change",
];

/// File names that send git to another directory for its objects, settings or work tree.
const GIT_REDIRECT_FILES: &[&str] = &["commondir", "gitdir"];
/// Files of `objects/info/` that add another object store.
const GIT_ALTERNATES: &[&str] = &["alternates", "http-alternates"];
/// File names git reads as configuration inside a git directory.
const GIT_CONFIG_FILES: &[&str] = &["config", "config.worktree"];

const HOOK: &str = "a git hook runs on the host's next git command";
const REDIRECT: &str = "it would send git to another directory for its settings or objects";

fn eq(a: &OsStr, b: &str) -> bool {
    a.as_encoded_bytes().eq_ignore_ascii_case(b.as_bytes())
}

/// Decide what happens to `path` (absolute and clean, as it would be on the host) that a
/// run left as `kind`. `home` is the host user's home directory.
pub fn judge_left(path: &Path, kind: LeftKind, home: &Path) -> Leave {
    let comps: Vec<&OsStr> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s),
            _ => None,
        })
        .collect();
    let Some((&name, parents)) = comps.split_last() else {
        return Leave::Refuse("the root itself cannot be replaced".into());
    };
    let parent = parents.last().copied();
    let in_git_dir = parents.iter().any(|c| eq(c, ".git"));
    let git = judge_git(name, parent, parents, in_git_dir, kind);
    if let Leave::Refuse(_) = git {
        return git;
    }
    if kind == LeftKind::Other {
        return Leave::Refuse("only files, directories and symlinks are merged".into());
    }
    if let Some(hit) = guards::protected_write(path, home)
        && !is_git_sequence(&hit)
    {
        return Leave::Refuse(format!("{} is protected", hit.pattern));
    }
    if let Some(hit) = guards::planted_home(path, home) {
        return Leave::Refuse(format!(
            "{} holds what the host builds or runs later",
            hit.pattern
        ));
    }
    git
}

/// `.git/hooks` and `.git/config` are judged by the git rules, which let `git init` and
/// `git config user.email` through.
fn is_git_sequence(hit: &GuardHit) -> bool {
    hit.pattern == ".git/hooks" || hit.pattern == ".git/config"
}

fn judge_git(
    name: &OsStr,
    parent: Option<&OsStr>,
    parents: &[&OsStr],
    in_git_dir: bool,
    kind: LeftKind,
) -> Leave {
    let named = |list: &[&str]| list.iter().any(|n| eq(name, n));
    let under_hooks = parent.is_some_and(|p| eq(p, "hooks"));
    if eq(name, ".git") {
        return match kind {
            LeftKind::Dir => Leave::Keep,
            _ => Leave::Refuse(format!("a .git that is not a directory: {REDIRECT}")),
        };
    }
    if named(GIT_REDIRECT_FILES) {
        return Leave::Refuse(REDIRECT.into());
    }
    if named(GIT_ALTERNATES) && parent.is_some_and(|p| eq(p, "info")) {
        return Leave::Refuse(REDIRECT.into());
    }
    if in_git_dir {
        if kind == LeftKind::Symlink {
            return Leave::Refuse(format!("a symlink in a git directory: {REDIRECT}"));
        }
        // Anything under a `hooks` directory of a git directory, except git's own
        // disabled samples, may be a hook (or a directory on its way to holding one).
        let in_hooks = parents
            .iter()
            .skip_while(|c| !eq(c, ".git"))
            .any(|c| eq(c, "hooks"));
        if in_hooks && kind == LeftKind::File && !name.as_encoded_bytes().ends_with(b".sample") {
            return Leave::Refuse(HOOK.into());
        }
    } else if kind == LeftKind::Symlink
        && (named(GIT_CONFIG_FILES) || eq(name, "hooks") || named(GIT_HOOK_NAMES))
    {
        return Leave::Refuse(format!("a symlink named like git's own files: {REDIRECT}"));
    }
    if under_hooks && kind != LeftKind::Dir && named(GIT_HOOK_NAMES) {
        return Leave::Refuse(HOOK.into());
    }
    if kind == LeftKind::File && named(GIT_CONFIG_FILES) {
        return Leave::CheckGitConfig;
    }
    Leave::Keep
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOME: &str = "/home/u";

    fn judge(p: &str, kind: LeftKind) -> Leave {
        judge_left(Path::new(p), kind, Path::new(HOME))
    }

    fn refused(p: &str, kind: LeftKind) -> bool {
        matches!(judge(p, kind), Leave::Refuse(_))
    }

    #[test]
    fn git_init_and_commit_leave_only_mergeable_entries() {
        use LeftKind::*;
        for (p, k) in [
            ("/w/.git", Dir),
            ("/w/.git/HEAD", File),
            ("/w/.git/description", File),
            ("/w/.git/hooks", Dir),
            ("/w/.git/hooks/pre-commit.sample", File),
            ("/w/.git/info/exclude", File),
            ("/w/.git/objects/ab/cdef", File),
            ("/w/.git/refs/heads/main", File),
            ("/w/.git/logs/HEAD", File),
            ("/w/.git/index", File),
            ("/w/.git/worktrees/wt/HEAD", File),
            ("/w/src/main.rs", File),
            ("/w/link", Symlink),
        ] {
            assert_eq!(judge(p, k), Leave::Keep, "{p}");
        }
        assert_eq!(judge("/w/.git/config", File), Leave::CheckGitConfig);
        assert_eq!(
            judge("/w/.git/worktrees/wt/config.worktree", File),
            Leave::CheckGitConfig
        );
        assert_eq!(
            judge("/w/.git/modules/sub/config", File),
            Leave::CheckGitConfig
        );
    }

    #[test]
    fn what_runs_or_redirects_git_is_refused() {
        use LeftKind::*;
        for (p, k) in [
            ("/w/.git/hooks/pre-commit", File),
            ("/w/.git/hooks/anything", File),
            ("/w/.git/modules/sub/hooks/post-checkout", File),
            ("/w/.git/commondir", File),
            ("/w/.git/worktrees/wt/gitdir", File),
            ("/w/.git/objects/info/alternates", File),
            ("/w/.git/config", Symlink),
            ("/w/.git/hooks", Symlink),
            ("/w/.git/refs/heads/x", Symlink),
            ("/w/.git", File),
            ("/w/.git", Symlink),
            ("/w/sub/.git", File),
            // A bare repository planted anywhere.
            ("/w/evil/hooks/pre-commit", File),
            ("/w/evil/hooks/fsmonitor-watchman", Symlink),
            ("/w/evil/commondir", File),
            ("/w/evil/objects/info/alternates", File),
            ("/w/evil/config", Symlink),
            ("/w/evil/hooks", Symlink),
        ] {
            assert!(refused(p, k), "{p} must be refused");
        }
        assert_eq!(judge("/w/evil/config", File), Leave::CheckGitConfig);
    }

    #[test]
    fn protected_names_and_home_start_up_files_are_refused() {
        use LeftKind::*;
        for p in [
            "/w/.vscode/tasks.json",
            "/w/.envrc",
            "/w/.mcp.json",
            "/w/.claude/settings.json",
            "/w/.env",
            "/home/u/.bashrc",
            "/home/u/.npmrc",
            "/home/u/.local/lib/python3.11/site-packages/usercustomize.py",
            "/home/u/.local/lib/python3.12/site-packages/evil.pth",
            "/home/u/.cargo/config.toml",
            "/home/u/.m2/settings.xml",
            "/home/u/.gradle/init.d/x.gradle",
            "/home/u/.gitconfig",
            "/home/u/.config/git/config",
            "/home/u/.local/bin/git",
            "/home/u/.ssh/authorized_keys",
            "/home/u/.cargo/registry/src/x/build.rs",
            "/home/u/.cache/pip/wheels/x.whl",
            "/home/u/go/pkg/mod/x/y.go",
        ] {
            assert!(refused(p, File), "{p} must be refused");
        }
        assert!(refused("/w/.vscode", Dir));
        assert!(refused("/w/fifo", Other));
        assert_eq!(judge("/home/u/notes.txt", File), Leave::Keep);
        assert_eq!(judge("/home/u/proj/build.rs", File), Leave::Keep);
    }
}
