//! Recursive reads of a folder (archive, sync, copy): a read of a folder is a read of
//! everything beneath it, so `tar czf - -C ~ .`, `zip -qr - ~/.config` and `rsync -a
//! ~/ host:` read `~/.ssh`, `~/.config/gh` and `~/.claude/.credentials.json` though they
//! name none of them. The folder is judged as the pattern `FOLDER/**` by the read guard
//! (the search tools' glob judgement): a folder that holds guarded files, read by a text
//! that reaches the network, is refused, and read alone is a review. The working folder
//! (the project, with its `.env` and `.git/config`) read whole by a text that reaches the
//! network is a review.

use crate::report::{Check, Finding, Severity};
use cordon_policy::guards::SENSITIVE_HOME_PATHS;

/// The folders a recursive reader reads whole, as its text names them (`None` when the
/// command is not a recursive reader).
fn tree_roots(c: &cordon_shell::SimpleCommand) -> Option<Vec<String>> {
    let prog = c.program.as_ref()?.value.rsplit('/').next()?.to_string();
    // A short option cluster (`-qr`, `-avz`) holding one of `letters`, or a long option.
    let has = |letters: &[char], long: &[&str]| {
        c.args.iter().any(|w| {
            let v = w.value.as_str();
            long.contains(&v)
                || (v.starts_with('-') && !v.starts_with("--") && v[1..].contains(letters))
        })
    };
    let recursive = match prog.as_str() {
        // tar creates recursively unless told not to; its reads are the members (with
        // `-C` applied), and only a create reads them.
        "tar" | "bsdtar" | "gtar" => !has(&[], &["--no-recursion"]),
        "zip" => has(&['r', 'R'], &["--recurse-paths"]),
        "rsync" => has(&['a', 'r'], &["--archive", "--recursive"]),
        "cp" | "scp" => has(&['r', 'R', 'a'], &["--recursive", "--archive"]),
        "7z" | "7za" | "zstd" | "rclone" => true,
        "git" => {
            // The repository whole: a bundle of every ref, `add -A` / `add .`.
            let a: Vec<&str> = c.args.iter().map(|w| w.value.as_str()).collect();
            let bundle = a.contains(&"bundle") && a.contains(&"--all");
            let add_all = a.first() == Some(&"add")
                && a.iter().any(|v| matches!(*v, "-A" | "--all" | "." | ":/"));
            return (bundle || add_all).then(|| vec![".".to_string()]);
        }
        _ => false,
    };
    if !recursive {
        return None;
    }
    let roots: Vec<String> = c
        .effects
        .reads
        .iter()
        .filter(|w| w.literal)
        .map(|w| w.value.clone())
        .collect();
    (!roots.is_empty()).then_some(roots)
}

/// The credential path of the home folder ([`SENSITIVE_HOME_PATHS`]) that lies beneath
/// `root` (the home folder, an ancestor of it, or a folder of it such as `~/.config`),
/// if any. A root inside a credential path is a read of it, which the read guard
/// judges already.
fn holds_credentials(root: &str) -> Option<&'static str> {
    let rel = if matches!(root, "~" | "/" | "/home" | "/root") {
        ""
    } else if let Some(r) = root
        .strip_prefix("~/")
        .or_else(|| root.strip_prefix("/root/"))
    {
        r
    } else if let Some(r) = root.strip_prefix("/home/") {
        r.split_once('/').map_or("", |(_, rest)| rest)
    } else {
        return None;
    };
    let rel = rel.trim_end_matches('/');
    SENSITIVE_HOME_PATHS.iter().copied().find(|p| {
        rel.is_empty()
            || (p.len() > rel.len()
                && p[..rel.len()].eq_ignore_ascii_case(rel)
                && p.as_bytes()[rel.len()] == b'/')
    })
}

/// `~/./` and `$HOME/` as `~`, trailing `/.` and `/` away.
fn normal(root: &str) -> String {
    let mut r = root.to_string();
    for h in ["${HOME}", "$HOME"] {
        if let Some(rest) = r.strip_prefix(h) {
            r = format!("~{rest}");
        }
    }
    loop {
        let before = r.len();
        if let Some(x) = r.strip_suffix("/.") {
            r = x.to_string();
        }
        if r.len() > 1
            && let Some(x) = r.strip_suffix('/')
        {
            r = x.to_string();
        }
        if r.len() == before {
            return r;
        }
    }
}

/// Judge the recursive reads of one shell text.
pub(crate) fn judge(path: &str, line: usize, shell: &str, out: &mut Vec<Finding>) {
    let a = cordon_shell::analyze(shell);
    let sends = a
        .commands
        .iter()
        .any(|c| !c.effects.network.is_empty() || c.effects.network_unknown_target);
    for c in &a.commands {
        let Some(roots) = tree_roots(c) else { continue };
        for root in roots.iter().map(|r| normal(r)) {
            let project = !root.starts_with(['/', '~']);
            if project {
                if sends && matches!(root.as_str(), "." | "" | "./" | ":/" | "*") {
                    out.push(Finding::new(
                        Check::SensitiveRead,
                        Severity::Review,
                        Some(path),
                        format!("line {line}: reads the whole working folder (the project, with its .env and .git/config, if any) and the text reaches the network"),
                    ));
                }
                continue;
            }
            out.extend(judge_root(path, line, &root, sends));
        }
    }
}

/// The finding on a read of the whole folder `root` (`~`-normalised): refused when the
/// folder holds a credential path of the home folder and the code reaches the network
/// (`sends`), a review when it does not; `None` for a folder that holds none.
pub(crate) fn judge_root(path: &str, line: usize, root: &str, sends: bool) -> Option<Finding> {
    let root = normal(root);
    let cred = holds_credentials(&root)?;
    Some(Finding::new(
        Check::SensitiveRead,
        if sends {
            Severity::Refuse
        } else {
            Severity::Review
        },
        Some(path),
        format!(
            "line {line}: reads the folder {} whole, and with it the credentials beneath it (~/{cred}, which the read guard protects){}",
            crate::report::shown(&root),
            if sends {
                "; the code reaches the network"
            } else {
                ""
            }
        ),
    ))
}
