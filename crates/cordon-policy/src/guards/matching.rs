//! Matching paths against the guard lists: by normal components, ASCII
//! case-insensitively, with `*` inside a component.

use std::ffi::OsStr;
use std::path::{Component, Path};

/// One component against one name, ASCII case-insensitively.
pub(super) fn name_eq(a: &OsStr, b: &str) -> bool {
    a.as_encoded_bytes().eq_ignore_ascii_case(b.as_bytes())
}

/// A component as it is named in a guard's pattern.
pub(super) fn lower(name: &OsStr) -> String {
    name.to_string_lossy().to_ascii_lowercase()
}

/// The normal components of `path` (a clean absolute path has only these after the root).
pub(super) fn normal_components(path: &Path) -> Vec<&OsStr> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s),
            _ => None,
        })
        .collect()
}

/// `path`'s components after `base`, when `path` is `base` or beneath it.
pub(super) fn rest_after<'a>(comps: &'a [&'a OsStr], base: &Path) -> Option<&'a [&'a OsStr]> {
    let mut n = 0;
    for b in base.components() {
        match b {
            Component::Normal(b) => {
                if comps.get(n) != Some(&b) {
                    return None;
                }
                n += 1;
            }
            Component::RootDir => {}
            _ => return None,
        }
    }
    Some(&comps[n..])
}

/// Do `rest`'s leading components spell `rel` (case-insensitively)? A `*` in a
/// component of `rel` stands for any run of characters (`.local/lib/python*`).
pub(super) fn rel_matches(rest: &[&OsStr], rel: &str) -> bool {
    let mut it = rest.iter();
    rel.split('/')
        .all(|want| it.next().is_some_and(|got| component_matches(got, want)))
}

/// One component against one pattern component: a literal, or `head*tail`.
fn component_matches(got: &OsStr, want: &str) -> bool {
    match want.split_once('*') {
        None => name_eq(got, want),
        Some((head, tail)) => {
            let g = got.as_encoded_bytes();
            g.len() >= head.len() + tail.len()
                && g[..head.len()].eq_ignore_ascii_case(head.as_bytes())
                && g[g.len() - tail.len()..].eq_ignore_ascii_case(tail.as_bytes())
        }
    }
}
