//! What a script puts into files (fifth review, classes 5 and 6): an archive it
//! downloads and unpacks (files nobody has seen, possibly ones the project's tools run)
//! is a review; content it writes is read as what the file becomes: a Python string written to `src/app/__init__.py`, a JavaScript template
//! written to `jest.config.js`, a shell shim written to `node_modules/.bin/eslint` are
//! analyzed as the Python, JavaScript or shell they are, so what would refuse them as a
//! package file refuses the package that writes them.

use super::{Cx, facts};
use crate::report::{Check, Finding, Severity};
use crate::script::{Cmd, Facts, Lang, RUNTIME};
use std::cell::Cell;
use std::collections::HashSet;

thread_local! {
    /// How deep written content is being read (content that writes content…).
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// Is the written file shell (by name, or by a shell's `#!` line)?
fn is_shell(target: &str, content: &str) -> bool {
    let lower = target.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or("");
    let first = content.lines().next().unwrap_or("");
    lower.ends_with(".sh")
        || lower.ends_with(".bash")
        || lower.ends_with(".zsh")
        || name.starts_with("activate")
        || name.starts_with('.') && name.ends_with("rc")
        || name.ends_with("profile")
        || (first.starts_with("#!")
            && ["sh", "bash", "zsh", "dash"].iter().any(|s| {
                first.ends_with(s)
                    || first.contains(&format!("/{s} "))
                    || first.contains(&format!(" {s}"))
            }))
}

/// The worst finding the written `content` earns as the file `target` it becomes (a
/// refusal, else a review), if any.
pub(super) fn refused_content(
    cx: &Cx<'_>,
    path: &str,
    target: &str,
    content: &str,
) -> Option<(Severity, String)> {
    if DEPTH.with(Cell::get) >= 3 || content.trim().is_empty() {
        return None;
    }
    DEPTH.with(|d| d.set(d.get() + 1));
    let mut found: Vec<Finding> = Vec::new();
    if let Some(lang) = Lang::of_file(target, content) {
        let f = crate::script::analyze(lang, content, 1);
        facts::judge(cx, path, &f, &mut HashSet::new(), &mut found);
    } else if is_shell(target, content) {
        for (k, line) in content.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            super::judge_shell(cx, path, k + 1, line, false, &mut found);
        }
    }
    DEPTH.with(|d| d.set(d.get() - 1));
    found
        .into_iter()
        .filter(|f| f.verdict >= Severity::Review)
        .max_by_key(|f| f.verdict)
        .map(|f| (f.verdict, f.message))
}

/// Findings on what the script `path` (facts `f`) puts into files.
pub(super) fn judge(cx: &Cx<'_>, path: &str, f: &Facts, out: &mut Vec<Finding>) {
    let at = |verdict, check, line: usize, msg: String| {
        Finding::new(check, verdict, Some(path), format!("line {line}: {msg}"))
    };
    if let (Some(dl), Some(l)) = (f.net.iter().find(|n| n.fetch), f.unpacks.first()) {
        out.push(at(
            Severity::Review,
            Check::DownloadExec,
            *l,
            format!(
                "downloads from {} (line {}) and unpacks an archive into a folder: files nobody has seen, possibly ones the project's tools run (hooks, settings, configs)",
                facts::dest_shown(dl),
                dl.line
            ),
        ));
    }
    // Writes to one file in turn (a handle's `write`s, `puts`es) are one content.
    let mut whole: Vec<(usize, &str, String)> = Vec::new();
    for (line, target, content) in f.written.iter().take(256) {
        match whole.iter_mut().find(|(_, t, _)| t == target) {
            Some((_, _, c)) if c.len() < crate::script::MAX_WRITTEN => c.push_str(content),
            Some(_) => {}
            None => whole.push((*line, target, content.clone())),
        }
    }
    for (line, target, content) in whole.iter().take(64) {
        // Parts known only at run time are a word that changes nothing around them.
        let content = content.replace(RUNTIME, "x");
        if let Some((verdict, msg)) = refused_content(cx, path, target, &content) {
            let said = if verdict == Severity::Refuse {
                "is refused"
            } else {
                "is a review"
            };
            out.push(at(
                verdict,
                Check::Persistence,
                *line,
                format!(
                    "writes {} with a content that {said} as what it becomes: {msg}",
                    crate::report::shown(&facts::shorten(target))
                ),
            ));
        }
    }
}

/// A file the script writes by a relative name and then runs by that name: at run time
/// both name the working folder's file, not the package's file of that name (a package
/// can ship a harmless `render.sh` for the review while the script runs what it wrote).
pub(super) fn runs_written(path: &str, f: &Facts, out: &mut Vec<Finding>) {
    let written: HashSet<&str> = f
        .targets
        .iter()
        .filter(|(_, t, exact)| *exact && !t.starts_with(['/', '~']))
        .map(|(_, t, _)| t.trim_start_matches("./"))
        .collect();
    if written.is_empty() {
        return;
    }
    for (line, cmd) in f.spawns.iter().take(256) {
        let words: Vec<&str> = match cmd {
            Cmd::Argv { argv, .. } => argv.iter().map(String::as_str).collect(),
            Cmd::Shell { text, .. } => text.split_whitespace().collect(),
            Cmd::Unknown => continue,
        };
        let runs = words
            .iter()
            .map(|w| w.trim_matches(['"', '\'']).trim_start_matches("./"))
            .find(|w| written.contains(w));
        if let Some(w) = runs {
            out.push(Finding::new(
                Check::DownloadExec,
                Severity::Review,
                Some(path),
                format!(
                    "line {line}: runs {}, a file the script itself writes: what runs is known only at run time, not the package's file of that name",
                    crate::report::shown(w)
                ),
            ));
            return;
        }
    }
}

/// Extensions of files a program runs or loads as code.
const CODE_EXT: &[&str] = &[
    "py", "pyw", "pyc", "js", "cjs", "mjs", "ts", "sh", "bash", "zsh", "rb", "pl", "php", "lua",
    "so", "node", "jar", "ps1",
];

/// Is the file (by its name's extension) one a program runs or loads as code?
pub(super) fn is_code_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    name.rsplit_once('.')
        .is_some_and(|(_, e)| CODE_EXT.contains(&e))
}

/// Places whose code a program loads without being asked: a package the project's
/// interpreter imports, a module its tools require, a cached build a shim runs.
fn loaded_place(target: &str) -> bool {
    target.starts_with("~/.cache/")
        || target.split('/').any(|c| {
            matches!(
                c,
                "site-packages" | "dist-packages" | "node_modules" | "vendor"
            )
        })
}

/// A script that fetches from the network and writes files of code: what it writes is
/// code nobody has seen, run later by whatever loads it. Refused where a program loads
/// it without being asked (a virtualenv's package, `node_modules`, a cache a shim
/// runs), a review elsewhere.
pub(super) fn fetched_code(path: &str, f: &Facts, out: &mut Vec<Finding>) {
    let Some(dl) = f.net.iter().find(|n| n.fetch) else {
        return;
    };
    for (line, t, exact) in f.targets.iter().take(256) {
        if !*exact || !is_code_file(t) {
            continue;
        }
        let loaded = loaded_place(t);
        out.push(Finding::new(
            Check::DownloadExec,
            if loaded {
                Severity::Refuse
            } else {
                Severity::Review
            },
            Some(path),
            format!(
                "line {line}: fetches from {} (line {}) and writes {}, a file of code{}",
                facts::dest_shown(dl),
                dl.line,
                crate::report::shown(&facts::shorten(t)),
                if loaded {
                    " where a program loads it without being asked"
                } else {
                    "; check what it is and what runs it"
                }
            ),
        ));
        return;
    }
}
