//! Where a call's files are: the directory each command of a shell call runs in, the
//! directories it fills, and the absolute patterns of the files it executes, resolved
//! through symlinks on the file system the gate sees. Reads the file system through
//! [`FileFacts`](crate::FileFacts) only; decides nothing.

use super::{Executes, Written, pattern_prefix};
use crate::ops::Operations;
use crate::paths;
use crate::request::{Action, Request};
use std::path::{Path, PathBuf};

/// Where a call runs: the workspace, the home directory, and the file system to
/// resolve paths through.
pub struct Place<'a> {
    /// The workspace root.
    pub workspace: &'a Path,
    /// The home directory.
    pub home: &'a Path,
    /// The file system.
    pub fs: &'a dyn crate::FileFacts,
}

/// The directory each analyzed command of the call runs in (`None`: known only at run
/// time), with the command.
fn command_dirs<'o>(
    req: &Request,
    ops: &'o Operations,
    place: &Place<'_>,
) -> Vec<(&'o cordon_shell::SimpleCommand, Option<PathBuf>)> {
    let Some(analysis) = &ops.analysis else {
        return Vec::new();
    };
    let home = place.home;
    let cwd = req
        .cwd
        .as_deref()
        .map(paths::clean)
        .unwrap_or_else(|| place.workspace.to_path_buf());
    let base = match req.action() {
        Ok(Action::Shell {
            workdir: Some(w), ..
        }) => paths::clean(&paths::absolute(&paths::expand_home(&w, home), &cwd)),
        _ => cwd,
    };
    analysis
        .commands
        .iter()
        .map(|c| {
            let dir = match &c.cwd {
                cordon_shell::CwdChange::Unchanged => Some(base.clone()),
                cordon_shell::CwdChange::Relative(r) => Some(paths::clean(&paths::absolute(
                    &paths::expand_home(r, home),
                    &base,
                ))),
                _ => None,
            };
            (c, dir)
        })
        .collect()
}

/// Directories a shell command fills with files it names itself (a copy's destination,
/// an archive's extraction directory): anything beneath them may be new. A destination
/// that exists as a file is a plain write, already recorded.
pub(super) fn filled(req: &Request, ops: &Operations, place: &Place<'_>) -> Vec<Written> {
    let mut out = Vec::new();
    for (c, dir) in command_dirs(req, ops, place) {
        for w in c.effects.fills.iter().filter(|w| w.literal) {
            // A `cd` known only at run time: the directory may be anywhere beneath the
            // workspace, so the whole workspace may be new.
            let dir = dir.clone().unwrap_or_else(|| place.workspace.to_path_buf());
            let f = paths::facts_for(&w.value, &dir, place.home, place.fs);
            let is_file = f.exists
                && place
                    .fs
                    .metadata(&f.resolved)
                    .is_some_and(|m| m.kind != crate::facts::FileKind::Dir);
            if is_file && !w.value.ends_with('/') {
                continue;
            }
            let mut paths = vec![f.literal.clone()];
            if f.resolved != f.literal {
                paths.push(f.resolved.clone());
            }
            for path in paths {
                out.push(Written {
                    path,
                    hash: None,
                    tree: true,
                });
            }
        }
    }
    out
}

pub(super) fn executes(req: &Request, ops: &Operations, place: &Place<'_>) -> Vec<Executes> {
    let (workspace, home) = (place.workspace, place.home);
    let mut out = Vec::new();
    for (c, dir) in command_dirs(req, ops, place) {
        for f in cordon_shell::executed_files(c) {
            let rel = f.pattern.trim_start_matches("./");
            let patterns: Vec<String> = match (&f.reach, &dir) {
                (cordon_shell::Reach::Tree, d) => {
                    let root = d
                        .as_ref()
                        .map(|d| paths::clean(&d.join(rel)))
                        .unwrap_or_else(|| workspace.to_path_buf());
                    let mut v = vec![format!("{}/**", workspace.display())];
                    if !paths::is_within(&root, workspace) {
                        v.push(format!("{}/**", root.display()));
                    }
                    v
                }
                (cordon_shell::Reach::Upward { from }, Some(d)) => {
                    let start = paths::clean(&d.join(from.trim_start_matches("./")));
                    start
                        .ancestors()
                        .map(|a| format!("{}/{rel}", a.display()))
                        .collect()
                }
                (cordon_shell::Reach::Upward { .. }, None) => {
                    vec![format!("{}/**/{rel}", workspace.display())]
                }
                _ if f.pattern.starts_with('/') => vec![f.pattern.clone()],
                _ if f.pattern.starts_with("~/") => {
                    vec![format!("{}/{}", home.display(), &f.pattern[2..])]
                }
                (_, Some(d)) => vec![format!("{}/{rel}", d.display())],
                // A `cd` to a place known only at run time: the file may be anywhere
                // beneath the workspace.
                (_, None) => vec![format!("{}/**/{rel}", workspace.display())],
            };
            for p in patterns {
                let pattern = lexical(&p);
                let (resolved, unresolved) = resolve_pattern(&pattern, place);
                out.push(Executes {
                    pattern,
                    why: f.why.clone(),
                    command: c.text.clone(),
                    unresolved,
                });
                if let Some(r) = resolved {
                    out.push(Executes {
                        pattern: r,
                        why: f.why.clone(),
                        command: c.text.clone(),
                        unresolved: None,
                    });
                }
            }
        }
    }
    out
}

/// The pattern with its literal part resolved through symlinks, when a symlink was on
/// the way; and why it could not be resolved, when it lies in the workspace and could
/// not (it then counts as possibly written: fail closed).
fn resolve_pattern(pattern: &str, place: &Place<'_>) -> (Option<String>, Option<String>) {
    let prefix = pattern_prefix(pattern);
    let literal = prefix.trim_end_matches('/');
    if literal.is_empty() {
        return (None, None);
    }
    let (resolved, _, via_symlink, problem) = paths::resolve(Path::new(literal), place.fs);
    if let Some(problem) = problem {
        let inside = paths::is_within(Path::new(literal), place.workspace);
        return (None, inside.then_some(problem));
    }
    if !via_symlink || resolved == Path::new(literal) {
        return (None, None);
    }
    let rest = &pattern[literal.len()..];
    (
        Some(lexical(&format!("{}{rest}", resolved.display()))),
        None,
    )
}

/// `a/./b/../c` → `a/c`, component-wise, keeping glob components.
pub(super) fn lexical(p: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for c in p.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    format!("/{}", parts.join("/"))
}
