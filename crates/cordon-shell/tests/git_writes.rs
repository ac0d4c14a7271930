//! What a `git` line is recorded as writing in the work tree, read through the whole
//! analyzer (global options, variables, subcommands): named paths only when git takes
//! them as written, else "files the text does not name".

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code

use cordon_shell::analyze;

/// The git command of `text`: its written paths and whether it writes unnamed files.
fn git(text: &str) -> (Vec<String>, bool) {
    let a = analyze(text);
    assert!(a.parse_error.is_none(), "{text}: {:?}", a.parse_error);
    let c = a
        .commands
        .iter()
        .find(|c| c.program.as_ref().is_some_and(|p| p.value == "git"))
        .unwrap_or_else(|| panic!("{text}: no git command"));
    let writes = c.effects.writes.iter().map(|w| w.value.clone()).collect();
    (writes, c.effects.unnamed_writes.is_some())
}

#[test]
fn options_and_variables_that_change_pathspecs_make_the_whole_tree_written() {
    for text in [
        "git --icase-pathspecs checkout evil -- RUN.SH",
        "git --glob-pathspecs checkout evil -- run.sh",
        "git --noglob-pathspecs checkout evil -- run.sh",
        "git --literal-pathspecs restore --source evil run.sh",
        "GIT_ICASE_PATHSPECS=1 git checkout evil -- RUN.SH",
        "GIT_GLOB_PATHSPECS=1 git checkout evil -- run.sh",
        "GIT_CONFIG_PARAMETERS=\"'core.ignorecase'='true'\" git checkout evil -- RUN.SH",
        "git -c core.ignorecase=true checkout evil -- RUN.SH",
        "git -ccore.ignorecase=true checkout evil -- RUN.SH",
        "git --config-env=core.ignorecase=V checkout evil -- RUN.SH",
        "git --a-future-option checkout evil -- run.sh",
        r"git checkout evil -- 'r\un.sh'",
        r#"git checkout evil -- "r\\un.sh""#,
        "git bundle create \"$OUT\" HEAD",
        "git \"$SUB\" run.sh",
    ] {
        let (writes, unnamed) = git(text);
        assert!(unnamed, "{text}: writes {writes:?}, nothing unnamed");
    }
    // Plain spellings keep naming their path.
    for text in [
        "git checkout evil -- run.sh",
        "git --no-pager checkout evil -- run.sh",
        r"git checkout evil -- r\un.sh",
        "git bundle create run.sh HEAD",
    ] {
        let (writes, unnamed) = git(text);
        assert!(
            !unnamed && writes.iter().any(|w| w == "run.sh"),
            "{text}: {writes:?} {unnamed}"
        );
    }
}

#[test]
fn a_template_plants_hooks_in_the_new_repository() {
    for (text, hooks) in [
        ("git init --template=tpl", "./.git/hooks"),
        ("git init --templ=tpl", "./.git/hooks"),
        ("git init --template tpl .", "./.git/hooks"),
        ("git clone --template=tpl https://h/x.git y", "y/.git/hooks"),
    ] {
        let (writes, _) = git(text);
        assert!(
            writes
                .iter()
                .any(|w| w.ends_with(".git/hooks") && w.contains(hooks.trim_start_matches("./"))),
            "{text}: {writes:?}"
        );
    }
    // Without a template, no hooks are named (git's own template holds only samples).
    let (writes, _) = git("git init");
    assert!(!writes.iter().any(|w| w.contains("hooks")), "{writes:?}");
}

/// Whether the git command of `text` refreshes (and writes back) the index.
fn refreshes(text: &str) -> bool {
    let a = analyze(text);
    a.commands
        .iter()
        .find(|c| c.program.as_ref().is_some_and(|p| p.value == "git"))
        .unwrap_or_else(|| panic!("{text}: no git command"))
        .effects
        .git_refreshes_index
}

// Issue 35, third pass: the read-only subcommands that write `.git/index` back.
#[test]
fn status_diff_and_describe_dirty_refresh_the_index() {
    for text in [
        "git status",
        "git -C src status --porcelain",
        "git diff HEAD~1 -- src",
        "git --no-pager diff --stat",
        "git describe --dirty",
        "git describe --broken",
        "git diff \"$OPT\"",
        "git describe \"$OPT\"",
        "GIT_OPTIONAL_LOCKS=1 git status",
    ] {
        assert!(refreshes(text), "{text}");
    }
    for text in [
        "git --no-optional-locks status",
        "GIT_OPTIONAL_LOCKS=0 git status",
        "git log -1",
        "git describe --tags",
        "git diff --no-index a b",
        "git show HEAD",
        "git commit -m x",
    ] {
        assert!(!refreshes(text), "{text}");
    }
}

// `git config --file F` writes F, not the repository's config.
#[test]
fn git_config_names_the_file_it_writes() {
    for (text, file) in [
        ("git config --file ~/.bashrc user.email x", "~/.bashrc"),
        ("git config -f ~/.bashrc user.email x", "~/.bashrc"),
        ("git config --file=cfg user.email x", "cfg"),
        ("git config --global user.email x", "~/.gitconfig"),
        ("git config user.email x", ".git/config"),
        ("git config --worktree user.email x", ".git/config.worktree"),
    ] {
        let (writes, _) = git(text);
        assert!(writes.iter().any(|w| w == file), "{text}: {writes:?}");
    }
}
