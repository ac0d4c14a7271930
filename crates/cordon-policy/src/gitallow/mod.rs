//! What git may carry from a contained run to the host: the settings of a git
//! configuration file and the files of a git directory, each by allowlist.
//!
//! A run's changes to a repository reach the host's next `git` command. A list of what is
//! dangerous ([`crate::gitconfig::risky_key`]) catches the keys that run a program, but not
//! the many that quietly send git elsewhere or turn a check off: `http.proxy` with
//! `http.sslVerify=false` hands the user's stored token to whoever listens on the proxy, a
//! changed `remote.origin.url` makes the next push publish to someone else, and a non-`!`
//! alias such as `-c core.fsmonitor=./x status` runs code because git parses options in an
//! alias. Such a list is always one key short. So this module names what is known to be
//! harmless — what ordinary git use inside a workspace writes — and everything else waits
//! for a human.
//!
//! It owns three judgements: of a configuration file against the host's current one
//! ([`judge_config`], [`judge_gitmodules`]), and of one entry below a git directory
//! ([`judge_git_entry`]). It never parses configuration text itself: the caller passes what
//! the host's own `git config --list` printed, so the parse is the one git will use. It
//! never reads a file.

use crate::planted::{Leave, LeftKind};

use std::ffi::OsStr;

/// What the merge does with a git configuration file a run left.
///
/// Not `#[non_exhaustive]`: a caller must handle every verdict, and a new one must fail
/// to compile where it is not handled rather than fall into a wildcard arm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitConfigVerdict {
    /// Every change is known to be harmless: the file may reach the host.
    Merge,
    /// A change is not known to be harmless (it may send git elsewhere or turn a check
    /// off): the file waits for a human. The reason is one sentence naming the first such
    /// key.
    Hold(String),
    /// A key runs a program or changes where git reads its settings: the file never
    /// reaches the host. The reason is one sentence naming the key.
    Refuse(String),
}

/// A configuration file as `git config --list` prints it: each key (section and last
/// part in any case, the subsection as written) with its value, `None` for a key written
/// without `=`, in file order.
pub type ConfigPairs = [(String, Option<String>)];

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

/// The file in a work tree that names a repository's submodules.
pub const GITMODULES: &str = ".gitmodules";

/// File names that send git to another directory for its objects, settings or work tree.
const GIT_REDIRECT_FILES: &[&str] = &["commondir", "gitdir"];
/// Files of `objects/info/` that add another object store.
const GIT_ALTERNATES: &[&str] = &["alternates", "http-alternates"];
/// File names git reads as configuration inside a git directory.
const GIT_CONFIG_FILES: &[&str] = &["config", "config.worktree"];

/// Files at the top of a git directory that hold only state of git's own making: where
/// HEAD points, the index, refs, messages being edited, and the progress of a merge,
/// cherry-pick, revert or bisect (gitrepository-layout(5)). git reads them as data.
const GIT_STATE_FILES: &[&str] = &[
    "HEAD",
    "ORIG_HEAD",
    "FETCH_HEAD",
    "MERGE_HEAD",
    "MERGE_MSG",
    "MERGE_MODE",
    "MERGE_RR",
    "MERGE_AUTOSTASH",
    "AUTO_MERGE",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
    "REBASE_HEAD",
    "SQUASH_MSG",
    "BISECT_LOG",
    "BISECT_START",
    "BISECT_TERMS",
    "BISECT_NAMES",
    "BISECT_EXPECTED_REV",
    "BISECT_ANCESTORS_OK",
    "BISECT_HEAD",
    "BISECT_RUN",
    "BISECT_FIRST_PARENT",
    "NOTES_MERGE_PARTIAL",
    "NOTES_MERGE_REF",
    "COMMIT_EDITMSG",
    "TAG_EDITMSG",
    "NOTES_EDITMSG",
    "EDIT_DESCRIPTION",
    "index",
    "packed-refs",
    "description",
    "shallow",
    // A linked worktree's reason not to be pruned (`git worktree lock`).
    "locked",
    // gitk's cache of which refs contain which commits.
    "gitk.cache",
];

/// Directories at the top of a git directory whose whole content is data git made:
/// objects, refs and their logs, git-lfs's objects, reftable's tables. The few files
/// among them that redirect git (`objects/info/alternates`) or run (hooks) are caught
/// before, by name.
const GIT_DATA_DIRS: &[&str] = &[
    "objects",
    "refs",
    "logs",
    "lfs",
    "reftable",
    "NOTES_MERGE_WORKTREE",
];

/// Directories at the top of a git directory that hold the state of an operation in
/// progress, whose todo list holds commands: `git rebase --continue`, `git cherry-pick
/// --continue` and `git revert --continue` run its `exec` lines on the host. A run that
/// finishes its rebase leaves none of them; one that stops half way waits for a human.
const GIT_COMMAND_STATE_DIRS: &[&str] = &["rebase-merge", "rebase-apply", "sequencer"];

const COMMAND_STATE: &str = "the state of a rebase, cherry-pick or revert in progress: its \
     todo list holds commands that `git rebase --continue` runs on the host";

/// Directories at the top of a git directory that may exist (`git init` makes `info`,
/// `hooks` and `branches` empty) but whose files are judged one by one: `info` holds attributes, sparse-checkout
/// patterns and grafts beside the harmless exclude list; `branches` and `remotes` hold
/// legacy remote definitions (URLs); `worktrees` and `modules` hold git directories.
const GIT_JUDGED_DIRS: &[&str] = &[
    "info",
    "hooks",
    "branches",
    "remotes",
    "worktrees",
    "modules",
];

/// Files of `info/` that git reads as data: the list of refs for dumb transports (`git
/// update-server-info`, run by `git gc`). The local exclude list (`info/exclude`) is
/// judged by the merge against the host's: a pattern the run added hides files from
/// `git status`, the user's review of the run.
const GIT_INFO_FILES: &[&str] = &["exclude", "refs"];

const HOOK: &str = "a git hook runs on the host's next git command";
const REDIRECT: &str = "it would send git to another directory for its settings or objects";

/// Case-insensitive name comparison: a host file system may fold case, and then `.GIT/
/// Config` is `.git/config`.
pub(crate) fn name_is(a: &OsStr, b: &str) -> bool {
    a.as_encoded_bytes().eq_ignore_ascii_case(b.as_bytes())
}

fn named(name: &OsStr, list: &[&str]) -> bool {
    list.iter().any(|n| name_is(name, n))
}

// --- Entries of a git directory -------------------------------------------------------

/// What happens to an entry that a run left below a git directory. `rel` is its path
/// relative to that directory (`["refs", "heads", "main"]` for `.git/refs/heads/main`),
/// never empty.
///
/// Hooks, `commondir`, `gitdir`, object alternates and symlinks are refused; `config` and
/// `config.worktree` are left to [`judge_config`] ([`Leave::CheckGitConfig`]); what git
/// itself writes in ordinary use (refs, objects, logs, the index, the state of a merge,
/// rebase or bisect, the git directories of linked worktrees and submodules) is kept; any
/// other file waits for a human ([`Leave::Hold`]): `info/attributes`,
/// `info/sparse-checkout`, `info/grafts`, `remotes/*`, `branches/*`, a stale lock, or a
/// file no git version is known to write.
pub fn judge_git_entry(rel: &[&OsStr], kind: LeftKind) -> Leave {
    let Some((&name, dirs)) = rel.split_last() else {
        return Leave::Keep;
    };
    match kind {
        LeftKind::Symlink => {
            return Leave::Refuse(format!("a symlink in a git directory: {REDIRECT}"));
        }
        LeftKind::Other => {
            return Leave::Refuse("only files, directories and symlinks are merged".into());
        }
        LeftKind::File | LeftKind::Dir => {}
    }
    // These hold at any depth: a git directory nests in another (`modules/`, `worktrees/`)
    // under names a path alone does not tell apart from the directories around it.
    if named(name, GIT_REDIRECT_FILES) {
        return Leave::Refuse(REDIRECT.into());
    }
    if named(name, GIT_ALTERNATES) && dirs.last().is_some_and(|p| name_is(p, "info")) {
        return Leave::Refuse(REDIRECT.into());
    }
    if kind == LeftKind::File {
        // Anything under a `hooks` directory, except git's own disabled samples, may be a
        // hook (git also runs `hook.<name>.command`, but that is configuration).
        if dirs.iter().any(|c| name_is(c, "hooks"))
            && !name.as_encoded_bytes().ends_with(b".sample")
        {
            return Leave::Refuse(HOOK.into());
        }
        if named(name, GIT_CONFIG_FILES) {
            return Leave::CheckGitConfig;
        }
        if name.as_encoded_bytes().ends_with(b".lock") {
            return Leave::Hold(
                "a lock left by an interrupted git command would stop the host's git".into(),
            );
        }
    }
    in_git_dir(rel, kind)
}

/// The structural part of [`judge_git_entry`], once the rules by name have passed.
fn in_git_dir(rel: &[&OsStr], kind: LeftKind) -> Leave {
    let is_dir = kind == LeftKind::Dir;
    let (first, rest) = match rel.split_first() {
        Some((&first, rest)) => (first, rest),
        None => return Leave::Keep,
    };
    let unknown = || {
        Leave::Hold(format!(
            "{} is not among what ordinary git use writes in a git directory, and git may \
             take settings or remotes from it",
            rel.iter()
                .map(|c| c.to_string_lossy())
                .collect::<Vec<_>>()
                .join("/")
        ))
    };
    if rest.is_empty() {
        if is_dir && named(first, GIT_COMMAND_STATE_DIRS) {
            return Leave::Hold(COMMAND_STATE.into());
        }
        let kept = if is_dir {
            named(first, GIT_DATA_DIRS) || named(first, GIT_JUDGED_DIRS)
        } else {
            named(first, GIT_STATE_FILES) || first.as_encoded_bytes().starts_with(b"sharedindex.")
        };
        return if kept { Leave::Keep } else { unknown() };
    }
    if named(first, GIT_DATA_DIRS) || name_is(first, "hooks") {
        return Leave::Keep;
    }
    if named(first, GIT_COMMAND_STATE_DIRS) {
        return Leave::Hold(COMMAND_STATE.into());
    }
    if name_is(first, "info") {
        return match rest {
            [f] if !is_dir && named(f, GIT_INFO_FILES) => Leave::Keep,
            _ => unknown(),
        };
    }
    if name_is(first, "worktrees") {
        // `worktrees/<id>/` is the private git directory of a linked worktree.
        return match rest {
            [_] if is_dir => Leave::Keep,
            [_] => unknown(),
            [_, inner @ ..] => in_git_dir(inner, kind),
            [] => Leave::Keep,
        };
    }
    if name_is(first, "modules") {
        // `modules/<name>/` is a submodule's git directory, and a submodule's name may
        // hold slashes (`modules/libs/foo/HEAD`): the git directory starts at the first
        // component below the name that a git directory holds.
        let start = (1..rest.len()).find(|&i| {
            named(rest[i], GIT_STATE_FILES)
                || named(rest[i], GIT_DATA_DIRS)
                || named(rest[i], GIT_COMMAND_STATE_DIRS)
                || named(rest[i], GIT_JUDGED_DIRS)
                || rest[i].as_encoded_bytes().starts_with(b"sharedindex.")
        });
        return match start {
            Some(i) => in_git_dir(&rest[i..], kind),
            None if is_dir => Leave::Keep,
            None => unknown(),
        };
    }
    unknown()
}

/// What happens to `name` (with parent directory `parent`) outside any `.git` directory,
/// where only its name can say whether it belongs to a git directory: git treats any
/// directory holding `HEAD`, `objects/` and `refs/` as a bare repository, so a `config`
/// or `hooks/pre-commit` planted in `sub/` counts on the next `git` run there. A `.git`
/// itself must be a directory: a `.git` file or symlink points git elsewhere.
pub(crate) fn judge_git_named(name: &OsStr, parent: Option<&OsStr>, kind: LeftKind) -> Leave {
    if name_is(name, ".git") {
        return match kind {
            LeftKind::Dir => Leave::Keep,
            _ => Leave::Refuse(format!("a .git that is not a directory: {REDIRECT}")),
        };
    }
    if named(name, GIT_REDIRECT_FILES) {
        return Leave::Refuse(REDIRECT.into());
    }
    if named(name, GIT_ALTERNATES) && parent.is_some_and(|p| name_is(p, "info")) {
        return Leave::Refuse(REDIRECT.into());
    }
    if kind == LeftKind::Symlink
        && (named(name, GIT_CONFIG_FILES) || name_is(name, "hooks") || named(name, GIT_HOOK_NAMES))
    {
        return Leave::Refuse(format!("a symlink named like git's own files: {REDIRECT}"));
    }
    if parent.is_some_and(|p| name_is(p, "hooks"))
        && kind != LeftKind::Dir
        && named(name, GIT_HOOK_NAMES)
    {
        return Leave::Refuse(HOOK.into());
    }
    if kind == LeftKind::File && named(name, GIT_CONFIG_FILES) {
        return Leave::CheckGitConfig;
    }
    Leave::Keep
}

mod allowlist;
mod config;

pub use allowlist::allowed_keys;
pub use config::{judge_config, judge_gitmodules};

#[cfg(test)]
mod tests;
