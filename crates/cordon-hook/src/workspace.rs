//! The hook's workspace: pinned by the user, never taken from the payload.
//!
//! A harness writes the tool call's `cwd` into every payload, and a session that moved
//! (or a payload that lies) could otherwise make `/` or HOME the workspace, turning every
//! read and write of the machine into one "inside the workspace". The workspace comes
//! from `--workspace`, else from the harness's project-directory variable
//! (`CLAUDE_PROJECT_DIR` for Claude Code, `GEMINI_PROJECT_DIR` for Gemini CLI), and is
//! refused when it is `/`, HOME, or a directory holding HOME. The payload's `cwd` stays
//! the call's working directory: a cwd outside the workspace is judged as one.
//!
//! Owns the choice and the refusal sentences; never reads a payload.

use crate::Harness;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Why no workspace could be pinned (the hook blocks the call with this sentence).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceError(pub String);

impl std::fmt::Display for WorkspaceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WorkspaceError {}

/// The project-directory variable `harness` sets for its hooks, if it sets one.
pub fn project_dir_var(harness: Harness) -> Option<&'static str> {
    match harness {
        Harness::ClaudeCode => Some("CLAUDE_PROJECT_DIR"),
        Harness::Gemini => Some("GEMINI_PROJECT_DIR"),
        Harness::Codex => None,
    }
}

/// How to pin the workspace of `harness`, as it would be written in its hook command.
pub fn pin_hint(harness: Harness) -> &'static str {
    match harness {
        Harness::ClaudeCode => "--workspace \"$CLAUDE_PROJECT_DIR\"",
        Harness::Gemini => "--workspace \"$GEMINI_PROJECT_DIR\"",
        Harness::Codex => "--workspace \"$PWD\"",
    }
}

/// The workspace of a hook call of `harness`: `flag` (`--workspace`, made absolute
/// against `cwd_of_process`), else the harness's project-directory variable read through
/// `var`; made canonical, and refused when it is `/`, `home` or holds `home`.
pub fn pin(
    harness: Harness,
    flag: Option<&Path>,
    var: impl Fn(&str) -> Option<OsString>,
    cwd_of_process: &Path,
    home: &Path,
) -> Result<PathBuf, WorkspaceError> {
    let (given, from) = match flag {
        Some(w) => (cwd_of_process.join(w), "--workspace".to_string()),
        None => {
            let found = project_dir_var(harness)
                .and_then(|v| var(v).filter(|s| !s.is_empty()).map(|s| (s, v)));
            match found {
                Some((dir, name)) => {
                    let dir = PathBuf::from(dir);
                    if !dir.is_absolute() {
                        return Err(WorkspaceError(format!(
                            "{name} must be an absolute path, got `{}`",
                            dir.display()
                        )));
                    }
                    (dir, format!("${name}"))
                }
                None => {
                    return Err(WorkspaceError(format!(
                        "the hook's workspace is not pinned and cordon never takes it from the payload's cwd: add `{}` to the hook command in the {} settings (or run `cordon setup {}`)",
                        pin_hint(harness),
                        harness_title(harness),
                        harness.name()
                    )));
                }
            }
        }
    };
    let real = std::fs::canonicalize(&given).map_err(|e| {
        WorkspaceError(format!(
            "the workspace {} (from {from}) cannot be used: {e}",
            given.display()
        ))
    })?;
    if !real.is_dir() {
        return Err(WorkspaceError(format!(
            "the workspace {} (from {from}) is not a directory",
            given.display()
        )));
    }
    refuse_broad(&real, home).map_err(|why| {
        WorkspaceError(format!(
            "the workspace {} (from {from}) {why}: pin the hook to a project directory",
            given.display()
        ))
    })?;
    Ok(real)
}

/// Refuse `/`, HOME and any directory holding HOME as a workspace (each would make the
/// whole machine, or every credential in HOME, "inside the workspace").
pub fn refuse_broad(real: &Path, home: &Path) -> Result<(), &'static str> {
    if real.parent().is_none() {
        return Err("is the root directory");
    }
    let home = std::fs::canonicalize(home).unwrap_or_else(|_| home.to_path_buf());
    if real == home {
        return Err("is your home directory");
    }
    if home.starts_with(real) {
        return Err("holds your home directory");
    }
    Ok(())
}

fn harness_title(h: Harness) -> &'static str {
    match h {
        Harness::ClaudeCode => "Claude Code",
        Harness::Codex => "Codex",
        Harness::Gemini => "Gemini CLI",
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
mod tests {
    use super::*;

    fn none(_: &str) -> Option<OsString> {
        None
    }

    #[test]
    fn the_workspace_comes_from_the_flag_or_the_harness_variable_only() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        let (home, ws) = (root.join("home"), root.join("ws"));
        std::fs::create_dir_all(home.join("proj")).unwrap();
        std::fs::create_dir_all(&ws).unwrap();
        let pinned = pin(Harness::Codex, Some(Path::new("ws")), none, &root, &home);
        assert_eq!(pinned.unwrap(), ws);
        let var = |v: &str| (v == "CLAUDE_PROJECT_DIR").then(|| OsString::from(&ws));
        assert_eq!(
            pin(Harness::ClaudeCode, None, var, &root, &home).unwrap(),
            ws
        );
        // Codex sets no variable; Gemini's is its own.
        let e = pin(Harness::Codex, None, var, &root, &home).unwrap_err();
        assert!(e.0.contains("--workspace \"$PWD\""), "{e}");
        let e = pin(Harness::Gemini, None, var, &root, &home).unwrap_err();
        assert!(e.0.contains("GEMINI_PROJECT_DIR"), "{e}");
        let empty = |_: &str| Some(OsString::new());
        assert!(pin(Harness::ClaudeCode, None, empty, &root, &home).is_err());
        let rel = |_: &str| Some(OsString::from("ws"));
        assert!(pin(Harness::Gemini, None, rel, &root, &home).is_err());
    }

    #[test]
    fn root_home_and_what_holds_home_are_refused_in_every_spelling() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        let home = root.join("u");
        std::fs::create_dir_all(home.join("proj")).unwrap();
        std::os::unix::fs::symlink(&home, root.join("link")).unwrap();
        for w in ["/", "/.", "//", "u", "u/", "u/.", "u/proj/..", "link", "."] {
            let e = pin(Harness::Codex, Some(Path::new(w)), none, &root, &home);
            assert!(e.is_err(), "{w} accepted");
        }
        assert!(
            pin(
                Harness::Codex,
                Some(Path::new("u/proj")),
                none,
                &root,
                &home
            )
            .is_ok()
        );
        assert!(
            pin(
                Harness::Codex,
                Some(Path::new("missing")),
                none,
                &root,
                &home
            )
            .is_err()
        );
    }
}
