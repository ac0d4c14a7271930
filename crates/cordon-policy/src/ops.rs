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
use cordon_shell::Analysis;
use std::path::{Path, PathBuf};

mod shell;
use shell::shell_operations;

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
    /// Run by another program from code it was handed, not written in the call's own
    /// text (see `SimpleCommand::in_code`): no remembered rule names it.
    pub in_code: bool,
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
    /// Set for a file the program reads by itself, named by no argument (its
    /// configuration, start-up or credential file: `git` reads `~/.gitconfig`, `wget`
    /// reads `~/.netrc`). It is named (explanations, audit, the soundness harness) and
    /// judged by deny rules alone: it happens on every run of the program, and a
    /// credential in it goes only to the server the program talks to, which the
    /// network operation judges. Writing such a file is a guard.
    pub config: bool,
    /// Set for a write by `git config` that sets one key, named literally with a literal
    /// value, that only names the user or shapes git's output (`user.email`,
    /// `init.defaultBranch`, `color.ui`): the guard of the user's git configuration
    /// (`~/.gitconfig`, `~/.config/git`), which
    /// exists for the keys that run programs, redirect git or its credentials, or change
    /// what it trusts, does not judge it. Every other guard of the path, and of the file
    /// it resolves to, still does.
    pub plain_git_setting: bool,
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
            config: false,
            plain_git_setting: false,
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
    /// The guarded files, listed the first time a path with several hard links needs
    /// them.
    pub guarded: std::cell::OnceCell<crate::twins::GuardedFiles>,
}

impl Context<'_> {
    fn path_op(
        &self,
        kind: OpKind,
        written: &str,
        cwd: &Path,
        note: impl Into<String>,
    ) -> Operation {
        let mut facts = paths::facts_for(written, cwd, self.home, self.fs);
        // One file under several names: judged as the guarded file it may be.
        if facts.nlink > 1
            && let Some(id) = self.fs.file_id(&facts.resolved)
        {
            let guarded = self
                .guarded
                .get_or_init(|| crate::twins::GuardedFiles::list(self.home, self.fs));
            facts.same_file = guarded
                .named(id)
                .filter(|p| *p != facts.resolved)
                .map(Path::to_path_buf);
        }
        let location = paths::locate(&facts, self.roots);
        let mut op = Operation::new(kind, Target::Path(facts), note);
        op.location = Some(location);
        op
    }
}

/// The operations of one glob of a search tool: a guard it trips (judged as the path it
/// can name), the directories it lists beyond the searched one, or why it is opaque.
fn search_operations(
    path: &str,
    glob: &str,
    cwd: &Path,
    ctx: &Context<'_>,
    ops: &mut Vec<Operation>,
) {
    let r = crate::search::reach(path, glob, cwd, ctx.home, ctx.workspace);
    if let Some((hit, judged)) = r.guard {
        let mut op = ctx.path_op(
            OpKind::List,
            &judged,
            cwd,
            "a glob that can name a guarded path",
        );
        op.hazard = Some((
            hit.guard,
            format!(
                "the glob `{glob}` searched from `{path}` can name {}, which holds credentials",
                hit.pattern
            ),
        ));
        ops.push(op);
    }
    for d in r.dirs {
        ops.push(ctx.path_op(
            OpKind::List,
            &d,
            cwd,
            "search beneath a directory a glob reaches",
        ));
    }
    if let Some(why) = r.opaque {
        let mut op = Operation::new(
            OpKind::Opaque,
            Target::Text(glob.to_string()),
            "opaque glob",
        );
        op.opaque = Some(Opaque { why, needs: None });
        ops.push(op);
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
        Action::Search { path, globs } => {
            out.ops
                .push(ctx.path_op(OpKind::List, &path, &cwd, "search beneath a directory"));
            for g in globs {
                search_operations(&path, &g, &cwd, ctx, &mut out.ops);
            }
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
        Action::Write { paths } => file_changes(ctx, &cwd, &paths, &[], "", &mut out.ops),
        Action::Delete { paths } => file_changes(ctx, &cwd, &[], &paths, "", &mut out.ops),
        Action::Patch { writes, deletes } => {
            file_changes(ctx, &cwd, &writes, &deletes, " (patch)", &mut out.ops)
        }
        Action::Fetch {
            urls,
            method,
            unparsed,
        } => fetch_operations(&req.tool, &urls, &method, unparsed, &mut out.ops),
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
        Action::Unknown { tool } => out.ops.push(unknown_tool(tool)),
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

/// Writing each of `writes`, then deleting each of `deletes` (`how` ends each reason:
/// `" (patch)"`).
fn file_changes(
    ctx: &Context<'_>,
    cwd: &Path,
    writes: &[String],
    deletes: &[String],
    how: &str,
    ops: &mut Vec<Operation>,
) {
    for p in writes {
        ops.push(ctx.path_op(OpKind::Write, p, cwd, format!("write a file{how}")));
    }
    for p in deletes {
        ops.push(ctx.path_op(OpKind::Delete, p, cwd, format!("delete a file{how}")));
    }
}

/// A fetch of `urls` by `method`: one network operation for each, invalid when the URL
/// is refused or not http(s); with `unparsed`, first an opaque one (the fetch names no
/// URL cordon can read).
fn fetch_operations(
    tool: &str,
    urls: &[String],
    method: &str,
    unparsed: bool,
    ops: &mut Vec<Operation>,
) {
    if unparsed {
        let mut op = Operation::new(
            OpKind::Opaque,
            Target::Text(tool.to_owned()),
            "fetch without a URL cordon can read",
        );
        op.opaque = Some(Opaque {
            why: "the fetch names no http(s) URL that cordon can check".into(),
            needs: None,
        });
        ops.push(op);
    }
    for u in urls {
        let target = net_target(u);
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
        ops.push(op);
    }
}

/// A call of a tool cordon does not know: opaque, needing that tool.
fn unknown_tool(tool: String) -> Operation {
    let mut op = Operation::new(OpKind::Opaque, Target::Text(tool.clone()), "unknown tool");
    op.opaque = Some(Opaque {
        why: format!("`{tool}` is a tool cordon does not know"),
        needs: Some(vec![tool]),
    });
    op
}
