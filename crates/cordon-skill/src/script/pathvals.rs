//! What a folded value names as a path: a path worth judging, the pattern of what a
//! path with run-time parts can name, and the calls that build paths or read through
//! patterns.

use super::fold::{RUNTIME, V};

/// Does an exact string look like a file path worth judging (home, `/etc`, `/proc`,
/// `/root`, dot-directories)?
pub(crate) fn looks_like_path(s: &str) -> bool {
    !s.contains('\n')
        && s.len() < 4096
        && (s.starts_with("~/")
            || s.starts_with("/etc/")
            || s.starts_with("/root/")
            || s.starts_with("/home/")
            || s.starts_with("/proc/")
            || s.starts_with("/var/run/")
            || s.starts_with("/run/"))
}

/// A path built with parts known only at run time, as the pattern of what it can name:
/// a leading unknown part is the home folder (the worst place it can stand for), any
/// other a `*`. `None` unless it is an absolute or home path with a literal part after
/// its start.
pub(crate) fn runtime_glob(s: &str) -> Option<String> {
    if !s.contains(RUNTIME) || s.len() > 4096 || s.chars().any(char::is_whitespace) {
        return None;
    }
    let g = match s.strip_prefix(RUNTIME) {
        Some(rest) => format!("~{rest}"),
        None => s.to_string(),
    }
    .replace(RUNTIME, "*");
    if !(g.starts_with("~/") || g.starts_with('/')) {
        return None;
    }
    let literal = g
        .trim_start_matches('~')
        .split('/')
        .any(|c| c.chars().any(|ch| !matches!(ch, '*' | '?')));
    if !literal && s.starts_with("~/") {
        // A file of the home folder itself, named only at run time: any of them.
        return Some(HOME_ANY.into());
    }
    literal.then_some(g)
}

/// The pattern of a path in the home folder whose every other part is known only at
/// run time (`Path.home() / name`).
pub(crate) const HOME_ANY: &str = "~/**";

/// A value as a path pattern: unknown parts as in [`runtime_glob`], an exact value as
/// it is.
pub(super) fn as_pattern(v: &V) -> Option<String> {
    match v {
        V::Str(s, true) => Some(s.clone()),
        V::Str(s, false) => runtime_glob(s),
        _ => None,
    }
}

/// Calls that build a path from parts.
pub(super) const PATH_BUILDERS: &[&str] = &[
    "os.path.join",
    "posixpath.join",
    "pathlib.Path",
    "Path",
    "pathlib.PurePath",
    "PurePath",
    "path.join",
    "path.resolve",
    "path.posix.join",
    "File.join",
    "File.expand_path",
    "Pathname.new",
    "os.path.expanduser",
];

/// Calls whose first argument is a glob pattern of files to read.
pub(super) const GLOB_CALLS: &[&str] = &[
    "glob.glob",
    "glob.iglob",
    "glob.glob0",
    "glob.glob1",
    "Dir.glob",
    "glob.sync",
    "glob.globSync",
    "globSync",
    "glob",
    "fast-glob.sync",
    "fast-glob",
    "fg.sync",
    "fs.globSync",
    "fs.glob",
    "fs.promises.glob",
];
