//! Reads a package names, judged by the guards: one path (a public key in `.ssh` is a
//! review, anything else there refused), a pattern (judged as a search tool's glob),
//! and the one write of a guarded file that is an ordinary setup step (`git config
//! --global` with ordinary keys).

use super::{Cx, HOME, SKILL_DIR};
use crate::report::{Check, Finding, Severity};
use cordon_policy::{Decision, Request, Step};

/// Is a guarded read that of one public key in `.ssh` (no pattern, no `..`, and it
/// resolves to a `.pub` file too)?
pub(super) fn public_key(f: &cordon_policy::verdict::Finding) -> bool {
    public_file(&f.target) && f.resolved.as_deref().is_none_or(public_file)
}

/// Is `p` a file beside credentials that holds none itself: a public key, the SSH
/// client's host list and aliases (`~/.ssh/config`, `known_hosts`), the AWS CLI's
/// profiles and regions (`~/.aws/config`)? Reading one is a review.
pub(super) fn public_file(p: &str) -> bool {
    let base = p.rsplit('/').next().unwrap_or(p);
    let plain = !p.contains("..") && !p.contains(['*', '?', '[', '$', '`', '{']);
    let home_rel = p
        .strip_prefix(super::HOME)
        .or_else(|| p.strip_prefix('~'))
        .unwrap_or("");
    plain
        && (p.contains("/.ssh/") && base.to_ascii_lowercase().ends_with(".pub")
            || matches!(
                home_rel,
                "/.ssh/config" | "/.ssh/known_hosts" | "/.aws/config"
            ))
}

/// `git config [--local] core.hooksPath DIR` with DIR a literal folder of the project
/// (no `..`, not absolute): the folder, when the whole text is that one command.
pub(super) fn project_hooks_path(shell: &str) -> Option<String> {
    let a = cordon_shell::analyze(shell);
    let [c] = a.commands.as_slice() else {
        return None;
    };
    if a.parse_error.is_some() || c.program.as_ref().is_none_or(|p| p.value != "git") {
        return None;
    }
    let args: Vec<&cordon_shell::Word> = c.args.iter().collect();
    let ops: Vec<&str> = match args.as_slice() {
        [cfg, rest @ ..] if cfg.value == "config" && rest.iter().all(|w| w.literal) => rest
            .iter()
            .map(|w| w.value.as_str())
            .filter(|v| *v != "--local")
            .collect(),
        _ => return None,
    };
    match ops.as_slice() {
        [key, dir]
            if key.eq_ignore_ascii_case("core.hooksPath")
                && !dir.is_empty()
                && !dir.starts_with(['/', '~', '-', '$'])
                && !dir.split('/').any(|p| p == "..") =>
        {
            Some((*dir).to_string())
        }
        _ => None,
    }
}

/// Is a guarded write that of the user's git configuration, made only by `git config`
/// commands that set ordinary keys (`user.email`, `init.defaultBranch`) to literal
/// values?
pub(super) fn plain_global_git_config(f: &cordon_policy::verdict::Finding, shell: &str) -> bool {
    let t = f.target.trim_start_matches(HOME).trim_start_matches('~');
    if !matches!(t, "/.gitconfig" | "/.config/git/config") {
        return false;
    }
    let a = cordon_shell::analyze(shell);
    let configs: Vec<&cordon_shell::SimpleCommand> = a
        .commands
        .iter()
        .filter(|c| {
            c.program.as_ref().is_some_and(|p| p.value == "git")
                && c.args.iter().any(|w| w.value == "config")
        })
        .collect();
    !configs.is_empty()
        && a.parse_error.is_none()
        && configs.iter().all(|c| {
            let after: Vec<&cordon_shell::Word> = c
                .args
                .iter()
                .skip_while(|w| w.value != "config")
                .skip(1)
                .collect();
            if after.iter().any(|w| !w.literal) {
                return false;
            }
            let ops: Vec<&str> = after
                .iter()
                .map(|w| w.value.as_str())
                .filter(|v| {
                    !matches!(
                        *v,
                        "--global" | "--add" | "--replace-all" | "--unset" | "--type=bool"
                    )
                })
                .collect();
            // Only `KEY VALUE` (or `KEY` to unset): no `--edit`, `--file`, other options.
            match ops.as_slice() {
                [key, rest @ ..] if !key.starts_with('-') && rest.len() <= 1 => {
                    !rest.iter().any(|v| v.starts_with('-'))
                        && !cordon_shell::gitkeys::classify(key, rest.first().copied()).is_risky()
                }
                _ => false,
            }
        })
}

pub(crate) fn judge_read(
    cx: &Cx<'_>,
    path: &str,
    line: usize,
    literal: &str,
    out: &mut Vec<Finding>,
) {
    // A public key is public: `cat ~/.ssh/id_ed25519.pub` is how a key is added to a
    // forge. The SSH client's host aliases and the AWS CLI's profile names hold no
    // secret of their own; a human should see them read.
    if public_file(literal) {
        if !literal.ends_with(".pub") {
            out.push(Finding::new(
                Check::SensitiveRead,
                Severity::Review,
                Some(path),
                format!(
                    "line {line}: reads {}, a configuration file beside credentials (host aliases, profile names; no key of its own)",
                    crate::report::shown(literal)
                ),
            ));
        }
        return;
    }
    let (policy, fs) = (cx.policy, cx.fs);
    let req =
        serde_json::json!({"tool": "read_file", "input": {"path": literal}, "cwd": SKILL_DIR});
    let Ok(req) = Request::from_json(&req.to_string()) else {
        return;
    };
    let verdict = policy.decide(&req, fs);
    if verdict.decision == Decision::Deny && verdict.source.step == Step::Guard {
        out.push(Finding::new(
            Check::SensitiveRead,
            Severity::Refuse,
            Some(path),
            format!("line {line}: {}", verdict.reason),
        ));
    }
}

/// A path pattern a script reads through (a glob, a walk, a path with parts known only
/// at run time), judged as a search tool's glob is: refused when it can name a file the
/// guards protect. A pattern `built` from run-time parts that can name such a file only
/// by its name (`.env`, `*.pem` in a folder known at run time, not a credential folder
/// of the home) is a review: the folder may well be a project's.
pub(crate) fn judge_glob(
    cx: &Cx<'_>,
    path: &str,
    line: usize,
    pattern: &str,
    built: bool,
    out: &mut Vec<Finding>,
) {
    let req = serde_json::json!({"tool": "Glob", "input": {"pattern": pattern, "path": SKILL_DIR}, "cwd": SKILL_DIR});
    let Ok(req) = Request::from_json(&req.to_string()) else {
        return;
    };
    let verdict = cx.policy.decide(&req, cx.fs);
    if verdict.decision == Decision::Deny && verdict.source.step == Step::Guard {
        let by_name = verdict.reason.contains("secret file name");
        out.push(Finding::new(
            Check::SensitiveRead,
            if built && by_name {
                Severity::Review
            } else {
                Severity::Refuse
            },
            Some(path),
            format!(
                "line {line}: reads through the pattern {}: {}",
                crate::report::shown(pattern),
                verdict.reason
            ),
        ));
    }
}

/// Is a guarded read named only by commands that print names, not content (`ls -la
/// ~/.ssh`, `stat`, `test -f`)? Every command of `shell` whose reads name the target
/// must be one of them, and there must be one.
pub(crate) fn listing_only(f: &cordon_policy::verdict::Finding, shell: &str) -> bool {
    const LISTERS: &[&str] = &["ls", "stat", "test", "[", "[["];
    let norm = |v: &str| {
        let v = v
            .strip_prefix("${HOME}")
            .or_else(|| v.strip_prefix("$HOME"))
            .or_else(|| v.strip_prefix('~'))
            .map_or_else(|| v.to_string(), |rest| format!("{HOME}{rest}"));
        v.trim_end_matches('/').to_string()
    };
    let targets = [Some(&f.target), f.resolved.as_ref()].map(|t| t.map(|t| norm(t)));
    let a = cordon_shell::analyze(shell);
    if a.parse_error.is_some() {
        return false;
    }
    let naming: Vec<&cordon_shell::SimpleCommand> = a
        .commands
        .iter()
        .filter(|c| {
            c.effects
                .reads
                .iter()
                .any(|w| targets.contains(&Some(norm(&w.value))))
        })
        .collect();
    !naming.is_empty()
        && naming.iter().all(|c| {
            c.program
                .as_ref()
                .is_some_and(|p| LISTERS.contains(&p.value.as_str()))
        })
}

/// `ls -la ~/.ssh`: the names of the files, not their content (a troubleshooting step);
/// a human still sees that it looks there.
pub(crate) fn listing(path: &str, line: usize, target: &str) -> Finding {
    Finding::new(
        Check::SensitiveRead,
        Severity::Review,
        Some(path),
        format!(
            "line {line}: lists the names in {target}, a place that holds credentials (names only, not their content)"
        ),
    )
}
