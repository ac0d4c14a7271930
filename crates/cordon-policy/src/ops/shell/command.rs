//! The operations of one analyzed simple command, in the order the policy explains
//! them: what the text cannot fix, settings and privilege, the files it reads, writes
//! and deletes, redirections, the network, the code it runs, the program itself, and
//! last the paths named inside code.

use super::{HARMLESS_DEVICES, NON_PATH_ARGS, index_refresh, short};
use super::{credential_search, exec_reason, glob_prefix, has_unknown_part};
use super::{plain_git_setting, risky_git_config};
use crate::ops::{Context, OpKind, Opaque, Operation, Operations, SubCommand, Target, net_target};
use crate::paths;
use cordon_shell::{
    Class, Context as ShellContext, CwdChange, Dynamic, RepoConfigUse, SimpleCommand, Word,
};
use std::path::{Path, PathBuf};

/// Add the operations of command `c` (relative paths from `base`) to `out`.
pub(super) fn command_operations(
    c: &SimpleCommand,
    base: &Path,
    ctx: &Context<'_>,
    out: &mut Operations,
) {
    let cwd = command_dir(c, base, ctx);
    let mut ops = CommandOps::new(c, base, cwd.as_deref(), ctx, out);
    ops.credential_search();
    ops.dynamic_parts();
    ops.risky_git_config();
    ops.privilege();
    for w in &c.effects.reads {
        ops.push_path(OpKind::Read, w, "read a file");
    }
    ops.git_repository();
    ops.helpers_and_config_reads();
    ops.writes_and_deletes();
    ops.redirects();
    ops.network();
    ops.code_it_runs();
    ops.program_run();
    ops.mentions();
}

/// One command being turned into operations, with what every step needs to know.
struct CommandOps<'a, 'f> {
    c: &'a SimpleCommand,
    base: &'a Path,
    ctx: &'a Context<'f>,
    out: &'a mut Operations,
    /// The index of the command's [`SubCommand`] in `out`.
    idx: usize,
    /// The program and its arguments, as words.
    words: Vec<String>,
    prog_name: String,
    /// The directory relative paths of this command are taken from; `None` when it is
    /// only known at run time.
    cwd: Option<&'a Path>,
    /// Words that are dynamic only because they are globs (read-only programs read
    /// beneath the glob's literal prefix; `*` never matches a leading dot, and `..` is
    /// refused).
    glob_words: Vec<&'a str>,
    read_only: bool,
}

impl<'a, 'f> CommandOps<'a, 'f> {
    /// Record the command as a sub-command of the call and gather its facts.
    fn new(
        c: &'a SimpleCommand,
        base: &'a Path,
        cwd: Option<&'a Path>,
        ctx: &'a Context<'f>,
        out: &'a mut Operations,
    ) -> Self {
        let idx = out.commands.len();
        let mut words = Vec::with_capacity(c.args.len() + 1);
        if let Some(p) = &c.program {
            words.push(p.value.clone());
        }
        words.extend(c.args.iter().map(|w| w.value.clone()));
        out.commands.push(SubCommand {
            words: words.clone(),
            text: short(&c.text),
            in_code: c.in_code(),
        });
        let prog_name = c
            .program
            .as_ref()
            .map(|p| p.value.clone())
            .unwrap_or_default();
        let glob_words = c
            .dynamic
            .iter()
            .filter_map(|d| match d {
                Dynamic::Glob(g) => Some(g.as_str()),
                _ => None,
            })
            .collect();
        Self {
            c,
            base,
            ctx,
            out,
            idx,
            words,
            prog_name,
            cwd,
            glob_words,
            read_only: c.effects.class == Class::ReadOnly,
        }
    }

    fn push(&mut self, mut op: Operation) {
        op.command = Some(self.idx);
        self.out.ops.push(op);
    }

    /// What the text alone cannot fix, with the words a rule must name to allow it.
    fn opaque(&self, why: String, needs: Option<Vec<String>>) -> Operation {
        let mut op = Operation::new(
            OpKind::Opaque,
            Target::Program(self.prog_name.clone()),
            "opaque",
        );
        op.opaque = Some(Opaque { why, needs });
        op
    }

    /// In a command run by `find -exec`, `{}` stands for a path `find` found beneath
    /// roots whose reads are already operations of the `find` command itself.
    fn exec_placeholder(&self, v: &str) -> bool {
        self.c.context == ShellContext::ExecArgument && v.contains("${MATCHED_PATH}")
    }

    /// A glob of a read-only command that reads beneath its literal prefix.
    fn readable_glob(&self, g: &str) -> bool {
        self.read_only && self.glob_words.contains(&g) && !g.contains("..") && !g.contains('$')
    }

    /// The directory a path named in a file or code is taken from: the command's, or
    /// `base` for an absolute or home path when the command's is unknown.
    fn dir_for(&self, w: &Word) -> Option<&'a Path> {
        self.cwd
            .or_else(|| (w.value.starts_with('/') || w.value.starts_with('~')).then_some(self.base))
    }

    /// A glob that can name a guarded path is judged as that path: the guard refuses it
    /// whatever the file system holds today.
    fn glob_guard(&self, kind: OpKind, w: &Word) -> Option<Operation> {
        if w.literal {
            return None;
        }
        let g = self
            .glob_words
            .iter()
            .find_map(|p| cordon_shell::pattern::pattern_for(p, &w.value))
            .filter(|g| !has_unknown_part(g))?;
        let (what, how) = match kind {
            OpKind::Read | OpKind::List => ("read", "holds credentials"),
            OpKind::Write => ("write", "is protected"),
            OpKind::Delete => ("delete", "must never be deleted"),
            _ => return None,
        };
        let cwd = self.cwd;
        let hit = crate::glob::guard_hit(what, g, cwd, self.ctx.home, self.ctx.workspace)?;
        let at = cwd.unwrap_or(self.base);
        let mut op = self
            .ctx
            .path_op(kind, &w.value, at, "a glob that can name a guarded path");
        op.hazard = Some((
            hit.guard,
            format!(
                "the glob `{}` can name {}, which {how}",
                w.value, hit.pattern
            ),
        ));
        Some(op)
    }

    /// The operation on the path in `w`: the path itself, a guarded path a glob can
    /// name, the directory a readable glob lists, or opaque when the path (or the
    /// directory it is relative to) is only known at run time. `None` for the path
    /// `find -exec` hands its command.
    fn path_operation(&self, kind: OpKind, w: &Word, note: &str) -> Option<Operation> {
        if let Some(op) = self.glob_guard(kind, w) {
            return Some(op);
        }
        let (value, kind) = if w.literal {
            (w.value.clone(), kind)
        } else if self.exec_placeholder(&w.value) {
            return None;
        } else if matches!(kind, OpKind::Read | OpKind::List) && self.readable_glob(&w.value) {
            (glob_prefix(&w.value), OpKind::List)
        } else {
            return Some(self.opaque(
                format!(
                    "`{}` is a path whose value is only known at run time",
                    w.value
                ),
                None,
            ));
        };
        Some(match self.cwd {
            Some(cwd) => self.ctx.path_op(kind, &value, cwd, note),
            None if value.starts_with('/') || value.starts_with('~') => {
                self.ctx.path_op(kind, &value, self.base, note)
            }
            None => self.opaque(
                format!("`{value}` is relative to a directory only known at run time"),
                None,
            ),
        })
    }

    fn push_path(&mut self, kind: OpKind, w: &Word, note: &str) {
        if let Some(op) = self.path_operation(kind, w, note) {
            self.push(op);
        }
    }

    /// A recursive search for credentials in a directory that holds a secret file
    /// (`.env`, a key) reads it, whatever the directory's location says: asked.
    fn credential_search(&mut self) {
        let Some(pattern) = credential_search(self.c) else {
            return;
        };
        let (ctx, cwd) = (self.ctx, self.cwd);
        let holds_secret = |w: &Word| {
            let Some(dir) = cwd.filter(|_| w.literal) else {
                return true;
            };
            let f = paths::facts_for(&w.value, dir, ctx.home, ctx.fs);
            ctx.fs
                .list_dir(&f.resolved)
                .is_some_and(|names| names.iter().any(|n| crate::guards::is_secret_file_name(n)))
        };
        if self.c.effects.reads.iter().any(holds_secret) {
            let op = self.opaque(
                format!(
                    "`{}` searches a directory that holds a secret file for credentials (`{pattern}`)",
                    self.prog_name
                ),
                None,
            );
            self.push(op);
        }
    }

    /// What the text alone cannot fix: one opaque operation for each dynamic part that
    /// matters.
    fn dynamic_parts(&mut self) {
        let non_path_program = self
            .c
            .program
            .as_ref()
            .is_some_and(|p| p.literal && NON_PATH_ARGS.contains(&p.value.as_str()));
        for d in &self.c.dynamic {
            if let Some(why) = self.dynamic_reason(d, non_path_program) {
                let op = self.opaque(why, None);
                self.push(op);
            }
        }
    }

    /// Why a dynamic part leaves the command unknown; `None` when it is harmless here
    /// or handled with the paths that carry it.
    fn dynamic_reason(&self, d: &Dynamic, non_path_program: bool) -> Option<String> {
        Some(match d {
            // Programs whose arguments are never paths: runtime values there are harmless
            // (substitutions are analyzed as commands of their own).
            Dynamic::ParameterExpansion(_)
            | Dynamic::CommandSubstitution
            | Dynamic::Arithmetic
            | Dynamic::Glob(_)
            | Dynamic::BraceExpansion(_)
                if non_path_program =>
            {
                return None;
            }
            Dynamic::ParameterExpansion(x)
                if self.exec_placeholder(&format!("${{{x}}}")) || self.exec_placeholder(x) =>
            {
                return None;
            }
            // Handled with the paths that carry them.
            Dynamic::Glob(g) if self.readable_glob(g) => return None,
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
        })
    }

    /// What the merge of a contained run refuses, refused before it runs: a git setting
    /// that would run a program on the host later.
    fn risky_git_config(&mut self) {
        let Some((key, why)) = risky_git_config(self.c) else {
            return;
        };
        let mut op = Operation::new(
            OpKind::Write,
            Target::Program(self.prog_name.clone()),
            "a git setting that runs a program",
        );
        op.hazard = Some((
            "protected-write: git config",
            format!("`{}` sets `{key}`, which {why}", short(&self.c.text)),
        ));
        self.push(op);
    }

    fn privilege(&mut self) {
        let Some(p) = &self.c.effects.privilege else {
            return;
        };
        let mut op = Operation::new(
            OpKind::Exec,
            Target::Program(self.prog_name.clone()),
            "privilege",
        );
        op.hazard = Some((
            "privilege-escalation",
            format!("`{}` escalates privilege ({p})", short(&self.c.text)),
        ));
        self.push(op);
    }

    /// git works on the whole repository that contains its directory, found upwards,
    /// and maintains that repository's `.git` by itself: a subcommand that changes the
    /// repository writes its objects, refs, logs and index; one that only refreshes
    /// the index writes that.
    fn git_repository(&mut self) {
        let ctx = self.ctx;
        let (Some(w), Some(dir)) = (
            self.c.effects.git_repository.as_ref().filter(|w| w.literal),
            self.cwd,
        ) else {
            return;
        };
        let start = paths::facts_for(&w.value, dir, ctx.home, ctx.fs).resolved;
        let Some(top) = start
            .ancestors()
            .find(|a| ctx.fs.metadata(&a.join(".git")).is_some())
        else {
            return;
        };
        let top_s = top.display().to_string();
        if top != start {
            self.push(ctx.path_op(
                OpKind::Read,
                &top_s,
                dir,
                "git works on the whole repository",
            ));
        }
        if self.c.effects.class != Class::ReadOnly {
            let mut op = ctx.path_op(
                OpKind::Write,
                &format!("{top_s}/.git"),
                dir,
                "the repository's own files git maintains (index, objects, refs)",
            );
            op.config = true;
            self.push(op);
        } else if self.c.effects.git_refreshes_index {
            for op in index_refresh(ctx, &top_s, dir) {
                self.push(op);
            }
        }
    }

    /// Programs it runs by itself to do its own job (`tar -z` runs `gzip`), and the
    /// program's own configuration, start-up and credential files.
    fn helpers_and_config_reads(&mut self) {
        let c = self.c;
        for h in &c.effects.helpers {
            let mut op = Operation::new(
                OpKind::Run,
                Target::Program(h.clone()),
                "a program it runs by itself",
            );
            op.config = true;
            self.push(op);
        }
        for w in &c.effects.config_reads {
            let Some(dir) = self.dir_for(w) else {
                continue;
            };
            let mut op = self.ctx.path_op(
                OpKind::Read,
                &w.value,
                dir,
                "a file the program reads by itself",
            );
            op.config = true;
            self.push(op);
        }
    }

    /// The files it writes (a plain git setting marked as such) and the paths it
    /// deletes; writes to harmless devices change nothing.
    fn writes_and_deletes(&mut self) {
        let c = self.c;
        let plain_setting = plain_git_setting(c);
        for w in &c.effects.writes {
            if w.literal && HARMLESS_DEVICES.contains(&w.value.as_str()) {
                continue;
            }
            if let Some(mut op) = self.path_operation(OpKind::Write, w, "write a file") {
                op.plain_git_setting = plain_setting;
                self.push(op);
            }
        }
        for w in &c.effects.deletes {
            self.push_path(OpKind::Delete, w, "delete a path");
        }
    }

    /// Files read and written by redirection, and sockets opened by redirecting to
    /// `/dev/tcp/HOST/PORT`.
    fn redirects(&mut self) {
        let c = self.c;
        for r in &c.redirects {
            let t = &r.target;
            if !(r.kind.writes_file() || r.kind.reads_file()) {
                continue;
            }
            if t.literal && (t.value.starts_with("/dev/tcp/") || t.value.starts_with("/dev/udp/")) {
                self.push(socket_redirect(&t.value));
                continue;
            }
            if t.literal && HARMLESS_DEVICES.contains(&t.value.as_str()) {
                continue;
            }
            if r.kind.writes_file() {
                self.push_path(OpKind::Write, t, "write a file by redirection");
            }
            if r.kind.reads_file() {
                self.push_path(OpKind::Read, t, "read a file by redirection");
            }
        }
    }

    /// The destinations it reaches: each checked, opaque when only known at run time.
    fn network(&mut self) {
        let c = self.c;
        for n in &c.effects.network {
            if !n.literal {
                let op = self.opaque(
                    format!("`{}` is a destination only known at run time", n.target),
                    None,
                );
                self.push(op);
                continue;
            }
            let target = net_target(&n.target);
            let mut op = Operation::new(OpKind::Network, target, "reach the network");
            if let Target::Net { dest: Err(e), .. } = &op.target {
                op.invalid = Some(format!("the destination `{}` was refused: {e}", n.target));
            }
            self.push(op);
        }
        if c.effects.network_unknown_target {
            self.push(Operation::new(
                OpKind::Network,
                Target::NetUnknown,
                "reach the network (destination from config)",
            ));
        }
    }

    /// What makes the command run code or show secrets the text does not: printing the
    /// environment, arguments that run code, variables that change later commands, and
    /// a repository's git config that runs a program.
    fn code_it_runs(&mut self) {
        let c = self.c;
        if c.effects.reads_env {
            let op = self.opaque(
                format!(
                    "`{}` prints the environment, which can hold secrets",
                    self.prog_name
                ),
                Some(vec![self.prog_name.clone()]),
            );
            self.push(op);
        }
        for e in &c.effects.executes {
            // The rule must name the argument that runs code as it appears in the
            // command (a script path, `-exec`, `test`), so look for it among the words.
            let arg = if self.words.contains(&e.arg) || !self.words.contains(&e.detail) {
                e.arg.clone()
            } else {
                e.detail.clone()
            };
            let needs = vec![e.program.clone(), arg];
            let op = self.opaque(exec_reason(e), Some(needs));
            self.push(op);
        }
        for name in &c.effects.influences_env {
            let op = self.opaque(
                format!("setting `{name}` changes how later commands run"),
                None,
            );
            self.push(op);
        }
        if c.effects.runs_repo_config != RepoConfigUse::None
            && let Some(cwd) = self.cwd
            && let Some(key) = crate::gitconfig::executing_key(cwd, self.ctx.fs)
        {
            let op = self.opaque(
                format!("the repository's git config sets `{key}`, which runs a program"),
                None,
            );
            self.push(op);
        }
    }

    /// The program run itself: a read-only program, one cordon does not know, or a
    /// program that changes things.
    fn program_run(&mut self) {
        let c = self.c;
        let op = match (&c.program, c.effects.class) {
            (None, _) => return,
            (Some(_), Class::ReadOnly) if c.effects.executes.is_empty() => Operation::new(
                OpKind::Run,
                Target::Program(self.prog_name.clone()),
                "run a read-only program",
            ),
            (Some(p), Class::Unknown) if c.effects.executes.is_empty() => self.opaque(
                format!("`{}` is a program cordon does not know", p.value),
                Some(vec![p.value.clone()]),
            ),
            (Some(_), _) => Operation::new(
                OpKind::Exec,
                Target::Program(self.prog_name.clone()),
                "run a program",
            ),
        };
        self.push(op);
    }

    /// Paths named inside code: checked against the guards as a read, and as a write
    /// when the code may write. Last, so that a call they do not refuse is explained by
    /// its other operations.
    fn mentions(&mut self) {
        let c = self.c;
        let kinds: &[OpKind] = if c.effects.mentions_may_write {
            &[OpKind::Read, OpKind::Write]
        } else {
            &[OpKind::Read]
        };
        for w in c.effects.mentions.iter().filter(|w| w.literal) {
            let Some(dir) = self.dir_for(w) else {
                continue;
            };
            for &kind in kinds {
                let mut op = self
                    .ctx
                    .path_op(kind, &w.value, dir, "a path named in code");
                op.mention = true;
                self.push(op);
            }
        }
    }
}

/// The directory relative paths of `c` are taken from: `base`, or where a `cd` earlier
/// in the text went; `None` when that is only known at run time.
fn command_dir(c: &SimpleCommand, base: &Path, ctx: &Context<'_>) -> Option<PathBuf> {
    match &c.cwd {
        CwdChange::Unchanged => Some(base.to_path_buf()),
        CwdChange::Relative(r) => Some(paths::clean(&paths::absolute(
            &paths::expand_home(r, ctx.home),
            base,
        ))),
        _ => None,
    }
}

/// The socket a redirection to `/dev/tcp/HOST/PORT` (or `/dev/udp/…`) opens; invalid
/// when the destination is not one cordon can check.
fn socket_redirect(path: &str) -> Operation {
    let rest = &path[9..];
    let (host, port) = rest.split_once('/').unwrap_or((rest, ""));
    let target = net_target(&format!("{host}:{port}"));
    let mut op = Operation::new(OpKind::Network, target, "open a socket by redirection");
    if matches!(&op.target, Target::Net { dest: Err(_), .. }) {
        op.invalid = Some(format!("`{path}` is not a destination cordon can check"));
    }
    op
}
