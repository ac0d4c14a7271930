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
//! The git rules live in [`crate::gitallow`]. Below a `.git` directory they are an
//! allowlist: what git writes in ordinary use is kept, hooks and redirections are refused,
//! and anything else waits for a human ([`Leave::Hold`]). The git rules hold wherever a
//! git directory can be, not only under `.git`: git treats any directory holding `HEAD`,
//! `objects/` and `refs/` as a repository (a bare one), so a `config` or
//! `hooks/pre-commit` planted in `sub/` counts on the next `git status` there; outside
//! `.git` such files are judged by their names, since a path alone does not say which
//! directory is a bare repository. The configuration and pointers that other
//! version-control tools obey (`.gitmodules`, `.hg/hgrc`, `.jj/repo/config.toml`, …) wait
//! for review too ([`crate::vcs`]).

use crate::gitallow::{judge_git_entry, judge_git_named, name_is};
use crate::guards::{self, GuardHit, StateDirs};
use std::ffi::OsStr;
use std::path::{Component, Path};

pub use crate::gitallow::GIT_HOOK_NAMES;

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
    /// It may reach the host only after its content is judged as git configuration: by
    /// [`crate::gitallow::judge_config`] against the host's current file (what parses and
    /// changes only what is known to be harmless), or at least by
    /// [`crate::gitconfig::risky_key`] (what sets no key that runs a program).
    CheckGitConfig,
    /// It reaches the host only through a change set a human reviewed and applied
    /// (`cordon changes apply`): a host tool would obey or run it without being asked.
    /// Without review it waits in the change set; the reason is one sentence.
    Hold(String),
    /// It stays out of the host's tree; the reason is one sentence for the report.
    Refuse(String),
}

/// Why compiled code a host tool loads from a cache is not merged ([`is_compiled_cache`]).
/// The merge counts these instead of listing each one.
pub const COMPILED_CACHE: &str = "compiled code that a host tool loads from its cache \
     without reading the source (a forged `.pyc` runs on the next import of an unchanged \
     module); the tool rebuilds it from the source";

/// Is `path` (a file or symlink a run left) compiled code that a host tool runs from a
/// cache without rebuilding it: Python bytecode (`*.pyc`, `*.pyo`, anything under
/// `__pycache__/`) or a bundler's cache of transpiled modules (`node_modules/.cache/`,
/// which babel-loader and webpack serve by the source's hash). Every one is rebuilt by
/// the tool from the source it caches, so the merge drops them as a class.
pub fn is_compiled_cache(path: &Path, kind: LeftKind) -> bool {
    if kind == LeftKind::Dir {
        return false;
    }
    let comps: Vec<&OsStr> = path.iter().collect();
    let Some((name, parents)) = comps.split_last() else {
        return false;
    };
    let n = name.as_encoded_bytes().to_ascii_lowercase();
    if n.ends_with(b".pyc") || n.ends_with(b".pyo") {
        return true;
    }
    parents.iter().any(|c| name_is(c, "__pycache__"))
        || parents
            .windows(2)
            .any(|w| name_is(w[0], "node_modules") && name_is(w[1], ".cache"))
}

/// Decide what happens to `path` (absolute and clean, as it would be on the host) that a
/// run left as `kind`. `home` is the host user's home directory.
///
/// cordon's state directories are resolved for each call; a caller that judges many
/// entries (the merge) resolves them once with [`StateDirs::for_home`] and calls
/// [`judge_left_in`].
pub fn judge_left(path: &Path, kind: LeftKind, home: &Path) -> Leave {
    judge_left_in(path, kind, home, &StateDirs::for_home(home))
}

/// [`judge_left`] with cordon's state directories resolved once by the caller.
pub fn judge_left_in(path: &Path, kind: LeftKind, home: &Path, state: &StateDirs) -> Leave {
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
    // Below the outermost `.git`, by the git directory's allowlist; elsewhere by name.
    let git = match comps.iter().position(|c| name_is(c, ".git")) {
        Some(i) if i + 1 < comps.len() => judge_git_entry(&comps[i + 1..], kind),
        _ => judge_git_named(name, parents.last().copied(), kind),
    };
    if let Leave::Refuse(_) = git {
        return git;
    }
    if kind == LeftKind::Other {
        return Leave::Refuse("only files, directories and symlinks are merged".into());
    }
    if is_compiled_cache(path, kind) {
        return Leave::Refuse(COMPILED_CACHE.into());
    }
    if let Some(hit) = guards::protected_write_in(path, home, state)
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
    // Another tool's file named like git's (`.pijul/config`, `.sl/config`) is that tool's.
    crate::vcs::judge_vcs_metadata(&comps, kind).unwrap_or(git)
}

/// `.git/hooks` and `.git/config` are judged by the git rules, which let `git init` and
/// `git config user.email` through.
fn is_git_sequence(hit: &GuardHit) -> bool {
    hit.pattern == ".git/hooks" || hit.pattern == ".git/config"
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
    fn what_a_host_tool_would_obey_waits_for_review() {
        use LeftKind::*;
        for (p, k) in [
            ("/w/.git/info/attributes", File),
            ("/w/.git/info/sparse-checkout", File),
            ("/w/.git/info/grafts", File),
            ("/w/.git/remotes/origin", File),
            ("/w/.git/branches/origin", File),
            ("/w/.git/rr-cache", Dir),
            ("/w/.git/index.lock", File),
            ("/w/sub/.git/unknown", File),
            ("/w/.gitmodules", File),
            ("/w/vendor/x/.gitmodules", File),
            ("/w/.lfsconfig", File),
            ("/w/.hg/hgrc", File),
            ("/w/sub/repo/.hg/hgrc", File),
            ("/w/.jj/repo/config.toml", File),
            ("/w/.bzr/branch/branch.conf", File),
            ("/w/.pijul/config", File),
            ("/w/.fslckout", File),
            ("/w/_darcs/prefs/defaults", File),
        ] {
            assert!(
                matches!(judge(p, k), Leave::Hold(_)),
                "{p} must be held, got {:?}",
                judge(p, k)
            );
        }
        // A guard's refusal wins over a hold.
        assert!(refused("/w/.vscode/.hg/hgrc", File));
        assert_eq!(judge("/w/.hg/store/00changelog.i", File), Leave::Keep);
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

    /// F9: a forged `__pycache__/mod.cpython-311.pyc` for an unchanged `mod.py` landed,
    /// and the host's next import ran it.
    #[test]
    fn compiled_caches_are_refused_as_a_class() {
        use LeftKind::*;
        for (p, k) in [
            ("/w/__pycache__/mod.cpython-311.pyc", File),
            ("/w/pkg/__pycache__/mod.cpython-312.opt-1.pyc", File),
            ("/w/pkg/__PYCACHE__/x", File),
            ("/w/legacy.pyc", File),
            ("/w/legacy.PYO", Symlink),
            (
                "/w/.venv/lib/python3.11/site-packages/__pycache__/six.cpython-311.pyc",
                File,
            ),
            ("/w/node_modules/.cache/babel-loader/abc.json", File),
        ] {
            assert_eq!(judge(p, k), Leave::Refuse(COMPILED_CACHE.into()), "{p}");
        }
        assert_eq!(judge("/w/__pycache__", Dir), Leave::Keep);
        assert_eq!(judge("/w/pyc_notes.txt", File), Leave::Keep);
        assert_eq!(judge("/w/src/.cache/x", File), Leave::Keep);
    }
}
