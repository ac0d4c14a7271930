//! `git`: global options that run programs (`-c` with a key that names a command,
//! `--config-env`, `--exec-path`, `--paginate`), subcommands that run repository hooks
//! or configured programs, and the ones that reach the network, write or delete.
//! `GIT_SSH_COMMAND`, `GIT_PAGER` and the other variables git reads a command from are
//! analyzed as the command they name.

use super::{Entry, Invocation, Outcome};
use crate::model::{Class, RepoConfigUse, Word};

mod mutating;
mod rewrites;

use mutating::mutating_sub;

pub(super) const ENTRIES: &[Entry] = &[Entry {
    names: &["git"],
    classify: git,
}];

/// Subcommands that only read and never run configured programs.
const READ_ONLY: &[&str] = &[
    "rev-parse",
    "ls-files",
    "ls-tree",
    "describe",
    "shortlog",
    "cat-file",
    "rev-list",
    "show-ref",
    "merge-base",
    "name-rev",
    "for-each-ref",
    "count-objects",
    "var",
    "help",
    "version",
    "check-ignore",
    "check-attr",
    "verify-commit",
    "verify-tag",
    "whatchanged",
    "cherry",
    "show-branch",
    "range-diff",
    "diff-tree",
    "diff-index",
    "diff-files",
    "ls-remote",
];

/// Subcommands that run configured programs only when repository config says so
/// (fsmonitor, textconv, external diff, pager, filters).
const IF_CONFIGURED: &[&str] = &["status", "diff", "show", "blame", "annotate", "grep", "log"];

/// Subcommands that run hooks or configured programs as part of what they do.
const HOOKS: &[&str] = &[
    "commit",
    "checkout",
    "switch",
    "merge",
    "rebase",
    "am",
    "push",
    "fetch",
    "pull",
    "clone",
    "cherry-pick",
    "revert",
    "gc",
    "difftool",
    "mergetool",
    "bisect",
    "filter-branch",
    "submodule",
    "worktree",
    "stash",
    "restore",
    "reset",
    "add",
    "rm",
    "mv",
    "apply",
    "init",
    "notes",
    "sparse-checkout",
    "maintenance",
    "send-email",
    "request-pull",
    "format-patch",
    "archive",
    "bundle",
    "tag",
    "branch",
    "remote",
    "config",
    "clean",
    "update-index",
    "commit-tree",
    "read-tree",
    "checkout-index",
    "replace",
    "repack",
    "prune",
];

/// What setting a git config key does (see [`crate::gitkeys`]).
pub(super) use crate::gitkeys::GitKey as KeyUse;

/// Classify `git -c NAME=VALUE` (and `git config NAME VALUE`), from the one table of
/// [`crate::gitkeys`].
pub(super) fn config_key(name: &str, value: Option<&str>) -> KeyUse {
    crate::gitkeys::classify(name, value)
}

/// Environment variables git reads a command from: analyzed as that command.
const CODE_VARIABLES: &[&str] = &[
    "GIT_SSH_COMMAND",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_EXTERNAL_DIFF",
    "GIT_ASKPASS",
    "GIT_SSH",
    "GIT_PROXY_COMMAND",
    "PAGER",
    "EDITOR",
    "VISUAL",
];

/// What git's global options, settings and variables say, before the subcommand.
struct Globals {
    /// The repository git works in (`-C DIR`, joined), `.` by default.
    repo: Word,
    /// A work tree named by an option or a variable: git writes there.
    elsewhere: Option<Word>,
    /// A global option, setting or variable that may change what a pathspec means
    /// (`--icase-pathspecs`, `GIT_GLOB_PATHSPECS`, `-c core.ignorecase=…`, or one this
    /// table does not know): named pathspecs are then not the paths written.
    odd_globals: bool,
    /// `GIT_OPTIONAL_LOCKS=0` / `--no-optional-locks` turn this off: no index refresh
    /// is written back.
    optional_locks: bool,
}

impl Globals {
    /// git works on another tree: the work tree named, else (`--git-dir`: a repository
    /// elsewhere, its work tree the current directory unless one was named) `.`.
    fn point_elsewhere(&mut self, work_tree: Option<Word>) {
        match work_tree {
            Some(w) => self.elsewhere = Some(w),
            None => {
                self.elsewhere.get_or_insert_with(|| Word::literal("."));
            }
        }
    }
}

fn git(inv: &Invocation<'_>) -> Outcome {
    let args = inv.args;
    let mut o = Outcome::read_only();
    let mut g = globals_from_variables(inv.assignments, &mut o);
    let mut i = 0;
    while i < args.len() {
        match global_option(args, i, &mut g, &mut o) {
            Some(next) => i = next,
            None => break,
        }
    }
    let Some(sub) = args.get(i) else {
        return o;
    };
    if !sub.literal {
        o.effects.class = Class::Unknown;
        o.effects.unnamed_writes = Some("a `git` subcommand known only at run time".into());
        return o;
    }
    let sub = sub.value.as_str();
    let rest = &args[i + 1..];
    let after_dashdash: Vec<Word> = rest
        .iter()
        .skip_while(|w| w.value != "--")
        .skip(1)
        .cloned()
        .collect();
    o.reads([&g.repo]);
    o.effects.git_repository = Some(g.repo.clone());
    o.effects.git_refreshes_index = g.optional_locks && rewrites::refreshes_index(sub, rest);
    o.reads(&after_dashdash);
    options_anywhere(&mut o, sub, rest);

    let operands: Vec<&Word> = rest
        .iter()
        .take_while(|w| w.value != "--")
        .filter(|w| !w.value.starts_with('-'))
        .collect();

    // Path operands: what `git add` stages, what `git diff` compares (with
    // `--no-index` any two files; otherwise a revision or a path, read either way),
    // what `git show` is given (a revision, or a path git resolves in the work tree).
    if matches!(sub, "add" | "diff" | "difftool" | "show") {
        o.reads(operands.iter().copied());
    }

    let listing = matches!(
        sub,
        "branch"
            | "tag"
            | "remote"
            | "stash"
            | "worktree"
            | "notes"
            | "submodule"
            | "config"
            | "reflog"
    ) && is_listing(sub, rest);
    if !listing {
        let at = rewrites::At {
            repo: &g.repo,
            worktree: g.elsewhere.as_ref(),
            odd_globals: g.odd_globals,
        };
        rewrites::rewrites(&mut o, sub, rest, &operands, &at);
    }
    subcommand(&mut o, sub, rest, &operands);
    o
}

/// What the variables set for git say: one that names a program is that program's
/// code; `GIT_WORK_TREE`, `GIT_DIR` and `GIT_COMMON_DIR` send it elsewhere; any `GIT_`
/// variable may change what a pathspec means.
fn globals_from_variables(assignments: &[(String, Word)], o: &mut Outcome) -> Globals {
    for (name, value) in assignments {
        if CODE_VARIABLES.contains(&name.as_str()) {
            o.code("git", name, value);
        }
    }
    let mut g = Globals {
        repo: Word::literal("."),
        elsewhere: None,
        odd_globals: false,
        optional_locks: true,
    };
    for (name, value) in assignments {
        if name == "GIT_OPTIONAL_LOCKS" && value.literal && value.value == "0" {
            g.optional_locks = false;
        }
        if name.starts_with("GIT_") {
            g.odd_globals = true;
        }
        match name.as_str() {
            "GIT_WORK_TREE" => g.elsewhere = Some(value.clone()),
            "GIT_DIR" | "GIT_COMMON_DIR" => {
                g.elsewhere.get_or_insert_with(|| Word::literal("."));
            }
            _ => {}
        }
    }
    g
}

/// One global option at `args[i]` (before the subcommand): what it sets, and the index
/// of the word after it; `None` at the subcommand.
fn global_option(args: &[Word], i: usize, g: &mut Globals, o: &mut Outcome) -> Option<usize> {
    let a = args[i].value.as_str();
    match a {
        "-C" => {
            if let Some(d) = args.get(i + 1) {
                g.repo = repo_in(&g.repo, d);
            }
            Some(i + 2)
        }
        "--work-tree" | "--git-dir" => {
            let w = args
                .get(i + 1)
                .cloned()
                .unwrap_or_else(|| Word::literal("."));
            g.point_elsewhere((a == "--work-tree").then_some(w));
            Some(i + 2)
        }
        "-c" => {
            g.odd_globals = true;
            if let Some(kv) = args.get(i + 1) {
                config_option(o, kv);
            }
            Some(i + 2)
        }
        "--namespace" | "--super-prefix" | "--list-cmds" | "--attr-source" => Some(i + 2),
        "-p" | "--paginate" => {
            o.exec("git", a, "runs the configured pager");
            Some(i + 1)
        }
        _ if a.starts_with("--config-env") => {
            g.odd_globals = true;
            Some(config_env(args, i, o))
        }
        _ if a.starts_with("-c") && a.len() > 2 => {
            // `-ckey=value`, attached.
            g.odd_globals = true;
            config_option(
                o,
                &Word {
                    value: a[2..].to_owned(),
                    literal: args[i].literal,
                },
            );
            Some(i + 1)
        }
        _ if a.starts_with("--exec-path") => {
            if a.contains('=') {
                o.exec("git", "--exec-path", a);
            }
            Some(i + 1)
        }
        _ if a.starts_with("--git-dir=") || a.starts_with("--work-tree=") => {
            o.effects.class = Class::Unknown;
            g.point_elsewhere(a.strip_prefix("--work-tree=").map(|w| Word {
                value: w.to_owned(),
                literal: args[i].literal,
            }));
            Some(i + 1)
        }
        "--no-optional-locks" => {
            g.optional_locks = false;
            Some(i + 1)
        }
        "-P"
        | "--no-pager"
        | "--no-replace-objects"
        | "--bare"
        | "--no-advice"
        | "--no-lazy-fetch" => Some(i + 1),
        _ if a.starts_with('-') => {
            g.odd_globals = true;
            Some(i + 1)
        }
        _ if !args[i].literal => {
            g.odd_globals = true;
            None
        }
        _ => None,
    }
}

/// The repository `-C d` moves to from `repo`: `-C a -C b` is `a/b`.
fn repo_in(repo: &Word, d: &Word) -> Word {
    match repo.value.as_str() {
        "." => d.clone(),
        _ if d.value.starts_with('/') => d.clone(),
        r => Word {
            value: format!("{}/{}", r.trim_end_matches('/'), d.value),
            literal: repo.literal && d.literal,
        },
    }
}

/// `--config-env=NAME=ENVVAR` (or its value in the next word) at `args[i]`: a setting
/// whose value comes from the environment, run when the key names a program. Returns the
/// index of the word after it.
fn config_env(args: &[Word], i: usize, o: &mut Outcome) -> usize {
    let a = args[i].value.as_str();
    let spec = match a.strip_prefix("--config-env=") {
        Some(s) => s,
        None => args.get(i + 1).map(|w| w.value.as_str()).unwrap_or(""),
    };
    let key = spec.split('=').next().unwrap_or(spec);
    if config_key(key, Some("x")) != KeyUse::Plain {
        o.exec("git", "--config-env", spec);
    }
    i + if a.contains('=') { 1 } else { 2 }
}

/// Options that name programs or files, wherever they appear after the subcommand:
/// diff programs, the program run for the other end of a transport, `git grep`'s
/// pager, output files.
fn options_anywhere(o: &mut Outcome, sub: &str, rest: &[Word]) {
    for (k, w) in rest.iter().enumerate() {
        let v = w.value.as_str();
        if v == "--ext-diff" || v == "--textconv" {
            o.exec("git", v, "runs a configured diff program");
        }
        // The program run for the other end of a local or ssh transport: a command
        // line git hands to the shell.
        for opt in ["--upload-pack", "--receive-pack", "--exec"] {
            if sub == "rebase" {
                continue;
            }
            if v == opt {
                if let Some(n) = rest.get(k + 1) {
                    o.code("git", opt, n);
                }
            } else if let Some(val) = v.strip_prefix(opt).and_then(|r| r.strip_prefix('=')) {
                o.code(
                    "git",
                    opt,
                    &Word {
                        value: val.to_owned(),
                        literal: w.literal,
                    },
                );
            }
        }
        if v == "-u"
            && matches!(sub, "clone" | "fetch" | "ls-remote" | "archive")
            && let Some(n) = rest.get(k + 1)
        {
            o.code("git", "-u", n);
        }
        // `git grep -O[PAGER]` / `--open-files-in-pager[=PAGER]` runs the pager on the
        // matching files.
        if sub == "grep"
            && let Some(p) = v
                .strip_prefix("--open-files-in-pager")
                .or_else(|| v.strip_prefix("-O"))
        {
            let p = p.strip_prefix('=').unwrap_or(p);
            if p.is_empty() {
                o.exec("git", v, "runs the configured pager on the matching files");
            } else {
                o.code(
                    "git",
                    "--open-files-in-pager",
                    &Word {
                        value: p.to_owned(),
                        literal: w.literal,
                    },
                );
            }
        }
        if v == "--output" || v == "-o" && matches!(sub, "format-patch" | "archive") {
            o.writes(rest.get(k + 1));
        } else if let Some(f) = v.strip_prefix("--output=") {
            o.writes([&Word {
                value: f.to_owned(),
                literal: w.literal,
            }]);
        } else if let Some(f) = v.strip_prefix("--output-directory=") {
            o.writes([&Word {
                value: f.to_owned(),
                literal: w.literal,
            }]);
        }
    }
}

/// What the subcommand does: read-only, read-only unless the repository's
/// configuration runs something, a listing, one that changes the repository (and runs
/// its hooks), or unknown (an alias from the configuration).
fn subcommand(o: &mut Outcome, sub: &str, rest: &[Word], operands: &[&Word]) {
    let has = |names: &[&str]| rest.iter().any(|w| names.contains(&w.value.as_str()));
    let has_prefix = |p: &str| rest.iter().any(|w| w.value.starts_with(p));
    match sub {
        _ if READ_ONLY.contains(&sub) => {
            if sub == "ls-remote" {
                remote_target(o, operands.first().copied());
            }
            if sub == "cat-file" && (has(&["--textconv", "--filters"])) {
                o.effects.runs_repo_config = RepoConfigUse::IfConfigured;
            }
        }
        "log"
            if !has(&[
                "-p",
                "-u",
                "--patch",
                "--stat",
                "--numstat",
                "--word-diff",
                "-L",
            ]) && !has_prefix("-L") =>
        {
            o.effects.runs_repo_config = RepoConfigUse::None;
        }
        _ if IF_CONFIGURED.contains(&sub) => {
            o.effects.runs_repo_config = RepoConfigUse::IfConfigured;
            if sub == "blame" || sub == "annotate" {
                o.reads(operands.last().copied());
            }
        }
        "branch" | "tag" | "remote" | "stash" | "worktree" | "notes" | "submodule" | "config"
        | "reflog"
            if is_listing(sub, rest) =>
        {
            if sub == "stash" && has(&["show"]) && has(&["-p", "--patch"]) {
                o.effects.runs_repo_config = RepoConfigUse::IfConfigured;
            }
        }
        _ if HOOKS.contains(&sub) => {
            o.mutate();
            o.effects.runs_repo_config = RepoConfigUse::Always;
            mutating_sub(o, sub, rest, operands, has(&["-n", "--dry-run"]));
        }
        _ => {
            // An unknown subcommand may be an alias from the configuration.
            o.effects.class = Class::Unknown;
            o.effects.runs_repo_config = RepoConfigUse::Always;
        }
    }
}

/// `git -c NAME[=VALUE]`: a key that names a command is analyzed as that command; one
/// that makes git run something else is an executing argument; any other setting is
/// nothing to see.
fn config_option(o: &mut Outcome, kv: &Word) {
    let (name, value) = match kv.value.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (kv.value.as_str(), None),
    };
    match config_key(name, value) {
        KeyUse::Code(code) => o.code(
            "git",
            "-c",
            &Word {
                value: code,
                literal: kv.literal,
            },
        ),
        KeyUse::Plain if !kv.literal => o.exec("git", "-c", &kv.value),
        KeyUse::Plain => {}
        _ => o.exec("git", "-c", &kv.value),
    }
}

/// Listing forms of subcommands that can also modify.
fn is_listing(sub: &str, rest: &[Word]) -> bool {
    let ops: Vec<&str> = rest
        .iter()
        .map(|w| w.value.as_str())
        .filter(|v| !v.starts_with('-'))
        .collect();
    let flags: Vec<&str> = rest
        .iter()
        .map(|w| w.value.as_str())
        .filter(|v| v.starts_with('-'))
        .collect();
    let only_flags = |allowed: &[&str]| flags.iter().all(|f| allowed.contains(f));
    match sub {
        "branch" => {
            ops.is_empty()
                && only_flags(&[
                    "-a",
                    "-r",
                    "-v",
                    "-vv",
                    "--list",
                    "-l",
                    "--all",
                    "--remotes",
                    "--show-current",
                    "--merged",
                    "--no-merged",
                    "--contains",
                    "--color",
                    "--no-color",
                    "--verbose",
                ])
                || flags.iter().any(|f| *f == "--list" || *f == "-l")
                    && only_flags(&["-a", "-r", "-v", "-vv", "--list", "-l"])
        }
        "tag" => ops.is_empty() || flags.iter().any(|f| *f == "-l" || *f == "--list"),
        "remote" => ops.is_empty() || matches!(ops.first(), Some(&"show") | Some(&"get-url")),
        "stash" => matches!(ops.first(), Some(&"list") | Some(&"show")),
        "worktree" => matches!(ops.first(), Some(&"list")),
        "notes" => matches!(ops.first(), Some(&"list") | Some(&"show")),
        "submodule" => matches!(ops.first(), Some(&"status") | Some(&"summary")) || ops.is_empty(),
        "reflog" => ops.is_empty() || matches!(ops.first(), Some(&"show")),
        "config" => {
            flags.iter().any(|f| {
                matches!(
                    *f,
                    "--get"
                        | "--get-all"
                        | "--get-regexp"
                        | "--list"
                        | "-l"
                        | "--get-urlmatch"
                        | "--show-origin"
                        | "--show-scope"
                        | "--name-only"
                )
            }) && !flags.iter().any(|f| {
                matches!(
                    *f,
                    "--add"
                        | "--unset"
                        | "--unset-all"
                        | "--replace-all"
                        | "--edit"
                        | "-e"
                        | "--rename-section"
                        | "--remove-section"
                )
            }) || matches!(ops.first(), Some(&"get") | Some(&"list"))
                || ops.len() == 1 && !ops[0].contains('=') && flags.is_empty()
        }
        _ => false,
    }
}

fn remote_target(o: &mut Outcome, w: Option<&Word>) {
    match w {
        // `ext::CMD`: the "remote" is a command git runs.
        Some(w) if w.value.starts_with("ext::") => o.code(
            "git",
            "ext::",
            &Word {
                value: w.value["ext::".len()..].replace("%S", "git-upload-pack"),
                literal: w.literal,
            },
        ),
        Some(w) if looks_like_url(&w.value) => o.net(w),
        _ => o.net_unknown(),
    }
}

fn looks_like_url(s: &str) -> bool {
    s.contains("://")
        || (s.contains(':') && !s.starts_with('/') && !s.starts_with('.'))
        || s.contains('@')
}
