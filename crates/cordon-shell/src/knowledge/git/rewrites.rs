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
    let plain = |w: &Word| {
        w.literal
            && !w.value.is_empty()
            && !w.value.starts_with(':')
            && !w.value.contains(['*', '?', '['])
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
        _ => Tree::Untouched,
    }
}

/// Record what `git SUB REST…` does to the work tree of `repo` (`-C DIR`, else `.`):
/// its pathspecs as writes (a directory among them as filled), or
/// [`Effects::unnamed_writes`](crate::model::Effects). `worktree` is the work tree
/// named by `--work-tree`, `--git-dir` or their variables, if any: git then writes
/// there, wherever it runs.
pub(super) fn rewrites(
    o: &mut Outcome,
    sub: &str,
    rest: &[Word],
    operands: &[&Word],
    repo: &Word,
    worktree: Option<&Word>,
) {
    let tree = of(sub, rest, operands);
    let tree = match tree {
        Tree::Paths(_) if worktree.is_some() || !repo.literal => {
            Tree::Unnamed("writes into a work tree named elsewhere")
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

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<Word> {
        s.split_whitespace().map(Word::literal).collect()
    }

    fn tree(sub: &str, args: &str) -> Tree {
        let rest = words(args);
        let operands: Vec<&Word> = rest
            .iter()
            .take_while(|w| w.value != "--")
            .filter(|w| !w.value.starts_with('-'))
            .collect();
        of(sub, &rest, &operands)
    }

    fn named(sub: &str, args: &str) -> Vec<String> {
        match tree(sub, args) {
            Tree::Paths(ps) => ps.into_iter().map(|w| w.value).collect(),
            other => panic!("`git {sub} {args}`: {other:?}"),
        }
    }

    fn unnamed(sub: &str, args: &str) -> bool {
        matches!(tree(sub, args), Tree::Unnamed(_))
    }

    #[test]
    fn checkout_names_its_pathspecs_or_the_whole_tree() {
        assert_eq!(named("checkout", "evil -- run.sh"), ["run.sh"]);
        assert_eq!(
            named("checkout", "-f evil -- run.sh a/b"),
            ["run.sh", "a/b"]
        );
        assert_eq!(named("checkout", "evil run.sh"), ["evil", "run.sh"]);
        assert_eq!(named("checkout", "--theirs -- x"), ["x"]);
        assert!(unnamed("checkout", "evil"));
        assert!(unnamed("checkout", "evil --"));
        assert!(unnamed("checkout", "-f"));
        assert!(unnamed("checkout", "--force"));
        assert!(unnamed("checkout", "--fo"));
        assert!(unnamed("checkout", "-b new evil"));
        assert!(unnamed("checkout", "-bnew evil"));
        assert_eq!(tree("checkout", "--orphan new"), Tree::Untouched);
        assert!(unnamed("checkout", "--orph=new evil"));
        assert!(unnamed("checkout", "--pathspec-from-file=f"));
        assert!(unnamed("checkout", "--pathspec-f f evil"));
        assert!(unnamed("checkout", "evil -- *.sh"));
        assert!(unnamed("checkout", "evil -- :/run.sh"));
        assert!(unnamed("checkout", "--unknown-option evil -- run.sh"));
        assert!(unnamed("checkout", "-X evil -- run.sh"));
        assert_eq!(tree("checkout", "-b new"), Tree::Untouched);
        assert_eq!(tree("checkout", ""), Tree::Untouched);
    }

    #[test]
    fn restore_reset_and_switch() {
        assert_eq!(named("restore", "--source evil run.sh"), ["run.sh"]);
        assert_eq!(named("restore", "-s evil a b"), ["a", "b"]);
        assert_eq!(named("restore", "--sou=evil run.sh"), ["run.sh"]);
        assert_eq!(named("restore", "-sevil -- run.sh"), ["run.sh"]);
        assert!(unnamed("restore", "--source evil"));
        assert!(unnamed("restore", "--sou evil --pathspec-from-file=f"));
        assert!(unnamed("reset", "--hard"));
        assert!(unnamed("reset", "--hard evil"));
        assert!(unnamed("reset", "--ha evil"));
        assert!(unnamed("reset", "--merge HEAD~1"));
        assert!(unnamed("reset", "--kee HEAD~1"));
        assert!(unnamed("reset", "--m HEAD~1"), "ambiguous: mixed or merge");
        assert_eq!(tree("reset", "--soft HEAD~1"), Tree::Untouched);
        assert_eq!(tree("reset", "HEAD -- run.sh"), Tree::Untouched);
        assert_eq!(tree("reset", ""), Tree::Untouched);
        assert!(unnamed("switch", "evil"));
        assert!(unnamed("switch", "-c new evil"));
        assert!(unnamed("switch", "--orphan new"));
        assert_eq!(tree("switch", "-c new"), Tree::Untouched);
        assert_eq!(tree("switch", "--create=new"), Tree::Untouched);
    }

    #[test]
    fn merges_stashes_patches() {
        for (sub, args) in [
            ("merge", "evil"),
            ("cherry-pick", "abc"),
            ("revert", "abc"),
            ("pull", ""),
            ("rebase", "main"),
            ("am", "x.mbox"),
            ("apply", "x.patch"),
            ("apply", "--check --apply x.patch"),
            ("stash", "pop"),
            ("stash", "apply"),
            ("stash", ""),
            ("stash", "push"),
            ("stash", "save msg"),
            ("bisect", "start"),
            ("submodule", "update"),
        ] {
            assert!(unnamed(sub, args), "git {sub} {args}");
        }
        assert_eq!(named("stash", "push -- run.sh"), ["run.sh"]);
        assert_eq!(tree("stash", "drop"), Tree::Untouched);
        assert_eq!(tree("apply", "--stat x.patch"), Tree::Untouched);
        assert_eq!(tree("commit", "-m x"), Tree::Untouched);
        assert_eq!(tree("bisect", "log"), Tree::Untouched);
    }

    #[test]
    fn a_path_under_dash_c_is_taken_from_there() {
        let mut o = Outcome::read_only();
        let rest = words("evil -- run.sh");
        rewrites(&mut o, "checkout", &rest, &[], &Word::literal("sub"), None);
        assert_eq!(o.effects.writes, words("sub/run.sh"));
        assert_eq!(o.effects.fills, words("sub/run.sh"));
        assert_eq!(o.effects.unnamed_writes, None);
        let mut o = Outcome::read_only();
        rewrites(
            &mut o,
            "checkout",
            &rest,
            &[],
            &Word::literal("."),
            Some(&Word::literal("/elsewhere")),
        );
        assert!(o.effects.unnamed_writes.is_some());
        assert_eq!(o.effects.fills, words("/elsewhere"));
    }
}
