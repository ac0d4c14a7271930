//! `git`: global options that run programs (`-c`, `--config-env`, `--exec-path`,
//! `--paginate`), subcommands that run repository hooks or configured programs, and
//! the ones that reach the network, write or delete.

use super::{Entry, Invocation, Outcome};
use crate::model::{Class, RepoConfigUse, Word};

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

fn git(inv: &Invocation<'_>) -> Outcome {
    let args = inv.args;
    let mut o = Outcome::read_only();
    let mut repo = Word::literal(".");
    let mut i = 0;
    // Global options.
    while i < args.len() {
        let a = args[i].value.as_str();
        match a {
            "-C" => {
                if let Some(d) = args.get(i + 1) {
                    repo = d.clone();
                }
                i += 2;
            }
            "-c" => {
                let kv = args.get(i + 1).map(|w| w.value.as_str()).unwrap_or("");
                o.exec("git", "-c", kv);
                i += 2;
            }
            "--git-dir" | "--work-tree" | "--namespace" | "--super-prefix" | "--list-cmds"
            | "--attr-source" => i += 2,
            "-p" | "--paginate" => {
                o.exec("git", a, "runs the configured pager");
                i += 1;
            }
            _ if a.starts_with("--config-env") => {
                o.exec("git", "--config-env", a);
                i += if a.contains('=') { 1 } else { 2 };
            }
            _ if a.starts_with("--exec-path") => {
                if a.contains('=') {
                    o.exec("git", "--exec-path", a);
                }
                i += 1;
            }
            _ if a.starts_with("--git-dir=") || a.starts_with("--work-tree=") => {
                o.effects.class = Class::Unknown;
                i += 1;
            }
            _ if a.starts_with('-') => i += 1,
            _ => break,
        }
    }
    let Some(sub) = args.get(i) else {
        return o;
    };
    if !sub.literal {
        o.effects.class = Class::Unknown;
        return o;
    }
    let sub = sub.value.as_str();
    let rest = &args[i + 1..];
    let has = |names: &[&str]| rest.iter().any(|w| names.contains(&w.value.as_str()));
    let has_prefix = |p: &str| rest.iter().any(|w| w.value.starts_with(p));
    let after_dashdash: Vec<Word> = rest
        .iter()
        .skip_while(|w| w.value != "--")
        .skip(1)
        .cloned()
        .collect();
    o.reads([&repo]);
    o.reads(&after_dashdash);

    // Options that name programs or files, wherever they appear.
    for (k, w) in rest.iter().enumerate() {
        let v = w.value.as_str();
        let next = rest.get(k + 1).map(|w| w.value.as_str()).unwrap_or("");
        if v == "--ext-diff" || v == "--textconv" {
            o.exec("git", v, "runs a configured diff program");
        }
        for opt in ["--upload-pack", "--receive-pack", "--exec"] {
            if v == opt && sub != "rebase" {
                o.exec("git", opt, next);
            } else if let Some(val) = v.strip_prefix(opt).and_then(|r| r.strip_prefix('='))
                && sub != "rebase"
            {
                o.exec("git", opt, val);
            }
        }
        if v == "-u" && matches!(sub, "clone" | "fetch" | "ls-remote" | "archive") {
            o.exec("git", "-u", next);
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

    let operands: Vec<&Word> = rest
        .iter()
        .take_while(|w| w.value != "--")
        .filter(|w| !w.value.starts_with('-'))
        .collect();

    match sub {
        _ if READ_ONLY.contains(&sub) => {
            if sub == "ls-remote" {
                remote_target(&mut o, operands.first().copied());
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
            mutating_sub(&mut o, sub, rest, &operands, has(&["-n", "--dry-run"]));
        }
        _ => {
            // An unknown subcommand may be an alias from the configuration.
            o.effects.class = Class::Unknown;
            o.effects.runs_repo_config = RepoConfigUse::Always;
        }
    }
    o
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
        Some(w) if looks_like_url(&w.value) => o.net(w),
        _ => o.net_unknown(),
    }
}

fn looks_like_url(s: &str) -> bool {
    s.contains("://")
        || (s.contains(':') && !s.starts_with('/') && !s.starts_with('.'))
        || s.contains('@')
}

fn mutating_sub(o: &mut Outcome, sub: &str, rest: &[Word], operands: &[&Word], dry_run: bool) {
    match sub {
        "clone" => {
            remote_target(o, operands.first().copied());
            let dest = operands.get(1).map(|w| (*w).clone()).or_else(|| {
                operands.first().map(|u| {
                    let name = u
                        .value
                        .trim_end_matches('/')
                        .rsplit(['/', ':'])
                        .next()
                        .unwrap_or("");
                    Word {
                        value: name.trim_end_matches(".git").to_owned(),
                        literal: u.literal,
                    }
                })
            });
            o.writes(dest.as_ref());
        }
        "fetch" | "pull" | "push" => {
            remote_target(o, operands.first().copied());
            if sub == "pull" {
                o.writes([&Word::literal(".")]);
            }
        }
        "submodule" => o.net_unknown(),
        "clean" if !dry_run => {
            let paths: Vec<Word> = rest
                .iter()
                .skip_while(|w| w.value != "--")
                .skip(1)
                .cloned()
                .collect();
            if paths.is_empty() {
                o.deletes([&Word {
                    value: ".".into(),
                    literal: false,
                }]);
            } else {
                o.deletes(&paths);
            }
        }
        "rm" if !dry_run => {
            let paths: Vec<&Word> = operands.to_vec();
            o.deletes(paths);
        }
        "mv" => {
            if let Some((dest, srcs)) = operands.split_last() {
                o.writes([*dest]);
                o.deletes(srcs.iter().copied());
            }
        }
        "bisect" if operands.first().is_some_and(|w| w.value == "run") => {
            let cmd: Vec<Word> = operands.iter().skip(1).map(|w| (*w).clone()).collect();
            o.exec("git", "bisect run", &super::join(&cmd));
        }
        "rebase" => {
            for (k, w) in rest.iter().enumerate() {
                if w.value == "-x" || w.value == "--exec" {
                    let cmd = rest.get(k + 1).map(|w| w.value.as_str()).unwrap_or("");
                    o.exec("git", "rebase --exec", cmd);
                } else if let Some(c) = w.value.strip_prefix("--exec=") {
                    o.exec("git", "rebase --exec", c);
                }
            }
        }
        "filter-branch" => o.exec("git", "filter-branch", "runs filter commands"),
        "difftool" | "mergetool" => o.exec("git", sub, "runs the configured tool"),
        "config" => {
            let target = if rest.iter().any(|w| w.value == "--global") {
                "~/.gitconfig"
            } else if rest.iter().any(|w| w.value == "--system") {
                "/etc/gitconfig"
            } else {
                ".git/config"
            };
            o.writes([&Word::literal(target)]);
        }
        "worktree" if operands.first().is_some_and(|w| w.value == "add") => {
            o.writes(operands.get(1).copied());
        }
        "init" => {
            let dir = operands
                .first()
                .map(|w| (*w).clone())
                .unwrap_or_else(|| Word::literal("."));
            o.writes([&dir]);
        }
        "archive" if rest.iter().any(|w| w.value.starts_with("--remote")) => o.net_unknown(),
        "format-patch"
            if !rest.iter().any(|w| {
                w.value == "-o"
                    || w.value.starts_with("--output-directory")
                    || w.value == "--stdout"
            }) =>
        {
            o.writes([&Word {
                value: "./*.patch".into(),
                literal: false,
            }]);
        }
        _ => {}
    }
}
