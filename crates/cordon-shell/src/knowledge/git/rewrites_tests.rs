//! Tests of [`super`]: what each git subcommand is recorded as writing.

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
fn a_pathspec_git_reads_specially_is_the_whole_tree() {
    for args in [
        r"evil -- r\un.sh",
        r"evil r\un.sh",
        r"evil -- run\.sh",
        "evil -- r[u]n.sh",
        "evil -- ru?.sh",
        "evil -- :(icase)RUN.SH",
    ] {
        assert!(unnamed("checkout", args), "git checkout {args}");
    }
    assert!(unnamed("restore", r"--source evil r\un.sh"));
    assert!(unnamed("stash", r"push -- r\un.sh"));
}

#[test]
fn a_subcommand_not_known_to_leave_the_tree_alone_writes_it() {
    for (sub, args) in [
        ("frobnicate", "run.sh"),
        ("my-alias", ""),
        ("bundle", "create"),
        ("bundle", "create --unknown run.sh HEAD"),
        ("bundle", "frob"),
        ("config", "--file run.sh a.b c"),
        ("config", "-f run.sh a.b c"),
        ("config", "--fil=run.sh a.b c"),
        ("diff", "--out=run.sh"),
        ("diff", "--outp run.sh"),
        ("format-patch", "-korun.sh HEAD~1"),
        ("format-patch", "--output-dir run.sh HEAD~1"),
        ("archive", "--ou=run.sh HEAD"),
        ("archive", "-orun.sh HEAD"),
        ("fast-import", ""),
        ("merge-file", "a b c"),
        ("update-ref", "x y"),
    ] {
        assert!(unnamed(sub, args), "git {sub} {args}");
    }
    for (sub, args) in [
        ("bundle", "create run.sh HEAD"),
        ("bundle", "create -q run.sh HEAD"),
        ("diff", "--output=run.sh"),
        ("diff", "--output run.sh"),
        ("log", "-p --output=run.sh"),
        ("format-patch", "-o run.sh HEAD~1"),
        ("format-patch", "--output-directory=run.sh HEAD~1"),
        ("archive", "-o run.sh HEAD"),
        ("archive", "--output=run.sh HEAD"),
    ] {
        assert_eq!(named(sub, args), ["run.sh"], "git {sub} {args}");
    }
    for (sub, args) in [
        ("status", ""),
        ("diff", "--output-indicator-new=+ HEAD"),
        ("log", "--oneline"),
        ("rev-parse", "HEAD"),
        ("config", "--get a.b"),
        ("config", "user.name x"),
        ("bundle", "verify x.bundle"),
        ("commit", "-m x"),
    ] {
        assert_eq!(tree(sub, args), Tree::Untouched, "git {sub} {args}");
    }
}

#[test]
fn a_path_under_dash_c_is_taken_from_there() {
    let mut o = Outcome::read_only();
    let rest = words("evil -- run.sh");
    let sub = Word::literal("sub");
    let at = |repo, worktree| At {
        repo,
        worktree,
        odd_globals: false,
    };
    rewrites(&mut o, "checkout", &rest, &[], &at(&sub, None));
    assert_eq!(o.effects.writes, words("sub/run.sh"));
    assert_eq!(o.effects.fills, words("sub/run.sh"));
    assert_eq!(o.effects.unnamed_writes, None);
    let mut o = Outcome::read_only();
    let (dot, elsewhere) = (Word::literal("."), Word::literal("/elsewhere"));
    rewrites(&mut o, "checkout", &rest, &[], &at(&dot, Some(&elsewhere)));
    assert!(o.effects.unnamed_writes.is_some());
    assert_eq!(o.effects.fills, words("/elsewhere"));
    let mut o = Outcome::read_only();
    let odd = At {
        repo: &Word::literal("."),
        worktree: None,
        odd_globals: true,
    };
    rewrites(&mut o, "checkout", &words("evil -- RUN.SH"), &[], &odd);
    assert!(o.effects.unnamed_writes.is_some());
    assert!(o.effects.writes.is_empty());
}
