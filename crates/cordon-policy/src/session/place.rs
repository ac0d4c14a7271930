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

/// Why what a shell call writes cannot be read off it, if it cannot: code cordon does
/// not follow (a script, `-c` code, code on standard input, an unknown program), text
/// that does not parse or that names its program or a written path only at run time,
/// or a git command that rewrites files its text does not name. A runner doing its own
/// job (`make`, `cargo test`, `npm test`) is not such code: what it runs is the
/// project's build and test files, which write-then-run checks on every run, and
/// counting its outputs as unknown would make every second build ask.
pub(super) fn unseen_writer(ops: &Operations) -> Option<String> {
    use cordon_shell::{Class, CwdChange, Dynamic};
    let analysis = ops.analysis.as_ref()?;
    if let Some(e) = &analysis.parse_error {
        return Some(format!("the shell text does not parse ({e})"));
    }
    for c in &analysis.commands {
        let text = &c.text;
        if let Some(why) = &c.effects.unnamed_writes {
            return Some(format!("{why}: which files, only git knows"));
        }
        if let Some(e) = c.effects.executes.iter().find(|e| !e.own_purpose) {
            return Some(format!(
                "`{text}` runs code cordon does not follow (`{}` {}: {})",
                e.program, e.arg, e.detail
            ));
        }
        if let Some(p) = &c.program
            && c.effects.class == Class::Unknown
            && !c.function_call
        {
            return Some(format!(
                "`{text}` runs `{}`, a program cordon does not know",
                p.value
            ));
        }
        if let Some(d) = c.dynamic.iter().find(|d| {
            matches!(
                d,
                Dynamic::NonLiteralProgram
                    | Dynamic::RuntimeArguments(_)
                    | Dynamic::TooDeep
                    | Dynamic::Opaque(_)
                    | Dynamic::ShadowedByAlias(_)
            )
        }) {
            let what = match d {
                Dynamic::NonLiteralProgram => "its program is only known at run time".into(),
                Dynamic::RuntimeArguments(a) => {
                    format!("`{a}` gives it arguments only known at run time")
                }
                Dynamic::ShadowedByAlias(a) => format!("`{a}` is an alias defined in the text"),
                Dynamic::Opaque(o) => o.clone(),
                _ => "it nests too deeply to analyze".into(),
            };
            return Some(format!("`{text}`: {what}"));
        }
        let mut written = c.effects.writes.iter().chain(&c.effects.fills).chain(
            c.redirects
                .iter()
                .filter(|r| r.kind.writes_file())
                .map(|r| &r.target),
        );
        let dynamic_cwd = !matches!(c.cwd, CwdChange::Unchanged | CwdChange::Relative(_));
        if written.any(|w| {
            !w.literal || dynamic_cwd && !w.value.starts_with('/') && !w.value.starts_with('~')
        }) {
            return Some(format!("`{text}` writes to a path only known at run time"));
        }
    }
    None
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
