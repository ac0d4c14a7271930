//! Resolving a path inside a tree through the tree's own symbolic links, the way the
//! kernel would, without touching the file system.
//!
//! A lexical check of a link's target (`..` never past the root) is not enough: with
//! `a/b/c/up -> ../..` a second link `x -> a/b/c/up/../../b` looks like `a/b/b`, but the
//! kernel follows `up` first and the two `..` then climb out of the tree. [`resolve_beneath`]
//! walks the components in order, replaces each link it meets by its target (looked up
//! in the caller's link map), counts the links it followed, and reports an escape as
//! soon as a `..` would climb above the root or a target is absolute. Skill packages
//! use it for their links before anything is written; slot snapshots can call it for
//! the links they restore.
//!
//! It reads nothing: the caller supplies the map of links (tree-relative path to
//! target), so the answer is the same for an archive that was never unpacked.

/// The most links one resolution follows (the kernel's own limit is 40).
pub const MAX_LINKS: usize = 40;

/// Why a path does not resolve inside the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LinkEscape {
    /// A link's target is an absolute path.
    Absolute(String),
    /// A `..` climbs above the tree's root (through the link named, if any).
    AboveRoot {
        /// The last link followed before the climb, if one was.
        via: Option<String>,
    },
    /// More than [`MAX_LINKS`] links, or a loop.
    TooManyLinks,
    /// A target is empty or holds a NUL byte.
    Invalid,
}

impl std::fmt::Display for LinkEscape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LinkEscape::Absolute(t) => write!(f, "the link target {t:?} is an absolute path"),
            LinkEscape::AboveRoot { via: None } => f.write_str("`..` climbs above the root"),
            LinkEscape::AboveRoot { via: Some(l) } => {
                write!(
                    f,
                    "`..` climbs above the root after following the link {l:?}"
                )
            }
            LinkEscape::TooManyLinks => write!(
                f,
                "it follows more than {MAX_LINKS} links (or the links form a loop)"
            ),
            LinkEscape::Invalid => f.write_str("a link target is empty or holds a NUL byte"),
        }
    }
}

/// Resolve `path` (relative to the tree's root, `/`-separated) through the links that
/// `link_of` knows (tree-relative path without a trailing `/` → target), following
/// every link, the last component's included. Returns the tree-relative path it ends
/// at (`""` is the root), which need not exist.
pub fn resolve_beneath<'a>(
    path: &str,
    link_of: &dyn Fn(&str) -> Option<&'a str>,
) -> Result<String, LinkEscape> {
    let mut done: Vec<String> = Vec::new();
    // Components still to walk, last one first.
    let mut todo: Vec<String> = components(path)?;
    todo.reverse();
    let mut followed = 0usize;
    let mut via: Option<String> = None;
    while let Some(c) = todo.pop() {
        match c.as_str() {
            "." => {}
            ".." => {
                if done.pop().is_none() {
                    return Err(LinkEscape::AboveRoot { via });
                }
            }
            _ => {
                done.push(c);
                let here = done.join("/");
                if let Some(target) = link_of(&here) {
                    followed += 1;
                    if followed > MAX_LINKS {
                        return Err(LinkEscape::TooManyLinks);
                    }
                    if target.starts_with('/') {
                        return Err(LinkEscape::Absolute(target.to_string()));
                    }
                    done.pop();
                    let mut more = components(target)?;
                    if more.is_empty() {
                        return Err(LinkEscape::Invalid);
                    }
                    more.reverse();
                    todo.extend(more);
                    via = Some(here);
                }
            }
        }
    }
    Ok(done.join("/"))
}

/// Resolve the link at `link` (tree-relative) whose target is `target`: the target read
/// from the link's own directory, through every link of the tree.
pub fn resolve_link<'a>(
    link: &str,
    target: &str,
    link_of: &dyn Fn(&str) -> Option<&'a str>,
) -> Result<String, LinkEscape> {
    if target.starts_with('/') {
        return Err(LinkEscape::Absolute(target.to_string()));
    }
    if target.is_empty() || target.contains('\0') {
        return Err(LinkEscape::Invalid);
    }
    let parent = link
        .trim_end_matches('/')
        .rsplit_once('/')
        .map_or("", |(p, _)| p);
    let joined = if parent.is_empty() {
        target.to_string()
    } else {
        format!("{parent}/{target}")
    };
    resolve_beneath(&joined, link_of)
}

fn components(path: &str) -> Result<Vec<String>, LinkEscape> {
    if path.contains('\0') {
        return Err(LinkEscape::Invalid);
    }
    Ok(path
        .split('/')
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    fn link(m: &BTreeMap<String, String>, at: &str) -> Result<String, LinkEscape> {
        let target = m.get(at).cloned().unwrap_or_default();
        resolve_link(at, &target, &|p| m.get(p).map(String::as_str))
    }

    #[test]
    fn a_chain_through_a_link_that_climbs_escapes() {
        let m = map(&[("a/b/c/up", "../.."), ("x", "a/b/c/up/../../b")]);
        assert_eq!(link(&m, "a/b/c/up"), Ok("a".into()));
        assert!(matches!(
            link(&m, "x"),
            Err(LinkEscape::AboveRoot { via: Some(v) }) if v == "a/b/c/up"
        ));
        let m = map(&[("a/b/up", "../.."), ("x", "a/b/up/../../..")]);
        assert!(link(&m, "x").is_err());
    }

    #[test]
    fn links_that_stay_inside_resolve() {
        let m = map(&[("s/alias", "../notes.txt"), ("d", "s"), ("y", "d/alias")]);
        assert_eq!(link(&m, "s/alias"), Ok("notes.txt".into()));
        assert_eq!(link(&m, "y"), Ok("notes.txt".into()));
        assert_eq!(
            resolve_beneath("d/./x/../alias", &|p| m.get(p).map(String::as_str)),
            Ok("notes.txt".into())
        );
    }

    #[test]
    fn loops_absolute_targets_and_odd_targets_are_refused() {
        let m = map(&[("a", "b"), ("b", "a")]);
        assert_eq!(link(&m, "a"), Err(LinkEscape::TooManyLinks));
        let m = map(&[("a", "/etc"), ("b", "a/passwd")]);
        assert!(matches!(link(&m, "b"), Err(LinkEscape::Absolute(_))));
        let m = map(&[("a", "")]);
        assert_eq!(link(&m, "a"), Err(LinkEscape::Invalid));
        let m = map(&[("a", "..")]);
        assert!(matches!(link(&m, "a"), Err(LinkEscape::AboveRoot { .. })));
    }
}
