//! Mapping a tool call to the action it asks for, validating its input.

use super::input::Input;
use super::{Action, Request, RequestError, check_text, err, quote_argv};
use serde_json::Value;

impl Request {
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
                let pattern = inp.string("pattern")?;
                Action::Search {
                    path: inp.opt_one_path(&["path", "dir_path"])?,
                    globs: vec![pattern],
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
                Action::Search {
                    path: inp.opt_path("dir_path")?.unwrap_or_else(|| ".".into()),
                    globs: filters(inp.opt_string("include_pattern")?),
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
                Action::Search {
                    path: inp.opt_path("path")?.unwrap_or_else(|| ".".into()),
                    globs: filters(inp.opt_string("glob")?),
                }
            }
            "search_file_content" => {
                inp.only(&["pattern", "path", "dir_path", "include"])?;
                inp.string("pattern")?;
                Action::Search {
                    path: inp.opt_one_path(&["path", "dir_path"])?,
                    globs: filters(inp.opt_string("include")?),
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

/// The globs of a search tool's file filter (`Grep`'s `glob`, Gemini CLI's
/// `include_pattern`/`include`): ripgrep and the tools' other searchers match a filter
/// without a `/` at any depth, and some split it at whitespace or commas, so each piece
/// (and the whole) is a glob beneath the searched directory (`**/GLOB`). An exclusion
/// (`!GLOB`) only narrows the search and selects nothing.
fn filters(filter: Option<String>) -> Vec<String> {
    let Some(f) = filter else {
        return Vec::new();
    };
    // Whitespace, and commas outside braces (`*.{ts,tsx}` is one glob).
    let mut pieces: Vec<&str> = vec![f.as_str()];
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in f.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth > 0 => continue,
            c if c.is_whitespace() || c == ',' => {
                pieces.push(&f[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    pieces.push(&f[start..]);
    let mut out: Vec<String> = Vec::new();
    for p in pieces.into_iter().map(str::trim) {
        if p.is_empty() || p.starts_with('!') {
            continue;
        }
        let g = if p.starts_with('/') || p.starts_with("~/") || p.starts_with("**/") {
            p.to_string()
        } else {
            format!("**/{p}")
        };
        if !out.contains(&g) {
            out.push(g);
        }
    }
    out
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
