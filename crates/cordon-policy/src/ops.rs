//! From a tool call to the operations it performs.
//!
//! A file tool is one operation; a patch is one per path; a fetch is one network operation
//! per URL; a shell command is every operation its analysis finds (paths read, written and
//! deleted; origins reached; programs run) plus an opaque operation for anything the
//! analysis cannot see through. Every operation carries the facts the steps need (resolved
//! paths, locations, normalized origins), so judging is a pure function of them.

use crate::facts::FileFacts;
use crate::net::{Authority, Host, Origin};
use crate::paths::{self, Location, PathFacts};
use crate::request::{Action, Request, ToolKind};
use cordon_shell::{
    Analysis, Class, Context as ShellContext, CwdChange, Dynamic, ExecArg, HazardKind,
    RepoConfigUse, SimpleCommand,
};
use std::path::{Path, PathBuf};

/// The kind of an operation. In JSON (a finding's `op`) it is the lowercase name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum OpKind {
    /// Read a file.
    Read,
    /// List or search beneath a directory.
    List,
    /// Create or change a file.
    Write,
    /// Delete a file or directory.
    Delete,
    /// Run a program known to be read-only (adds nothing beyond the paths it reads).
    Run,
    /// Run a program that is not known to be read-only.
    Exec,
    /// Reach a network origin.
    Network,
    /// Search the web.
    Search,
    /// Call an MCP tool.
    Mcp,
    /// Something the analysis cannot see through.
    Opaque,
}

impl OpKind {
    /// The name used in findings.
    pub fn as_str(self) -> &'static str {
        match self {
            OpKind::Read => "read",
            OpKind::List => "list",
            OpKind::Write => "write",
            OpKind::Delete => "delete",
            OpKind::Run => "run",
            OpKind::Exec => "exec",
            OpKind::Network => "network",
            OpKind::Search => "search",
            OpKind::Mcp => "mcp",
            OpKind::Opaque => "opaque",
        }
    }

    /// Does this operation only read (what the `untrusted` approval policy runs unasked)?
    pub fn reads_only(self) -> bool {
        matches!(self, OpKind::Read | OpKind::List | OpKind::Run)
    }

    /// Does this operation change anything (what `plan` mode denies)?
    pub fn modifies(self) -> bool {
        matches!(
            self,
            OpKind::Write | OpKind::Delete | OpKind::Exec | OpKind::Mcp | OpKind::Opaque
        )
    }
}

impl std::fmt::Display for OpKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What an operation acts on.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Target {
    /// A path with its facts.
    Path(PathFacts),
    /// A network destination; `Err` when the text could not be normalized.
    Net {
        /// The destination as written.
        text: String,
        /// Host and port after normalization.
        dest: Result<(Host, u16), String>,
        /// The full origin, for URLs.
        origin: Option<Origin>,
    },
    /// A destination the analysis could not name.
    NetUnknown,
    /// A program.
    Program(String),
    /// An MCP server and tool.
    Mcp {
        /// Server.
        server: String,
        /// Tool.
        tool: String,
    },
    /// Free text (a search query, an unknown tool name, unparsed shell).
    Text(String),
}

impl Target {
    /// A short rendering for findings.
    pub fn display(&self) -> String {
        match self {
            Target::Path(f) => f.literal.display().to_string(),
            Target::Net { text, dest, .. } => match dest {
                Ok((h, p)) => format!("{h}:{p}"),
                Err(_) => text.clone(),
            },
            Target::NetUnknown => "(a destination known only at run time)".into(),
            Target::Program(p) => p.clone(),
            Target::Mcp { server, tool } => format!("mcp__{server}__{tool}"),
            Target::Text(t) => t.clone(),
        }
    }
}

/// Why an operation is opaque, and what an allow rule must name literally to cover it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opaque {
    /// One sentence.
    pub why: String,
    /// Words an allow rule must contain literally (program and code-executing argument);
    /// `None` when no rule can cover it (text that does not parse, runtime values).
    pub needs: Option<Vec<String>>,
}

/// A shell sub-command, as Bash rules see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubCommand {
    /// Program and arguments, after wrappers were peeled.
    pub words: Vec<String>,
    /// The text as written.
    pub text: String,
}

/// One operation of a call.
#[derive(Debug, Clone, PartialEq)]
pub struct Operation {
    /// What it does.
    pub kind: OpKind,
    /// What it acts on.
    pub target: Target,
    /// Inside or outside the workspace, for paths.
    pub location: Option<Location>,
    /// The shell sub-command it came from (index into [`Operations::commands`]).
    pub command: Option<usize>,
    /// A guard that analysis already tripped (fetch-to-exec, privilege escalation, …).
    pub hazard: Option<(&'static str, String)>,
    /// Set when the analysis cannot see through this operation.
    pub opaque: Option<Opaque>,
    /// Set when the operation is malformed (a URL that does not normalize).
    pub invalid: Option<String>,
    /// Set for a path named inside code the analysis does not follow (a string in
    /// `python3 -c` code, an argument handed to a script): whether the code reads or
    /// writes it is unknown, so it is one read and one write operation that only the
    /// guards and deny rules judge. It never asks, and never allows more than the rest
    /// of the call.
    pub mention: bool,
    /// For MCP-free writes: the text an explanation shows.
    pub note: String,
}

impl Operation {
    fn new(kind: OpKind, target: Target, note: impl Into<String>) -> Self {
        Operation {
            kind,
            target,
            location: None,
            command: None,
            hazard: None,
            opaque: None,
            invalid: None,
            mention: false,
            note: note.into(),
        }
    }
}

/// Every operation of one call, with the shell sub-commands they came from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Operations {
    /// The operations.
    pub ops: Vec<Operation>,
    /// Sub-commands of a shell call.
    pub commands: Vec<SubCommand>,
    /// The rule-facing tool kind of the call.
    pub tool_kind: Option<ToolKind>,
    /// The tool name as the harness spelled it.
    pub tool_name: String,
    /// The parsed shell structure, for `--explain`.
    pub analysis: Option<Analysis>,
}

/// Facts the builder needs besides the request.
pub struct Context<'a> {
    /// Workspace and writable roots (resolved).
    pub roots: &'a [PathBuf],
    /// HOME as configured.
    pub home: &'a Path,
    /// The workspace (resolved).
    pub workspace: &'a Path,
    /// The file system.
    pub fs: &'a dyn FileFacts,
}

impl Context<'_> {
    fn path_op(
        &self,
        kind: OpKind,
        written: &str,
        cwd: &Path,
        note: impl Into<String>,
    ) -> Operation {
        let facts = paths::facts_for(written, cwd, self.home, self.fs);
        let location = paths::locate(&facts, self.roots);
        let mut op = Operation::new(kind, Target::Path(facts), note);
        op.location = Some(location);
        op
    }
}

/// Normalize a network destination as written in a request or command: an http(s) URL, a
/// `scheme://host[:port]/…` URL of another scheme, `user@host:path` (scp/git style), or a
/// bare `host[:port]`.
pub fn net_target(text: &str) -> Target {
    // pip's and npm's VCS requirements (`git+https://…`, `hg+ssh://…`) reach the URL
    // after the `+`.
    for vcs in ["git+", "hg+", "svn+", "bzr+"] {
        if let Some(url) = text.get(vcs.len()..)
            && text[..vcs.len()].eq_ignore_ascii_case(vcs)
            && url.contains("://")
        {
            let mut t = net_target(url);
            if let Target::Net { text: written, .. } = &mut t {
                *written = text.to_owned();
            }
            return t;
        }
    }
    let dest = |r: Result<Authority, crate::net::OriginError>| {
        r.map(|a| (a.host, a.port)).map_err(|e| e.to_string())
    };
    let lower = text.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        let o = Origin::parse_url(text);
        return Target::Net {
            text: text.into(),
            dest: o
                .as_ref()
                .map(|o| (o.host.clone(), o.port))
                .map_err(|e| e.to_string()),
            origin: o.ok(),
        };
    }
    if let Some((scheme, rest)) = text.split_once("://") {
        let port = match scheme.to_ascii_lowercase().as_str() {
            "ssh" | "git+ssh" | "sftp" | "scp" => 22,
            "git" => 9418,
            "ftp" => 21,
            "ws" => 80,
            "wss" => 443,
            "rsync" => 873,
            _ => 0,
        };
        let auth = rest.split(['/', '?', '#']).next().unwrap_or("");
        // ssh-style URLs legitimately carry a user name; strip it (never a password).
        let auth = match auth.rsplit_once('@') {
            Some((user, host)) if matches!(port, 22) && !user.contains(':') => host,
            _ => auth,
        };
        let d = if port == 0 {
            Err(format!("`{scheme}://` is not a scheme cordon can check"))
        } else {
            dest(Authority::parse(auth, port))
        };
        return Target::Net {
            text: text.into(),
            dest: d,
            origin: None,
        };
    }
    // scp-like `user@host:path` or `host:path`.
    if let Some((head, path)) = text.split_once(':')
        && !head.is_empty()
        && !head.contains('/')
        && (text.contains('@') || !path.chars().all(|c| c.is_ascii_digit()))
    {
        let host = head.rsplit_once('@').map_or(head, |(_, h)| h);
        return Target::Net {
            text: text.into(),
            dest: dest(Authority::parse(host, 22)),
            origin: None,
        };
    }
    Target::Net {
        text: text.into(),
        dest: dest(Authority::parse(text, 443)),
        origin: None,
    }
}

/// Build the operations of a request.
pub fn operations(req: &Request, ctx: &Context<'_>) -> Operations {
    let cwd = req
        .cwd
        .as_deref()
        .map(paths::clean)
        .unwrap_or_else(|| ctx.workspace.to_path_buf());
    let mut out = Operations {
        tool_kind: Some(req.kind()),
        tool_name: req.tool.clone(),
        ..Default::default()
    };
    let action = match req.action() {
        Ok(a) => a,
        Err(e) => {
            let mut op = Operation::new(OpKind::Opaque, Target::Text(req.tool.clone()), "invalid");
            op.invalid = Some(e.0);
            out.ops.push(op);
            return out;
        }
    };
    match action {
        Action::Read { path } => {
            out.ops
                .push(ctx.path_op(OpKind::Read, &path, &cwd, "read a file"))
        }
        Action::List { path } => {
            out.ops
                .push(ctx.path_op(OpKind::List, &path, &cwd, "list or search a directory"))
        }
        Action::ReadMany { files, dirs } => {
            for f in files {
                out.ops
                    .push(ctx.path_op(OpKind::Read, &f, &cwd, "read a file (read_many_files)"));
            }
            for d in dirs {
                out.ops.push(ctx.path_op(
                    OpKind::List,
                    &d,
                    &cwd,
                    "read files beneath a directory (read_many_files)",
                ));
            }
        }
        Action::Write { paths } => {
            for p in paths {
                out.ops
                    .push(ctx.path_op(OpKind::Write, &p, &cwd, "write a file"));
            }
        }
        Action::Delete { paths } => {
            for p in paths {
                out.ops
                    .push(ctx.path_op(OpKind::Delete, &p, &cwd, "delete a file"));
            }
        }
        Action::Patch { writes, deletes } => {
            for p in writes {
                out.ops
                    .push(ctx.path_op(OpKind::Write, &p, &cwd, "write a file (patch)"));
            }
            for p in deletes {
                out.ops
                    .push(ctx.path_op(OpKind::Delete, &p, &cwd, "delete a file (patch)"));
            }
        }
        Action::Fetch {
            urls,
            method,
            unparsed,
        } => {
            if unparsed {
                let mut op = Operation::new(
                    OpKind::Opaque,
                    Target::Text(req.tool.clone()),
                    "fetch without a URL cordon can read",
                );
                op.opaque = Some(Opaque {
                    why: "the fetch names no http(s) URL that cordon can check".into(),
                    needs: None,
                });
                out.ops.push(op);
            }
            for u in urls {
                let target = net_target(&u);
                let mut op = Operation::new(OpKind::Network, target, format!("{method} {u}"));
                match &op.target {
                    Target::Net {
                        origin: None,
                        dest: Err(e),
                        ..
                    } => op.invalid = Some(format!("the URL `{u}` was refused: {e}")),
                    Target::Net { origin: None, .. } => {
                        op.invalid = Some(format!("`{u}` is not an http or https URL"))
                    }
                    _ => {}
                }
                out.ops.push(op);
            }
        }
        Action::WebSearch { query } => {
            out.ops.push(Operation::new(
                OpKind::Search,
                Target::Text(query),
                "search the web",
            ));
        }
        Action::Mcp { server, tool } => {
            out.ops.push(Operation::new(
                OpKind::Mcp,
                Target::Mcp { server, tool },
                "call an MCP tool",
            ));
        }
        Action::Unknown { tool } => {
            let mut op = Operation::new(OpKind::Opaque, Target::Text(tool.clone()), "unknown tool");
            op.opaque = Some(Opaque {
                why: format!("`{tool}` is a tool cordon does not know"),
                needs: Some(vec![tool]),
            });
            out.ops.push(op);
        }
        Action::Shell { command, workdir } => {
            let base = match workdir {
                Some(w) => paths::clean(&paths::absolute(&paths::expand_home(&w, ctx.home), &cwd)),
                None => cwd,
            };
            shell_operations(&command, &base, ctx, &mut out);
        }
    }
    out
}

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

fn shell_operations(text: &str, cwd: &Path, ctx: &Context<'_>, out: &mut Operations) {
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
    for w in &c.effects.writes {
        if w.literal && HARMLESS_DEVICES.contains(&w.value.as_str()) {
            continue;
        }
        path_op(OpKind::Write, w, "write a file", &mut push);
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
    let value = kv.get(1).map(|w| w.value.as_str());
    let why = crate::gitconfig::risky_key(&key.value, value)?;
    Some((key.value.clone(), why))
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
