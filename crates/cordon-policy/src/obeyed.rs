//! Files a host tool obeys or runs without being asked, as one table.
//!
//! A contained run writes its workspace through a copy-on-write layer, and what it left
//! reaches the host when cordon merges the layer back. Most of it is the run's work: the
//! user reviews it, builds it, runs it, asking each time. Some of it is not asked for at
//! all. An editor runs a folder's tasks when the folder is opened, direnv and mise act on
//! `cd`, the shell prompt runs commands from its configuration, git runs the hook manager
//! on commit, CI runs the pipeline on push, a REPL loads its start-up file from the
//! working directory, the next agent session reads its instructions and MCP servers from
//! the project. A wrapper such as `gradlew` or a toolchain file runs *in place of* the
//! tool the user trusts. Anything a run left at such a location is code or settings the
//! host obeys later without anyone having looked at it.
//!
//! This module owns that knowledge as data: [`CLASSES`] lists, per class, the tools it
//! covers and every documented location and name those tools look at. The matcher is
//! generated from the table once, so a location added to the table is matched (and
//! tested, see `tests.rs`) with no other change. [`host_obeyed`] asks the table;
//! [`shadows`] answers the one question a table cannot, whether a new entry takes the
//! place of a program or Python module installed on the host ([`HostNames`], gathered by
//! the sandbox crate, which may do I/O). This module never reads the file system and
//! never decides: the merge (`planted::judge_left`) turns a hit into a hold.
//!
//! # Matching
//!
//! Patterns are `/`-separated path components matched ASCII case-insensitively, like
//! the guard lists (a case-insensitive file system finds `.VSCode` for `.vscode`). `*`
//! stands for any run of characters within one component and `**` for any number of
//! components, none included, so `.vscode/**` holds the directory itself and everything
//! beneath it. An entry's [`Where`] anchors its pattern: below a writable root at any
//! depth, at the top of a writable root only, or relative to the host user's HOME.
//! A git work tree's root cannot be told from a path alone (it is the directory that
//! holds `.git`), so entries that only a repository's root gives meaning to are matched
//! at any depth when their names are distinctive, and at the writable root otherwise.
//!
//! [`Where::Anywhere`] does not look inside installed dependency trees
//! ([`DEPENDENCY_TREES`]): packages ship their own `.github/`, `.travis.yml` or
//! `AGENTS.md`, and no host tool obeys them there (npm reads a project's `.npmrc`, not a
//! dependency's; CI reads the repository's root). Code in those trees runs when the
//! project loads it, which is the project's own code; the few places in them that a host
//! tool runs without being asked (a hook manager's runner, `node_modules/.bin`,
//! `site-packages/*.pth`) are listed with the part of the path that names the tree.
//!
//! # Instruction files
//!
//! Instructions for agents (`CLAUDE.md`, `AGENTS.md`, `GEMINI.md`, `.cursorrules`,
//! `.github/copilot-instructions.md`, …) are held for review, not merged unreviewed. A
//! contained command has no business rewriting the next agent's instructions: agents
//! edit these files with their own file tools, which the policy judges in the open, so a
//! legitimate change does not need a sandboxed command to make it. What a command
//! writes there unseen is a prompt injection that outlives the run: every later session,
//! of any agent that reads the file, starts from it.

use std::ffi::OsStr;
use std::path::{Component, Path};
use std::sync::OnceLock;

mod shadow;
mod table;
#[cfg(test)]
mod tests;

pub use shadow::{HostNames, SHADOWING, python_module_name, shadows};
pub use table::CLASSES;

/// Where an [`Entry`]'s pattern is anchored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Where {
    /// At any depth below a writable root (its top included), except inside an
    /// installed dependency tree ([`DEPENDENCY_TREES`]).
    Anywhere,
    /// At the top of a writable root only: for names too ordinary to hold at any depth.
    Root,
    /// Relative to the host user's HOME, whatever the writable root.
    Home,
}

/// One location a tool looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Components separated by `/`; `*` within a component, `**` for any depth.
    pub pattern: &'static str,
    /// Where the pattern is anchored.
    pub at: Where,
}

/// A class of files that host tools obey or run without being asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Class {
    /// Short name of the class, used in reports.
    pub name: &'static str,
    /// The tools whose locations the class lists.
    pub tools: &'static str,
    /// How a host tool comes to run or obey what is there, in a few words.
    pub why: &'static str,
    /// Every documented location and name the tools look at.
    pub entries: &'static [Entry],
}

/// An entry of [`CLASSES`] at any depth below a writable root.
pub(crate) const fn any(pattern: &'static str) -> Entry {
    Entry {
        pattern,
        at: Where::Anywhere,
    }
}

/// An entry of [`CLASSES`] at the top of a writable root.
pub(crate) const fn root(pattern: &'static str) -> Entry {
    Entry {
        pattern,
        at: Where::Root,
    }
}

/// An entry of [`CLASSES`] relative to HOME.
pub(crate) const fn home(pattern: &'static str) -> Entry {
    Entry {
        pattern,
        at: Where::Home,
    }
}

/// Why a path is obeyed by a host tool: its class and the pattern that matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Obeyed {
    /// The class's name ([`Class::name`]).
    pub class: &'static str,
    /// The tools of the class ([`Class::tools`]).
    pub tools: &'static str,
    /// The pattern that matched (an [`Entry::pattern`], or a shadowing rule's shape).
    pub pattern: &'static str,
    /// How the host comes to run it ([`Class::why`]).
    pub why: &'static str,
}

impl Obeyed {
    /// One sentence for a report or a held change set.
    pub fn reason(&self) -> String {
        format!("{} ({}): {}", self.class, self.pattern, self.why)
    }
}

impl std::fmt::Display for Obeyed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason())
    }
}

/// Directory names of installed dependency trees, which [`Where::Anywhere`] entries do
/// not look into (see the module docs).
pub const DEPENDENCY_TREES: &[&str] = &["node_modules", "site-packages", "dist-packages"];

/// Is `path` a location that a host tool obeys or runs without being asked?
///
/// `path` is absolute and clean and lies in the writable root `root`; `home` is the host
/// user's HOME. [`Where::Anywhere`] and [`Where::Root`] entries are matched below `root`,
/// [`Where::Home`] entries below `home` (so they hold whatever writable root the path is
/// in). When several entries match, the first in [`CLASSES`] names the class.
pub fn host_obeyed(path: &Path, root: &Path, home: &Path) -> Option<Obeyed> {
    let matcher = matcher();
    let in_root = below(path, root);
    let in_home = if home.is_absolute() {
        below(path, home)
    } else {
        None
    };
    let mut best: Option<usize> = None;
    let mut lowered = Vec::new();
    let mut consider = |at: Where, comps: &[&[u8]], best: &mut Option<usize>| {
        let Some(first) = comps.first() else { return };
        lowered.clear();
        lowered.extend(first.iter().map(u8::to_ascii_lowercase));
        let candidates = matcher.index[slot(at)]
            .by_first
            .get(lowered.as_slice())
            .into_iter()
            .flatten()
            .chain(&matcher.index[slot(at)].others);
        for &i in candidates {
            if best.is_none_or(|b| i < b) && matches(&matcher.entries[i].segs, comps) {
                *best = Some(i);
            }
        }
    };
    if let Some(comps) = &in_home {
        consider(Where::Home, comps, &mut best);
    }
    if let Some(comps) = &in_root {
        consider(Where::Root, comps, &mut best);
        for start in 0..comps.len() {
            consider(Where::Anywhere, &comps[start..], &mut best);
            if is_dependency_tree(comps[start]) {
                break;
            }
        }
    }
    best.map(|i| matcher.entries[i].obeyed)
}

/// `path`'s components below `base`, as bytes, when `path` is `base` or beneath it.
fn below<'a>(path: &'a Path, base: &Path) -> Option<Vec<&'a [u8]>> {
    let comps = rel_components(path, base)?;
    Some(comps.into_iter().map(OsStr::as_encoded_bytes).collect())
}

fn is_dependency_tree(name: &[u8]) -> bool {
    DEPENDENCY_TREES
        .iter()
        .any(|t| name.eq_ignore_ascii_case(t.as_bytes()))
}

/// One component of a compiled pattern.
#[derive(Debug)]
enum Seg {
    /// `**`: any number of components.
    Deep,
    /// A literal name, lowercased.
    Lit(Box<[u8]>),
    /// A name with `*`: the lowercased parts between the stars (at least two).
    Glob(Box<[Box<[u8]>]>),
}

impl Seg {
    fn parse(comp: &str) -> Seg {
        let lower = comp.to_ascii_lowercase();
        if lower == "**" {
            Seg::Deep
        } else if lower.contains('*') {
            Seg::Glob(lower.split('*').map(|p| p.as_bytes().into()).collect())
        } else {
            Seg::Lit(lower.as_bytes().into())
        }
    }

    fn matches_name(&self, name: &[u8]) -> bool {
        match self {
            Seg::Deep => true,
            Seg::Lit(lit) => name.eq_ignore_ascii_case(lit),
            Seg::Glob(parts) => glob_matches(parts, name),
        }
    }
}

/// `head*mid*…*tail` against one name, ASCII case-insensitively (`parts` lowercased).
fn glob_matches(parts: &[Box<[u8]>], name: &[u8]) -> bool {
    let (Some((head, rest)), Some(tail)) = (parts.split_first(), parts.last()) else {
        return false;
    };
    let middle = rest.split_last().map_or(&[][..], |(_, m)| m);
    if name.len() < head.len() + tail.len()
        || !name[..head.len()].eq_ignore_ascii_case(head)
        || !name[name.len() - tail.len()..].eq_ignore_ascii_case(tail)
    {
        return false;
    }
    let mut hay = &name[head.len()..name.len() - tail.len()];
    for part in middle.iter().filter(|p| !p.is_empty()) {
        match hay
            .windows(part.len())
            .position(|w| w.eq_ignore_ascii_case(part))
        {
            Some(i) => hay = &hay[i + part.len()..],
            None => return false,
        }
    }
    true
}

/// Do `segs` spell exactly `comps`? `**` backtracks; the table keeps at most one per
/// pattern (a test checks), so this is linear in the path's depth.
fn matches(segs: &[Seg], comps: &[&[u8]]) -> bool {
    match segs.split_first() {
        None => comps.is_empty(),
        Some((Seg::Deep, rest)) => (0..=comps.len()).any(|k| matches(rest, &comps[k..])),
        Some((seg, rest)) => comps
            .split_first()
            .is_some_and(|(c, cs)| seg.matches_name(c) && matches(rest, cs)),
    }
}

/// One table entry, compiled.
#[derive(Debug)]
struct Compiled {
    segs: Box<[Seg]>,
    obeyed: Obeyed,
}

/// The entries of one [`Where`], indexed by their first component.
#[derive(Debug, Default)]
struct Index {
    /// Entries whose first component is a literal, by that literal (lowercased).
    by_first: std::collections::HashMap<Box<[u8]>, Vec<usize>>,
    /// Entries whose first component has a `*`: tried at every position.
    others: Vec<usize>,
}

/// [`CLASSES`], compiled once: entries in table order, so a smaller index wins.
#[derive(Debug)]
struct Matcher {
    entries: Vec<Compiled>,
    index: [Index; 3],
}

fn slot(at: Where) -> usize {
    match at {
        Where::Anywhere => 0,
        Where::Root => 1,
        Where::Home => 2,
    }
}

fn matcher() -> &'static Matcher {
    static MATCHER: OnceLock<Matcher> = OnceLock::new();
    MATCHER.get_or_init(|| compile(CLASSES))
}

fn compile(classes: &[Class]) -> Matcher {
    let mut m = Matcher {
        entries: Vec::new(),
        index: Default::default(),
    };
    for class in classes {
        for entry in class.entries {
            let segs: Box<[Seg]> = entry
                .pattern
                .split('/')
                .filter(|c| !c.is_empty())
                .map(Seg::parse)
                .collect();
            let i = m.entries.len();
            let index = &mut m.index[slot(entry.at)];
            match segs.first() {
                Some(Seg::Lit(lit)) => index.by_first.entry(lit.clone()).or_default().push(i),
                _ => index.others.push(i),
            }
            m.entries.push(Compiled {
                segs,
                obeyed: Obeyed {
                    class: class.name,
                    tools: class.tools,
                    pattern: entry.pattern,
                    why: class.why,
                },
            });
        }
    }
    m
}

/// `path`'s components below `root`, when `path` is `root` or beneath it (compared by
/// components, so `/w_evil` is not beneath `/w`).
pub(crate) fn rel_components<'a>(path: &'a Path, root: &Path) -> Option<Vec<&'a OsStr>> {
    let rest = path.strip_prefix(root).ok()?;
    Some(
        rest.components()
            .filter_map(|c| match c {
                Component::Normal(s) => Some(s),
                _ => None,
            })
            .collect(),
    )
}

/// Does one component match one pattern component (`*` allowed), ASCII
/// case-insensitively? For the shadowing rules' short lists.
pub(crate) fn name_matches(name: &OsStr, pattern: &str) -> bool {
    Seg::parse(pattern).matches_name(name.as_encoded_bytes())
}
