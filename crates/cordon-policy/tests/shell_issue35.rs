//! Issue 35, third pass, judged end to end: the index git refreshes, and git settings
//! that run nothing.
// Test code: a failed setup step should stop the test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use cordon_policy::{Containment, Decision, FakeFs, LoadOptions, Policy, Request, Step, Verdict};

fn fs() -> FakeFs {
    FakeFs::new()
        .dir("/w/proj/src")
        .dir("/w/proj/.git")
        .file("/w/proj/.git/config")
        .file("/w/proj/src/main.rs")
        .file("/w/proj/README.md")
        .file("/home/u/.ssh/id_rsa")
        .file("/home/u/.bashrc")
        .dir("/home/u/other/sub")
        .dir("/home/u/other/.git")
}

fn load(f: &FakeFs, workspace: &str) -> Policy {
    let opts = LoadOptions {
        workspace: workspace.into(),
        home: "/home/u".into(),
        managed: Some("/none".into()),
        ..Default::default()
    };
    Policy::load(&opts, f).expect("config loads")
}

/// The verdict of `cmd` in the workspace `/w/proj`, uncontained.
fn verdict(cmd: &str) -> Verdict {
    verdicts_with(fs(), "", "/w/proj", cmd).0
}

/// The verdict for a call `cordon exec` runs at the full tier.
fn contained_in(cwd: &str, cmd: &str) -> Verdict {
    verdicts_with(fs(), "", cwd, cmd).1
}

/// Operations of `cmd` run in the workspace: kind, target, and whether it is one of the
/// program's own files.
fn ops_of(cmd: &str) -> Vec<(String, String, bool)> {
    let f = fs();
    let policy = load(&f, "/w/proj");
    policy
        .operations(&Request::shell(cmd, Some("/w/proj".into())), &f)
        .ops
        .iter()
        .map(|o| (o.kind.as_str().to_owned(), o.target.display(), o.config))
        .collect()
}

/// The verdicts of `cmd` run in `cwd` (workspace `/w/proj`), uncontained and at the full
/// tier, on `extra` with `policy_toml` as the user's policy file.
fn verdicts_with(extra: FakeFs, policy_toml: &str, cwd: &str, cmd: &str) -> (Verdict, Verdict) {
    let f = extra.file_with(
        "/home/u/.config/cordon/policy.toml",
        1,
        policy_toml.as_bytes(),
    );
    let policy = load(&f, "/w/proj");
    let ops = policy.operations(&Request::shell(cmd, Some(cwd.into())), &f);
    (
        policy
            .judge_with(&ops, Containment::None, false)
            .into_verdict(),
        policy
            .judge_with(&ops, Containment::Full, false)
            .into_verdict(),
    )
}

// Issue 35, third pass: `git status`, `git diff` and `git describe --dirty` refresh the
// index's stat cache and write it back through `index.lock` (the soundness harness's
// largest class of unnamed writes). Named as writes of the repository's own files: a
// workspace repository stays allowed, one outside the workspace is not written silently.
#[test]
fn index_refreshing_git_subcommands_write_the_index() {
    let writes = |cmd: &str| -> Vec<(String, bool)> {
        ops_of(cmd)
            .into_iter()
            .filter(|(k, _, _)| k == "write")
            .map(|(_, t, config)| (t, config))
            .collect()
    };
    for cmd in [
        "git status",
        "git status --short",
        "git -C src diff",
        "cd src && git diff HEAD~1",
        "git --no-pager diff --stat",
        "git describe --dirty",
        "git describe --broken=-x --tags",
        "env FOO=1 git status",
    ] {
        let w = writes(cmd);
        for file in ["/w/proj/.git/index", "/w/proj/.git/index.lock"] {
            assert!(w.contains(&(file.to_owned(), true)), "{cmd}: {w:?}");
        }
        assert_eq!(verdict(cmd).decision, Decision::Allow, "{cmd}");
        assert_eq!(
            contained_in("/w/proj", cmd).decision,
            Decision::Allow,
            "{cmd}"
        );
    }
    // No refresh: git's optional locks turned off, or subcommands that do not check the
    // work tree.
    for cmd in [
        "git --no-optional-locks status",
        "GIT_OPTIONAL_LOCKS=0 git status",
        "git log -1",
        "git describe --tags",
        "git diff --no-index a b",
        "git rev-parse HEAD",
    ] {
        assert!(writes(cmd).is_empty(), "{cmd}: {:?}", writes(cmd));
    }
    // A repository outside the workspace: the index write meets `write_outside`, so a
    // policy that allows reads outside still asks before git writes there.
    let w = writes("git -C /home/u/other/sub status");
    assert!(
        w.contains(&("/home/u/other/.git/index".to_owned(), false)),
        "{w:?}"
    );
    let (check, _) = verdicts_with(
        fs(),
        "[defaults]\nread_outside = \"allow\"\n",
        "/w/proj",
        "git -C /home/u/other/sub status",
    );
    assert_eq!(check.decision, Decision::Ask, "{check:#?}");
    let (check, _) = verdicts_with(
        fs(),
        "[defaults]\nread_outside = \"allow\"\n",
        "/home/u/other",
        "git diff",
    );
    assert_eq!(check.decision, Decision::Ask, "{check:#?}");
    // An index that is a hard link of a guarded file is that file.
    let linked = fs()
        .file("/home/u/.ssh/id_ed25519")
        .hard_link("/w/proj/.git/index", "/home/u/.ssh/id_ed25519");
    let (check, full) = verdicts_with(linked, "", "/w/proj", "git status");
    for v in [check, full] {
        assert_eq!(v.decision, Decision::Deny, "{v:#?}");
        assert_eq!(v.source.step, Step::Guard, "{v:#?}");
    }
}

// A linked worktree or submodule: `.git` is a file naming the git directory, where git
// writes the index. The workspace's own worktree stays allowed; a `.git` file sending
// git to a guarded directory is refused.
#[test]
fn index_refresh_follows_a_git_file() {
    let worktree = fs().dir("/w/proj/wt").file_with(
        "/w/proj/wt/.git",
        1,
        b"gitdir: /home/u/other/.git/worktrees/wt\n",
    );
    let f = worktree.clone();
    let policy = load(&f, "/w/proj/wt");
    let ops = policy.operations(&Request::shell("git status", Some("/w/proj/wt".into())), &f);
    let targets: Vec<String> = ops
        .ops
        .iter()
        .filter(|o| o.kind.as_str() == "write")
        .map(|o| o.target.display())
        .collect();
    assert!(
        targets.contains(&"/home/u/other/.git/worktrees/wt/index".to_owned()),
        "{targets:?}"
    );
    let v = policy
        .judge_with(&ops, Containment::None, false)
        .into_verdict();
    assert_eq!(v.decision, Decision::Allow, "{v:#?}");
    let to_ssh = fs().dir("/w/proj/wt").dir("/home/u/.ssh").file_with(
        "/w/proj/wt/.git",
        1,
        b"gitdir: /home/u/.ssh\n",
    );
    let (check, full) = verdicts_with(to_ssh, "", "/w/proj/wt", "git status");
    for v in [check, full] {
        assert_eq!(v.decision, Decision::Deny, "{v:#?}");
    }
}

// Issue 35, third pass: `git config` setting a key that runs nothing (`user.email`) is no
// protected write of git's configuration: asked outside the workspace, left to the
// sandbox at the full tier (whose HOME is its own). Keys that run programs, values only
// known at run time, other files and links to them stay refused.
#[test]
fn plain_git_settings_are_not_protected_writes() {
    for cmd in [
        "git config --global user.email \"dev@example.com\"",
        "git config --global init.defaultBranch main",
        "git config --global color.ui auto",
    ] {
        let v = verdict(cmd);
        assert_eq!(v.decision, Decision::Ask, "{cmd}\n{v:#?}");
        assert_eq!(
            contained_in("/w/proj", cmd).decision,
            Decision::Allow,
            "{cmd}"
        );
    }
    for cmd in [
        "git config --global core.pager 'sh -c x'",
        "git config --global include.path /tmp/x",
        "git config --global http.proxy http://evil.example:8080",
        "git config --global http.sslVerify false",
        "git config --global safe.directory '*'",
        "git config --global color.ui.x y",
        "git config --global user.email \"$EMAIL\"",
        "git config --global \"$KEY\" x",
        "git config --file ~/.bashrc user.email x",
        "git config -f ~/.bashrc user.email x",
        "echo '[user]' >> ~/.gitconfig",
    ] {
        for v in [verdict(cmd), contained_in("/w/proj", cmd)] {
            assert_eq!(v.decision, Decision::Deny, "{cmd}\n{v:#?}");
        }
    }
    // A repository's `.git/config` keeps its guard; at the full tier the merge judges it.
    let cmd = "git config user.email dev@example.com";
    assert_eq!(verdict(cmd).decision, Decision::Deny, "{cmd}");
    assert_eq!(
        contained_in("/w/proj", cmd).decision,
        Decision::Allow,
        "{cmd}"
    );
    // ~/.gitconfig a symbolic or hard link of a guarded file: judged as that file.
    for linked in [
        fs().symlink("/home/u/.gitconfig", "/home/u/.bashrc"),
        fs().hard_link("/home/u/.gitconfig", "/home/u/.ssh/id_rsa"),
    ] {
        let (check, full) =
            verdicts_with(linked, "", "/w/proj", "git config --global user.email x");
        for v in [check, full] {
            assert_eq!(v.decision, Decision::Deny, "{v:#?}");
        }
    }
}
