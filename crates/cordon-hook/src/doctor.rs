//! `cordon doctor`, the harness part: for a harness found on PATH, is cordon's hook in
//! its settings, in which file, and will the harness run it (Codex's hook trust, Gemini
//! CLI dropping project hooks under `--skip-trust`), and which `--server` sockets the
//! hook names (the caller asks whether they answer).
//!
//! Reads settings files; never writes one and never runs a harness.

use crate::Harness;
use crate::setup::{Homes, Scope, installed, settings_file, title};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The program name of each harness's CLI.
pub fn program(h: Harness) -> &'static str {
    match h {
        Harness::ClaudeCode => "claude",
        Harness::Codex => "codex",
        Harness::Gemini => "gemini",
    }
}

/// The first executable file `name` in the directories of `path_var`.
pub fn on_path(name: &str, path_var: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    path_var
        .split(':')
        .filter(|d| d.starts_with('/'))
        .map(|d| Path::new(d).join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// What one settings file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileState {
    /// No such file.
    Absent,
    /// It cannot be read as JSON settings (why).
    Unreadable(String),
    /// It has no cordon hook.
    Without,
    /// cordon's entries: event and command.
    With(Vec<(String, String)>),
}

/// One settings file of a harness.
#[derive(Debug, Clone)]
pub struct FileCheck {
    /// The file.
    pub path: PathBuf,
    /// `user` or `project`.
    pub scope: &'static str,
    /// What it holds.
    pub state: FileState,
}

/// The report for one harness.
#[derive(Debug, Clone)]
pub struct HarnessCheck {
    /// The harness.
    pub harness: Harness,
    /// Its CLI on PATH.
    pub binary: PathBuf,
    /// Its settings files, user first.
    pub files: Vec<FileCheck>,
    /// Whether it will run cordon's hook, one sentence each (problems and fixes).
    pub verdicts: Vec<String>,
    /// Sockets named by `--server` in cordon's entries (variables expanded).
    pub sockets: Vec<PathBuf>,
}

/// The most a harness's settings or configuration file may hold to be read.
pub(crate) const MAX_SETTINGS: u64 = 4 * 1024 * 1024;

/// A settings file: only a regular file of at most [`MAX_SETTINGS`] bytes is read (a FIFO
/// would block `cordon doctor` for ever).
fn read(path: &Path) -> (FileState, Option<Value>) {
    match cordon_fs::read_regular(path, MAX_SETTINGS).map_err(std::io::Error::from) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (FileState::Absent, None),
        Err(e) => (FileState::Unreadable(e.to_string()), None),
        Ok(b) => match serde_json::from_slice::<Value>(&b) {
            Ok(v) if v.is_object() => (FileState::Without, Some(v)),
            Ok(_) => (FileState::Unreadable("not a JSON object".into()), None),
            Err(e) => (FileState::Unreadable(format!("not valid JSON: {e}")), None),
        },
    }
}

/// Check `harness` (its CLI at `binary`): its user file and the file of the project at
/// `project`; `var` reads the environment (for `--server` paths).
pub fn check(
    harness: Harness,
    binary: PathBuf,
    homes: &Homes,
    project: &Path,
    var: &dyn Fn(&str) -> Option<String>,
) -> HarnessCheck {
    let mut files = Vec::new();
    let mut verdicts = Vec::new();
    let mut sockets = Vec::new();
    for (scope, name) in [
        (Scope::User, "user"),
        (Scope::Project(project.to_path_buf()), "project"),
    ] {
        let path = settings_file(harness, &scope, homes);
        let (mut state, value) = read(&path);
        if let Some(v) = &value {
            let found = installed(harness, v);
            if !found.is_empty() {
                for (_, c) in &found {
                    if let Some(s) = server_socket(c, var)
                        && !sockets.contains(&s)
                    {
                        sockets.push(s);
                    }
                }
                verdicts.extend(entry_problems(harness, &path, &found));
                verdicts.extend(will_run(harness, &scope, &path, homes));
                state = FileState::With(found);
            }
        }
        files.push(FileCheck {
            path,
            scope: name,
            state,
        });
    }
    if !files.iter().any(|f| matches!(f.state, FileState::With(_))) {
        verdicts.push(format!(
            "cordon's hook is not installed for {}: run `cordon setup {}`",
            title(harness),
            harness.name()
        ));
    }
    HarnessCheck {
        harness,
        binary,
        files,
        verdicts,
        sockets,
    }
}

/// Events without a cordon entry, and entries whose workspace is not pinned.
fn entry_problems(harness: Harness, path: &Path, found: &[(String, String)]) -> Vec<String> {
    let mut out = Vec::new();
    let missing: Vec<&str> = harness
        .events()
        .iter()
        .copied()
        .filter(|e| !found.iter().any(|(f, _)| f == e))
        .collect();
    if !missing.is_empty() {
        out.push(format!(
            "{}: no cordon entry for {} (run `cordon setup {}` again)",
            path.display(),
            missing.join(", "),
            harness.name()
        ));
    }
    if found
        .iter()
        .any(|(_, c)| !c.contains("--workspace") && !c.contains("--server"))
    {
        out.push(format!(
            "{}: a cordon entry does not pin its workspace, so it blocks every call (add `{}`)",
            path.display(),
            crate::workspace::pin_hint(harness)
        ));
    }
    out
}

/// Whether the harness will run the hooks of the file at `path`.
fn will_run(harness: Harness, scope: &Scope, path: &Path, homes: &Homes) -> Vec<String> {
    match harness {
        Harness::ClaudeCode => Vec::new(),
        Harness::Gemini => match scope {
            Scope::User => Vec::new(),
            Scope::Project(_) => vec![format!(
                "{}: Gemini CLI drops project hooks under `--skip-trust` (headless runs) and asks before running a new or changed one; for headless runs install with `cordon setup gemini --user`",
                path.display()
            )],
        },
        Harness::Codex => codex_trust(scope, path, homes),
    }
}

/// Codex keeps the hash of each hook the user trusted in `[hooks.state."PATH:EVENT:G:H"]
/// trusted_hash` of its user config, and skips an untrusted hook without a word.
fn codex_trust(scope: &Scope, path: &Path, homes: &Homes) -> Vec<String> {
    let config = homes.codex().join("config.toml");
    let parsed: Option<toml::Table> = cordon_fs::read_regular_text(&config, MAX_SETTINGS)
        .ok()
        .and_then(|t| t.parse().ok());
    let mut out = Vec::new();
    if let Scope::Project(dir) = scope {
        let trusted = parsed
            .as_ref()
            .and_then(|t| t.get("projects"))
            .and_then(|p| p.get(dir.to_string_lossy().as_ref()))
            .and_then(|p| p.get("trust_level"))
            .and_then(|l| l.as_str())
            == Some("trusted");
        if !trusted {
            out.push(format!(
                "{}: Codex loads this project's hooks only when the project is trusted (`[projects.\"{}\"] trust_level = \"trusted\"` in {})",
                path.display(),
                dir.display(),
                config.display()
            ));
        }
    }
    let file = path.to_string_lossy();
    let states = parsed
        .as_ref()
        .and_then(|t| t.get("hooks"))
        .and_then(|h| h.get("state"))
        .and_then(|s| s.as_table());
    let trusted: Vec<&str> = ["pre_tool_use", "permission_request", "post_tool_use"]
        .into_iter()
        .filter(|event| {
            states.is_some_and(|s| {
                s.iter().any(|(k, v)| {
                    k.contains(&format!("{file}:{event}:"))
                        && v.get("trusted_hash").is_some()
                        && v.get("enabled").and_then(|e| e.as_bool()) != Some(false)
                })
            })
        })
        .collect();
    if trusted.len() < 3 {
        out.push(format!(
            "{}: Codex has not trusted cordon's hooks ({} of 3 events trusted in {}), and skips an untrusted hook without a word: start `codex`, open `/hooks` and trust them",
            path.display(),
            trusted.len(),
            config.display()
        ));
    }
    out
}

/// The socket a `--server` entry names, with `$VAR` and `${VAR}` expanded (`None` when
/// the command names none or a variable is unset).
pub fn server_socket(command: &str, var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let mut words = command.split_whitespace();
    let raw = loop {
        let w = words.next()?;
        if w == "--server" {
            break words.next()?.to_string();
        }
        if let Some(v) = w.strip_prefix("--server=") {
            break v.to_string();
        }
    };
    let raw = raw.trim_matches(|c| c == '"' || c == '\'');
    let mut out = String::new();
    let mut rest = raw;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let (name, tail) = match after.strip_prefix('{') {
            Some(b) => {
                let end = b.find('}')?;
                (&b[..end], &b[end + 1..])
            }
            None => {
                let end = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                (&after[..end], &after[end..])
            }
        };
        out.push_str(&var(name)?);
        rest = tail;
    }
    out.push_str(rest);
    Some(PathBuf::from(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_sockets_are_read_with_variables() {
        let var = |v: &str| (v == "XDG_RUNTIME_DIR").then(|| "/run/user/1".to_string());
        let c = r#"cordon hook claude-code --server "$XDG_RUNTIME_DIR/cordon/serve.sock""#;
        assert_eq!(
            server_socket(c, &var),
            Some(PathBuf::from("/run/user/1/cordon/serve.sock"))
        );
        let c = "cordon hook codex --server=${XDG_RUNTIME_DIR}/s.sock";
        assert_eq!(
            server_socket(c, &var),
            Some(PathBuf::from("/run/user/1/s.sock"))
        );
        assert_eq!(
            server_socket("cordon hook codex --server $NOPE/s", &var),
            None
        );
        assert_eq!(server_socket("cordon hook codex", &var), None);
    }
}
