//! Operations of shell text: what each analyzed command reads, writes, deletes, runs
//! and reaches, and what stays unknown.

use super::{Context, OpKind, Opaque, Operation, Operations, Target};
use crate::paths::{self};
use cordon_shell::{ExecArg, HazardKind, SimpleCommand};
use std::path::Path;

mod command;
use command::command_operations;

/// Programs whose arguments are never paths, so runtime values in them are harmless.
const NON_PATH_ARGS: &[&str] = &[
    "echo", "printf", "true", "false", ":", "test", "[", "sleep", "seq",
];

/// Writes to these device files change nothing.
const HARMLESS_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/tty",
    "/dev/zero",
];

pub(super) fn shell_operations(text: &str, cwd: &Path, ctx: &Context<'_>, out: &mut Operations) {
    let analysis = cordon_shell::analyze(text);
    if let Some(e) = &analysis.parse_error {
        let mut op = Operation::new(OpKind::Opaque, Target::Text(short(text)), "shell text");
        op.opaque = Some(Opaque {
            why: format!("the shell text does not parse ({e})"),
            needs: None,
        });
        out.ops.push(op);
    }
    for h in &analysis.hazards {
        let (guard, what) = match h.kind {
            HazardKind::FetchToExec => ("fetch-to-exec", "runs code fetched from the network"),
            HazardKind::DecodeToExec => ("decode-to-exec", "runs code it decodes first"),
            HazardKind::DnsExfiltration => {
                ("dns-exfiltration", "puts computed data into a DNS lookup")
            }
            HazardKind::PrivilegeEscalation => ("privilege-escalation", "escalates privilege"),
            _ => ("shell-hazard", "is a dangerous shell shape"),
        };
        let mut op = Operation::new(OpKind::Exec, Target::Text(short(&h.text)), what);
        op.hazard = Some((guard, format!("`{}` {what}: {}", short(&h.text), h.detail)));
        out.ops.push(op);
    }
    for c in &analysis.commands {
        command_operations(c, cwd, ctx, out);
    }
    out.analysis = Some(analysis);
}

/// The writes of a read-only git subcommand that refreshes the index (`git status`,
/// `git diff`): `.git/index.lock`, renamed onto `.git/index`. Same content, fresher stat
/// data, so for a `.git` inside the workspace these are the repository's own files git
/// maintains, judged by guards and deny rules alone (as a changing subcommand's `.git`
/// write is); for one outside they meet the write defaults, so a repository outside the
/// workspace is never written without the policy saying so. Guards judge the index as
/// the file it is (a link of a guarded file is that file).
///
/// A `.git` file (a linked worktree, a submodule) sends git to the directory it names,
/// where that worktree's index is; one that cannot be read leaves `.git` itself named.
fn index_refresh(ctx: &Context<'_>, top: &str, dir: &Path) -> Vec<Operation> {
    let dotgit = Path::new(top).join(".git");
    // Whose files these are is decided by the `.git` git finds: the workspace's own
    // repository, or its own linked worktree, whose index lives in the main repository's
    // `.git/worktrees/NAME` (a changing subcommand writes there too).
    let inside = |p: &str| {
        ctx.path_op(OpKind::Write, p, dir, "").location == Some(crate::paths::Location::Inside)
    };
    let entry_inside = inside(&dotgit.display().to_string());
    let files: Vec<String> = match ctx.fs.metadata(&dotgit).map(|m| m.kind) {
        Some(crate::facts::FileKind::File) => {
            match ctx.fs.read_small_file(&dotgit, 4096).and_then(|text| {
                let text = String::from_utf8_lossy(&text).into_owned();
                let named = text.trim().strip_prefix("gitdir:")?.trim().to_owned();
                Some(paths::clean(&paths::absolute(
                    Path::new(&named),
                    Path::new(top),
                )))
            }) {
                Some(git_dir) => ["index", "index.lock"]
                    .iter()
                    .map(|n| git_dir.join(n).display().to_string())
                    .collect(),
                None => vec![dotgit.display().to_string()],
            }
        }
        _ => ["index", "index.lock"]
            .iter()
            .map(|n| dotgit.join(n).display().to_string())
            .collect(),
    };
    files
        .iter()
        .map(|file| {
            let mut op = ctx.path_op(
                OpKind::Write,
                file,
                dir,
                "git refreshes the index's stat cache and writes it back",
            );
            op.config = entry_inside;
            op
        })
        .collect()
}

fn short(s: &str) -> String {
    const MAX: usize = 200;
    if s.len() <= MAX {
        return s.to_string();
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// `git config [set] KEY VALUE` (any scope) with a key that runs a program or redirects
/// where git reads its settings and hooks from: the key and why.
fn risky_git_config(c: &SimpleCommand) -> Option<(String, &'static str)> {
    let (key, value) = git_config_set(c)?;
    let why = crate::gitconfig::risky_key(&key.value, value.map(|w| w.value.as_str()))?;
    Some((key.value.clone(), why))
}

/// Git keys that only name the user or shape git's output and defaults: setting one
/// runs nothing, sends git (or its credentials) nowhere and changes no trust. Lowercase;
/// a `section.` entry stands for its whole section.
const PLAIN_GIT_KEYS: &[&str] = &[
    "user.name",
    "user.email",
    "init.defaultbranch",
    "pull.rebase",
    "pull.ff",
    "push.default",
    "push.autosetupremote",
    "fetch.prune",
    "merge.conflictstyle",
    "rebase.autosquash",
    "rebase.autostash",
    "core.autocrlf",
    "core.eol",
    "diff.colormoved",
    "log.date",
    "column.ui",
    "color.",
    "advice.",
];

/// Does `c` set one git key, literal and with a literal value, that only names the user
/// or shapes git's output (see [`Operation::plain_git_setting`])?
fn plain_git_setting(c: &SimpleCommand) -> bool {
    match git_config_set(c) {
        Some((key, Some(value))) => {
            let k = key.value.to_ascii_lowercase();
            key.literal
                && value.literal
                && PLAIN_GIT_KEYS.iter().any(|p| {
                    k == *p || p.ends_with('.') && k.starts_with(p) && !k[p.len()..].contains('.')
                })
                && crate::gitconfig::risky_key(&key.value, Some(&value.value)).is_none()
        }
        _ => false,
    }
}

/// The key (and value) `git config [set] KEY [VALUE]` sets; `None` for any other
/// command or a `git config` that reads, unsets or edits.
fn git_config_set(c: &SimpleCommand) -> Option<(&cordon_shell::Word, Option<&cordon_shell::Word>)> {
    if c.program.as_ref()?.value != "git" {
        return None;
    }
    let args = &c.args;
    // The subcommand, after git's global options (`-c` and `-C` take a value).
    let mut k = 0;
    while let Some(w) = args.get(k) {
        match w.value.as_str() {
            "-c" | "-C" | "--git-dir" | "--work-tree" | "--namespace" => k += 2,
            v if v.starts_with('-') => k += 1,
            _ => break,
        }
    }
    if args.get(k)?.value != "config" {
        return None;
    }
    let mut rest = args[k + 1..].iter();
    let mut kv = Vec::new();
    while let Some(w) = rest.next() {
        match w.value.as_str() {
            "--unset" | "--unset-all" | "--get" | "--get-all" | "--get-regexp" | "--list"
            | "-l" | "--remove-section" | "--rename-section" | "--edit" | "-e" | "unset"
            | "get" | "list" => return None,
            "-f" | "--file" | "--blob" | "--type" | "--default" | "--comment" | "--value" => {
                rest.next();
            }
            "set" if kv.is_empty() => {}
            v if v.starts_with('-') => {}
            _ => kv.push(w),
        }
    }
    let key = kv.first()?;
    Some((key, kv.get(1).copied()))
}

/// One sentence on an argument that makes a program run code: `make` runs the recipes
/// of test; `python3` runs the script test_x.py; `-exec` makes `find` run other code.
fn exec_reason(e: &ExecArg) -> String {
    let (p, a, d) = (&e.program, &e.arg, &e.detail);
    let says_runs = d.starts_with("runs ") || d.starts_with("compiles ");
    match a.as_str() {
        "script" => format!("`{p}` runs the script {d}"),
        "stdin" => format!("`{p}` runs {d}"),
        _ if a == p && says_runs => format!("`{p}` {d}"),
        _ if a == p && d.is_empty() => format!("`{p}` runs code"),
        _ if a == p && e.own_purpose => format!("`{p}` runs code ({d})"),
        _ if a == p => format!("`{p}` runs other code ({d})"),
        _ if e.own_purpose && says_runs => format!("`{p} {a}` {d}"),
        _ if e.own_purpose => format!("`{p} {a}` runs code ({d})"),
        _ => format!("`{a}` makes `{p}` run other code ({d})"),
    }
}

/// Does a glob pattern carry a part only known at run time (an unescaped `$`, a
/// backtick, a process substitution)?
fn has_unknown_part(p: &str) -> bool {
    let mut it = p.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\\' => {
                it.next();
            }
            '$' | '`' => return true,
            '<' | '>' if it.peek() == Some(&'(') => return true,
            _ => {}
        }
    }
    false
}

/// The literal directory before the first glob character of a path pattern.
fn glob_prefix(g: &str) -> String {
    let cut = g.find(['*', '?', '[']).unwrap_or(g.len());
    match g[..cut].rfind('/') {
        Some(0) => "/".into(),
        Some(i) => g[..i].to_string(),
        None => ".".into(),
    }
}

/// The pattern of a recursive search (`grep -r`, `rg`, `ag`, `git grep`) that looks for
/// credentials: a word naming a key, secret, token or password.
fn credential_search(c: &SimpleCommand) -> Option<String> {
    const WORDS: &[&str] = &[
        "api_key",
        "apikey",
        "api-key",
        "secret",
        "password",
        "passwd",
        "token",
        "private key",
        "private_key",
        "aws_access",
        "credential",
    ];
    let name = c.program.as_ref()?.value.rsplit('/').next()?.to_owned();
    let args = &c.args;
    let recursive = match name.as_str() {
        "rg" | "ag" | "ack" => true,
        "grep" | "egrep" | "fgrep" => args.iter().any(|a| {
            let v = a.value.as_str();
            matches!(v, "--recursive" | "--dereference-recursive")
                || (v.starts_with('-') && !v.starts_with("--") && v.contains(['r', 'R']))
        }),
        "git" => args.first().is_some_and(|a| a.value == "grep"),
        _ => false,
    };
    if !recursive {
        return None;
    }
    args.iter()
        .filter(|a| !a.value.starts_with('-'))
        .find(|a| {
            let v = a.value.to_ascii_lowercase();
            WORDS.iter().any(|w| v.contains(w))
        })
        .map(|a| a.value.clone())
}
