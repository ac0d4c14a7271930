//! The request model and the tool adapters.
//!
//! A request is one tool call:
//! `{"tool", "input", "cwd"?, "session"?, "agent"?, "operation_id"?}`. Adapters map
//! the tool names of the harnesses cordon supports (canonical, Claude Code, Gemini CLI,
//! Codex) to one [`Action`]. Validation is strict: unknown fields, wrong types, empty paths
//! and NUL bytes are errors, never guessed around. An unknown tool is not an error: it
//! becomes [`Action::Unknown`], which the decision core never allows by default.

use serde_json::{Map, Value};
use std::path::PathBuf;

/// Largest request accepted, in bytes.
pub const MAX_REQUEST_BYTES: usize = 1 << 20;

/// Longest operation id accepted, in bytes.
pub const MAX_OPERATION_ID: usize = 256;

/// Why a request was rejected (exit 2 in `cordon check`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestError(pub String);

impl std::fmt::Display for RequestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RequestError {}

fn err<T>(msg: impl Into<String>) -> Result<T, RequestError> {
    Err(RequestError(msg.into()))
}

/// One tool call, validated at the top level.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The tool name as the harness spelled it.
    pub tool: String,
    /// The tool's arguments.
    pub input: Map<String, Value>,
    /// The directory relative paths are taken from (absolute).
    pub cwd: Option<PathBuf>,
    /// The agent session, if the harness names one.
    pub session: Option<String>,
    /// The agent (or sub-agent) identity, if the harness names one.
    pub agent: Option<String>,
    /// The harness's id of this one tool call (Claude Code's `tool_use_id`, a service
    /// request's `operation_id`). A once-approval is bound to it, and the gate permits an
    /// id at most once per surface. Not part of the fingerprint.
    pub operation_id: Option<String>,
}

/// How a tool is treated by rules (`Bash(…)`, `Read(…)`, `Edit(…)`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum ToolKind {
    /// Reads files or lists directories (`Read`, `Glob`, `Grep`, `LS`).
    Read,
    /// Creates, changes or deletes files (`Write`, `Edit`, `apply_patch`, …).
    Edit,
    /// Runs shell text.
    Bash,
    /// Fetches a URL.
    WebFetch,
    /// Searches the web.
    WebSearch,
    /// Calls an MCP tool.
    Mcp,
    /// A tool cordon does not know.
    Unknown,
}

/// What the call does, after the adapter.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Action {
    /// Read one file.
    Read {
        /// The path as written.
        path: String,
    },
    /// List or search beneath a directory.
    List {
        /// The directory as written (the cwd when the tool names none).
        path: String,
    },
    /// Read every file that globs match (Gemini CLI's `read_many_files`).
    ReadMany {
        /// Files named without a glob character.
        files: Vec<String>,
        /// The literal start of each other glob (`src` for `src/**/*.rs`, `.` for `*.md`),
        /// listed and read beneath.
        dirs: Vec<String>,
    },
    /// Create or change files.
    Write {
        /// The paths as written.
        paths: Vec<String>,
    },
    /// Delete files (and, for patches, write others).
    Delete {
        /// The paths as written.
        paths: Vec<String>,
    },
    /// A patch: some paths written, some deleted.
    Patch {
        /// Paths created, changed, or moved to or from.
        writes: Vec<String>,
        /// Paths deleted.
        deletes: Vec<String>,
    },
    /// Run shell text.
    Shell {
        /// The command text.
        command: String,
        /// A working directory named by the call, if any.
        workdir: Option<String>,
    },
    /// Fetch URLs.
    Fetch {
        /// The URLs found in the call.
        urls: Vec<String>,
        /// The HTTP method (GET when absent).
        method: String,
        /// Free text that names no URL cordon can check (Gemini's prompt form).
        unparsed: bool,
    },
    /// Search the web.
    WebSearch {
        /// The query.
        query: String,
    },
    /// Call an MCP tool.
    Mcp {
        /// The server name.
        server: String,
        /// The tool name.
        tool: String,
    },
    /// A tool cordon does not know.
    Unknown {
        /// Its name.
        tool: String,
    },
}

impl Request {
    /// Parse and validate a request from JSON text.
    pub fn from_json(text: &str) -> Result<Request, RequestError> {
        if text.len() > MAX_REQUEST_BYTES {
            return err(format!(
                "the request is {} bytes, more than the {MAX_REQUEST_BYTES}-byte limit",
                text.len()
            ));
        }
        let v: Value = serde_json::from_str(text)
            .map_err(|e| RequestError(format!("the request is not valid JSON: {e}")))?;
        Request::from_value(v)
    }

    /// Validate a request from a JSON value.
    pub fn from_value(v: Value) -> Result<Request, RequestError> {
        let Value::Object(mut obj) = v else {
            return err("the request must be a JSON object with `tool` and `input`");
        };
        for key in obj.keys() {
            if !["tool", "input", "cwd", "session", "agent", "operation_id"].contains(&key.as_str())
            {
                return err(format!(
                    "unknown request field `{key}`: expected tool, input, cwd, session, agent, operation_id"
                ));
            }
        }
        let tool = match obj.remove("tool") {
            Some(Value::String(s)) if !s.is_empty() => s,
            Some(Value::String(_)) => return err("`tool` is empty"),
            Some(_) => return err("`tool` must be a string"),
            None => return err("the request has no `tool`"),
        };
        check_text("tool", &tool)?;
        let input = match obj.remove("input") {
            Some(Value::Object(m)) => m,
            Some(_) => return err("`input` must be a JSON object"),
            None => Map::new(),
        };
        let opt_str =
            |obj: &mut Map<String, Value>, k: &str| -> Result<Option<String>, RequestError> {
                match obj.remove(k) {
                    None | Some(Value::Null) => Ok(None),
                    Some(Value::String(s)) => {
                        check_text(k, &s)?;
                        Ok(Some(s))
                    }
                    Some(_) => err(format!("`{k}` must be a string")),
                }
            };
        let cwd = match opt_str(&mut obj, "cwd")? {
            None => None,
            Some(c) if c.is_empty() => return err("`cwd` is empty"),
            Some(c) if !c.starts_with('/') => {
                return err(format!("`cwd` must be an absolute path, got `{c}`"));
            }
            Some(c) => Some(PathBuf::from(c)),
        };
        let session = opt_str(&mut obj, "session")?;
        let agent = opt_str(&mut obj, "agent")?;
        let operation_id = match opt_str(&mut obj, "operation_id")? {
            Some(id) if id.is_empty() => return err("`operation_id` is empty"),
            Some(id) if id.len() > MAX_OPERATION_ID => {
                return err(format!(
                    "`operation_id` is longer than {MAX_OPERATION_ID} bytes"
                ));
            }
            id => id,
        };
        let req = Request {
            tool,
            input,
            cwd,
            session,
            agent,
            operation_id,
        };
        // Validate the input against the adapter now, so a bad call is an error up front.
        req.action()?;
        Ok(req)
    }

    /// A `bash` request for shell text.
    pub fn shell(command: impl Into<String>, cwd: Option<PathBuf>) -> Request {
        let mut input = Map::new();
        input.insert("command".into(), Value::String(command.into()));
        Request {
            tool: "bash".into(),
            input,
            cwd,
            session: None,
            agent: None,
            operation_id: None,
        }
    }

    /// A `bash` request for an argument vector, quoted so the shell sees exactly these words.
    pub fn argv(argv: &[String], cwd: Option<PathBuf>) -> Request {
        Request::shell(quote_argv(argv), cwd)
    }

    /// The canonical JSON of this request (for fingerprints and audit records).
    pub fn canonical_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("tool".into(), Value::String(self.tool.clone()));
        m.insert("input".into(), Value::Object(self.input.clone()));
        if let Some(c) = &self.cwd {
            m.insert(
                "cwd".into(),
                Value::String(c.to_string_lossy().into_owned()),
            );
        }
        if let Some(s) = &self.session {
            m.insert("session".into(), Value::String(s.clone()));
        }
        if let Some(a) = &self.agent {
            m.insert("agent".into(), Value::String(a.clone()));
        }
        if let Some(o) = &self.operation_id {
            m.insert("operation_id".into(), Value::String(o.clone()));
        }
        Value::Object(m)
    }

    /// How rules see this tool.
    pub fn kind(&self) -> ToolKind {
        match self.action() {
            Ok(Action::Read { .. } | Action::List { .. } | Action::ReadMany { .. }) => {
                ToolKind::Read
            }
            Ok(Action::Write { .. } | Action::Delete { .. } | Action::Patch { .. }) => {
                ToolKind::Edit
            }
            Ok(Action::Shell { .. }) => ToolKind::Bash,
            Ok(Action::Fetch { .. }) => ToolKind::WebFetch,
            Ok(Action::WebSearch { .. }) => ToolKind::WebSearch,
            Ok(Action::Mcp { .. }) => ToolKind::Mcp,
            Ok(Action::Unknown { .. }) | Err(_) => ToolKind::Unknown,
        }
    }

    /// Map the tool to what it does, validating its input.
    pub fn action(&self) -> Result<Action, RequestError> {
        let t = self.tool.as_str();
        let inp = Input {
            tool: t,
            map: &self.input,
        };
        if let Some(rest) = t.strip_prefix("mcp__") {
            let Some((server, tool)) = rest.split_once("__") else {
                return err(format!(
                    "MCP tool name `{t}` must have the form mcp__SERVER__TOOL"
                ));
            };
            if server.is_empty() || tool.is_empty() {
                return err(format!("MCP tool name `{t}` has an empty server or tool"));
            }
            return Ok(Action::Mcp {
                server: server.into(),
                tool: tool.into(),
            });
        }
        Ok(match t {
            // Canonical `read_file {path}`; Gemini CLI's `read_file {file_path, start_line,
            // end_line}` (earlier releases: `absolute_path, offset, limit`).
            "read_file" => {
                inp.only(&[
                    "path",
                    "absolute_path",
                    "file_path",
                    "offset",
                    "limit",
                    "start_line",
                    "end_line",
                ])?;
                Action::Read {
                    path: inp.one_path(&["path", "absolute_path", "file_path"])?,
                }
            }
            "Read" => {
                inp.only(&["file_path", "offset", "limit", "pages"])?;
                Action::Read {
                    path: inp.path("file_path")?,
                }
            }
            "write_file" => {
                inp.only(&["path", "file_path", "content"])?;
                inp.opt_string("content")?;
                Action::Write {
                    paths: vec![inp.one_path(&["path", "file_path"])?],
                }
            }
            "Write" => {
                inp.only(&["file_path", "content"])?;
                inp.opt_string("content")?;
                Action::Write {
                    paths: vec![inp.path("file_path")?],
                }
            }
            "edit_file" => {
                inp.only(&["path", "edits", "old_string", "new_string", "content"])?;
                Action::Write {
                    paths: vec![inp.path("path")?],
                }
            }
            "Edit" => {
                inp.only(&["file_path", "old_string", "new_string", "replace_all"])?;
                inp.opt_string("old_string")?;
                inp.opt_string("new_string")?;
                Action::Write {
                    paths: vec![inp.path("file_path")?],
                }
            }
            "MultiEdit" => {
                inp.only(&["file_path", "edits"])?;
                Action::Write {
                    paths: vec![inp.path("file_path")?],
                }
            }
            "NotebookEdit" => {
                inp.only(&[
                    "notebook_path",
                    "new_source",
                    "cell_id",
                    "cell_type",
                    "edit_mode",
                ])?;
                Action::Write {
                    paths: vec![inp.path("notebook_path")?],
                }
            }
            "replace" => {
                inp.only(&[
                    "file_path",
                    "old_string",
                    "new_string",
                    "expected_replacements",
                    "allow_multiple",
                    "instruction",
                ])?;
                Action::Write {
                    paths: vec![inp.path("file_path")?],
                }
            }
            "delete_file" => {
                inp.only(&["path"])?;
                Action::Delete {
                    paths: vec![inp.path("path")?],
                }
            }
            "list_dir" => {
                inp.only(&["path"])?;
                Action::List {
                    path: inp.path("path")?,
                }
            }
            "LS" => {
                inp.only(&["path", "ignore"])?;
                Action::List {
                    path: inp.path("path")?,
                }
            }
            "list_directory" => {
                inp.only(&[
                    "path",
                    "dir_path",
                    "ignore",
                    "respect_git_ignore",
                    "file_filtering_options",
                ])?;
                Action::List {
                    path: inp.one_path(&["path", "dir_path"])?,
                }
            }
            "Glob" | "glob" => {
                inp.only(&[
                    "pattern",
                    "path",
                    "dir_path",
                    "case_sensitive",
                    "respect_git_ignore",
                    "respect_gemini_ignore",
                ])?;
                inp.string("pattern")?;
                Action::List {
                    path: inp.opt_one_path(&["path", "dir_path"])?,
                }
            }
            // Gemini CLI's content search (`search_file_content` in earlier releases).
            "grep_search" => {
                inp.only(&[
                    "pattern",
                    "dir_path",
                    "include_pattern",
                    "exclude_pattern",
                    "names_only",
                    "max_matches_per_file",
                    "total_max_matches",
                    "case_sensitive",
                    "fixed_strings",
                    "context",
                    "after",
                    "before",
                    "no_ignore",
                ])?;
                inp.string("pattern")?;
                Action::List {
                    path: inp.opt_path("dir_path")?.unwrap_or_else(|| ".".into()),
                }
            }
            "read_many_files" => {
                inp.only(&[
                    "include",
                    "exclude",
                    "recursive",
                    "useDefaultExcludes",
                    "file_filtering_options",
                ])?;
                let include = inp.strings("include")?;
                if include.is_empty() {
                    return err("`include` of tool `read_many_files` is empty");
                }
                let (mut files, mut dirs) = (Vec::new(), Vec::new());
                for g in &include {
                    match glob_base(g) {
                        Ok(f) => files.push(f),
                        Err(d) => dirs.push(d),
                    }
                }
                Action::ReadMany { files, dirs }
            }
            "Grep" => {
                inp.only(&[
                    "pattern",
                    "path",
                    "glob",
                    "type",
                    "output_mode",
                    "-A",
                    "-B",
                    "-C",
                    "-n",
                    "-i",
                    "multiline",
                    "head_limit",
                    "offset",
                ])?;
                inp.string("pattern")?;
                Action::List {
                    path: inp.opt_path("path")?.unwrap_or_else(|| ".".into()),
                }
            }
            "search_file_content" => {
                inp.only(&["pattern", "path", "dir_path", "include"])?;
                inp.string("pattern")?;
                Action::List {
                    path: inp.opt_one_path(&["path", "dir_path"])?,
                }
            }
            "bash" | "Bash" => {
                inp.only(&[
                    "command",
                    "description",
                    "timeout",
                    "run_in_background",
                    "dangerouslyDisableSandbox",
                ])?;
                Action::Shell {
                    command: inp.command("command")?,
                    workdir: None,
                }
            }
            // Gemini CLI (`dir_path`; earlier releases `directory`). `additional_permissions`
            // widens Gemini's own sandbox, not cordon's judgement of the text.
            "run_shell_command" => {
                inp.only(&[
                    "command",
                    "description",
                    "directory",
                    "dir_path",
                    "is_background",
                    "delay_ms",
                    "additional_permissions",
                ])?;
                let workdir = match (inp.opt_path("directory")?, inp.opt_path("dir_path")?) {
                    (Some(_), Some(_)) => {
                        return err("tool `run_shell_command` names both directory and dir_path");
                    }
                    (a, b) => a.or(b),
                };
                Action::Shell {
                    command: inp.command("command")?,
                    workdir,
                }
            }
            "shell" => {
                inp.only(&[
                    "command",
                    "workdir",
                    "timeout_ms",
                    "timeout",
                    "with_escalated_permissions",
                    "justification",
                ])?;
                let workdir = inp.opt_path("workdir")?;
                match self.input.get("command") {
                    Some(Value::Array(words)) => {
                        let argv = words
                            .iter()
                            .map(|w| match w {
                                Value::String(s) => check_text("command", s).map(|_| s.clone()),
                                _ => err("`command` must be an array of strings"),
                            })
                            .collect::<Result<Vec<_>, _>>()?;
                        if argv.is_empty() {
                            return err("`command` is an empty array");
                        }
                        // Codex sends patches as `["apply_patch", PATCH]`.
                        if argv[0] == "apply_patch" && argv.len() == 2 {
                            return patch_action(&argv[1]);
                        }
                        Action::Shell {
                            command: quote_argv(&argv),
                            workdir,
                        }
                    }
                    _ => Action::Shell {
                        command: inp.command("command")?,
                        workdir,
                    },
                }
            }
            // Codex hooks send `apply_patch {command: PATCH}`.
            "apply_patch" => {
                inp.only(&["input", "patch", "command"])?;
                let text = inp.one_string(&["input", "patch", "command"])?;
                patch_action(&text)?
            }
            "web_fetch" | "WebFetch" => {
                inp.only(&["url", "method", "prompt"])?;
                let method = inp
                    .opt_string("method")?
                    .unwrap_or_else(|| "GET".into())
                    .to_ascii_uppercase();
                match inp.opt_string("url")? {
                    Some(u) if u.is_empty() => return err("`url` is empty"),
                    Some(u) => Action::Fetch {
                        urls: vec![u],
                        method,
                        unparsed: false,
                    },
                    None => {
                        // Gemini CLI's web_fetch carries URLs inside a prompt.
                        let prompt = inp.string("prompt")?;
                        let urls = urls_in_text(&prompt);
                        Action::Fetch {
                            unparsed: urls.is_empty(),
                            urls,
                            method,
                        }
                    }
                }
            }
            "WebSearch" | "web_search" | "google_web_search" => {
                inp.only(&["query", "allowed_domains", "blocked_domains"])?;
                Action::WebSearch {
                    query: inp.string("query")?,
                }
            }
            "mcp" => {
                inp.only(&["server", "tool", "arguments"])?;
                let server = inp.string("server")?;
                let tool = inp.string("tool")?;
                if server.is_empty() || tool.is_empty() {
                    return err("`server` and `tool` must not be empty");
                }
                if let Some(a) = self.input.get("arguments")
                    && !a.is_object()
                {
                    return err("`arguments` must be a JSON object");
                }
                Action::Mcp { server, tool }
            }
            _ => Action::Unknown { tool: t.into() },
        })
    }
}

/// Reject NUL and other C0 control bytes (tab and newline are allowed in text fields).
fn check_text(field: &str, s: &str) -> Result<(), RequestError> {
    if s.contains('\0') {
        return err(format!("`{field}` contains a NUL byte"));
    }
    Ok(())
}

struct Input<'a> {
    tool: &'a str,
    map: &'a Map<String, Value>,
}

impl Input<'_> {
    fn only(&self, allowed: &[&str]) -> Result<(), RequestError> {
        for k in self.map.keys() {
            if !allowed.contains(&k.as_str()) {
                return err(format!(
                    "unknown field `{k}` for tool `{}`: expected {}",
                    self.tool,
                    allowed.join(", ")
                ));
            }
        }
        Ok(())
    }

    fn opt_string(&self, k: &str) -> Result<Option<String>, RequestError> {
        match self.map.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => {
                check_text(k, s)?;
                Ok(Some(s.clone()))
            }
            Some(_) => err(format!("`{k}` of tool `{}` must be a string", self.tool)),
        }
    }

    fn string(&self, k: &str) -> Result<String, RequestError> {
        self.opt_string(k)?
            .ok_or_else(|| RequestError(format!("tool `{}` needs `{k}`", self.tool)))
    }

    fn one_string(&self, keys: &[&str]) -> Result<String, RequestError> {
        let mut found = None;
        for k in keys {
            if let Some(v) = self.opt_string(k)? {
                if found.is_some() {
                    return err(format!(
                        "tool `{}` names more than one of {}",
                        self.tool,
                        keys.join(", ")
                    ));
                }
                found = Some(v);
            }
        }
        found.ok_or_else(|| {
            RequestError(format!(
                "tool `{}` needs one of {}",
                self.tool,
                keys.join(", ")
            ))
        })
    }

    fn opt_path(&self, k: &str) -> Result<Option<String>, RequestError> {
        match self.opt_string(k)? {
            Some(p) if p.is_empty() => err(format!("`{k}` of tool `{}` is empty", self.tool)),
            other => Ok(other),
        }
    }

    /// At most one of `keys`, a non-empty path; `.` when none is given.
    fn opt_one_path(&self, keys: &[&str]) -> Result<String, RequestError> {
        if keys
            .iter()
            .all(|k| matches!(self.map.get(*k), None | Some(Value::Null)))
        {
            return Ok(".".into());
        }
        self.one_path(keys)
    }

    /// An array of strings.
    fn strings(&self, k: &str) -> Result<Vec<String>, RequestError> {
        let bad = || {
            RequestError(format!(
                "`{k}` of tool `{}` must be an array of strings",
                self.tool
            ))
        };
        let Some(Value::Array(items)) = self.map.get(k) else {
            return Err(bad());
        };
        items
            .iter()
            .map(|v| match v {
                Value::String(s) => check_text(k, s).map(|_| s.clone()),
                _ => Err(bad()),
            })
            .collect()
    }

    fn path(&self, k: &str) -> Result<String, RequestError> {
        self.opt_path(k)?
            .ok_or_else(|| RequestError(format!("tool `{}` needs `{k}`", self.tool)))
    }

    fn one_path(&self, keys: &[&str]) -> Result<String, RequestError> {
        let p = self.one_string(keys)?;
        if p.is_empty() {
            return err(format!("the path of tool `{}` is empty", self.tool));
        }
        Ok(p)
    }

    fn command(&self, k: &str) -> Result<String, RequestError> {
        let c = self.string(k)?;
        if c.trim().is_empty() {
            return err(format!("`{k}` of tool `{}` is empty", self.tool));
        }
        Ok(c)
    }
}

/// Parse a Codex-style patch (`*** Begin Patch` … `*** End Patch`) into the paths it writes
/// and deletes. Move destinations count as writes, and so do their sources.
fn patch_action(text: &str) -> Result<Action, RequestError> {
    let mut writes = Vec::new();
    let mut deletes = Vec::new();
    let mut saw_begin = false;
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        if line.trim() == "*** Begin Patch" {
            saw_begin = true;
            continue;
        }
        let take = |prefix: &str, to: &mut Vec<String>| -> Result<bool, RequestError> {
            if let Some(p) = line.strip_prefix(prefix) {
                let p = p.trim();
                if p.is_empty() {
                    return err(format!("the patch has an empty path after `{prefix}`"));
                }
                to.push(p.to_string());
                return Ok(true);
            }
            Ok(false)
        };
        if take("*** Add File: ", &mut writes)?
            || take("*** Update File: ", &mut writes)?
            || take("*** Move to: ", &mut writes)?
        {
            continue;
        }
        take("*** Delete File: ", &mut deletes)?;
    }
    if !saw_begin {
        return err("the patch does not start with `*** Begin Patch`");
    }
    if writes.is_empty() && deletes.is_empty() {
        return err("the patch names no file");
    }
    Ok(Action::Patch { writes, deletes })
}

/// Where a glob reads: a glob with no glob character names one file (`Ok`); any other
/// lists from the components before the first one holding a glob character (`Err`:
/// `src` for `src/**/*.rs`, `/etc` for `/etc/*`, `.` for `*.md`).
fn glob_base(glob: &str) -> Result<String, String> {
    let globby = |c: &str| c.contains(['*', '?', '[', '{']);
    let comps: Vec<&str> = glob.split('/').collect();
    let Some(first) = comps.iter().position(|c| globby(c)) else {
        return Ok(glob.to_string());
    };
    let base = comps[..first].join("/");
    Err(match base.as_str() {
        "" if glob.starts_with('/') => "/".into(),
        "" => ".".into(),
        _ => base,
    })
}

/// `http://` and `https://` URLs in free text, up to whitespace or a closing delimiter.
fn urls_in_text(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in text.split(|c: char| c.is_whitespace()) {
        let lower = word.to_ascii_lowercase();
        for scheme in ["https://", "http://"] {
            if let Some(i) = lower.find(scheme) {
                let url = word[i..].trim_end_matches(|c: char| {
                    matches!(c, ')' | ']' | '>' | '"' | '\'' | ',' | '.' | ';')
                });
                out.push(url.to_string());
                break;
            }
        }
    }
    out
}

/// Quote words so that bash reads them back as exactly these words.
pub fn quote_argv(argv: &[String]) -> String {
    argv.iter()
        .map(|w| {
            let safe = !w.is_empty()
                && w.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%^".contains(&b));
            if safe {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn action(v: Value) -> Result<Action, RequestError> {
        Request::from_value(v).and_then(|r| r.action())
    }

    #[test]
    fn adapters_map_to_actions() {
        let read = |p: &str| Ok(Action::Read { path: p.into() });
        assert_eq!(
            action(json!({"tool":"read_file","input":{"path":"a"}})),
            read("a")
        );
        assert_eq!(
            action(json!({"tool":"Read","input":{"file_path":"/a"}})),
            read("/a")
        );
        assert_eq!(
            action(json!({"tool":"read_file","input":{"absolute_path":"/a","offset":3}})),
            read("/a")
        );
        let w = |p: &str| {
            Ok(Action::Write {
                paths: vec![p.into()],
            })
        };
        assert_eq!(
            action(json!({"tool":"Write","input":{"file_path":"x","content":""}})),
            w("x")
        );
        assert_eq!(
            action(json!({"tool":"write_file","input":{"path":"x"}})),
            w("x")
        );
        assert_eq!(
            action(
                json!({"tool":"Edit","input":{"file_path":"x","old_string":"a","new_string":"b"}})
            ),
            w("x")
        );
        assert_eq!(
            action(json!({"tool":"MultiEdit","input":{"file_path":"x","edits":[]}})),
            w("x")
        );
        assert_eq!(
            action(
                json!({"tool":"NotebookEdit","input":{"notebook_path":"n.ipynb","new_source":""}})
            ),
            w("n.ipynb")
        );
        assert_eq!(
            action(
                json!({"tool":"replace","input":{"file_path":"x","old_string":"a","new_string":"b"}})
            ),
            w("x")
        );
        assert_eq!(
            action(json!({"tool":"edit_file","input":{"path":"x"}})),
            w("x")
        );
        assert_eq!(
            action(json!({"tool":"delete_file","input":{"path":"x"}})),
            Ok(Action::Delete {
                paths: vec!["x".into()]
            })
        );
        let list = |p: &str| Ok(Action::List { path: p.into() });
        assert_eq!(
            action(json!({"tool":"list_dir","input":{"path":"d"}})),
            list("d")
        );
        assert_eq!(
            action(json!({"tool":"LS","input":{"path":"/d"}})),
            list("/d")
        );
        assert_eq!(
            action(json!({"tool":"list_directory","input":{"path":"/d"}})),
            list("/d")
        );
        assert_eq!(
            action(json!({"tool":"Glob","input":{"pattern":"*.rs"}})),
            list(".")
        );
        assert_eq!(
            action(json!({"tool":"glob","input":{"pattern":"*.rs","path":"src"}})),
            list("src")
        );
        assert_eq!(
            action(json!({"tool":"Grep","input":{"pattern":"x","path":"src","-n":true}})),
            list("src")
        );
        assert_eq!(
            action(json!({"tool":"search_file_content","input":{"pattern":"x"}})),
            list(".")
        );
        let sh = |c: &str| {
            Ok(Action::Shell {
                command: c.into(),
                workdir: None,
            })
        };
        assert_eq!(
            action(json!({"tool":"bash","input":{"command":"ls"}})),
            sh("ls")
        );
        assert_eq!(
            action(json!({"tool":"Bash","input":{"command":"ls","description":"d"}})),
            sh("ls")
        );
        assert_eq!(
            action(json!({"tool":"run_shell_command","input":{"command":"ls"}})),
            sh("ls")
        );
        assert_eq!(
            action(json!({"tool":"shell","input":{"command":["bash","-lc","echo hi; ls"]}})),
            sh("bash -lc 'echo hi; ls'")
        );
        assert_eq!(
            action(json!({"tool":"web_fetch","input":{"url":"https://x.com"}})),
            Ok(Action::Fetch {
                urls: vec!["https://x.com".into()],
                method: "GET".into(),
                unparsed: false
            })
        );
        assert_eq!(
            action(
                json!({"tool":"web_fetch","input":{"prompt":"summarize https://a.com/x and http://b.org."}})
            ),
            Ok(Action::Fetch {
                urls: vec!["https://a.com/x".into(), "http://b.org".into()],
                method: "GET".into(),
                unparsed: false
            })
        );
        assert_eq!(
            action(json!({"tool":"mcp__github__create_issue","input":{"title":"t"}})),
            Ok(Action::Mcp {
                server: "github".into(),
                tool: "create_issue".into()
            })
        );
        assert_eq!(
            action(json!({"tool":"mcp","input":{"server":"s","tool":"t","arguments":{}}})),
            Ok(Action::Mcp {
                server: "s".into(),
                tool: "t".into()
            })
        );
        assert_eq!(
            action(json!({"tool":"frobnicate","input":{}})),
            Ok(Action::Unknown {
                tool: "frobnicate".into()
            })
        );
    }

    #[test]
    fn current_gemini_and_codex_shapes() {
        let list = |p: &str| Ok(Action::List { path: p.into() });
        assert_eq!(
            action(
                json!({"tool":"read_file","input":{"file_path":"/a","start_line":3,"end_line":9}})
            ),
            Ok(Action::Read { path: "/a".into() })
        );
        assert_eq!(
            action(json!({"tool":"list_directory","input":{"dir_path":"/d"}})),
            list("/d")
        );
        assert_eq!(
            action(json!({"tool":"glob","input":{"pattern":"*.rs","dir_path":"src"}})),
            list("src")
        );
        assert_eq!(
            action(json!({"tool":"grep_search","input":{"pattern":"x","include_pattern":"*.rs"}})),
            list(".")
        );
        assert_eq!(
            action(
                json!({"tool":"read_many_files","input":{"include":["src/**/*.rs","*.md","/etc/*.conf","~/.ssh/id_rsa"]}})
            ),
            Ok(Action::ReadMany {
                files: vec!["~/.ssh/id_rsa".into()],
                dirs: vec!["src".into(), ".".into(), "/etc".into()],
            })
        );
        assert!(action(json!({"tool":"read_many_files","input":{"include":[]}})).is_err());
        assert!(action(json!({"tool":"read_many_files","input":{"include":"x"}})).is_err());
        assert_eq!(
            action(
                json!({"tool":"run_shell_command","input":{"command":"ls","dir_path":"sub","is_background":false}})
            ),
            Ok(Action::Shell {
                command: "ls".into(),
                workdir: Some("sub".into())
            })
        );
        assert!(
            action(json!({"tool":"run_shell_command","input":{"command":"ls","dir_path":"a","directory":"b"}}))
                .is_err()
        );
        assert_eq!(
            action(json!({"tool":"google_web_search","input":{"query":"q"}})),
            Ok(Action::WebSearch { query: "q".into() })
        );
        let patch = "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch";
        assert_eq!(
            action(json!({"tool":"apply_patch","input":{"command":patch}})),
            Ok(Action::Patch {
                writes: vec!["a.txt".into()],
                deletes: vec![]
            })
        );
    }

    #[test]
    fn patches_name_every_path() {
        let patch = "*** Begin Patch\n*** Add File: a.txt\n+x\n*** Update File: b.rs\n*** Move to: ../evil/b.rs\n@@\n-a\n+b\n*** Delete File: c\n*** End Patch";
        assert_eq!(
            action(json!({"tool":"apply_patch","input":{"input":patch}})),
            Ok(Action::Patch {
                writes: vec!["a.txt".into(), "b.rs".into(), "../evil/b.rs".into()],
                deletes: vec!["c".into()]
            })
        );
        assert_eq!(
            action(json!({"tool":"shell","input":{"command":["apply_patch", patch]}}))
                .map(|a| matches!(a, Action::Patch { .. })),
            Ok(true)
        );
        assert!(action(json!({"tool":"apply_patch","input":{"input":"no header"}})).is_err());
    }

    #[test]
    fn bad_requests_are_errors() {
        for bad in [
            json!([]),
            json!({"input":{}}),
            json!({"tool":"", "input":{}}),
            json!({"tool":5, "input":{}}),
            json!({"tool":"Read","input":{"file_path":""}}),
            json!({"tool":"Read","input":{"file_path":5}}),
            json!({"tool":"Read","input":{"file_path":"a\u{0}b"}}),
            json!({"tool":"Read","input":{"file_path":"a","bogus":1}}),
            json!({"tool":"Read","input":[]}),
            json!({"tool":"Read","input":{"file_path":"a"},"extra":1}),
            json!({"tool":"Read","input":{"file_path":"a"},"cwd":"relative"}),
            json!({"tool":"Bash","input":{"command":"   "}}),
            json!({"tool":"mcp__bad","input":{}}),
            json!({"tool":"shell","input":{"command":[]}}),
            json!({"tool":"shell","input":{"command":[1]}}),
            json!({"tool":"write_file","input":{"path":"a","file_path":"b"}}),
        ] {
            assert!(
                Request::from_value(bad.clone()).is_err(),
                "{bad} should be rejected"
            );
        }
        assert!(Request::from_json("{not json").is_err());
        assert!(Request::from_json(&" ".repeat(MAX_REQUEST_BYTES + 1)).is_err());
    }

    #[test]
    fn quoting_round_trips_simple_words() {
        let q = quote_argv(&[
            "echo".into(),
            "it's".into(),
            "a b".into(),
            "".into(),
            "x".into(),
        ]);
        assert_eq!(q, r"echo 'it'\''s' 'a b' '' x");
    }
}
