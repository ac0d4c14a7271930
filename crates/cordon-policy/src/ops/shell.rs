//! Operations of shell text: what each analyzed command reads, writes, deletes, runs
//! and reaches, and what stays unknown.

use super::{Context, OpKind, Opaque, Operation, Operations, SubCommand, Target, net_target};
use crate::paths::{self};
use cordon_shell::{
    Class, Context as ShellContext, CwdChange, Dynamic, ExecArg, HazardKind, RepoConfigUse,
    SimpleCommand,
};
use std::path::{Path, PathBuf};

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

fn command_operations(c: &SimpleCommand, base: &Path, ctx: &Context<'_>, out: &mut Operations) {
    let idx = out.commands.len();
    let mut words = Vec::with_capacity(c.args.len() + 1);
    if let Some(p) = &c.program {
        words.push(p.value.clone());
    }
    words.extend(c.args.iter().map(|w| w.value.clone()));
    let out_words = words.clone();
    out.commands.push(SubCommand {
        words,
        text: short(&c.text),
        in_code: c.in_code(),
    });
    let prog_name = c
        .program
        .as_ref()
        .map(|p| p.value.clone())
        .unwrap_or_default();
    let mut push = |mut op: Operation| {
        op.command = Some(idx);
        out.ops.push(op);
    };
    let opaque = |why: String, needs: Option<Vec<String>>| {
        let mut op = Operation::new(OpKind::Opaque, Target::Program(prog_name.clone()), "opaque");
        op.opaque = Some(Opaque { why, needs });
        op
    };

    // The directory relative paths of this sub-command are taken from.
    let cwd: Option<PathBuf> = match &c.cwd {
        CwdChange::Unchanged => Some(base.to_path_buf()),
        CwdChange::Relative(r) => Some(paths::clean(&paths::absolute(
            &paths::expand_home(r, ctx.home),
            base,
        ))),
        _ => None,
    };
    // Words that are dynamic only because they are globs (read-only programs read beneath
    // the glob's literal prefix; `*` never matches a leading dot, and `..` is refused).
    let glob_words: Vec<&str> = c
        .dynamic
        .iter()
        .filter_map(|d| match d {
            Dynamic::Glob(g) => Some(g.as_str()),
            _ => None,
        })
        .collect();
    let read_only = c.effects.class == Class::ReadOnly;
    // In a command run by `find -exec`, `{}` stands for a path `find` found beneath roots
    // whose reads are already operations of the `find` command itself.
    let exec_placeholder =
        |v: &str| c.context == ShellContext::ExecArgument && v.contains("${MATCHED_PATH}");
    // A glob that can name a guarded path is judged as that path: the guard refuses it
    // whatever the file system holds today.
    let glob_guard = |kind: OpKind, w: &cordon_shell::Word| -> Option<Operation> {
        if w.literal {
            return None;
        }
        let g = glob_words
            .iter()
            .find_map(|p| cordon_shell::pattern::pattern_for(p, &w.value))
            .filter(|g| !has_unknown_part(g))?;
        let (what, how) = match kind {
            OpKind::Read | OpKind::List => ("read", "holds credentials"),
            OpKind::Write => ("write", "is protected"),
            OpKind::Delete => ("delete", "must never be deleted"),
            _ => return None,
        };
        let hit = crate::glob::guard_hit(what, g, cwd.as_deref(), ctx.home, ctx.workspace)?;
        let at = cwd.as_deref().unwrap_or(base);
        let mut op = ctx.path_op(kind, &w.value, at, "a glob that can name a guarded path");
        op.hazard = Some((
            hit.guard,
            format!(
                "the glob `{}` can name {}, which {how}",
                w.value, hit.pattern
            ),
        ));
        Some(op)
    };
    let path_op =
        |kind: OpKind, w: &cordon_shell::Word, note: &str, push: &mut dyn FnMut(Operation)| {
            if let Some(op) = glob_guard(kind, w) {
                push(op);
                return;
            }
            let (value, kind) = if w.literal {
                (w.value.clone(), kind)
            } else if exec_placeholder(&w.value) {
                return;
            } else if read_only
                && matches!(kind, OpKind::Read | OpKind::List)
                && glob_words.contains(&w.value.as_str())
                && !w.value.contains("..")
                && !w.value.contains('$')
            {
                (glob_prefix(&w.value), OpKind::List)
            } else {
                push(opaque(
                    format!(
                        "`{}` is a path whose value is only known at run time",
                        w.value
                    ),
                    None,
                ));
                return;
            };
            match &cwd {
                Some(cwd) => push(ctx.path_op(kind, &value, cwd, note)),
                None if value.starts_with('/') || value.starts_with('~') => {
                    push(ctx.path_op(kind, &value, base, note))
                }
                None => push(opaque(
                    format!("`{value}` is relative to a directory only known at run time"),
                    None,
                )),
            }
        };

    // A recursive search for credentials in a directory that holds a secret file
    // (`.env`, a key) reads it, whatever the directory's location says: asked.
    if let Some(pattern) = credential_search(c) {
        let holds_secret = |w: &cordon_shell::Word| {
            let Some(dir) = cwd.as_deref().filter(|_| w.literal) else {
                return true;
            };
            let f = paths::facts_for(&w.value, dir, ctx.home, ctx.fs);
            ctx.fs
                .list_dir(&f.resolved)
                .is_some_and(|names| names.iter().any(|n| crate::guards::is_secret_file_name(n)))
        };
        if c.effects.reads.iter().any(holds_secret) {
            push(opaque(
                format!(
                    "`{prog_name}` searches a directory that holds a secret file for credentials (`{pattern}`)"
                ),
                None,
            ));
        }
    }
    // What the text alone cannot fix.
    let non_path_program = c
        .program
        .as_ref()
        .is_some_and(|p| p.literal && NON_PATH_ARGS.contains(&p.value.as_str()));
    for d in &c.dynamic {
        let why = match d {
            // Programs whose arguments are never paths: runtime values there are harmless
            // (substitutions are analyzed as commands of their own).
            Dynamic::ParameterExpansion(_)
            | Dynamic::CommandSubstitution
            | Dynamic::Arithmetic
            | Dynamic::Glob(_)
            | Dynamic::BraceExpansion(_)
                if non_path_program =>
            {
                continue;
            }
            Dynamic::ParameterExpansion(x)
                if exec_placeholder(&format!("${{{x}}}")) || exec_placeholder(x) =>
            {
                continue;
            }
            // Handled with the paths that carry them.
            Dynamic::Glob(g)
                if read_only
                    && glob_words.contains(&g.as_str())
                    && !g.contains("..")
                    && !g.contains('$') =>
            {
                continue;
            }
            Dynamic::ParameterExpansion(x) => format!("`{x}` is only known at run time"),
            Dynamic::CommandSubstitution => "an argument is the output of another command".into(),
            Dynamic::ProcessSubstitution => "an argument is a process substitution".into(),
            Dynamic::Arithmetic => "an argument is computed by arithmetic".into(),
            Dynamic::Glob(g) => format!("the glob `{g}` expands at run time"),
            Dynamic::BraceExpansion(b) => format!("the brace expansion `{b}` expands at run time"),
            Dynamic::TildeUser(t) => format!("`{t}` names another user's home"),
            Dynamic::NonLiteralProgram => "the program name is only known at run time".into(),
            Dynamic::ShadowedByFunction(f) => {
                format!("`{f}` is redefined as a function in this text")
            }
            Dynamic::ShadowedByAlias(a) => format!("`{a}` is redefined as an alias in this text"),
            Dynamic::RuntimeArguments(a) => {
                format!("`{a}` runs a program with arguments only known at run time")
            }
            Dynamic::TooDeep => "the text nests too deeply to analyze".into(),
            Dynamic::Opaque(o) => o.clone(),
            _ => "part of the command is only known at run time".into(),
        };
        push(opaque(why, None));
    }

    if let Some((key, why)) = risky_git_config(c) {
        // What the merge of a contained run refuses, refused before it runs: the
        // setting would run a program on the host later.
        let mut op = Operation::new(
            OpKind::Write,
            Target::Program(prog_name.clone()),
            "a git setting that runs a program",
        );
        op.hazard = Some((
            "protected-write: git config",
            format!("`{}` sets `{key}`, which {why}", short(&c.text)),
        ));
        push(op);
    }
    if let Some(p) = &c.effects.privilege {
        let mut op = Operation::new(
            OpKind::Exec,
            Target::Program(prog_name.clone()),
            "privilege",
        );
        op.hazard = Some((
            "privilege-escalation",
            format!("`{}` escalates privilege ({p})", short(&c.text)),
        ));
        push(op);
    }
    for w in &c.effects.reads {
        path_op(OpKind::Read, w, "read a file", &mut push);
    }
    // git works on the whole repository that contains its directory, found upwards, and
    // maintains that repository's `.git` by itself.
    if let Some(w) = c.effects.git_repository.as_ref().filter(|w| w.literal)
        && let Some(dir) = cwd.as_deref()
    {
        let start = paths::facts_for(&w.value, dir, ctx.home, ctx.fs).resolved;
        if let Some(top) = start
            .ancestors()
            .find(|a| ctx.fs.metadata(&a.join(".git")).is_some())
        {
            let top_s = top.display().to_string();
            if top != start {
                push(ctx.path_op(
                    OpKind::Read,
                    &top_s,
                    dir,
                    "git works on the whole repository",
                ));
            }
            // A subcommand that changes the repository writes its objects, refs, logs
            // and index.
            if c.effects.class != Class::ReadOnly {
                let mut op = ctx.path_op(
                    OpKind::Write,
                    &format!("{top_s}/.git"),
                    dir,
                    "the repository's own files git maintains (index, objects, refs)",
                );
                op.config = true;
                push(op);
            } else if c.effects.git_refreshes_index {
                for op in index_refresh(ctx, &top_s, dir) {
                    push(op);
                }
            }
        }
    }
    // Programs it runs by itself to do its own job (`tar -z` runs `gzip`).
    for h in &c.effects.helpers {
        let mut op = Operation::new(
            OpKind::Run,
            Target::Program(h.clone()),
            "a program it runs by itself",
        );
        op.config = true;
        push(op);
    }
    // The program's own configuration, start-up and credential files.
    for w in &c.effects.config_reads {
        let Some(dir) = cwd
            .as_deref()
            .or_else(|| (w.value.starts_with('/') || w.value.starts_with('~')).then_some(base))
        else {
            continue;
        };
        let mut op = ctx.path_op(
            OpKind::Read,
            &w.value,
            dir,
            "a file the program reads by itself",
        );
        op.config = true;
        push(op);
    }
    let plain_setting = plain_git_setting(c);
    for w in &c.effects.writes {
        if w.literal && HARMLESS_DEVICES.contains(&w.value.as_str()) {
            continue;
        }
        path_op(
            OpKind::Write,
            w,
            "write a file",
            &mut |mut op: Operation| {
                op.plain_git_setting = plain_setting;
                push(op);
            },
        );
    }
    for w in &c.effects.deletes {
        path_op(OpKind::Delete, w, "delete a path", &mut push);
    }
    for r in &c.redirects {
        let t = &r.target;
        if r.kind.writes_file() || r.kind.reads_file() {
            if t.literal && (t.value.starts_with("/dev/tcp/") || t.value.starts_with("/dev/udp/")) {
                let rest = &t.value[9..];
                let (host, port) = rest.split_once('/').unwrap_or((rest, ""));
                let target = net_target(&format!("{host}:{port}"));
                let mut op =
                    Operation::new(OpKind::Network, target, "open a socket by redirection");
                if matches!(&op.target, Target::Net { dest: Err(_), .. }) {
                    op.invalid = Some(format!(
                        "`{}` is not a destination cordon can check",
                        t.value
                    ));
                }
                push(op);
                continue;
            }
            if t.literal && HARMLESS_DEVICES.contains(&t.value.as_str()) {
                continue;
            }
            if r.kind.writes_file() {
                path_op(OpKind::Write, t, "write a file by redirection", &mut push);
            }
            if r.kind.reads_file() {
                path_op(OpKind::Read, t, "read a file by redirection", &mut push);
            }
        }
    }
    for n in &c.effects.network {
        if !n.literal {
            push(opaque(
                format!("`{}` is a destination only known at run time", n.target),
                None,
            ));
            continue;
        }
        let target = net_target(&n.target);
        let mut op = Operation::new(OpKind::Network, target, "reach the network");
        if let Target::Net { dest: Err(e), .. } = &op.target {
            op.invalid = Some(format!("the destination `{}` was refused: {e}", n.target));
        }
        push(op);
    }
    if c.effects.network_unknown_target {
        push(Operation::new(
            OpKind::Network,
            Target::NetUnknown,
            "reach the network (destination from config)",
        ));
    }
    let cmd_words = &out_words;
    if c.effects.reads_env {
        push(opaque(
            format!("`{prog_name}` prints the environment, which can hold secrets"),
            Some(vec![prog_name.clone()]),
        ));
    }
    for e in &c.effects.executes {
        // The rule must name the argument that runs code as it appears in the command (a
        // script path, `-exec`, `test`), so look for it among the words.
        let arg = if cmd_words.contains(&e.arg) || !cmd_words.contains(&e.detail) {
            e.arg.clone()
        } else {
            e.detail.clone()
        };
        let needs = vec![e.program.clone(), arg];
        push(opaque(exec_reason(e), Some(needs)));
    }
    for name in &c.effects.influences_env {
        push(opaque(
            format!("setting `{name}` changes how later commands run"),
            None,
        ));
    }
    if c.effects.runs_repo_config != RepoConfigUse::None
        && let Some(cwd) = &cwd
        && let Some(key) = crate::gitconfig::executing_key(cwd, ctx.fs)
    {
        push(opaque(
            format!("the repository's git config sets `{key}`, which runs a program"),
            None,
        ));
    }
    // The program run itself.
    match (&c.program, c.effects.class) {
        (None, _) => {}
        (Some(_), Class::ReadOnly) if c.effects.executes.is_empty() => push(Operation::new(
            OpKind::Run,
            Target::Program(prog_name.clone()),
            "run a read-only program",
        )),
        (Some(p), Class::Unknown) if c.effects.executes.is_empty() => push(opaque(
            format!("`{}` is a program cordon does not know", p.value),
            Some(vec![p.value.clone()]),
        )),
        (Some(_), _) => push(Operation::new(
            OpKind::Exec,
            Target::Program(prog_name.clone()),
            "run a program",
        )),
    }
    // Paths named inside code: checked against the guards as a read, and as a write
    // when the code may write. Last, so that a call they do not refuse is explained by
    // its other operations.
    for w in c.effects.mentions.iter().filter(|w| w.literal) {
        let Some(dir) = cwd
            .as_deref()
            .or_else(|| (w.value.starts_with('/') || w.value.starts_with('~')).then_some(base))
        else {
            continue;
        };
        let kinds: &[OpKind] = if c.effects.mentions_may_write {
            &[OpKind::Read, OpKind::Write]
        } else {
            &[OpKind::Read]
        };
        for &kind in kinds {
            let mut op = ctx.path_op(kind, &w.value, dir, "a path named in code");
            op.mention = true;
            push(op);
        }
    }
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
