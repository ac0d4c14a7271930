//! The allowlist of git settings a run may change without review, each with why it is
//! harmless.

/// What values an allowlisted key admits, and whether a run may remove it.
#[derive(Debug, Clone, Copy)]
pub(super) enum Values {
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
pub(super) struct Allowed {
    pub(super) name: &'static str,
    pub(super) values: Values,
    pub(super) why: &'static str,
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
pub(super) const ALLOWLIST: &[Allowed] = &[
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
