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

use crate::gitconfig::risky_key;
use crate::planted::{Leave, LeftKind};
use std::collections::{BTreeMap, BTreeSet};
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
/// objects, refs and their logs, the state of a rebase or sequencer, git-lfs's objects,
/// reftable's tables. The few files among them that redirect git (`objects/info/
/// alternates`) or run (hooks) are caught before, by name.
const GIT_DATA_DIRS: &[&str] = &[
    "objects",
    "refs",
    "logs",
    "rebase-merge",
    "rebase-apply",
    "sequencer",
    "lfs",
    "reftable",
    "NOTES_MERGE_WORKTREE",
];

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

/// Files of `info/` that git reads as data: the local exclude list and the list of refs
/// for dumb transports (`git update-server-info`, run by `git gc`).
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

// --- The allowlist of settings --------------------------------------------------------

/// What values an allowlisted key admits, and whether a run may remove it.
#[derive(Debug, Clone, Copy)]
enum Values {
    /// Any value, or none: a name, a ref or a free text that git only stores or prints.
    Any,
    /// A git boolean.
    Bool,
    /// A git boolean or one of these words.
    BoolOr(&'static [&'static str]),
    /// One of these words.
    OneOf(&'static [&'static str]),
    /// Only false: any other value turns on something that runs.
    OnlyFalse,
    /// Only true, and not removed: the key keeps a safety check on.
    OnlyTrue,
    /// The name of a remote the repository has (see [`Context::remotes`]) or `.`.
    KnownRemote,
    /// A fetch refspec storing into this remote's own tracking refs or into tags.
    TrackingRefspec,
    /// A URL by a git transport, for a remote of a repository the run made.
    OwnRemoteUrl,
}

/// One allowlisted key, named as git-config(1) spells it (`<name>` for any subsection),
/// with the values it admits and why they are harmless.
struct Allowed {
    name: &'static str,
    values: Values,
    why: &'static str,
}

const fn allow(name: &'static str, values: Values, why: &'static str) -> Allowed {
    Allowed { name, values, why }
}

const BOOL_REBASE: &[&str] = &["merges", "m", "interactive", "i"];

/// The keys a run may set, change or remove in a repository's configuration without a
/// human looking: what `git init`, `clone`, `commit`, `branch`, `checkout`, `switch`,
/// `stash`, `remote add` (in a repository the run made), `branch --set-upstream-to`,
/// `config user.email` and `lfs install` write, and the settings of `pull`, `merge` and
/// `rebase`. No admitted value names a program, a file, a host or a URL the host's git
/// would use, except a remote's URL in a repository the run made, which is the run's own.
const ALLOWLIST: &[Allowed] = &[
    allow(
        "core.repositoryFormatVersion",
        Values::OneOf(&["0", "1"]),
        "`git init`: the on-disk format, which every git checks before it reads the repository",
    ),
    allow(
        "extensions.objectFormat",
        Values::OneOf(&["sha1", "sha256"]),
        "`git init --object-format`: the hash of the objects",
    ),
    allow(
        "extensions.refStorage",
        Values::OneOf(&["files", "reftable"]),
        "`git init --ref-format`: how refs are stored",
    ),
    allow(
        "core.fileMode",
        Values::Bool,
        "`git init`: whether the executable bit is tracked",
    ),
    allow(
        "core.bare",
        Values::Bool,
        "`git init`: whether there is a work tree",
    ),
    allow(
        "core.ignoreCase",
        Values::Bool,
        "`git init`: whether the file system folds case",
    ),
    allow(
        "core.precomposeUnicode",
        Values::Bool,
        "`git init`: how file names are normalized",
    ),
    allow(
        "core.symlinks",
        Values::Bool,
        "`git init`: whether symlinks are checked out as symlinks or as files",
    ),
    allow(
        "core.logAllRefUpdates",
        Values::BoolOr(&["always"]),
        "`git init`: whether reflogs are kept",
    ),
    allow(
        "core.fsmonitor",
        Values::OnlyFalse,
        "only off: any other value is a program or git's monitor daemon",
    ),
    allow(
        "core.protectNTFS",
        Values::OnlyTrue,
        "only on: refuses paths NTFS would alias to .git",
    ),
    allow(
        "core.protectHFS",
        Values::OnlyTrue,
        "only on: refuses paths HFS+ would alias to .git",
    ),
    allow(
        "fetch.fsckObjects",
        Values::OnlyTrue,
        "only on: checks fetched objects (a malicious .gitmodules)",
    ),
    allow(
        "transfer.fsckObjects",
        Values::OnlyTrue,
        "only on: checks fetched and received objects",
    ),
    allow(
        "receive.fsckObjects",
        Values::OnlyTrue,
        "only on: checks pushed objects",
    ),
    allow(
        "user.name",
        Values::Any,
        "`git config user.name`: text recorded in commits",
    ),
    allow(
        "user.email",
        Values::Any,
        "`git config user.email`: text recorded in commits",
    ),
    allow("author.name", Values::Any, "text recorded in commits"),
    allow("author.email", Values::Any, "text recorded in commits"),
    allow("committer.name", Values::Any, "text recorded in commits"),
    allow("committer.email", Values::Any, "text recorded in commits"),
    allow(
        "branch.<name>.remote",
        Values::KnownRemote,
        "`clone`, `branch --set-upstream-to`, `push -u`: a remote the repository already \
         has (a name it does not have is taken for a URL)",
    ),
    allow(
        "branch.<name>.merge",
        Values::Any,
        "the branch of that remote to follow: a ref name",
    ),
    allow(
        "branch.<name>.rebase",
        Values::BoolOr(BOOL_REBASE),
        "whether `git pull` rebases this branch",
    ),
    allow(
        "branch.<name>.description",
        Values::Any,
        "`git branch --edit-description`: text git prints",
    ),
    allow(
        "remote.<name>.url",
        Values::OwnRemoteUrl,
        "`clone`, `remote add`: only in a repository the run made, whose remotes are its \
         own, and only by git's own transports",
    ),
    allow(
        "remote.<name>.fetch",
        Values::TrackingRefspec,
        "`clone`, `remote set-branches`: stores only into the remote's own tracking refs \
         or tags",
    ),
    allow(
        "remote.<name>.promisor",
        Values::Bool,
        "`clone --filter`: objects are fetched later from the same remote",
    ),
    allow(
        "remote.<name>.partialCloneFilter",
        Values::Any,
        "`clone --filter`: which objects to leave out",
    ),
    allow(
        "remote.<name>.tagOpt",
        Values::OneOf(&["--no-tags", "--tags"]),
        "`clone --no-tags`: which tags to fetch",
    ),
    allow(
        "remote.<name>.prune",
        Values::Bool,
        "whether a fetch drops stale tracking refs",
    ),
    allow(
        "remote.<name>.pruneTags",
        Values::Bool,
        "whether a fetch drops stale tags",
    ),
    allow(
        "extensions.partialClone",
        Values::KnownRemote,
        "a partial clone's remote as older gits record it: one the repository has",
    ),
    allow(
        "pull.rebase",
        Values::BoolOr(BOOL_REBASE),
        "whether `git pull` rebases or merges",
    ),
    allow(
        "pull.ff",
        Values::BoolOr(&["only"]),
        "whether `git pull` may fast-forward",
    ),
    allow(
        "merge.ff",
        Values::BoolOr(&["only"]),
        "whether `git merge` may fast-forward",
    ),
    allow(
        "merge.conflictStyle",
        Values::OneOf(&["merge", "diff3", "zdiff3"]),
        "how conflicts are marked in files",
    ),
    allow(
        "merge.autoStash",
        Values::Bool,
        "whether a merge stashes local changes first",
    ),
    allow(
        "merge.log",
        Values::Bool,
        "how many commit subjects a merge message lists (git reads a count as true)",
    ),
    allow(
        "merge.stat",
        Values::Bool,
        "whether a merge prints a diffstat",
    ),
    allow(
        "merge.renames",
        Values::Bool,
        "whether a merge detects renames",
    ),
    allow(
        "merge.directoryRenames",
        Values::BoolOr(&["conflict"]),
        "whether a merge detects renamed directories",
    ),
    allow(
        "merge.defaultToUpstream",
        Values::Bool,
        "whether `git merge` alone merges the upstream",
    ),
    allow(
        "rebase.autoSquash",
        Values::Bool,
        "whether a rebase reorders fixup commits",
    ),
    allow(
        "rebase.autoStash",
        Values::Bool,
        "whether a rebase stashes local changes first",
    ),
    allow(
        "rebase.updateRefs",
        Values::Bool,
        "whether a rebase moves branches stacked on the rebased one",
    ),
    allow(
        "rebase.stat",
        Values::Bool,
        "whether a rebase prints a diffstat",
    ),
    allow(
        "rebase.forkPoint",
        Values::Bool,
        "how a rebase finds where a branch started",
    ),
    allow(
        "rebase.abbreviateCommands",
        Values::Bool,
        "how the todo list is spelled",
    ),
    allow(
        "rebase.missingCommitsCheck",
        Values::OneOf(&["ignore", "warn", "error"]),
        "whether an edited todo list may drop commits",
    ),
    allow(
        "rebase.rebaseMerges",
        Values::BoolOr(&["rebase-cousins", "no-rebase-cousins"]),
        "whether a rebase keeps merge commits",
    ),
    allow(
        "fetch.prune",
        Values::Bool,
        "whether a fetch drops stale tracking refs",
    ),
    allow(
        "fetch.pruneTags",
        Values::Bool,
        "whether a fetch drops stale tags",
    ),
    allow(
        "branch.autoSetupMerge",
        Values::BoolOr(&["always", "inherit", "simple"]),
        "whether new branches follow their start point",
    ),
    allow(
        "branch.autoSetupRebase",
        Values::OneOf(&["never", "local", "remote", "always"]),
        "whether new branches rebase on pull",
    ),
    allow(
        "push.autoSetupRemote",
        Values::Bool,
        "whether a push sets the upstream to the branch of the same name",
    ),
    allow(
        "lfs.repositoryFormatVersion",
        Values::OneOf(&["0"]),
        "`git lfs install`: the version of git-lfs's own on-disk format",
    ),
];

/// The keys a run may change without review, each with why it is harmless, named as
/// git-config(1) spells them (`<name>` stands for any subsection). Some admit only
/// certain values, and a remote's keys only a remote the repository already has (see
/// [`judge_config`]).
pub fn allowed_keys() -> impl Iterator<Item = (&'static str, &'static str)> {
    ALLOWLIST.iter().map(|a| (a.name, a.why))
}

/// A key split as git splits it: the section and last part compared in any case, the
/// subsection (everything between the first and last dot) as written.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    section: String,
    sub: Option<String>,
    key: String,
}

impl Key {
    fn parse(name: &str) -> Key {
        let (section, sub, key) = match name.split_once('.') {
            Some((section, rest)) => match rest.rsplit_once('.') {
                Some((sub, key)) => (section, Some(sub), key),
                None => (section, None, rest),
            },
            // Not a key git prints; it matches no allowlist entry.
            None => (name, None, ""),
        };
        Key {
            section: section.to_ascii_lowercase(),
            sub: sub.map(str::to_owned),
            key: key.to_ascii_lowercase(),
        }
    }

    fn is(&self, section: &str, key: &str) -> bool {
        self.section == section && self.key == key
    }
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.sub {
            Some(sub) => write!(f, "{}.{}.{}", self.section, sub, self.key),
            None => write!(f, "{}.{}", self.section, self.key),
        }
    }
}

fn lookup(key: &Key) -> Option<&'static Allowed> {
    ALLOWLIST.iter().find(|a| {
        let pattern = Key::parse(a.name);
        pattern.section == key.section
            && pattern.key == key.key
            && match (pattern.sub.as_deref(), key.sub.as_deref()) {
                (None, None) => true,
                (Some("<name>"), Some(_)) => true,
                (Some(p), Some(s)) => p == s,
                _ => false,
            }
    })
}

/// A value as git reads a boolean: a key without `=` is true, an empty value false.
fn git_bool(value: Option<&str>) -> Option<bool> {
    let Some(v) = value else {
        return Some(true);
    };
    match v.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" => Some(true),
        "false" | "no" | "off" | "" => Some(false),
        n => git_int(n).map(|i| i != 0),
    }
}

/// A value as git reads an integer, with an optional `k`, `m` or `g` unit.
fn git_int(v: &str) -> Option<i64> {
    let v = v.trim();
    let digits = v.strip_suffix(['k', 'K', 'm', 'M', 'g', 'G']).unwrap_or(v);
    let unsigned = digits.strip_prefix('-').unwrap_or(digits);
    if unsigned.is_empty() || !unsigned.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn one_of(value: Option<&str>, words: &[&str]) -> bool {
    value.is_some_and(|v| words.iter().any(|w| v.trim().eq_ignore_ascii_case(w)))
}

/// What the three-way rules know about the repository.
struct Context {
    /// Whether the host had the repository (`false`: the run made it).
    existing: bool,
    /// The remotes with a URL: the host's, or in a repository the run made, the run's own.
    remotes: BTreeSet<String>,
}

fn remotes_with_url(pairs: &ConfigPairs) -> BTreeSet<String> {
    pairs
        .iter()
        .map(|(name, _)| Key::parse(name))
        .filter(|k| k.is("remote", "url"))
        .filter_map(|k| k.sub)
        .collect()
}

/// Why the allowlist does not admit setting `key` to `value`, or `None` when it does.
fn not_admitted(key: &Key, value: Option<&str>, cx: &Context) -> Option<String> {
    let unknown = || {
        Some(format!(
            "it sets {key}, which is not a git setting known to be harmless"
        ))
    };
    if key.section == "remote"
        && let Some(remote) = &key.sub
    {
        if cx.existing && !cx.remotes.contains(remote) {
            return Some(format!(
                "it adds the remote {remote} ({key}), which the host's repository does not have"
            ));
        }
        if cx.existing && matches!(key.key.as_str(), "url" | "pushurl") {
            return Some(format!(
                "it changes {key}, which decides where git sends the user's commits and \
                 credentials"
            ));
        }
        if !cx.remotes.contains(remote) {
            return Some(format!(
                "it sets {key} for a remote without a URL, which git would take for a URL"
            ));
        }
    }
    let Some(allowed) = lookup(key) else {
        return unknown();
    };
    let shown = value.unwrap_or("true");
    let bad_value = || {
        Some(format!(
            "it sets {key} to {shown}, a value not known to be harmless"
        ))
    };
    let ok = match allowed.values {
        Values::Any => true,
        Values::Bool => git_bool(value).is_some(),
        Values::BoolOr(words) => git_bool(value).is_some() || one_of(value, words),
        Values::OneOf(words) => one_of(value, words),
        Values::OnlyFalse => git_bool(value) == Some(false),
        Values::OnlyTrue => git_bool(value) == Some(true),
        Values::KnownRemote => {
            let named = value.unwrap_or("");
            if named == "." || cx.remotes.contains(named) {
                true
            } else {
                return Some(format!(
                    "it sets {key} to {named}, which is not a remote the repository has \
                     (git would take it for a URL)"
                ));
            }
        }
        Values::TrackingRefspec => {
            let remote = key.sub.as_deref().unwrap_or("");
            if tracking_refspec(value.unwrap_or(""), remote) {
                true
            } else {
                return Some(format!(
                    "it sets {key} to {shown}, which stores outside refs/remotes/{remote}/ \
                     and refs/tags/"
                ));
            }
        }
        Values::OwnRemoteUrl => !cx.existing && plain_url(value.unwrap_or("")),
    };
    if ok { None } else { bad_value() }
}

/// Why the allowlist does not admit removing `key`, or `None` when it does.
fn removal_not_admitted(key: &Key) -> Option<String> {
    if key.section == "remote" && matches!(key.key.as_str(), "url" | "pushurl") {
        return Some(format!(
            "it removes {key}, which decides where git sends the user's commits and credentials"
        ));
    }
    match lookup(key).map(|a| a.values) {
        Some(Values::OnlyTrue) => Some(format!("it removes {key}, which turns a safety check off")),
        Some(_) => None,
        None => Some(format!(
            "it removes {key}, which is not a git setting known to be harmless"
        )),
    }
}

/// A fetch refspec (`[+]src:dst`) whose destination is this remote's tracking refs or tags.
fn tracking_refspec(spec: &str, remote: &str) -> bool {
    let spec = spec.trim().strip_prefix('+').unwrap_or(spec.trim());
    let Some((_, dst)) = spec.split_once(':') else {
        return false;
    };
    if dst.split('/').any(|c| c == "..") {
        return false;
    }
    let tracking = format!("refs/remotes/{remote}/");
    (dst.starts_with(&tracking) && dst.len() > tracking.len())
        || (dst.starts_with("refs/tags/") && dst.len() > "refs/tags/".len())
}

/// A remote URL git reaches with one of its own transports: not `<helper>::<address>`
/// (`ext::` runs a command) and not an option.
fn plain_url(url: &str) -> bool {
    let url = url.trim();
    if url.is_empty() || url.starts_with('-') {
        return false;
    }
    match url.split_once("::") {
        Some((helper, _)) => helper.contains('/'),
        None => true,
    }
}

/// Each key's values in file order.
fn by_key(pairs: &ConfigPairs) -> BTreeMap<Key, Vec<Option<&str>>> {
    let mut map: BTreeMap<Key, Vec<Option<&str>>> = BTreeMap::new();
    for (name, value) in pairs {
        map.entry(Key::parse(name))
            .or_default()
            .push(value.as_deref());
    }
    map
}

/// The keys whose values differ between `host` and `run`: each run pair of such a key
/// (in run order), then each host value the run no longer has (in host order).
struct Changes<'a> {
    set: Vec<(Key, Option<&'a str>)>,
    removed: Vec<(Key, Option<&'a str>)>,
}

fn changes<'a>(host: &'a ConfigPairs, run: &'a ConfigPairs) -> Changes<'a> {
    let (h, r) = (by_key(host), by_key(run));
    let same = |k: &Key| h.get(k) == r.get(k);
    let set = run
        .iter()
        .map(|(n, v)| (Key::parse(n), v.as_deref()))
        .filter(|(k, _)| !same(k))
        .collect();
    let mut removed = Vec::new();
    for (name, value) in host {
        let key = Key::parse(name);
        if same(&key) {
            continue;
        }
        let kept = r.get(&key).is_some_and(|vs| vs.contains(&value.as_deref()));
        if !kept {
            removed.push((key, value.as_deref()));
        }
    }
    Changes { set, removed }
}

/// Judge the git configuration file a run left (`run`) against the host's current one.
///
/// `host` is the host's file as `git config --list` prints it, or `None` when the git
/// directory did not exist on the host (the run made the repository). Pass `Some(&[])`
/// when the host's file exists but cannot be parsed: then every key counts as changed.
///
/// - A changed or added key that runs a program or moves where git reads its settings
///   ([`risky_key`]) refuses the file.
/// - Keys with the same values in both pass, whatever they are: the host had them.
/// - Any other change, addition or removal passes only when the allowlist admits the key
///   and, for the conditional ones, its value; otherwise the file is held.
/// - In a repository the host has, a remote's `url` or `pushurl` never changes, a remote
///   it does not have is never added, `branch.<b>.remote` names only a remote it has (or
///   `.`), and `remote.<r>.fetch` stores only into `refs/remotes/<r>/` or tags.
/// - In a repository the run made, the remotes with a URL in the file are the run's own
///   (a clone's `remote.origin.url`, `fetch`, `branch.main.remote`); nothing else beyond
///   the allowlist passes.
pub fn judge_config(host: Option<&ConfigPairs>, run: &ConfigPairs) -> GitConfigVerdict {
    let cx = Context {
        existing: host.is_some(),
        remotes: remotes_with_url(host.unwrap_or(run)),
    };
    let host = host.unwrap_or(&[]);
    let changes = changes(host, run);
    for (key, value) in &changes.set {
        let name = key.to_string();
        if let Some(why) = risky_key(&name, *value) {
            return GitConfigVerdict::Refuse(format!("it sets the git key {name}, which {why}"));
        }
    }
    let held = changes
        .set
        .iter()
        .find_map(|(key, value)| not_admitted(key, *value, &cx))
        .or_else(|| {
            changes
                .removed
                .iter()
                .find_map(|(key, _)| removal_not_admitted(key))
        });
    match held {
        Some(why) => GitConfigVerdict::Hold(why),
        None => GitConfigVerdict::Merge,
    }
}

/// Keys of a submodule in `.gitmodules` that change only what git reports or how much it
/// fetches from the URL the submodule already has; `None` means any value, on removal.
fn gitmodules_admits(key: &str, value: Option<Option<&str>>) -> bool {
    match (key, value) {
        ("shallow" | "fetchrecursesubmodules" | "ignore", None) => true,
        ("shallow", Some(v)) => git_bool(v).is_some(),
        ("fetchrecursesubmodules", Some(v)) => git_bool(v).is_some() || one_of(v, &["on-demand"]),
        // `none` is the default; every other value hides some change from `git status`.
        ("ignore", Some(v)) => one_of(v, &["none"]),
        _ => false,
    }
}

/// Why changing `key` of `.gitmodules` needs a human.
fn gitmodules_change(key: &Key, verb: &str) -> String {
    if key.section == "submodule" && key.sub.is_some() {
        format!(
            "it {verb} {key}, which decides what the host's git fetches or checks out for a \
             submodule"
        )
    } else {
        format!("it {verb} {key}, which is not a .gitmodules setting known to be harmless")
    }
}

/// Judge a `.gitmodules` a run left (`run`) against the host's current one (`None`
/// when the host has none), both as `git config --list` prints them.
///
/// A new submodule, or a changed `url`, `path`, `update` or `branch` of one, decides what
/// the host's `git submodule update` fetches and checks out: held. An `update = !command`
/// is refused (git would run the command). What passes: removing a whole submodule, and
/// `shallow`, `fetchRecurseSubmodules` and `ignore = none` of a submodule the host's file
/// has.
pub fn judge_gitmodules(host: Option<&ConfigPairs>, run: &ConfigPairs) -> GitConfigVerdict {
    let host = host.unwrap_or(&[]);
    let submodules = |pairs: &ConfigPairs| -> BTreeSet<String> {
        pairs
            .iter()
            .map(|(n, _)| Key::parse(n))
            .filter(|k| k.section == "submodule")
            .filter_map(|k| k.sub)
            .collect()
    };
    let (had, has) = (submodules(host), submodules(run));
    let changes = changes(host, run);
    for (key, value) in &changes.set {
        if key.is("submodule", "update") && value.is_some_and(|v| v.trim_start().starts_with('!')) {
            return GitConfigVerdict::Refuse(format!(
                "it sets {key} to a command, which git would run"
            ));
        }
    }
    for (key, value) in &changes.set {
        let ours = key.section == "submodule";
        match &key.sub {
            Some(name) if ours && !had.contains(name) => {
                return GitConfigVerdict::Hold(format!(
                    "it adds the submodule {name}, whose URL the host's git would fetch"
                ));
            }
            Some(_) if ours && gitmodules_admits(&key.key, Some(*value)) => {}
            _ => return GitConfigVerdict::Hold(gitmodules_change(key, "sets")),
        }
    }
    for (key, _) in &changes.removed {
        let ours = key.section == "submodule";
        let whole = ours && key.sub.as_ref().is_some_and(|name| !has.contains(name));
        let harmless = whole || (ours && gitmodules_admits(&key.key, None));
        if !harmless {
            return GitConfigVerdict::Hold(gitmodules_change(key, "removes"));
        }
    }
    GitConfigVerdict::Merge
}

#[cfg(test)]
mod tests {
    use super::*;
    use GitConfigVerdict::{Hold, Merge, Refuse};

    /// A configuration as `git config --list` prints it, one `key=value` (or bare `key`)
    /// per line.
    fn cfg(text: &str) -> Vec<(String, Option<String>)> {
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|l| match l.split_once('=') {
                Some((k, v)) => (k.to_owned(), Some(v.to_owned())),
                None => (l.to_owned(), None),
            })
            .collect()
    }

    /// A repository the host has: `git init`, a clone's remote, an identity, and a key
    /// that runs a program which the user set.
    const HOST: &str = "
        core.repositoryformatversion=0
        core.filemode=true
        core.bare=false
        core.logallrefupdates=true
        remote.origin.url=https://github.com/u/p.git
        remote.origin.fetch=+refs/heads/*:refs/remotes/origin/*
        branch.main.remote=origin
        branch.main.merge=refs/heads/main
        user.email=u@example.com
        core.pager=less -R
        transfer.fsckobjects=true
    ";

    /// The host's file with `extra` added at the end.
    fn existing(extra: &str) -> GitConfigVerdict {
        let run = cfg(&format!("{HOST}\n{extra}"));
        judge_config(Some(&cfg(HOST)), &run)
    }

    fn kind(v: &GitConfigVerdict) -> &'static str {
        match v {
            Merge => "merge",
            Hold(_) => "hold",
            Refuse(_) => "refuse",
        }
    }

    #[test]
    fn ordinary_changes_to_an_existing_repository_merge() {
        for extra in [
            "",
            "user.name=U",
            "user.email=other@example.com",
            "branch.feat.remote=origin\nbranch.feat.merge=refs/heads/feat",
            "branch.feat.remote=.\nbranch.feat.merge=refs/heads/main",
            "branch.feat.rebase=interactive",
            "branch.feat.description=Work on the parser",
            "remote.origin.fetch=+refs/heads/x:refs/remotes/origin/x",
            "remote.origin.fetch=+refs/tags/*:refs/tags/*",
            "remote.origin.prune=true",
            "remote.origin.tagopt=--no-tags",
            "pull.rebase=true",
            "pull.ff=only",
            "merge.conflictstyle=zdiff3",
            "merge.log=20",
            "rebase.autosquash",
            "rebase.updaterefs=yes",
            "fetch.prune=on",
            "push.autosetupremote=true",
            "core.fsmonitor=false",
            "core.fsmonitor=",
            "fetch.fsckobjects=true",
            "receive.fsckobjects=1",
            "core.protectntfs=true",
            "core.protecthfs=true",
            "lfs.repositoryformatversion=0",
            "extensions.objectformat=sha256",
            "CORE.FileMode=false",
        ] {
            assert_eq!(existing(extra), Merge, "{extra}");
        }
        // Removals of harmless keys, and of a program the user had set.
        let host = cfg(HOST);
        let without =
            |key: &str| -> Vec<_> { host.iter().filter(|(k, _)| k != key).cloned().collect() };
        assert_eq!(judge_config(Some(&host), &without("user.email")), Merge);
        assert_eq!(
            judge_config(Some(&host), &without("branch.main.remote")),
            Merge
        );
        assert!(matches!(
            judge_config(Some(&host), &without("core.pager")),
            Hold(_)
        ));
    }

    #[test]
    fn what_the_review_found_merging_silently_is_held() {
        for (extra, why) in [
            ("http.proxy=http://127.0.0.1:18080", "http.proxy"),
            ("http.sslverify=false", "http.sslverify"),
            ("https.proxy=http://127.0.0.1:18080", "https.proxy"),
            (
                "http.https://github.com/.proxy=http://x",
                "http.https://github.com/.proxy",
            ),
            ("http.sslcainfo=/tmp/ca.pem", "http.sslcainfo"),
            ("http.extraheader=Authorization: x", "http.extraheader"),
            ("http.cookiefile=/tmp/c", "http.cookiefile"),
            ("http.sslcert=/tmp/c.pem", "http.sslcert"),
            (
                "remote.origin.url=https://evil.example/p.git",
                "remote.origin.url",
            ),
            (
                "remote.origin.pushurl=https://evil.example/p.git",
                "remote.origin.pushurl",
            ),
            ("remote.pushdefault=evil", "remote.pushdefault"),
            ("branch.main.pushremote=evil", "branch.main.pushremote"),
            (
                "remote.evil.url=https://evil.example/p.git",
                "remote.evil.url",
            ),
            (
                "remote.evil.fetch=+refs/heads/*:refs/remotes/evil/*",
                "remote.evil.fetch",
            ),
            (
                "submodule.lib.url=https://evil.example/l.git",
                "submodule.lib.url",
            ),
            ("commit.template=/tmp/t", "commit.template"),
            ("mailmap.file=/tmp/m", "mailmap.file"),
            ("blame.ignorerevsfile=.revs", "blame.ignorerevsfile"),
            ("fetch.fsckobjects=false", "fetch.fsckobjects"),
            ("transfer.fsckobjects=false", "transfer.fsckobjects"),
            ("core.protectntfs=false", "core.protectntfs"),
            ("core.protecthfs=false", "core.protecthfs"),
            ("core.sparsecheckout=true", "core.sparsecheckout"),
            (
                "extensions.worktreeconfig=true",
                "extensions.worktreeconfig",
            ),
            // A non-`!` alias still runs code through the options git parses in it.
            ("alias.st=-c core.fsmonitor=./x status", "alias.st"),
            ("core.fsmonitor=true", "core.fsmonitor"),
            // A remote name git does not know is taken for a URL.
            (
                "branch.main.remote=https://evil.example/p.git",
                "branch.main.remote",
            ),
            ("branch.feat.remote=evil", "branch.feat.remote"),
            ("extensions.partialclone=evil", "extensions.partialclone"),
            // A fetch that overwrites local branches.
            (
                "remote.origin.fetch=+refs/heads/*:refs/heads/*",
                "remote.origin.fetch",
            ),
            ("remote.origin.fetch=refs/heads/x", "remote.origin.fetch"),
            ("remote.origin.mirror=true", "remote.origin.mirror"),
            // Subsections are case-sensitive: this is another remote.
            (
                "remote.Origin.url=https://evil.example/p.git",
                "remote.Origin.url",
            ),
            ("submodule.x.active=true", "submodule.x.active"),
            ("core.sharedrepository=0666", "core.sharedrepository"),
            ("merge.ff=sometimes", "merge.ff"),
            ("gc.recentobjectshook=./x", "gc.recentobjectshook"),
        ] {
            match existing(extra) {
                Hold(reason) => assert!(reason.contains(why), "{extra}: {reason}"),
                other => panic!("{extra} must be held, got {other:?}"),
            }
        }
    }

    #[test]
    fn keys_that_run_programs_are_refused() {
        for (extra, key) in [
            ("core.fsmonitor=./x", "core.fsmonitor"),
            ("alias.st=!sh -c x", "alias.st"),
            ("core.hookspath=.h", "core.hookspath"),
            ("include.path=../x", "include.path"),
            (
                "url.ext::sh -c x.insteadof=https://",
                "url.ext::sh -c x.insteadof",
            ),
            ("remote.origin.proxy=http://x", "remote.origin.proxy"),
            ("core.pager=sh -c x", "core.pager"),
            ("credential.helper=store", "credential.helper"),
        ] {
            match existing(extra) {
                Refuse(reason) => assert!(reason.contains(key), "{extra}: {reason}"),
                other => panic!("{extra} must be refused, got {other:?}"),
            }
        }
        // A refusal wins over an earlier key that is only held.
        assert!(matches!(
            existing("http.proxy=http://x\ncore.fsmonitor=./x"),
            Refuse(_)
        ));
    }

    #[test]
    fn hold_names_the_first_offending_key_and_why() {
        assert_eq!(
            existing("user.name=U\nhttp.proxy=http://x\nhttp.sslverify=false"),
            Hold("it sets http.proxy, which is not a git setting known to be harmless".into())
        );
    }

    #[test]
    fn the_order_of_a_key_values_counts() {
        let host = cfg("fetch.fsckobjects=false\nfetch.fsckobjects=true");
        let run = cfg("fetch.fsckobjects=true\nfetch.fsckobjects=false");
        assert!(matches!(judge_config(Some(&host), &run), Hold(_)));
        // Removing a check the user turned on is turning it off.
        let host = cfg("transfer.fsckobjects=true");
        assert!(matches!(judge_config(Some(&host), &[]), Hold(_)));
        // An unparseable host file: every key counts as changed, remotes included.
        let run = cfg(HOST);
        assert!(matches!(judge_config(Some(&[]), &run), Refuse(_)));
        let run = cfg("remote.origin.url=https://github.com/u/p.git");
        assert!(matches!(judge_config(Some(&[]), &run), Hold(_)));
    }

    #[test]
    fn a_repository_the_run_made_keeps_its_own_remotes() {
        let clone = "
            core.repositoryformatversion=1
            core.filemode=true
            core.bare=false
            core.logallrefupdates=true
            extensions.objectformat=sha256
            extensions.refstorage=reftable
            remote.origin.url=https://github.com/u/p.git
            remote.origin.fetch=+refs/heads/*:refs/remotes/origin/*
            remote.origin.promisor=true
            remote.origin.partialclonefilter=blob:none
            branch.main.remote=origin
            branch.main.merge=refs/heads/main
            remote.up.url=../up
            remote.up.fetch=+refs/heads/*:refs/remotes/up/*
            user.email=a@b
        ";
        assert_eq!(judge_config(None, &cfg(clone)), Merge);
        for (extra, want) in [
            ("http.proxy=http://127.0.0.1:1", "hold"),
            ("remote.origin.pushurl=https://evil.example/p.git", "hold"),
            ("remote.x.url=ext::sh -c touch% /tmp/x", "hold"),
            ("remote.x.url=-oProxyCommand=x", "hold"),
            ("branch.main.remote=evil", "hold"),
            (
                "remote.nourl.fetch=+refs/heads/*:refs/remotes/nourl/*",
                "hold",
            ),
            ("remote.origin.fetch=+refs/*:refs/*", "hold"),
            ("branch.main.pushremote=origin", "hold"),
            ("core.fsmonitor=./x", "refuse"),
            ("remote.origin.url=file:///srv/p.git", "merge"),
        ] {
            let run = cfg(&format!("{clone}\n{extra}"));
            assert_eq!(kind(&judge_config(None, &run)), want, "{extra}");
        }
    }

    #[test]
    fn every_allowlisted_key_is_a_plain_setting() {
        for a in ALLOWLIST {
            let key = Key::parse(a.name);
            assert!(!key.key.is_empty() && key.section != a.name, "{}", a.name);
            let name = a.name.replace("<name>", "x");
            for value in [Some("true"), Some("false"), Some("0"), Some("x"), None] {
                let admitted = not_admitted(
                    &Key::parse(&name),
                    value,
                    &Context {
                        existing: false,
                        remotes: BTreeSet::from(["x".to_owned()]),
                    },
                )
                .is_none();
                assert!(
                    !admitted || risky_key(&name, value).is_none(),
                    "{name}={value:?} is admitted but runs a program"
                );
            }
        }
    }

    #[test]
    fn gitmodules_changes() {
        let host = "
            submodule.lib.path=lib
            submodule.lib.url=https://github.com/u/lib.git
            submodule.docs.path=docs
            submodule.docs.url=../docs.git
        ";
        let judge = |run: &str| judge_gitmodules(Some(&cfg(host)), &cfg(run));
        let with = |extra: &str| judge(&format!("{host}\n{extra}"));
        assert_eq!(judge(host), Merge);
        assert_eq!(with("submodule.lib.shallow=true"), Merge);
        assert_eq!(
            with("submodule.lib.fetchrecursesubmodules=on-demand"),
            Merge
        );
        assert_eq!(with("submodule.lib.ignore=none"), Merge);
        // Removing a whole submodule (`git rm lib`).
        assert_eq!(
            judge("submodule.docs.path=docs\nsubmodule.docs.url=../docs.git"),
            Merge
        );
        for (extra, want) in [
            (
                "submodule.new.path=new\nsubmodule.new.url=https://x/n.git",
                "hold",
            ),
            ("submodule.lib.url=https://evil.example/lib.git", "hold"),
            ("submodule.lib.branch=evil", "hold"),
            ("submodule.lib.update=rebase", "hold"),
            ("submodule.lib.ignore=all", "hold"),
            ("submodule.lib.path=.git/hooks", "hold"),
            ("core.fsmonitor=./x", "hold"),
            ("submodule.lib.update=!sh -c x", "refuse"),
            ("submodule.new.update=!sh -c x", "refuse"),
        ] {
            assert_eq!(kind(&with(extra)), want, "{extra}");
        }
        // Changing a submodule's URL in place, or dropping only its path.
        assert!(matches!(
            judge(&host.replace("../docs.git", "https://evil.example/d.git")),
            Hold(_)
        ));
        assert!(matches!(
            judge(&host.replace("submodule.lib.path=lib", "")),
            Hold(_)
        ));
        // A clone's `.gitmodules`: every submodule is new to the host.
        assert!(matches!(judge_gitmodules(None, &cfg(host)), Hold(_)));
        assert_eq!(judge_gitmodules(None, &[]), Merge);
    }

    fn entry(p: &str, kind: LeftKind) -> Leave {
        let rel: Vec<&OsStr> = p.split('/').map(OsStr::new).collect();
        judge_git_entry(&rel, kind)
    }

    #[test]
    fn what_git_writes_in_a_git_directory_is_kept() {
        use LeftKind::*;
        for (p, k) in [
            ("HEAD", File),
            ("ORIG_HEAD", File),
            ("FETCH_HEAD", File),
            ("MERGE_HEAD", File),
            ("MERGE_MSG", File),
            ("AUTO_MERGE", File),
            ("CHERRY_PICK_HEAD", File),
            ("REVERT_HEAD", File),
            ("BISECT_LOG", File),
            ("BISECT_START", File),
            ("index", File),
            ("sharedindex.0123abcd", File),
            ("packed-refs", File),
            ("COMMIT_EDITMSG", File),
            ("description", File),
            ("shallow", File),
            ("objects", Dir),
            ("objects/ab/cdef", File),
            ("objects/pack/pack-1.pack", File),
            ("objects/info/packs", File),
            ("objects/info/commit-graph", File),
            ("refs/heads/main", File),
            ("refs/heads/feature/x", File),
            ("refs/stash", File),
            ("refs/heads", File),
            ("reftable/tables.list", File),
            ("logs/HEAD", File),
            ("logs/refs/heads/main", File),
            ("info", Dir),
            ("info/exclude", File),
            ("info/refs", File),
            ("hooks", Dir),
            ("hooks/pre-commit.sample", File),
            ("branches", Dir),
            ("rebase-merge/git-rebase-todo", File),
            ("rebase-apply/0001", File),
            ("sequencer/todo", File),
            ("lfs/objects/ab/cd/abcd", File),
            ("worktrees", Dir),
            ("worktrees/wt", Dir),
            ("worktrees/wt/HEAD", File),
            ("worktrees/wt/index", File),
            ("worktrees/wt/locked", File),
            ("worktrees/wt/logs/HEAD", File),
            ("modules/lib", Dir),
            ("modules/lib/HEAD", File),
            ("modules/lib/objects/ab/cd", File),
            ("modules/libs/foo", Dir),
            ("modules/libs/foo/refs/heads/main", File),
            ("modules/lib/worktrees/w/HEAD", File),
        ] {
            assert_eq!(entry(p, k), Leave::Keep, "{p}");
        }
        for p in [
            "config",
            "config.worktree",
            "worktrees/wt/config.worktree",
            "modules/lib/config",
        ] {
            assert_eq!(entry(p, LeftKind::File), Leave::CheckGitConfig, "{p}");
        }
    }

    #[test]
    fn what_git_obeys_beyond_its_data_waits_or_is_refused() {
        use LeftKind::*;
        for (p, k, want) in [
            ("info/attributes", File, "hold"),
            ("info/sparse-checkout", File, "hold"),
            ("info/grafts", File, "hold"),
            ("remotes/origin", File, "hold"),
            ("branches/origin", File, "hold"),
            ("rr-cache", Dir, "hold"),
            ("unknown", File, "hold"),
            ("sl/config.toml", File, "hold"),
            ("index.lock", File, "hold"),
            ("refs/heads/main.lock", File, "hold"),
            ("worktrees/wt", File, "hold"),
            ("modules/lib/info/attributes", File, "hold"),
            ("modules/lib/evil", File, "hold"),
            ("hooks/pre-commit", File, "refuse"),
            ("hooks/anything", File, "refuse"),
            ("hooks/sub/pre-commit", File, "refuse"),
            ("modules/lib/hooks/post-checkout", File, "refuse"),
            ("modules/a/b/hooks/post-checkout", File, "refuse"),
            ("commondir", File, "refuse"),
            ("worktrees/wt/gitdir", File, "refuse"),
            ("worktrees/wt/commondir", File, "refuse"),
            ("objects/info/alternates", File, "refuse"),
            ("objects/info/http-alternates", File, "refuse"),
            ("refs/heads/x", Symlink, "refuse"),
            ("config", Symlink, "refuse"),
            ("hooks", Symlink, "refuse"),
            ("objects/ab", Other, "refuse"),
        ] {
            let got = match entry(p, k) {
                Leave::Hold(_) => "hold",
                Leave::Refuse(_) => "refuse",
                Leave::Keep => "keep",
                Leave::CheckGitConfig => "check",
            };
            assert_eq!(got, want, "{p}");
        }
    }
}
