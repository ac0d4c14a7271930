//! What a git subcommand does to the work tree: the paths it rewrites (its pathspecs,
//! when it names them and nothing else), or files its text does not name (a branch
//! switch, a merge, a stash pop), or nothing.
//!
//! Options are read as git reads them: long ones by any unambiguous prefix (`--sou` is
//! `--source`), short ones clustered (`-fq`), values attached or in the next word. An
//! option this table does not know, a pathspec with magic or glob characters, or a
//! word only known at run time makes the answer "files the text does not name": the
//! answer may be wider than what git does, never narrower.

use crate::knowledge::Outcome;
use crate::model::Word;

/// What one subcommand does to the work tree.
#[derive(Debug, PartialEq, Eq)]
enum Tree {
    /// Nothing (or the index and refs only).
    Untouched,
    /// These paths, relative to where git runs.
    Paths(Vec<Word>),
    /// Files the text does not name: what git does, in a few words.
    Unnamed(&'static str),
}

/// The options of one subcommand: long names with no value, long names that take one,
/// short letters with no value, short letters that take one.
struct Spec {
    flags: &'static [&'static str],
    values: &'static [&'static str],
    short_flags: &'static str,
    short_values: &'static str,
}

const CHECKOUT: Spec = Spec {
    flags: &[
        "quiet",
        "progress",
        "force",
        "ours",
        "theirs",
        "track",
        "guess",
        "detach",
        "merge",
        "patch",
        "ignore-skip-worktree-bits",
        "ignore-other-worktrees",
        "overwrite-ignore",
        "recurse-submodules",
        "overlay",
        "pathspec-file-nul",
    ],
    values: &["orphan", "conflict", "pathspec-from-file"],
    short_flags: "qfmptl23",
    short_values: "bB",
};

const SWITCH: Spec = Spec {
    flags: &[
        "quiet",
        "progress",
        "force",
        "discard-changes",
        "merge",
        "detach",
        "track",
        "guess",
        "ignore-other-worktrees",
        "recurse-submodules",
    ],
    values: &["create", "force-create", "orphan", "conflict"],
    short_flags: "qfmdt",
    short_values: "cC",
};

const RESTORE: Spec = Spec {
    flags: &[
        "quiet",
        "progress",
        "patch",
        "worktree",
        "staged",
        "ours",
        "theirs",
        "merge",
        "ignore-unmerged",
        "ignore-skip-worktree-bits",
        "recurse-submodules",
        "overlay",
        "pathspec-file-nul",
    ],
    values: &["source", "conflict", "pathspec-from-file"],
    short_flags: "qpWSm23",
    short_values: "s",
};

const RESET: Spec = Spec {
    flags: &[
        "quiet",
        "soft",
        "mixed",
        "hard",
        "merge",
        "keep",
        "recurse-submodules",
        "patch",
        "intent-to-add",
        "pathspec-file-nul",
        "refresh",
    ],
    values: &["pathspec-from-file"],
    short_flags: "qpN",
    short_values: "",
};

const STASH_PUSH: Spec = Spec {
    flags: &[
        "patch",
        "keep-index",
        "staged",
        "include-untracked",
        "all",
        "quiet",
        "pathspec-file-nul",
    ],
    values: &["message", "pathspec-from-file"],
    short_flags: "pkSuaq",
    short_values: "m",
};

/// The words of a subcommand, read with its [`Spec`].
#[derive(Default)]
struct Parsed {
    /// Canonical long names and short letters seen (values dropped).
    opts: Vec<String>,
    /// Words that are not options, before `--`.
    operands: Vec<Word>,
    /// Words after `--`, when there is one.
    after: Option<Vec<Word>>,
    /// An option the spec does not know (or only known at run time).
    unknown: bool,
}

impl Parsed {
    fn has(&self, names: &[&str]) -> bool {
        self.opts.iter().any(|o| names.contains(&o.as_str()))
    }

    /// Every path-like word: operands and what follows `--`.
    fn all_paths(&self) -> Vec<Word> {
        let mut v = self.operands.clone();
        v.extend(self.after.iter().flatten().cloned());
        v
    }
}

/// `name` resolved among `names`: itself, or the one name it is an unambiguous prefix of.
fn resolve<'a>(name: &str, names: &[&'a str]) -> Option<&'a str> {
    if let Some(n) = names.iter().find(|n| **n == name) {
        return Some(n);
    }
    let mut found = names.iter().filter(|n| n.starts_with(name));
    match (found.next(), found.next()) {
        (Some(n), None) if !name.is_empty() => Some(n),
        _ => None,
    }
}

fn parse(rest: &[Word], spec: &Spec) -> Parsed {
    let mut p = Parsed::default();
    let mut i = 0;
    while i < rest.len() {
        let w = &rest[i];
        i += 1;
        let v = w.value.as_str();
        if !w.literal && v.starts_with('-') {
            p.unknown = true;
            continue;
        }
        if v == "--" {
            p.after = Some(rest[i..].to_vec());
            break;
        }
        if let Some(long) = v.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((n, _)) => (n, true),
                None => (long, false),
            };
            let all: Vec<&str> = spec.flags.iter().chain(spec.values).copied().collect();
            let found = resolve(name, &all).or_else(|| {
                // `--no-NAME` negates a flag; it never takes a value.
                let neg = name.strip_prefix("no-")?;
                resolve(neg, spec.flags).map(|_| "negated")
            });
            match found {
                Some(n) => {
                    if spec.values.contains(&n) && !attached {
                        i += 1;
                    }
                    p.opts.push(n.to_owned());
                }
                None => p.unknown = true,
            }
            continue;
        }
        if let Some(cluster) = v.strip_prefix('-')
            && !cluster.is_empty()
        {
            for (k, c) in cluster.char_indices() {
                if spec.short_flags.contains(c) {
                    p.opts.push(c.to_string());
                } else if spec.short_values.contains(c) {
                    p.opts.push(c.to_string());
                    if k + c.len_utf8() == cluster.len() {
                        i += 1;
                    }
                    break;
                } else {
                    p.unknown = true;
                    break;
                }
            }
            continue;
        }
        p.operands.push(w.clone());
    }
    p
}

/// Paths as git would take them, or `Unnamed` when one of them is not a plain path.
fn paths(ws: Vec<Word>, why: &'static str) -> Tree {
    if ws.is_empty() {
        return Tree::Unnamed(why);
    }
    // Every character git's pathspec matching (wildmatch) reads specially: `\` escapes
    // the next one (`r\un.sh` is `run.sh`), `*?[` are globs, `:` starts magic.
    let plain = |w: &Word| {
        w.literal
            && !w.value.is_empty()
            && !w.value.starts_with(':')
            && !w.value.contains(['*', '?', '[', '\\'])
    };
    if ws.iter().all(plain) {
        Tree::Paths(ws)
    } else {
        Tree::Unnamed(why)
    }
}

fn checkout(rest: &[Word]) -> Tree {
    const WHY: &str = "checks out files of another commit";
    let p = parse(rest, &CHECKOUT);
    if p.unknown || p.has(&["pathspec-from-file"]) {
        return Tree::Unnamed(WHY);
    }
    let creates = p.has(&["b", "B", "orphan"]);
    if let Some(after) = &p.after {
        return paths(after.clone(), WHY);
    }
    match p.operands.len() {
        // `git checkout -b NEW`: a new branch at the current commit.
        0 if !p.has(&["force", "f", "merge", "m", "patch", "p"]) => Tree::Untouched,
        0 | 1 => Tree::Unnamed(WHY),
        // `git checkout TREE-ISH PATH…` (or `git checkout PATH PATH…`): every operand may
        // be a path.
        _ if !creates => paths(p.operands, WHY),
        _ => Tree::Unnamed(WHY),
    }
}

fn switch(rest: &[Word]) -> Tree {
    let p = parse(rest, &SWITCH);
    // `git switch -c NEW`: a new branch at the current commit.
    if !p.unknown
        && p.has(&["create", "force-create", "c", "C"])
        && p.operands.is_empty()
        && p.after.is_none()
    {
        return Tree::Untouched;
    }
    Tree::Unnamed("switches the work tree to another commit")
}

fn restore(rest: &[Word]) -> Tree {
    const WHY: &str = "restores files";
    let p = parse(rest, &RESTORE);
    if p.unknown || p.has(&["pathspec-from-file"]) {
        return Tree::Unnamed(WHY);
    }
    paths(p.all_paths(), WHY)
}

fn reset(rest: &[Word]) -> Tree {
    const WHY: &str = "resets the work tree";
    let p = parse(rest, &RESET);
    if p.unknown || p.has(&["hard", "merge", "keep", "pathspec-from-file"]) {
        return Tree::Unnamed(WHY);
    }
    // Without `--hard` (or `--merge`, `--keep`) only the index and HEAD change: no file
    // of the work tree (a later checkout from the index is a rewrite of its own).
    Tree::Untouched
}

fn stash(rest: &[Word]) -> Tree {
    const WHY: &str = "puts the stashed changes (or the last commit's files) back";
    let p = parse(rest, &STASH_PUSH);
    let first = p.operands.first().map(|w| w.value.as_str());
    match first {
        Some("drop" | "clear" | "create" | "store" | "list" | "show") if !p.unknown => {
            Tree::Untouched
        }
        None | Some("push") if !p.unknown && !p.has(&["pathspec-from-file"]) => {
            let mut all = p.all_paths();
            if first.is_some() {
                all.remove(0);
            }
            paths(all, WHY)
        }
        _ => Tree::Unnamed(WHY),
    }
}

fn apply(rest: &[Word]) -> Tree {
    let inspect = rest.iter().any(|w| {
        w.literal
            && matches!(
                w.value.as_str(),
                "--stat" | "--numstat" | "--summary" | "--check"
            )
    });
    let applies = rest
        .iter()
        .any(|w| !w.literal || (w.value.len() >= 4 && "--apply".starts_with(w.value.as_str())));
    if inspect && !applies {
        Tree::Untouched
    } else {
        Tree::Unnamed("applies a patch")
    }
}

fn of(sub: &str, rest: &[Word], operands: &[&Word]) -> Tree {
    let first = operands.first().map(|w| w.value.as_str());
    match sub {
        "checkout" => checkout(rest),
        "switch" => switch(rest),
        "restore" => restore(rest),
        "reset" => reset(rest),
        "stash" => stash(rest),
        "apply" => apply(rest),
        "merge" => Tree::Unnamed("merges another commit's files"),
        "pull" => Tree::Unnamed("merges fetched files"),
        "rebase" => Tree::Unnamed("replays commits onto the work tree"),
        "cherry-pick" => Tree::Unnamed("applies another commit's changes"),
        "revert" => Tree::Unnamed("reverts a commit's changes"),
        "am" => Tree::Unnamed("applies patches from a mailbox"),
        "bisect" if !matches!(first, Some("log" | "visualize" | "view" | "terms" | "help")) => {
            Tree::Unnamed("checks out the commits it tests")
        }
        "sparse-checkout" if first != Some("list") => {
            Tree::Unnamed("changes which files are checked out")
        }
        "submodule" => Tree::Unnamed("checks out submodules"),
        "mergetool" | "difftool" => Tree::Unnamed("lets a configured tool change files"),
        "filter-branch" => Tree::Unnamed("rewrites history and checks it out"),
        "checkout-index" => Tree::Unnamed("writes files from the index"),
        "read-tree" => Tree::Unnamed("may write files from a tree"),
        "bundle" => bundle(rest, operands),
        "config" => {
            // `git config --file FILE …` / `-f FILE` writes FILE, wherever it is.
            let file = rest
                .iter()
                .any(|w| !w.literal || w.value.starts_with("--f") || short_has(&w.value, 'f'));
            if file {
                Tree::Unnamed("may write the file it is given")
            } else {
                Tree::Untouched
            }
        }
        _ if OUTPUTS.contains(&sub) => outputs(sub, rest),
        _ if super::READ_ONLY.contains(&sub) || LEAVES_TREE.contains(&sub) => Tree::Untouched,
        _ => Tree::Unnamed("is not known to leave the work tree alone"),
    }
}

/// Beside git's read-only subcommands (`READ_ONLY` in `git.rs`; those with an output
/// option are read by [`OUTPUTS`] first): subcommands known to write no file of the work
/// tree (the index, refs and objects only), or whose writes the rest of the git table records itself (`mv`, `rm`,
/// `clean`, `clone`, `init`, `worktree add`). Any other subcommand (an alias included)
/// counts as writing files its text does not name.
const LEAVES_TREE: &[&str] = &[
    "status",
    "blame",
    "annotate",
    "grep",
    "commit",
    "push",
    "fetch",
    "add",
    "gc",
    "tag",
    "branch",
    "remote",
    "notes",
    "replace",
    "repack",
    "prune",
    "update-index",
    "commit-tree",
    "reflog",
    "mv",
    "rm",
    "clean",
    "clone",
    "init",
    "worktree",
    "maintenance",
    "send-email",
    "request-pull",
    // Their listing forms only: the others are answered above.
    "bisect",
    "sparse-checkout",
];

/// Subcommands that read only, except for a file named by an output option.
const OUTPUTS: &[&str] = &[
    "diff",
    "log",
    "show",
    "whatchanged",
    "shortlog",
    "range-diff",
    "diff-tree",
    "diff-index",
    "diff-files",
    "format-patch",
    "archive",
];

/// Whether `v` is a cluster of short options (`-kfo`) holding `c`.
fn short_has(v: &str, c: char) -> bool {
    v.strip_prefix('-')
        .is_some_and(|r| !r.starts_with('-') && r.contains(c))
}

/// `git diff --output=F`, `git format-patch -o DIR`, `git archive -o F`: the file (or
/// directory) written, or `Unnamed` for any spelling not read exactly here (a prefix, a
/// cluster, a word known only at run time).
fn outputs(sub: &str, rest: &[Word]) -> Tree {
    const WHY: &str = "writes the output file it is given";
    let short_o = matches!(sub, "format-patch" | "archive");
    let mut files = Vec::new();
    let mut i = 0;
    while i < rest.len() {
        let w = &rest[i];
        i += 1;
        let v = w.value.as_str();
        if !w.literal {
            return Tree::Unnamed(WHY);
        }
        if v == "--" {
            break;
        }
        let value = |f: &str| Word {
            value: f.to_owned(),
            literal: true,
        };
        if v == "--output" || v == "--output-directory" || short_o && v == "-o" {
            match rest.get(i) {
                Some(n) if n.literal => files.push(n.clone()),
                _ => return Tree::Unnamed(WHY),
            }
            i += 1;
        } else if let Some(f) = v
            .strip_prefix("--output=")
            .or_else(|| v.strip_prefix("--output-directory="))
        {
            files.push(value(f));
        } else if v.starts_with("--output-indicator-") {
        } else if v.starts_with("--ou") || short_o && short_has(v, 'o') {
            return Tree::Unnamed(WHY);
        }
    }
    if files.is_empty() {
        Tree::Untouched
    } else {
        Tree::Paths(files)
    }
}

/// `git bundle create FILE …` writes FILE; `verify`, `list-heads`, `unbundle` write no
/// work-tree file.
fn bundle(rest: &[Word], operands: &[&Word]) -> Tree {
    const WHY: &str = "writes a bundle file";
    match operands.first().map(|w| w.value.as_str()) {
        Some("verify" | "list-heads" | "unbundle") if rest.iter().all(|w| w.literal) => {
            Tree::Untouched
        }
        Some("create") => {
            let mut words = rest.iter().skip_while(|w| w.value != "create").skip(1);
            for w in words.by_ref() {
                match w.value.as_str() {
                    _ if !w.literal => return Tree::Unnamed(WHY),
                    "-q"
                    | "--quiet"
                    | "--progress"
                    | "--all-progress"
                    | "--all-progress-implied" => {}
                    v if v.starts_with("--version=") => {}
                    v if v.starts_with('-') && v != "-" => return Tree::Unnamed(WHY),
                    "-" => return Tree::Untouched,
                    _ => return Tree::Paths(vec![w.clone()]),
                }
            }
            Tree::Unnamed(WHY)
        }
        _ => Tree::Unnamed(WHY),
    }
}

/// Where git runs and how its global options read pathspecs.
pub(super) struct At<'a> {
    /// `-C DIR`, else `.`.
    pub repo: &'a Word,
    /// The work tree named by `--work-tree`, `--git-dir` or their variables, if any:
    /// git then writes there, wherever it runs.
    pub worktree: Option<&'a Word>,
    /// A global option, `-c` setting or `GIT_*` variable that may change what a
    /// pathspec means (or one the table does not know).
    pub odd_globals: bool,
}

/// Record what `git SUB REST…` does to the work tree of `at.repo`: its pathspecs or
/// output files as writes (a directory among them as filled), or
/// [`Effects::unnamed_writes`](crate::model::Effects).
pub(super) fn rewrites(o: &mut Outcome, sub: &str, rest: &[Word], operands: &[&Word], at: &At<'_>) {
    let (repo, worktree) = (at.repo, at.worktree);
    let tree = of(sub, rest, operands);
    let tree = match tree {
        Tree::Paths(_) if worktree.is_some() || !repo.literal => {
            Tree::Unnamed("writes into a work tree named elsewhere")
        }
        Tree::Paths(_) if at.odd_globals => {
            Tree::Unnamed("runs with options that change what its paths mean")
        }
        t => t,
    };
    match tree {
        Tree::Untouched => {}
        Tree::Paths(ps) => {
            let ps: Vec<Word> = ps
                .into_iter()
                .map(|w| match repo.value.as_str() {
                    "." => w,
                    _ if w.value.starts_with('/') => w,
                    r => Word::literal(format!("{}/{}", r.trim_end_matches('/'), w.value)),
                })
                .collect();
            o.writes(&ps);
            o.fills(&ps);
        }
        Tree::Unnamed(why) => {
            o.effects.unnamed_writes = Some(format!("`git {sub}` {why}"));
            o.mutate();
            // Where it runs (or the work tree it was pointed at) may lie outside the
            // workspace: filled, when the text names it.
            if repo.value != "." {
                o.fills([repo]);
            }
            if let Some(w) = worktree {
                o.fills([w]);
            }
        }
    }
}

/// Does `sub` refresh the index's stat cache and write it back when it can take the
/// lock (git's "optional locks")? `git status` always does; `git diff` does when it
/// compares with the work tree and found entries whose stat data was stale (`--no-index`
/// never touches a repository); `git describe --dirty`/`--broken` checks the work tree
/// the same way. The answer may be wider than what git does (a `diff --cached` is named
/// too), never narrower.
pub(super) fn refreshes_index(sub: &str, rest: &[Word]) -> bool {
    let has = |p: &str| rest.iter().any(|w| w.value.starts_with(p) || !w.literal);
    match sub {
        "status" => true,
        "diff" => !rest.iter().any(|w| w.value == "--no-index"),
        "describe" => has("--dirty") || has("--broken"),
        _ => false,
    }
}

#[cfg(test)]
#[path = "rewrites_tests.rs"]
mod tests;
