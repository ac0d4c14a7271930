//! What a git subcommand that changes things writes, deletes, fetches and runs.

use super::{KeyUse, config_key, remote_target};
use crate::knowledge::Outcome;
use crate::model::Word;

/// What the changing subcommand `sub` does beyond changing the repository.
pub(super) fn mutating_sub(
    o: &mut Outcome,
    sub: &str,
    rest: &[Word],
    operands: &[&Word],
    dry_run: bool,
) {
    match sub {
        "clone" => clone(o, rest, operands),
        "fetch" | "pull" | "push" => {
            remote_target(o, operands.first().copied());
            if sub == "pull" {
                o.writes([&Word::literal(".")]);
            }
        }
        "submodule" => submodule(o, rest),
        "clean" if !dry_run => clean(o, rest),
        "rm" if !dry_run => o.deletes(operands.iter().copied()),
        "mv" => {
            if let Some((dest, srcs)) = operands.split_last() {
                o.writes([*dest]);
                o.fills([*dest]);
                o.deletes(srcs.iter().copied());
            }
        }
        "bisect" if operands.first().is_some_and(|w| w.value == "run") => bisect_run(o, rest),
        "rebase" => rebase_exec(o, rest),
        "filter-branch" => filter_branch(o, rest),
        "difftool" | "mergetool" => external_tool(o, sub, rest),
        "config" => config_write(o, rest, operands),
        "worktree" if operands.first().is_some_and(|w| w.value == "add") => {
            o.writes(operands.get(1).copied());
            o.fills(operands.get(1).copied());
        }
        "init" => init(o, rest, operands),
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

/// `git clone URL [DIR]`: fetches, and fills DIR (by default the URL's last part).
fn clone(o: &mut Outcome, rest: &[Word], operands: &[&Word]) {
    o.fetched_writes = true;
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
    o.fills(dest.as_ref());
    if let Some(dest) = &dest {
        planted_hooks(o, rest, dest);
    }
}

/// `git submodule`: reaches remotes; `foreach CMD` runs CMD through the shell in each
/// submodule.
fn submodule(o: &mut Outcome, rest: &[Word]) {
    o.net_unknown();
    // `git submodule foreach CMD`: CMD runs through the shell in each submodule.
    if let Some(k) = rest.iter().position(|w| w.value == "foreach") {
        let cmd: Vec<&Word> = rest[k + 1..]
            .iter()
            .skip_while(|w| w.value.starts_with('-'))
            .collect();
        if !cmd.is_empty() {
            let code = Word {
                value: cmd
                    .iter()
                    .map(|w| w.value.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                literal: cmd.iter().all(|w| w.literal),
            };
            o.code("git", "submodule foreach", &code);
        }
    }
}

/// `git clean`: deletes the paths after `--`, or untracked files anywhere.
fn clean(o: &mut Outcome, rest: &[Word]) {
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

/// `git bisect run CMD ARGS…`: a program and its arguments, run at each step.
fn bisect_run(o: &mut Outcome, rest: &[Word]) {
    // `git bisect run CMD ARGS…`: a program and its arguments, run at each step.
    let cmd: Vec<Word> = rest
        .iter()
        .skip_while(|w| w.value != "run")
        .skip(1)
        .cloned()
        .collect();
    o.exec("git", "bisect run", &crate::knowledge::join(&cmd));
    o.exec_argv.push(("git bisect run".into(), cmd));
}

/// `git rebase -x CMD` / `--exec=CMD`: shell code run after each commit.
fn rebase_exec(o: &mut Outcome, rest: &[Word]) {
    for (k, w) in rest.iter().enumerate() {
        if w.value == "-x" || w.value == "--exec" {
            if let Some(n) = rest.get(k + 1) {
                o.code("git", "rebase --exec", n);
            }
        } else if let Some(c) = w.value.strip_prefix("--exec=") {
            o.code(
                "git",
                "rebase --exec",
                &Word {
                    value: c.to_owned(),
                    literal: w.literal,
                },
            );
        }
    }
}

/// `git filter-branch --*-filter CMD`: shell code run on each commit.
fn filter_branch(o: &mut Outcome, rest: &[Word]) {
    o.exec("git", "filter-branch", "runs filter commands");
    for (k, w) in rest.iter().enumerate() {
        if w.value.ends_with("-filter")
            && w.value.starts_with("--")
            && let Some(n) = rest.get(k + 1)
        {
            o.code("git", &w.value, n);
        }
    }
}

/// `git difftool` / `mergetool`: the `--extcmd` command, or the configured tool.
fn external_tool(o: &mut Outcome, sub: &str, rest: &[Word]) {
    let mut extcmd = false;
    for (k, w) in rest.iter().enumerate() {
        if sub == "difftool" && (w.value == "-x" || w.value == "--extcmd") {
            if let Some(n) = rest.get(k + 1) {
                o.code("git", "difftool --extcmd", n);
                extcmd = true;
            }
        } else if let Some(c) = w.value.strip_prefix("--extcmd=") {
            o.code(
                "git",
                "difftool --extcmd",
                &Word {
                    value: c.to_owned(),
                    literal: w.literal,
                },
            );
            extcmd = true;
        }
    }
    if !extcmd {
        o.exec("git", sub, "runs the configured tool");
    }
}

/// `git config [set] KEY VALUE`: the configuration file it writes, and a value that is
/// a command analyzed as that command.
fn config_write(o: &mut Outcome, rest: &[Word], operands: &[&Word]) {
    // `git config [set] KEY VALUE`: a value that is a command runs later, each
    // time git uses the key; what it would run is analyzed now.
    let kv: Vec<&Word> = operands
        .iter()
        .copied()
        .skip_while(|w| w.value == "set")
        .collect();
    if let [key, value, ..] = kv.as_slice()
        && let KeyUse::Code(code) = config_key(&key.value, Some(&value.value))
    {
        o.code(
            "git",
            "config",
            &Word {
                value: code,
                literal: value.literal,
            },
        );
    }
    // `--file F` names the file written, whatever it is.
    let file = rest
        .iter()
        .enumerate()
        .find_map(|(k, w)| match w.value.as_str() {
            "-f" | "--file" => rest.get(k + 1).cloned(),
            v => v.strip_prefix("--file=").map(|f| Word {
                value: f.to_owned(),
                literal: w.literal,
            }),
        });
    let target = if let Some(f) = file {
        f
    } else if rest.iter().any(|w| w.value == "--global") {
        Word::literal("~/.gitconfig")
    } else if rest.iter().any(|w| w.value == "--system") {
        Word::literal("/etc/gitconfig")
    } else if rest.iter().any(|w| w.value == "--worktree") {
        Word::literal(".git/config.worktree")
    } else {
        Word::literal(".git/config")
    };
    o.writes([&target]);
}

/// `git init [DIR]`: writes DIR (by default here), and a template's hooks.
fn init(o: &mut Outcome, rest: &[Word], operands: &[&Word]) {
    let dir = operands
        .first()
        .map(|w| (*w).clone())
        .unwrap_or_else(|| Word::literal("."));
    o.writes([&dir]);
    planted_hooks(o, rest, &dir);
}

/// `git init` and `git clone` with `--template` (any prefix of it: `--t` is already
/// unambiguous) copy the template's hooks into the new repository, where the next commit
/// runs them: a write to `DIR/.git/hooks`, which the guards refuse.
fn planted_hooks(o: &mut Outcome, rest: &[Word], dir: &Word) {
    if rest.iter().any(|w| w.value.starts_with("--t")) {
        o.writes([&Word {
            value: format!("{}/.git/hooks", dir.value.trim_end_matches('/')),
            literal: dir.literal,
        }]);
    }
}
