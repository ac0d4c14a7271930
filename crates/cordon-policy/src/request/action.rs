//! Mapping a tool call to the action it asks for, validating its input.
//!
//! One table names every tool cordon knows: its names as the harnesses call it, the
//! input fields it may carry (any other field is an error, so a new harness field is
//! noticed rather than ignored) and the function that reads the action out of it.

use super::input::Input;
use super::{Action, Request, RequestError, check_text, err, quote_argv};
use serde_json::Value;

/// One known tool: its names, its fields, and how its action is read.
struct Tool {
    names: &'static [&'static str],
    fields: &'static [&'static str],
    action: fn(&Input<'_>) -> Result<Action, RequestError>,
}

/// Every tool cordon knows by name. A name appears once (a test checks).
const TOOLS: &[Tool] = &[
    // Canonical `read_file {path}`; Gemini CLI's `read_file {file_path, start_line,
    // end_line}` (earlier releases: `absolute_path, offset, limit`).
    Tool {
        names: &["read_file"],
        fields: &[
            "path",
            "absolute_path",
            "file_path",
            "offset",
            "limit",
            "start_line",
            "end_line",
        ],
        action: |i| read(i.one_path(&["path", "absolute_path", "file_path"])?),
    },
    Tool {
        names: &["Read"],
        fields: &["file_path", "offset", "limit", "pages"],
        action: |i| read(i.path("file_path")?),
    },
    Tool {
        names: &["write_file"],
        fields: &["path", "file_path", "content"],
        action: |i| {
            i.opt_string("content")?;
            write(i.one_path(&["path", "file_path"])?)
        },
    },
    Tool {
        names: &["Write"],
        fields: &["file_path", "content"],
        action: |i| {
            i.opt_string("content")?;
            write(i.path("file_path")?)
        },
    },
    Tool {
        names: &["edit_file"],
        fields: &["path", "edits", "old_string", "new_string", "content"],
        action: |i| write(i.path("path")?),
    },
    Tool {
        names: &["Edit"],
        fields: &["file_path", "old_string", "new_string", "replace_all"],
        action: |i| {
            i.opt_string("old_string")?;
            i.opt_string("new_string")?;
            write(i.path("file_path")?)
        },
    },
    Tool {
        names: &["MultiEdit"],
        fields: &["file_path", "edits"],
        action: |i| write(i.path("file_path")?),
    },
    Tool {
        names: &["NotebookEdit"],
        fields: &[
            "notebook_path",
            "new_source",
            "cell_id",
            "cell_type",
            "edit_mode",
        ],
        action: |i| write(i.path("notebook_path")?),
    },
    Tool {
        names: &["replace"],
        fields: &[
            "file_path",
            "old_string",
            "new_string",
            "expected_replacements",
            "allow_multiple",
            "instruction",
        ],
        action: |i| write(i.path("file_path")?),
    },
    Tool {
        names: &["delete_file"],
        fields: &["path"],
        action: |i| {
            Ok(Action::Delete {
                paths: vec![i.path("path")?],
            })
        },
    },
    Tool {
        names: &["list_dir"],
        fields: &["path"],
        action: |i| list(i.path("path")?),
    },
    Tool {
        names: &["LS"],
        fields: &["path", "ignore"],
        action: |i| list(i.path("path")?),
    },
    Tool {
        names: &["list_directory"],
        fields: &[
            "path",
            "dir_path",
            "ignore",
            "respect_git_ignore",
            "file_filtering_options",
        ],
        action: |i| list(i.one_path(&["path", "dir_path"])?),
    },
    Tool {
        names: &["Glob", "glob"],
        fields: &[
            "pattern",
            "path",
            "dir_path",
            "case_sensitive",
            "respect_git_ignore",
            "respect_gemini_ignore",
        ],
        action: |i| {
            let pattern = i.string("pattern")?;
            Ok(Action::Search {
                path: i.opt_one_path(&["path", "dir_path"])?,
                globs: vec![pattern],
            })
        },
    },
    // Gemini CLI's content search (`search_file_content` in earlier releases).
    Tool {
        names: &["grep_search"],
        fields: &[
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
        ],
        action: |i| content_search(i, i.opt_path("dir_path")?, "include_pattern"),
    },
    Tool {
        names: &["read_many_files"],
        fields: &[
            "include",
            "exclude",
            "recursive",
            "useDefaultExcludes",
            "file_filtering_options",
        ],
        action: read_many,
    },
    Tool {
        names: &["Grep"],
        fields: &[
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
        ],
        action: |i| content_search(i, i.opt_path("path")?, "glob"),
    },
    Tool {
        names: &["search_file_content"],
        fields: &["pattern", "path", "dir_path", "include"],
        action: |i| {
            i.string("pattern")?;
            Ok(Action::Search {
                path: i.opt_one_path(&["path", "dir_path"])?,
                globs: filters(i.opt_string("include")?),
            })
        },
    },
    Tool {
        names: &["bash", "Bash"],
        fields: &[
            "command",
            "description",
            "timeout",
            "run_in_background",
            "dangerouslyDisableSandbox",
        ],
        action: |i| {
            Ok(Action::Shell {
                command: i.command("command")?,
                workdir: None,
            })
        },
    },
    // Gemini CLI (`dir_path`; earlier releases `directory`). `additional_permissions`
    // widens Gemini's own sandbox, not cordon's judgement of the text.
    Tool {
        names: &["run_shell_command"],
        fields: &[
            "command",
            "description",
            "directory",
            "dir_path",
            "is_background",
            "delay_ms",
            "additional_permissions",
        ],
        action: gemini_shell,
    },
    Tool {
        names: &["shell"],
        fields: &[
            "command",
            "workdir",
            "timeout_ms",
            "timeout",
            "with_escalated_permissions",
            "justification",
        ],
        action: codex_shell,
    },
    // Codex hooks send `apply_patch {command: PATCH}`.
    Tool {
        names: &["apply_patch"],
        fields: &["input", "patch", "command"],
        action: |i| patch_action(&i.one_string(&["input", "patch", "command"])?),
    },
    Tool {
        names: &["web_fetch", "WebFetch"],
        fields: &["url", "method", "prompt"],
        action: fetch,
    },
    Tool {
        names: &["WebSearch", "web_search", "google_web_search"],
        fields: &["query", "allowed_domains", "blocked_domains"],
        action: |i| {
            Ok(Action::WebSearch {
                query: i.string("query")?,
            })
        },
    },
    Tool {
        names: &["mcp"],
        fields: &["server", "tool", "arguments"],
        action: mcp_call,
    },
];

impl Request {
    /// Map the tool to what it does, validating its input.
    pub fn action(&self) -> Result<Action, RequestError> {
        let t = self.tool.as_str();
        if let Some(rest) = t.strip_prefix("mcp__") {
            return mcp_named(t, rest);
        }
        let Some(tool) = TOOLS.iter().find(|tool| tool.names.contains(&t)) else {
            return Ok(Action::Unknown { tool: t.into() });
        };
        let input = Input {
            tool: t,
            map: &self.input,
        };
        input.only(tool.fields)?;
        (tool.action)(&input)
    }
}

fn read(path: String) -> Result<Action, RequestError> {
    Ok(Action::Read { path })
}

fn write(path: String) -> Result<Action, RequestError> {
    Ok(Action::Write { paths: vec![path] })
}

fn list(path: String) -> Result<Action, RequestError> {
    Ok(Action::List { path })
}

/// `mcp__SERVER__TOOL`, as Claude Code names an MCP server's tool.
fn mcp_named(t: &str, rest: &str) -> Result<Action, RequestError> {
    let Some((server, tool)) = rest.split_once("__") else {
        return err(format!(
            "MCP tool name `{t}` must have the form mcp__SERVER__TOOL"
        ));
    };
    if server.is_empty() || tool.is_empty() {
        return err(format!("MCP tool name `{t}` has an empty server or tool"));
    }
    Ok(Action::Mcp {
        server: server.into(),
        tool: tool.into(),
    })
}

/// The canonical `mcp {server, tool, arguments}`.
fn mcp_call(i: &Input<'_>) -> Result<Action, RequestError> {
    let server = i.string("server")?;
    let tool = i.string("tool")?;
    if server.is_empty() || tool.is_empty() {
        return err("`server` and `tool` must not be empty");
    }
    if let Some(a) = i.map.get("arguments")
        && !a.is_object()
    {
        return err("`arguments` must be a JSON object");
    }
    Ok(Action::Mcp { server, tool })
}

/// A content search (`Grep`, `grep_search`): the pattern must be text; the directory
/// defaults to the working directory; `filter_field` narrows the files.
fn content_search(
    i: &Input<'_>,
    dir: Option<String>,
    filter_field: &str,
) -> Result<Action, RequestError> {
    i.string("pattern")?;
    Ok(Action::Search {
        path: dir.unwrap_or_else(|| ".".into()),
        globs: filters(i.opt_string(filter_field)?),
    })
}

/// Gemini CLI's `read_many_files`: literal paths are reads, globs read beneath their base.
fn read_many(i: &Input<'_>) -> Result<Action, RequestError> {
    let include = i.strings("include")?;
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
    Ok(Action::ReadMany { files, dirs })
}

/// Gemini CLI's `run_shell_command`, with its working directory under either name.
fn gemini_shell(i: &Input<'_>) -> Result<Action, RequestError> {
    let workdir = match (i.opt_path("directory")?, i.opt_path("dir_path")?) {
        (Some(_), Some(_)) => {
            return err("tool `run_shell_command` names both directory and dir_path");
        }
        (a, b) => a.or(b),
    };
    Ok(Action::Shell {
        command: i.command("command")?,
        workdir,
    })
}

/// Codex's `shell`: an argv array (quoted back into one command line) or a string.
fn codex_shell(i: &Input<'_>) -> Result<Action, RequestError> {
    let workdir = i.opt_path("workdir")?;
    let Some(Value::Array(words)) = i.map.get("command") else {
        return Ok(Action::Shell {
            command: i.command("command")?,
            workdir,
        });
    };
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
    Ok(Action::Shell {
        command: quote_argv(&argv),
        workdir,
    })
}

/// `WebFetch {url}` or Gemini CLI's `web_fetch {prompt}`, whose URLs are inside the text.
fn fetch(i: &Input<'_>) -> Result<Action, RequestError> {
    let method = i
        .opt_string("method")?
        .unwrap_or_else(|| "GET".into())
        .to_ascii_uppercase();
    Ok(match i.opt_string("url")? {
        Some(u) if u.is_empty() => return err("`url` is empty"),
        Some(u) => Action::Fetch {
            urls: vec![u],
            method,
            unparsed: false,
        },
        None => {
            let prompt = i.string("prompt")?;
            let urls = urls_in_text(&prompt);
            Action::Fetch {
                unparsed: urls.is_empty(),
                urls,
                method,
            }
        }
    })
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

#[cfg(test)]
mod table {
    use super::TOOLS;

    #[test]
    fn every_tool_name_appears_once_and_every_tool_names_its_fields() {
        let mut seen = std::collections::BTreeSet::new();
        for tool in TOOLS {
            assert!(!tool.fields.is_empty(), "{:?} has no fields", tool.names);
            for name in tool.names {
                assert!(seen.insert(*name), "`{name}` is in the table twice");
                assert!(
                    !name.starts_with("mcp__"),
                    "`{name}` would be read as an MCP tool"
                );
            }
        }
        assert!(seen.len() > 25, "the table lost tools: {seen:?}");
    }
}
