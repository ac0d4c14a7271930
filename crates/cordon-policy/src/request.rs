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

mod action;
mod input;

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
    /// Search beneath a directory for files that globs select (`Glob`, `Grep`, Gemini
    /// CLI's `glob`, `grep_search`, `search_file_content`): judged by everything the
    /// directory and the globs together can reach (`crate::search`).
    Search {
        /// The directory searched, as written (`.`, the cwd, when the tool names none).
        path: String,
        /// Globs that select files, relative to `path` unless absolute (or `~/…`),
        /// with the tool's own syntax (`**`, `{a,b}`, wildcards matching a leading dot).
        /// A filter the tool matches at any depth is given as `**/GLOB`.
        globs: Vec<String>,
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
            Ok(
                Action::Read { .. }
                | Action::List { .. }
                | Action::Search { .. }
                | Action::ReadMany { .. },
            ) => ToolKind::Read,
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
}

/// Reject NUL and other C0 control bytes (tab and newline are allowed in text fields).
fn check_text(field: &str, s: &str) -> Result<(), RequestError> {
    if s.contains('\0') {
        return err(format!("`{field}` contains a NUL byte"));
    }
    Ok(())
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
mod tests;
