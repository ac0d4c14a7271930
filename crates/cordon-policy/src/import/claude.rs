//! Claude Code's `permissions` block (`allow`, `ask`, `deny`, `defaultMode`,
//! `additionalDirectories`) into cordon's `[permissions]`, `mode` and `[sandbox]`.
//!
//! Claude Code's rule syntax, as its permissions documentation describes it: `Tool` or
//! `Tool(specifier)`; `Bash(npm run test:*)` (prefix), `Bash(git diff *)` (wildcard),
//! `Bash(npm run build)` (exact); `Read(…)`/`Edit(…)` paths in gitignore syntax where
//! `//x` is absolute, `~/x` is under HOME, `/x` is relative to the directory holding
//! `.claude/settings.json` and `x` or `./x` relative to the current directory;
//! `WebFetch(domain:HOST)`; `mcp__SERVER`, `mcp__SERVER__TOOL`, `mcp__SERVER__*`. cordon
//! reads the same forms with the same anchoring when the workspace is the project, so most
//! entries carry over as written; the differences are handled here, each in the safe
//! direction.

use super::{ImportError, Imported, Remark, RemarkKind, toml_list, toml_string};
use crate::rules::{self, Anchors, Matcher};
use crate::verdict::Decision;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// Where the settings file came from: this decides what `/x` and relative directories mean.
#[derive(Debug, Clone, Default)]
pub struct ClaudeSource {
    /// The directory that holds `.claude/` (the project), when known: relative
    /// `additionalDirectories` are resolved against it.
    pub project_dir: Option<PathBuf>,
    /// The file is the user's own `~/.claude/settings.json`: there `/x` means `~/x`.
    pub user_file: bool,
}

impl ClaudeSource {
    /// Work out the source from the settings file's path and HOME:
    /// `HOME/.claude/settings*.json` is the user file, `DIR/.claude/…` a project's.
    pub fn from_path(path: &Path, home: &Path) -> ClaudeSource {
        let claude_dir = path.parent().filter(|d| d.ends_with(".claude"));
        let project_dir = claude_dir.and_then(Path::parent).map(Path::to_path_buf);
        ClaudeSource {
            user_file: project_dir.as_deref() == Some(home),
            project_dir,
        }
    }
}

/// Tool names cordon's adapters map to a kind of their own: an unknown-tool rule naming one
/// of them would never match, so each gets its own treatment below.
const KNOWN_TOOLS: &[&str] = &[
    "Read",
    "Write",
    "Edit",
    "MultiEdit",
    "NotebookEdit",
    "LS",
    "Glob",
    "Grep",
    "Bash",
    "WebFetch",
    "WebSearch",
];

/// Convert a Claude Code settings file (the whole file, or just its `permissions` object).
pub fn claude_settings(text: &str, source: &ClaudeSource) -> Result<Imported, ImportError> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        ImportError::at(
            e.line(),
            e.column(),
            format!("not valid JSON: {e}; a Claude Code settings file is one JSON object"),
        )
    })?;
    let Value::Object(top) = value else {
        return Err(ImportError::new(
            "the settings file must be a JSON object with a `permissions` key",
        ));
    };
    let mut remarks = Vec::new();
    let block = match top.get("permissions") {
        Some(Value::Object(p)) => {
            for k in top.keys().filter(|k| *k != "permissions") {
                remarks.push(Remark {
                    kind: RemarkKind::Ignored,
                    item: k.clone(),
                    line: None,
                    why: "only the `permissions` block is imported; this setting has no place in cordon's policy".into(),
                });
            }
            p.clone()
        }
        Some(_) => return Err(ImportError::new("`permissions` must be a JSON object")),
        None if PERMISSION_KEYS.iter().any(|k| top.contains_key(*k)) => top,
        None => {
            return Err(ImportError::new(
                "the file has no `permissions` object (and is not one itself); nothing to import",
            ));
        }
    };
    convert(&block, source, remarks)
}

const PERMISSION_KEYS: &[&str] = &[
    "allow",
    "ask",
    "deny",
    "defaultMode",
    "additionalDirectories",
];

fn string_list(block: &Map<String, Value>, key: &str) -> Result<Vec<String>, ImportError> {
    match block.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::String(s) => Ok(s.clone()),
                other => Err(ImportError::new(format!(
                    "`permissions.{key}[{i}]` must be a string, found {}",
                    json_type(other)
                ))),
            })
            .collect(),
        Some(other) => Err(ImportError::new(format!(
            "`permissions.{key}` must be an array of strings, found {}",
            json_type(other)
        ))),
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn convert(
    block: &Map<String, Value>,
    source: &ClaudeSource,
    mut remarks: Vec<Remark>,
) -> Result<Imported, ImportError> {
    // Read every typed field first, so a wrong type refuses the file before anything else.
    let lists = [
        (Decision::Allow, string_list(block, "allow")?),
        (Decision::Ask, string_list(block, "ask")?),
        (Decision::Deny, string_list(block, "deny")?),
    ];
    let dirs = string_list(block, "additionalDirectories")?;
    let mode = match block.get("defaultMode") {
        None | Some(Value::Null) => None,
        Some(Value::String(m)) => Some(m.clone()),
        Some(other) => {
            return Err(ImportError::new(format!(
                "`permissions.defaultMode` must be a string, found {}",
                json_type(other)
            )));
        }
    };
    for k in block
        .keys()
        .filter(|k| !PERMISSION_KEYS.contains(&k.as_str()))
    {
        remarks.push(Remark {
            kind: RemarkKind::Skipped,
            item: format!("permissions.{k}"),
            line: None,
            why: "cordon has no equivalent of this permission setting".into(),
        });
    }

    let mut toml =
        String::from("# Converted from Claude Code settings by `cordon import claude-settings`.\n");
    if let Some(m) = mode {
        match claude_mode(&m) {
            Some(cordon) => toml.push_str(&format!("mode = {}\n", toml_string(cordon))),
            None => remarks.push(Remark {
                kind: RemarkKind::Skipped,
                item: format!("defaultMode = {m}"),
                line: None,
                why: "not one of default, acceptEdits, plan, bypassPermissions, dontAsk; cordon has no equivalent mode".into(),
            }),
        }
    }
    let mut roots = Vec::new();
    for d in &dirs {
        match writable_root(d, source) {
            Ok(r) => {
                remarks.push(Remark {
                    kind: RemarkKind::Wider,
                    item: format!("additionalDirectories: {d}"),
                    line: None,
                    why: "became a cordon writable root: inside the workspace for the defaults (as in Claude Code), and also writable inside `cordon exec`'s sandbox".into(),
                });
                push_unique(&mut roots, r);
            }
            Err(why) => remarks.push(Remark {
                kind: RemarkKind::Skipped,
                item: format!("additionalDirectories: {d}"),
                line: None,
                why,
            }),
        }
    }
    if !roots.is_empty() {
        toml.push_str(&format!(
            "\n[sandbox]\nwritable_roots = {}\n",
            toml_list(&roots)
        ));
    }
    toml.push_str("\n[permissions]\n");
    for (action, list) in &lists {
        let mut out = Vec::new();
        for text in list {
            match claude_rule(text, *action, source) {
                Ok(c) => {
                    if let Some(why) = c.wider {
                        remarks.push(Remark {
                            kind: RemarkKind::Wider,
                            item: text.clone(),
                            line: None,
                            why: format!("kept as `{}`: {why}", c.rule),
                        });
                    }
                    push_unique(&mut out, c.rule);
                }
                Err(why) => remarks.push(Remark {
                    kind: RemarkKind::Skipped,
                    item: text.clone(),
                    line: None,
                    why,
                }),
            }
        }
        toml.push_str(&format!("{} = {}\n", action, toml_list(&out)));
    }
    super::load_check(&toml)?;
    Ok(Imported { toml, remarks })
}

fn push_unique(v: &mut Vec<String>, s: String) {
    if !v.contains(&s) {
        v.push(s);
    }
}

/// Claude Code's `defaultMode` words, as cordon's `mode` words.
fn claude_mode(m: &str) -> Option<&'static str> {
    Some(match m {
        "default" => "default",
        "acceptEdits" => "accept-edits",
        "plan" => "plan",
        "bypassPermissions" => "bypass",
        "dontAsk" => "dont-ask",
        _ => return None,
    })
}

fn writable_root(d: &str, source: &ClaudeSource) -> Result<String, String> {
    let d = d.trim();
    if d.is_empty() || d.contains('\0') {
        return Err("an empty or NUL-bearing directory cannot be a writable root".into());
    }
    if d == "~" || d.starts_with("~/") || d.starts_with('/') {
        return Ok(d.to_string());
    }
    match &source.project_dir {
        Some(p) => Ok(crate::paths::clean(&p.join(d)).display().to_string()),
        None => Err("a relative directory is resolved against the project, which is not known when the settings come from stdin; write it as an absolute path".into()),
    }
}

/// One converted rule.
#[derive(Debug, PartialEq, Eq)]
struct Converted {
    rule: String,
    /// Set when the rule covers more than the original (deny and ask only).
    wider: Option<String>,
}

fn exact(rule: String) -> Result<Converted, String> {
    Ok(Converted { rule, wider: None })
}

/// Convert one Claude Code rule for `action`, or say why it cannot be.
fn claude_rule(text: &str, action: Decision, source: &ClaudeSource) -> Result<Converted, String> {
    let t = text.trim();
    let converted = convert_rule(t, action, source)?;
    if converted.wider.is_some() && action == Decision::Allow {
        // Never reached by construction; kept so a future edit cannot widen an allow.
        return Err(
            "cordon can only express this more widely, and an allow is never widened".into(),
        );
    }
    // The rule must mean to cordon what was intended: it has to parse.
    let anchors = Anchors {
        workspace: super::CHECK_WORKSPACE.into(),
        home: super::CHECK_HOME.into(),
    };
    let m = rules::parse_rule(&converted.rule, &anchors)
        .map_err(|e| format!("cordon cannot read the converted rule: {e}"))?;
    if let Matcher::Path { glob, .. } = &m {
        rules::path_globs(glob).map_err(|e| format!("cordon cannot compile the path: {e}"))?;
    }
    Ok(converted)
}

fn convert_rule(t: &str, action: Decision, source: &ClaudeSource) -> Result<Converted, String> {
    if t.is_empty() {
        return Err("the rule is empty".into());
    }
    if t.starts_with("mcp__") {
        if t.contains('(') {
            return Err(
                "MCP rules name a server or tool; cordon has no argument patterns for them".into(),
            );
        }
        return exact(t.to_string());
    }
    let (name, spec) = match t.split_once('(') {
        Some((n, rest)) => match rest.strip_suffix(')') {
            Some(s) => (n.trim(), Some(s.trim())),
            None => return Err("the rule opens a parenthesis but does not end with `)`".into()),
        },
        None => (t, None),
    };
    // `Tool()`, `Tool(*)` and `Tool(**)` mean the whole tool, as a bare name does.
    let spec = spec.filter(|s| !matches!(*s, "" | "*" | "**"));
    let wide = |rule: String, why: &str| -> Result<Converted, String> {
        if action == Decision::Allow {
            Err(format!(
                "cordon can only express this as `{rule}`, which {why}; an allow is never widened"
            ))
        } else {
            Ok(Converted {
                rule,
                wider: Some(why.to_string()),
            })
        }
    };
    match (name, spec) {
        ("Bash", None) => exact("Bash".into()),
        ("Bash", Some(s)) => bash(s).map(|r| Converted {
            rule: format!("Bash({r})"),
            wider: None,
        }),
        ("Read" | "Edit", None) => exact(name.into()),
        ("Read" | "Edit", Some(p)) => {
            let (path, wider) = path_pattern(p, action, source)?;
            Ok(Converted {
                rule: format!("{name}({path})"),
                wider,
            })
        }
        ("Write" | "MultiEdit" | "NotebookEdit", None) => wide(
            "Edit".into(),
            "covers every tool that writes files, not this one alone",
        ),
        ("Write" | "MultiEdit" | "NotebookEdit", Some(p)) => {
            let (path, _) = path_pattern(p, Decision::Deny, source)?;
            wide(
                format!("Edit({path})"),
                "is how file paths are ruled for every writing tool (Claude Code matches paths only in Read and Edit rules)",
            )
        }
        ("Glob" | "Grep" | "LS", None) => wide(
            "Read".into(),
            "covers every tool that reads files, not this one alone",
        ),
        ("Glob" | "Grep" | "LS", Some(p)) => {
            let (path, _) = path_pattern(p, Decision::Deny, source)?;
            wide(
                format!("Read({path})"),
                "is how file paths are ruled for every reading tool (Claude Code matches paths only in Read and Edit rules)",
            )
        }
        ("WebFetch", None) => exact("WebFetch".into()),
        ("WebFetch", Some(s)) => {
            let Some(host) = s.strip_prefix("domain:").map(str::trim) else {
                return Err(
                    "WebFetch rules are converted only in the form WebFetch(domain:HOST)".into(),
                );
            };
            crate::net::HostPattern::parse(host)
                .map_err(|e| format!("the domain is not one cordon can match: {e}"))?;
            exact(format!("WebFetch(domain:{host})"))
        }
        ("WebSearch", None) => exact("WebSearch".into()),
        ("WebSearch", Some(_)) => {
            Err("cordon rules WebSearch as a whole; it has no query patterns".into())
        }
        (other, None) if is_tool_name(other) => exact(other.into()),
        (other, Some(_)) if is_tool_name(other) => Err(format!(
            "cordon rules `{other}` by its name only; it has no argument patterns for this tool"
        )),
        _ => Err("not a Claude Code permission rule cordon recognizes".into()),
    }
}

fn is_tool_name(n: &str) -> bool {
    !n.is_empty()
        && !KNOWN_TOOLS.contains(&n)
        && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// A `Bash(…)` specifier, checked for forms whose meaning differs in cordon.
fn bash(s: &str) -> Result<String, String> {
    // cordon matches the parsed words of each sub-command (quotes removed, wrappers
    // peeled); Claude Code matches command text. They agree only while the pattern is
    // plain words: with shell syntax in it the two would match different calls.
    if let Some(c) = s.chars().find(|c| {
        matches!(
            c,
            '"' | '\'' | '`' | '$' | '\\' | ';' | '&' | '|' | '<' | '>' | '(' | ')' | '\n' | '\r'
        )
    }) {
        return Err(format!(
            "the pattern holds shell syntax (`{c}`); cordon matches the words of each sub-command, so it would not match the same commands"
        ));
    }
    let words: Vec<&str> = s.split_whitespace().collect();
    let joined = words.join(" ");
    if let Some(prefix) = joined.strip_suffix(":*") {
        if prefix.trim().is_empty() {
            return Err("the prefix before `:*` is empty".into());
        }
        if prefix.contains('*') || prefix.contains(":*") {
            return Err("`:*` combined with other wildcards has no cordon equivalent".into());
        }
        return Ok(format!("{}:*", prefix.trim_end()));
    }
    if joined.contains(":*") {
        return Err("`:*` is a prefix marker only at the end of a pattern".into());
    }
    if words.first().is_some_and(|w| w.contains('*')) {
        return Err("a wildcard in the program name has no cordon equivalent (cordon names the program literally)".into());
    }
    Ok(joined)
}

/// A `Read(…)`/`Edit(…)` path in gitignore syntax as a cordon path pattern, and why it is
/// wider when it is.
fn path_pattern(
    p: &str,
    action: Decision,
    source: &ClaudeSource,
) -> Result<(String, Option<String>), String> {
    if p.contains('\0') {
        return Err("the path holds a NUL byte".into());
    }
    if p.starts_with('!') {
        return Err("gitignore negation (`!`) has no cordon equivalent".into());
    }
    if p.starts_with('~') && !(p == "~" || p.starts_with("~/")) {
        return Err("`~user` paths are not expanded by cordon".into());
    }
    // gitignore has no brace alternation; cordon's globs do, so braces become literal.
    let mut path = p.replace('{', "\\{").replace('}', "\\}");
    let mut wider = None;
    if let Some(rest) = path.strip_prefix("//") {
        path = format!("//{rest}");
    } else if path.starts_with('~') {
        // `~` and `~/x` read the same in cordon.
    } else if let Some(rest) = path.strip_prefix('/') {
        path = if source.user_file {
            format!("~/{rest}")
        } else {
            format!("/{rest}")
        };
    } else if !path.starts_with("./") && !path.trim_end_matches('/').contains('/') {
        // gitignore matches a pattern without a slash at any depth; cordon anchors it at
        // the workspace. An allow stays anchored (narrower); a deny or ask covers every
        // depth, which is never narrower than either reading.
        if action != Decision::Allow {
            path = format!("**/{path}");
            wider = Some("a pattern without a slash is matched at any depth beneath the workspace, which covers gitignore's reading and Claude Code's documented one".to_string());
        } else {
            path = format!("./{path}");
        }
    }
    if path.len() > 1 && path.ends_with('/') {
        // gitignore: directories only. cordon's plain pattern covers the path and all
        // beneath it; for an allow, only what is beneath.
        let base = path.trim_end_matches('/').to_string();
        if action == Decision::Allow {
            path = format!("{base}/**");
        } else {
            path = base;
            wider.get_or_insert_with(|| {
                "a trailing `/` (directories only) is dropped, so a file of that name is covered too".to_string()
            });
        }
    }
    Ok((path, wider))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> ClaudeSource {
        ClaudeSource {
            project_dir: Some("/w/proj".into()),
            user_file: false,
        }
    }

    fn conv(rule: &str, action: Decision) -> Result<Converted, String> {
        claude_rule(rule, action, &project())
    }

    macro_rules! same {
        ($name:ident, $rule:expr) => {
            same!($name, $rule, $rule);
        };
        ($name:ident, $rule:expr, $want:expr) => {
            #[test]
            fn $name() {
                for a in [Decision::Allow, Decision::Ask, Decision::Deny] {
                    assert_eq!(
                        conv($rule, a),
                        Ok(Converted {
                            rule: $want.into(),
                            wider: None
                        }),
                        "{:?}",
                        a
                    );
                }
            }
        };
    }

    macro_rules! skipped {
        ($name:ident, $rule:expr, $why:expr) => {
            #[test]
            fn $name() {
                for a in [Decision::Allow, Decision::Ask, Decision::Deny] {
                    let e = conv($rule, a).unwrap_err();
                    assert!(e.contains($why), "{a:?}: {e}");
                }
            }
        };
    }

    macro_rules! allow_skipped_deny_wider {
        ($name:ident, $rule:expr, $deny:expr) => {
            #[test]
            fn $name() {
                let e = conv($rule, Decision::Allow).unwrap_err();
                assert!(e.contains("never widened"), "{e}");
                let d = conv($rule, Decision::Deny).unwrap();
                assert_eq!(d.rule, $deny);
                assert!(d.wider.is_some());
            }
        };
    }

    same!(bash_prefix, "Bash(npm run test:*)");
    same!(bash_space_wildcard, "Bash(git diff *)");
    same!(bash_exact, "Bash(npm run build)");
    same!(
        bash_spaces_normalized,
        "Bash( git   log  :*)",
        "Bash(git log:*)"
    );
    same!(bash_whole, "Bash");
    same!(bash_star, "Bash(*)", "Bash");
    same!(read_dot, "Read(./src/**)");
    same!(read_abs, "Read(//etc/hosts)");
    same!(read_home, "Read(~/.zshrc)");
    same!(read_rooted, "Edit(/docs/**)");
    same!(read_nested_relative, "Edit(src/**/*.ts)");
    same!(read_braces_literal, "Read(./a{b}c)", "Read(./a\\{b\\}c)");
    same!(webfetch_domain, "WebFetch(domain:example.com)");
    same!(webfetch_subdomains, "WebFetch(domain:*.example.com)");
    same!(webfetch_whole, "WebFetch");
    same!(websearch, "WebSearch");
    same!(mcp_server, "mcp__github");
    same!(mcp_tool, "mcp__github__create_issue");
    same!(mcp_all, "mcp__github__*");
    same!(other_tool, "Task");
    same!(read_whole, "Read");

    skipped!(bash_quotes, "Bash(git commit -m \"x\")", "shell syntax");
    skipped!(bash_operator, "Bash(make && make install)", "shell syntax");
    skipped!(bash_program_wildcard, "Bash(* install)", "program name");
    skipped!(
        bash_prefix_and_star,
        "Bash(npm * test:*)",
        "other wildcards"
    );
    skipped!(bash_inner_prefix, "Bash(a:* b)", "only at the end");
    skipped!(task_with_agent, "Task(Explore)", "by its name only");
    skipped!(webfetch_url, "WebFetch(https://example.com)", "domain:HOST");
    skipped!(websearch_query, "WebSearch(rust)", "no query patterns");
    skipped!(negation, "Read(!src/**)", "negation");
    skipped!(tilde_user, "Read(~bob/x)", "~user");
    skipped!(unclosed, "Read(./x", "does not end");
    skipped!(garbage, "not a rule!", "recognizes");
    skipped!(mcp_args, "mcp__s__t(x)", "MCP");

    allow_skipped_deny_wider!(write_bare, "Write", "Edit");
    allow_skipped_deny_wider!(write_path, "Write(./docs/**)", "Edit(./docs/**)");
    allow_skipped_deny_wider!(multiedit, "MultiEdit", "Edit");
    allow_skipped_deny_wider!(grep_bare, "Grep", "Read");

    #[test]
    fn slashless_patterns_anchor_allows_and_widen_denies() {
        let a = conv("Read(.env)", Decision::Allow).unwrap();
        assert_eq!(a.rule, "Read(./.env)");
        assert!(a.wider.is_none());
        let d = conv("Read(*.env)", Decision::Deny).unwrap();
        assert_eq!(d.rule, "Read(**/*.env)");
        assert!(d.wider.is_some());
        // With a `./` or an inner slash the pattern is anchored in both readings.
        assert_eq!(conv("Read(./.env)", Decision::Deny).unwrap().wider, None);
    }

    #[test]
    fn trailing_slash_is_directories_only() {
        assert_eq!(
            conv("Edit(./build/)", Decision::Allow).unwrap().rule,
            "Edit(./build/**)"
        );
        let d = conv("Edit(./build/)", Decision::Deny).unwrap();
        assert_eq!(d.rule, "Edit(./build)");
        assert!(d.wider.is_some());
    }

    #[test]
    fn rooted_paths_in_the_user_file_are_under_home() {
        let user = ClaudeSource {
            project_dir: Some("/home/u".into()),
            user_file: true,
        };
        let c = claude_rule("Read(/notes/**)", Decision::Allow, &user).unwrap();
        assert_eq!(c.rule, "Read(~/notes/**)");
        let s = ClaudeSource::from_path(
            Path::new("/home/u/.claude/settings.json"),
            Path::new("/home/u"),
        );
        assert!(s.user_file);
        let s = ClaudeSource::from_path(
            Path::new("/w/p/.claude/settings.local.json"),
            Path::new("/home/u"),
        );
        assert!(!s.user_file);
        assert_eq!(s.project_dir.as_deref(), Some(Path::new("/w/p")));
    }

    #[test]
    fn modes_map() {
        for (c, want) in [
            ("default", "default"),
            ("acceptEdits", "accept-edits"),
            ("plan", "plan"),
            ("bypassPermissions", "bypass"),
            ("dontAsk", "dont-ask"),
        ] {
            assert_eq!(claude_mode(c), Some(want));
        }
        assert_eq!(claude_mode("auto"), None);
    }

    #[test]
    fn wrong_types_are_errors() {
        let src = project();
        for bad in [
            "[]",
            "{\"permissions\": []}",
            "{\"permissions\": {\"allow\": \"Bash\"}}",
            "{\"permissions\": {\"deny\": [1]}}",
            "{\"permissions\": {\"defaultMode\": true}}",
            "{\"model\": \"x\"}",
            "{not json",
        ] {
            assert!(claude_settings(bad, &src).is_err(), "{bad}");
        }
    }
}
