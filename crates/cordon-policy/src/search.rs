//! Search tools (`Glob`, `Grep`, Gemini CLI's `glob`, `grep_search`,
//! `search_file_content`) judged by everything they can read: the directory searched,
//! and each glob that selects files, as the shell analysis judges a glob word.
//!
//! A tool's glob is not a bash glob: `**` crosses directories, `{a,b}` alternates, and
//! a wildcard may match a leading dot (ripgrep with `--hidden`, node-glob with `dot`).
//! Each glob is turned into patterns that cover it ([`covering`]: braces expanded, `**`
//! replaced by every run of `*` components deep enough to reach a guarded path) and each
//! is put to the guards with wildcards that take a leading dot
//! ([`crate::glob::tool_glob_guard_hit`]): a glob that can name a guarded file (`**/id_*`,
//! `../.ssh/*`, `/home/u/.aws/**`) is denied whatever the file system holds. Where a
//! glob reaches beyond the searched directory (an absolute or `~/` glob, `..` before its
//! first wildcard) its literal start is a directory read of its own, so a glob into
//! HOME is a read outside the workspace; `..` after a wildcard cannot be followed and
//! is opaque.
//!
//! Never looks at a file system; never decides (the caller makes operations).

use crate::glob::{escape, tool_glob_guard_hit};
use crate::guards::GuardHit;
use std::path::Path;

/// Most alternatives a glob's braces may expand to before it is opaque.
const MAX_ALTERNATIVES: usize = 64;
/// Most `**` components in one glob before it is opaque.
const MAX_DEEP: usize = 3;
/// Components a `**` stands for beyond HOME's depth: the longest guarded path under
/// HOME or `/` (`/proc/*/task/*/environ`) fits.
const DEEP_BEYOND_HOME: usize = 5;

/// What one glob of a search reaches.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct GlobReach {
    /// A guard some name the glob can select trips, and the glob as judged.
    pub guard: Option<(GuardHit, String)>,
    /// Directories (as written, relative to the cwd) the glob lists beyond the searched
    /// one.
    pub dirs: Vec<String>,
    /// Why the glob cannot be followed (opaque).
    pub opaque: Option<String>,
}

/// What `glob` selects beneath `path` (both as the tool received them), with relative
/// paths taken from `cwd`.
pub(crate) fn reach(path: &str, glob: &str, cwd: &Path, home: &Path, ws: &Path) -> GlobReach {
    let mut out = GlobReach::default();
    let Some(alternatives) = braces(glob) else {
        out.opaque = Some(format!(
            "the glob `{glob}` has more than {MAX_ALTERNATIVES} alternatives"
        ));
        return out;
    };
    let depth = home.components().count() + DEEP_BEYOND_HOME;
    for alt in alternatives {
        let full = beneath(path, &alt);
        let comps = split(&full);
        let first = comps.iter().position(|c| globby(c));
        if let Some(f) = first
            && comps[f..].iter().any(|c| c == "..")
        {
            out.opaque = Some(format!(
                "the glob `{glob}` climbs with `..` after a wildcard, where it cannot be followed"
            ));
        }
        if comps.iter().filter(|c| *c == "**").count() > MAX_DEEP {
            out.opaque = Some(format!(
                "the glob `{glob}` has more than {MAX_DEEP} `**` components"
            ));
            continue;
        }
        if out.guard.is_none() {
            out.guard = covering(&comps, full.starts_with('/'), depth)
                .into_iter()
                .find_map(|p| Some((tool_glob_guard_hit(&p, Some(cwd), home, ws)?, full.clone())));
        }
        let literal: Vec<String> = comps[..first.unwrap_or(comps.len())]
            .iter()
            .map(|c| unescape(c))
            .collect();
        let dir = join(&full, &literal);
        if escapes(&alt) && !out.dirs.contains(&dir) {
            out.dirs.push(dir);
        }
    }
    out
}

/// The glob as one pattern beneath the searched directory (escaped), unless it stands
/// on its own (absolute, `~/`).
fn beneath(path: &str, glob: &str) -> String {
    if stands_alone(glob) || path == "." {
        return glob.to_string();
    }
    format!("{}/{glob}", escape(path.trim_end_matches('/')))
}

fn stands_alone(glob: &str) -> bool {
    glob.starts_with('/') || glob == "~" || glob.starts_with("~/")
}

/// Does the glob reach outside the searched directory (absolute, `~/`, or a `..`)?
fn escapes(glob: &str) -> bool {
    stands_alone(glob) || split(glob).iter().any(|c| c == "..")
}

/// The literal start of `full` as a path (`/` or `~` kept), `.` when empty.
fn join(full: &str, literal: &[String]) -> String {
    let joined = literal.join("/");
    match (full.starts_with('/'), joined.is_empty()) {
        (true, true) => "/".into(),
        (true, false) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}

/// Components at unescaped `/`, empty ones dropped, escapes kept.
fn split(p: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut it = p.chars();
    while let Some(c) = it.next() {
        match c {
            '\\' => {
                cur.push('\\');
                if let Some(n) = it.next() {
                    cur.push(n);
                }
            }
            '/' => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            _ => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn unescape(c: &str) -> String {
    let mut out = String::with_capacity(c.len());
    let mut it = c.chars();
    while let Some(ch) = it.next() {
        if ch == '\\' {
            if let Some(n) = it.next() {
                out.push(n);
            }
        } else {
            out.push(ch);
        }
    }
    out
}

/// Does a component hold an unescaped wildcard?
fn globby(c: &str) -> bool {
    let mut it = c.chars();
    while let Some(ch) = it.next() {
        match ch {
            '\\' => {
                it.next();
            }
            '*' | '?' | '[' => return true,
            _ => {}
        }
    }
    false
}

/// Expand `{a,b}` alternatives (nested, escapes kept); `None` past the bound.
fn braces(glob: &str) -> Option<Vec<String>> {
    let chars: Vec<char> = glob.chars().collect();
    // The first unescaped `{` with a matching `}` and a top-level `,`.
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '{' => {
                let (mut depth, mut j, mut commas) = (0usize, i, Vec::new());
                let mut close = None;
                while j < chars.len() {
                    match chars[j] {
                        '\\' => j += 1,
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                close = Some(j);
                                break;
                            }
                        }
                        ',' if depth == 1 => commas.push(j),
                        _ => {}
                    }
                    j += 1;
                }
                let Some(close) = close else {
                    return Some(vec![glob.to_string()]);
                };
                let head: String = chars[..i].iter().collect();
                let tail: String = chars[close + 1..].iter().collect();
                let mut cuts = vec![i];
                cuts.extend(&commas);
                cuts.push(close);
                let mut out = Vec::new();
                for w in cuts.windows(2) {
                    let mid: String = chars[w[0] + 1..w[1]].iter().collect();
                    for rest in braces(&format!("{head}{mid}{tail}"))? {
                        out.push(rest);
                        if out.len() > MAX_ALTERNATIVES {
                            return None;
                        }
                    }
                }
                return Some(out);
            }
            _ => i += 1,
        }
    }
    Some(vec![glob.to_string()])
}

/// Patterns that together match every path the tool's glob `comps` can: each `**`
/// replaced by 0 to `depth` `*` components in all (spread over the `**`s).
fn covering(comps: &[String], absolute: bool, depth: usize) -> Vec<String> {
    let deep: Vec<usize> = (0..comps.len()).filter(|&i| comps[i] == "**").collect();
    let mut counts = vec![0usize; deep.len()];
    let mut out = Vec::new();
    loop {
        let mut parts: Vec<String> = Vec::new();
        for (i, c) in comps.iter().enumerate() {
            match deep.iter().position(|&d| d == i) {
                Some(k) => parts.extend(std::iter::repeat_n("*".to_string(), counts[k])),
                None => parts.push(c.clone()),
            }
        }
        let p = parts.join("/");
        out.push(if absolute { format!("/{p}") } else { p });
        // The next spread of at most `depth` components over the `**`s.
        let mut k = 0;
        loop {
            if k == counts.len() {
                return out;
            }
            counts[k] += 1;
            if counts.iter().sum::<usize>() <= depth {
                break;
            }
            counts[k] = 0;
            k += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOME: &str = "/home/u";
    const WS: &str = "/home/u/src/proj";

    fn denied(path: &str, glob: &str) -> bool {
        let p = Path::new;
        reach(path, glob, p(WS), p(HOME), p(WS)).guard.is_some()
    }

    #[test]
    fn globs_that_can_name_a_guarded_file_are_caught() {
        for (path, glob) in [
            ("/home/u/x", "../.ssh/*"),
            (".", "../../.ssh/*"),
            (".", "/home/u/.aws/**"),
            (".", "/home/u/.aws"),
            ("/home/u", "**/id_*"),
            ("/home/u", "**/*.pem"),
            (".", "**/id_*"),
            ("/", "**/.ssh/*"),
            ("/home/u", "*/config"),
            ("/home", "*/.ssh"),
            ("/home/u", "{.ssh,.aws}/*"),
            ("/home/u", ".{s,x}sh/*"),
            ("/home/u", "**/.env"),
            ("/home/u", "**/credentials"),
            ("/home/u", ".s?h/id_*"),
            ("~", ".ssh/**"),
            (".", "~/.ssh/*"),
            ("/etc", "shado[w]"),
            ("/", "etc/**/shadow"),
            // Second spellings: a bracket or brace for the dot, `..` inside braces, the
            // searched directory itself climbing, a trailing slash, case.
            ("/home/u", "[.]ssh/*"),
            ("/home/u", "?ssh/id_*"),
            (".", "{x,../..}/.ssh/*"),
            ("../..", ".ssh/*"),
            ("/home/u/", ".aws/"),
            ("/home/u", ".SSH/ID_*"),
            ("/home/u", "**/*.{pem,txt}"),
        ] {
            assert!(denied(path, glob), "{path} {glob} passed");
        }
    }

    #[test]
    fn ordinary_globs_are_not_refused() {
        for (path, glob) in [
            (".", "**/*.rs"),
            (".", "src/**/*.{ts,tsx}"),
            (".", "**/*"),
            ("src", "*"),
            (".", "*.md"),
            ("/home/u/src/proj", "**/README*"),
        ] {
            let p = Path::new;
            let r = reach(path, glob, p(WS), p(HOME), p(WS));
            assert!(r.guard.is_none(), "{path} {glob} refused: {r:?}");
        }
    }

    #[test]
    fn a_glob_that_leaves_the_searched_directory_lists_where_it_goes() {
        let p = Path::new;
        let r = |path: &str, glob: &str| reach(path, glob, p(WS), p(HOME), p(WS));
        assert_eq!(r(".", "/tmp/x/*.log").dirs, vec!["/tmp/x".to_string()]);
        assert_eq!(r(".", "../other/*.rs").dirs, vec!["../other".to_string()]);
        assert_eq!(r("src", "../../x/*").dirs, vec!["src/../../x".to_string()]);
        assert!(r(".", "src/**/*.rs").dirs.is_empty());
        assert!(r(".", "*/../../x").opaque.is_some());
        let many = "{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}";
        assert!(r(".", many).opaque.is_some());
        assert!(r(".", "**/a/**/b/**/c/**").opaque.is_some());
    }

    #[test]
    fn braces_expand_nested_and_keep_escapes() {
        assert_eq!(braces("a{b,c{d,e}}f").unwrap(), vec!["abf", "acdf", "acef"]);
        assert_eq!(braces("a\\{b,c}").unwrap(), vec!["a\\{b,c}"]);
        assert_eq!(braces("{x}").unwrap(), vec!["x"]);
    }
}
