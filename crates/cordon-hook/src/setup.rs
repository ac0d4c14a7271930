//! `cordon setup HARNESS`: cordon's hook entries merged into a harness's settings file.
//!
//! Owns where each harness reads hooks, what cordon's entries look like (the absolute
//! binary, the workspace pinned by the harness's own variable, see
//! [`crate::workspace::pin_hint`]) and the merge: other entries are kept as they are,
//! earlier cordon entries are replaced, running it twice changes nothing, and a file
//! that cannot be read as the harness's settings is left untouched with one sentence
//! saying why. It never edits a harness's trust store (Codex's hook trust, Gemini CLI's
//! trusted folders): [`Plan::manual`] says what the user must do there.

use crate::Harness;
use crate::rewrite::quote;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

/// A settings file that cannot be read or written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupError(pub String);

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SetupError {}

/// Which settings file: the user's, or a project's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The user's file (every project).
    User,
    /// The file of the project at this directory.
    Project(PathBuf),
}

/// Where the harness's files are.
#[derive(Debug, Clone)]
pub struct Homes {
    /// HOME.
    pub home: PathBuf,
    /// `CODEX_HOME`, when set (else `~/.codex`).
    pub codex_home: Option<PathBuf>,
}

impl Homes {
    /// Codex's home directory.
    pub fn codex(&self) -> PathBuf {
        self.codex_home
            .clone()
            .unwrap_or_else(|| self.home.join(".codex"))
    }
}

/// The settings file `harness` reads hooks from in `scope`.
pub fn settings_file(harness: Harness, scope: &Scope, homes: &Homes) -> PathBuf {
    match (harness, scope) {
        (Harness::ClaudeCode, Scope::User) => homes.home.join(".claude/settings.json"),
        (Harness::ClaudeCode, Scope::Project(d)) => d.join(".claude/settings.json"),
        (Harness::Codex, Scope::User) => homes.codex().join("hooks.json"),
        (Harness::Codex, Scope::Project(d)) => d.join(".codex/hooks.json"),
        (Harness::Gemini, Scope::User) => homes.home.join(".gemini/settings.json"),
        (Harness::Gemini, Scope::Project(d)) => d.join(".gemini/settings.json"),
    }
}

/// The matcher that selects every tool in `harness`'s settings.
fn matcher(harness: Harness) -> &'static str {
    match harness {
        Harness::Gemini => ".*",
        _ => "*",
    }
}

/// The command cordon's entry for `event` runs: the absolute binary, the workspace
/// pinned, `--contain` on the pre-tool event when asked for (where the harness applies
/// a rewrite).
pub fn hook_command(harness: Harness, program: &Path, event: &str, contain: bool) -> String {
    let mut c = format!(
        "{} hook {} {}",
        quote(&program.to_string_lossy()),
        harness.name(),
        crate::workspace::pin_hint(harness)
    );
    if contain && harness.can_rewrite() && matches!(event, "PreToolUse" | "BeforeTool") {
        c.push_str(" --contain");
    }
    c
}

/// Is `command` a run of `cordon hook` (any binary named `cordon`, quoted or not)?
pub fn is_cordon_command(command: &str) -> bool {
    let mut words = command.split_whitespace();
    let Some(first) = words.next() else {
        return false;
    };
    let program = first.trim_matches(|c| c == '\'' || c == '"');
    let name = program.rsplit('/').next().unwrap_or(program);
    name == "cordon" && words.next() == Some("hook")
}

/// What `cordon setup` will do to one file.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The settings file.
    pub file: PathBuf,
    /// Whether it existed.
    pub existed: bool,
    /// Its content after the merge.
    pub text: String,
    /// Nothing would change.
    pub unchanged: bool,
    /// The entries cordon adds: event and command.
    pub added: Vec<(String, String)>,
    /// Earlier cordon entries removed.
    pub replaced: usize,
    /// What the user must still do in the harness (the step cordon cannot take).
    pub manual: Option<String>,
    /// Remarks (an option that has no effect for this harness).
    pub notes: Vec<String>,
}

/// Plan the merge of cordon's entries for `harness` into `file` (read now).
pub fn plan(
    harness: Harness,
    scope: &Scope,
    homes: &Homes,
    program: &Path,
    contain: bool,
) -> Result<Plan, SetupError> {
    if !program.is_absolute() {
        return Err(SetupError(format!(
            "the cordon binary path {} is not absolute",
            program.display()
        )));
    }
    let file = settings_file(harness, scope, homes);
    let shown = file.display();
    // Only a regular file is read (a FIFO would block for ever), of a settings file's size.
    let read =
        cordon_fs::read_regular(&file, crate::doctor::MAX_SETTINGS).map_err(std::io::Error::from);
    let (existed, before) = match read {
        Ok(b) => (true, Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (false, None),
        Err(e) => {
            return Err(SetupError(format!(
                "cannot read {shown}: {e}; it was left untouched"
            )));
        }
    };
    let mut root = match &before {
        None => Map::new(),
        Some(b) if b.iter().all(u8::is_ascii_whitespace) => Map::new(),
        Some(b) => match serde_json::from_slice::<Value>(b) {
            Ok(Value::Object(m)) => m,
            Ok(_) => {
                return Err(SetupError(format!(
                    "{shown} is not a JSON object; it was left untouched (fix it, or add cordon's hooks by hand as docs/guide/hook.md shows)"
                )));
            }
            Err(e) => {
                return Err(SetupError(format!(
                    "{shown} is not valid JSON ({e}); it was left untouched (fix it, or add cordon's hooks by hand as docs/guide/hook.md shows)"
                )));
            }
        },
    };
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(hooks) = hooks else {
        return Err(SetupError(format!(
            "`hooks` in {shown} is not an object; the file was left untouched"
        )));
    };
    let mut replaced = 0;
    let mut added = Vec::new();
    for event in harness.events() {
        let groups = hooks
            .entry(event.to_string())
            .or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(groups) = groups else {
            return Err(SetupError(format!(
                "`hooks.{event}` in {shown} is not a list; the file was left untouched"
            )));
        };
        replaced += remove_cordon(groups);
        let command = hook_command(harness, program, event, contain);
        let mut handler = json!({"type": "command", "command": command});
        if harness == Harness::Gemini {
            let name = if *event == "AfterTool" {
                "cordon-record"
            } else {
                "cordon"
            };
            handler["name"] = json!(name);
        }
        groups.push(json!({"matcher": matcher(harness), "hooks": [handler]}));
        added.push((event.to_string(), command));
    }
    let text = format!(
        "{}\n",
        serde_json::to_string_pretty(&Value::Object(root))
            .map_err(|e| SetupError(format!("cannot write the settings as JSON: {e}")))?
    );
    let unchanged = before.as_deref() == Some(text.as_bytes())
        || before
            .as_deref()
            .and_then(|b| serde_json::from_slice::<Value>(b).ok())
            .is_some_and(|v| serde_json::from_str::<Value>(&text).ok() == Some(v));
    let mut notes = Vec::new();
    if contain && !harness.can_rewrite() {
        notes.push(format!(
            "--contain has no effect for {}: its hooks cannot rewrite a call (its own sandbox applies)",
            title(harness)
        ));
    }
    Ok(Plan {
        file,
        existed,
        text,
        unchanged,
        added,
        replaced,
        manual: manual_step(harness, scope),
        notes,
    })
}

/// Remove cordon's handlers from the matcher groups of one event (a group left with
/// no handler goes too); how many were removed.
fn remove_cordon(groups: &mut Vec<Value>) -> usize {
    let mut removed = 0;
    for g in groups.iter_mut() {
        let Some(Value::Array(handlers)) = g.get_mut("hooks") else {
            continue;
        };
        let before = handlers.len();
        handlers.retain(|h| {
            !h.get("command")
                .and_then(Value::as_str)
                .is_some_and(is_cordon_command)
        });
        removed += before - handlers.len();
    }
    groups.retain(|g| !matches!(g.get("hooks"), Some(Value::Array(h)) if h.is_empty()));
    removed
}

/// Write a plan's file (its directory created 0755 if missing; an existing file keeps
/// its mode). Nothing is written when the plan changes nothing.
pub fn write(plan: &Plan) -> Result<(), SetupError> {
    if plan.unchanged {
        return Ok(());
    }
    let shown = plan.file.display();
    let dir = plan
        .file
        .parent()
        .ok_or_else(|| SetupError(format!("{shown} has no directory")))?;
    let name = plan
        .file
        .file_name()
        .ok_or_else(|| SetupError(format!("{shown} has no file name")))?;
    let mode = {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(&plan.file).map_or(0o644, |m| m.permissions().mode() & 0o777)
    };
    let d = cordon_fs::Dir::create_ambient(dir, 0o755)
        .map_err(|e| SetupError(format!("cannot create {}: {e}", dir.display())))?;
    d.write(Path::new(name), plan.text.as_bytes(), mode)
        .map_err(|e| SetupError(format!("cannot write {shown}: {e}")))
}

/// The step cordon cannot take for `harness`.
fn manual_step(harness: Harness, scope: &Scope) -> Option<String> {
    match (harness, scope) {
        (Harness::Codex, Scope::User) => Some(
            "Codex runs a new or changed hook only after you trust it, and skips an untrusted one without a word (even `codex exec`): start `codex`, open `/hooks` and trust cordon's three entries (`cordon doctor` checks it)".into(),
        ),
        (Harness::Codex, Scope::Project(d)) => Some(format!(
            "Codex loads a project's hooks only when the project is trusted (`[projects.\"{}\"] trust_level = \"trusted\"` in ~/.codex/config.toml) and runs them only after you trust them in `/hooks`; until then it skips them without a word",
            d.display()
        )),
        (Harness::Gemini, Scope::Project(_)) => Some(
            "Gemini CLI asks you to accept a new or changed project hook, and drops project hooks entirely under `--skip-trust` (headless runs): for those, run `cordon setup gemini --user`".into(),
        ),
        _ => None,
    }
}

/// The harness's name as its makers write it.
pub fn title(h: Harness) -> &'static str {
    match h {
        Harness::ClaudeCode => "Claude Code",
        Harness::Codex => "Codex",
        Harness::Gemini => "Gemini CLI",
    }
}

/// cordon's entries in a settings value: `(event, command)` for each handler that runs
/// `cordon hook`.
pub fn installed(harness: Harness, settings: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for event in harness.events() {
        let Some(Value::Array(groups)) = settings.get("hooks").and_then(|h| h.get(*event)) else {
            continue;
        };
        for g in groups {
            let Some(Value::Array(hs)) = g.get("hooks") else {
                continue;
            };
            for h in hs {
                if let Some(c) = h.get("command").and_then(Value::as_str)
                    && is_cordon_command(c)
                {
                    out.push((event.to_string(), c.to_string()));
                }
            }
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
mod tests {
    use super::*;

    #[test]
    fn cordon_commands_are_recognised_in_their_spellings() {
        for c in [
            "cordon hook claude-code",
            "'/usr/local/bin/cordon' hook codex --workspace \"$PWD\"",
            "\"/opt/x/cordon\" hook gemini",
        ] {
            assert!(is_cordon_command(c), "{c}");
        }
        for c in ["cordon exec ls", "my-cordon hook x", "echo cordon hook", ""] {
            assert!(!is_cordon_command(c), "{c}");
        }
    }

    #[test]
    fn commands_pin_the_workspace_and_contain_only_where_a_rewrite_applies() {
        let p = Path::new("/opt/it's/cordon");
        let c = hook_command(Harness::ClaudeCode, p, "PreToolUse", true);
        assert_eq!(
            c,
            r#"'/opt/it'\''s/cordon' hook claude-code --workspace "$CLAUDE_PROJECT_DIR" --contain"#
        );
        assert!(!hook_command(Harness::ClaudeCode, p, "PostToolUse", true).contains("--contain"));
        assert!(!hook_command(Harness::Codex, p, "PreToolUse", true).contains("--contain"));
        assert!(
            hook_command(Harness::Codex, p, "PreToolUse", false).ends_with("--workspace \"$PWD\"")
        );
    }
}
