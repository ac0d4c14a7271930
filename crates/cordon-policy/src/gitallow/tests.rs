use super::allowlist::ALLOWLIST;
use super::config::{Context, Key, not_admitted};
use super::*;
use crate::gitconfig::risky_key;
use GitConfigVerdict::{Hold, Merge, Refuse};
use std::collections::BTreeSet;

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

/// F2: a forged interactive-rebase state with an `exec` line lands, and the host's `git
/// rebase --continue` runs it. The state of an operation in progress holds commands.
#[test]
fn rebase_and_sequencer_state_waits_for_review() {
    use LeftKind::*;
    for (rel, kind) in [
        ("rebase-merge", Dir),
        ("rebase-merge/git-rebase-todo", File),
        ("rebase-merge/done", File),
        ("REBASE-MERGE/git-rebase-todo", File),
        ("rebase-apply", Dir),
        ("rebase-apply/0001", File),
        ("sequencer/todo", File),
        ("modules/sub/rebase-merge/git-rebase-todo", File),
        ("worktrees/wt/rebase-merge/git-rebase-todo", File),
    ] {
        let comps: Vec<&OsStr> = rel.split('/').map(OsStr::new).collect();
        assert!(
            matches!(judge_git_entry(&comps, kind), Leave::Hold(_)),
            "{rel} must be held, got {:?}",
            judge_git_entry(&comps, kind)
        );
    }
}
