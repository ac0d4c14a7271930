//! What a call means for its session: the files it writes, the files it executes, and
//! the legs of the lethal trifecta it adds.
//!
//! A session's memory lives in the store and the gate consults it; this module only
//! reads facts off one call, with the `[sessions]` settings that shape them:
//!
//! * **writes**: every path a permitted call writes (a file tool's path, with a blake3
//!   hash of the content when the request carries it; a shell command's written paths);
//! * **executes**: the files a shell command's programs would execute
//!   ([`cordon_shell::executed_files`]), as absolute path patterns;
//! * **legs**: [`Leg::Private`] (reads of paths the config marks private, by default
//!   secrets-adjacent names in the workspace and anything outside it),
//!   [`Leg::Untrusted`] (web fetches and searches, results of MCP servers marked
//!   untrusted, reads outside the workspace), [`Leg::External`] (network beyond the
//!   `internal` hosts, web searches). Overridable per tool and per MCP server.
//!
//! Pure: no I/O, no decision. The gate decides what a match means.

use crate::net::{Host, HostPattern};
use crate::ops::{OpKind, Operations, Target};
use crate::paths::Location;
use crate::request::{Action, Request};
use crate::verdict::Decision;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use toml::Spanned;

mod place;
pub use place::Place;
#[cfg(test)]
use place::lexical;
use place::{executes, filled, unseen_writer};

/// One leg of the lethal trifecta.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Leg {
    /// Private data was touched.
    Private,
    /// Untrusted input was taken in.
    Untrusted,
    /// Data can leave to the outside.
    External,
}

impl Leg {
    /// The three legs, in a fixed order.
    pub const ALL: [Leg; 3] = [Leg::Private, Leg::Untrusted, Leg::External];

    /// The config and store spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Leg::Private => "private",
            Leg::Untrusted => "untrusted",
            Leg::External => "external",
        }
    }

    /// Parse the config and store spelling.
    pub fn parse(s: &str) -> Option<Leg> {
        Leg::ALL.into_iter().find(|l| l.as_str() == s)
    }

    /// What holding this leg means, for reasons.
    pub fn describe(self) -> &'static str {
        match self {
            Leg::Private => "private data",
            Leg::Untrusted => "untrusted input",
            Leg::External => "external communication",
        }
    }
}

impl std::fmt::Display for Leg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What to do with a call that would execute a file its session wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum WriteThenRun {
    /// Ask, whatever rule or default allowed the program.
    #[default]
    Ask,
    /// Deny.
    Deny,
    /// Allow when the call runs contained; ask otherwise.
    Contain,
    /// Do not check (the session still records writes).
    Off,
}

/// What to do with a call that would give its session all three legs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum RuleOfTwo {
    /// Ask.
    #[default]
    Ask,
    /// Deny.
    Deny,
    /// Do not check.
    Off,
}

impl RuleOfTwo {
    /// The decision it stands for, if it checks at all.
    pub fn decision(self) -> Option<Decision> {
        match self {
            RuleOfTwo::Ask => Some(Decision::Ask),
            RuleOfTwo::Deny => Some(Decision::Deny),
            RuleOfTwo::Off => None,
        }
    }
}

/// Default lifetime of an idle session.
pub const DEFAULT_EXPIRE_AFTER: Duration = Duration::from_secs(24 * 3600);
/// Default cap on the distinct files a session remembers writing.
pub const DEFAULT_MAX_EVENTS: u64 = 20_000;

/// The merged `[sessions]` settings.
#[derive(Debug, Clone)]
pub struct SessionSettings {
    /// `write_then_run`.
    pub write_then_run: WriteThenRun,
    /// `rule_of_two`.
    pub rule_of_two: RuleOfTwo,
    /// A session idle longer than this is forgotten.
    pub expire_after: Duration,
    /// How many distinct written files a session remembers; past it, every file a call
    /// executes counts as possibly written by the session (see docs/guide/sessions.md).
    pub max_events: u64,
    /// Globs of private paths (relative ones are taken from the workspace), besides the
    /// defaults.
    pub private: Vec<String>,
    private_set: globset::GlobSet,
    /// Hosts whose traffic is not external communication.
    pub internal: Vec<String>,
    internal_set: Vec<HostPattern>,
    /// Per tool name (`WebFetch`, `mcp__SERVER`, `mcp__SERVER__TOOL`): the legs a call
    /// carries, replacing the defaults.
    pub tools: BTreeMap<String, Vec<Leg>>,
}

impl Default for SessionSettings {
    fn default() -> Self {
        SessionSettings {
            write_then_run: WriteThenRun::Ask,
            rule_of_two: RuleOfTwo::Ask,
            expire_after: DEFAULT_EXPIRE_AFTER,
            max_events: DEFAULT_MAX_EVENTS,
            private: Vec::new(),
            private_set: globset::GlobSet::empty(),
            internal: Vec::new(),
            internal_set: Vec::new(),
            tools: BTreeMap::new(),
        }
    }
}

/// `[sessions]` in one config file.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct SessionsTable {
    write_then_run: Option<Spanned<String>>,
    rule_of_two: Option<Spanned<String>>,
    expire_after: Option<Spanned<String>>,
    max_events: Option<Spanned<u64>>,
    #[serde(default)]
    private: Vec<Spanned<String>>,
    #[serde(default)]
    internal: Vec<Spanned<String>>,
    #[serde(default)]
    tools: BTreeMap<String, Spanned<Vec<String>>>,
}

type SpanErr = (std::ops::Range<usize>, String);

/// Which `[sessions]` scalars a higher layer already set.
#[derive(Default)]
pub(crate) struct Seen {
    write_then_run: bool,
    rule_of_two: bool,
    expire_after: bool,
    max_events: bool,
}

impl SessionsTable {
    /// Merge one layer (layers come highest first). `honoured` is false for an untrusted
    /// project file: it may still mark paths private and tighten the checks, nothing
    /// else.
    pub(crate) fn merge_into(
        &self,
        into: &mut SessionSettings,
        seen: &mut Seen,
        honoured: bool,
        workspace: &Path,
        home: &Path,
    ) -> Result<Vec<String>, SpanErr> {
        let mut notes = Vec::new();
        if let Some(s) = &self.write_then_run {
            let v = match s.get_ref().as_str() {
                "ask" => WriteThenRun::Ask,
                "deny" => WriteThenRun::Deny,
                "contain" => WriteThenRun::Contain,
                "off" => WriteThenRun::Off,
                o => {
                    return Err((
                        s.span(),
                        format!("unknown write_then_run `{o}`: expected ask, deny, contain or off"),
                    ));
                }
            };
            let tightens = v == WriteThenRun::Deny;
            if !seen.write_then_run && (honoured || tightens) {
                into.write_then_run = v;
                seen.write_then_run = true;
            } else if !honoured {
                notes.push("`[sessions] write_then_run`".into());
            }
        }
        if let Some(s) = &self.rule_of_two {
            let v = match s.get_ref().as_str() {
                "ask" => RuleOfTwo::Ask,
                "deny" => RuleOfTwo::Deny,
                "off" => RuleOfTwo::Off,
                o => {
                    return Err((
                        s.span(),
                        format!("unknown rule_of_two `{o}`: expected ask, deny or off"),
                    ));
                }
            };
            if !seen.rule_of_two && (honoured || v == RuleOfTwo::Deny) {
                into.rule_of_two = v;
                seen.rule_of_two = true;
            } else if !honoured {
                notes.push("`[sessions] rule_of_two`".into());
            }
        }
        if let Some(s) = &self.expire_after {
            let d = crate::duration::parse(s.get_ref()).map_err(|e| (s.span(), e.to_string()))?;
            if !seen.expire_after && honoured {
                into.expire_after = d;
                seen.expire_after = true;
            } else if !honoured {
                notes.push("`[sessions] expire_after`".into());
            }
        }
        if let Some(s) = &self.max_events {
            if *s.get_ref() == 0 {
                return Err((s.span(), "max_events must be at least 1".into()));
            }
            if !seen.max_events && honoured {
                into.max_events = *s.get_ref();
                seen.max_events = true;
            } else if !honoured {
                notes.push("`[sessions] max_events`".into());
            }
        }
        // Marking a path private only narrows: every layer may.
        let mut builder = globset::GlobSetBuilder::new();
        for g in &into.private {
            builder.add(compile_private(g, workspace, home).map_err(|e| (0..0, e))?);
        }
        for g in &self.private {
            builder.add(compile_private(g.get_ref(), workspace, home).map_err(|e| (g.span(), e))?);
            into.private.push(g.get_ref().clone());
        }
        into.private_set = builder
            .build()
            .map_err(|e| (0..0, format!("the private globs cannot be compiled: {e}")))?;
        for h in &self.internal {
            let p = HostPattern::parse(h.get_ref()).map_err(|e| {
                (
                    h.span(),
                    format!("`{}` is not a host pattern: {e}", h.get_ref()),
                )
            })?;
            if honoured {
                into.internal.push(h.get_ref().clone());
                into.internal_set.push(p);
            } else {
                notes.push(format!("`[sessions] internal` host `{}`", h.get_ref()));
            }
        }
        for (tool, legs) in &self.tools {
            let mut parsed = Vec::new();
            for l in legs.get_ref() {
                parsed.push(Leg::parse(l).ok_or_else(|| {
                    (legs.span(), format!("unknown leg `{l}` for tool `{tool}`: expected private, untrusted or external"))
                })?);
            }
            if honoured {
                into.tools.entry(tool.clone()).or_insert(parsed);
            } else {
                notes.push(format!("`[sessions.tools]` entry `{tool}`"));
            }
        }
        Ok(notes)
    }
}

fn compile_private(g: &str, workspace: &Path, home: &Path) -> Result<globset::Glob, String> {
    let abs = if let Some(rest) = g.strip_prefix("~/") {
        home.join(rest).display().to_string()
    } else if g.starts_with('/') {
        g.to_string()
    } else {
        workspace
            .join(g.trim_start_matches("./"))
            .display()
            .to_string()
    };
    globset::GlobBuilder::new(&abs)
        .literal_separator(true)
        .build()
        .map_err(|e| format!("`{g}` is not a valid glob: {e}"))
}

/// A file a call writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The path (absolute; the resolved path too when a symlink was involved).
    pub path: PathBuf,
    /// The blake3 hash of the content, when the request carries it.
    pub hash: Option<String>,
    /// The call may have written anything beneath this path: a directory it filled
    /// (`cp x pkg/`, `tar -x -C d`, `unzip -d d`, `patch`).
    pub tree: bool,
}

/// Writes a call makes that cannot be read off it: code cordon does not follow (a script,
/// `-c` code, an unknown program, text that does not parse) or a git command that
/// rewrites files it does not name. The session counts everything beneath `dir` as
/// possibly written by the call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unseen {
    /// The directory (the workspace).
    pub dir: PathBuf,
    /// Why the writes cannot be read off the call.
    pub why: String,
}

/// A leg a call adds, with what it touched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegUse {
    /// The leg.
    pub leg: Leg,
    /// What the call touched (a path, a host, a tool).
    pub target: String,
}

/// Files a call executes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Executes {
    /// Absolute path pattern (`*`, `?` within a component, `**` across components).
    pub pattern: String,
    /// What the program does with them.
    pub why: String,
    /// The sub-command, as written.
    pub command: String,
    /// Why the pattern's directory could not be resolved through its symlinks, when it
    /// lies in the workspace and could not: the file then counts as possibly written.
    pub unresolved: Option<String>,
}

/// What one call means for its session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionFacts {
    /// Files it writes.
    pub writes: Vec<Written>,
    /// Legs it adds.
    pub legs: Vec<LegUse>,
    /// Files it executes.
    pub executes: Vec<Executes>,
    /// Writes it makes that cannot be read off it, if any. Meaningless for a call run
    /// in the full tier, whose merge lists every path it wrote: the gate drops it there.
    pub unseen: Option<Unseen>,
}

impl SessionFacts {
    /// Whether the call adds `leg`.
    pub fn has(&self, leg: Leg) -> bool {
        self.legs.iter().any(|l| l.leg == leg)
    }
}

impl SessionSettings {
    /// Whether `path` is private by the defaults or by the config.
    pub fn is_private(&self, path: &Path, location: Option<Location>) -> bool {
        if location != Some(Location::Inside) {
            return true;
        }
        if path.components().any(|c| {
            crate::guards::is_secret_file_name(c.as_os_str()) || secret_adjacent(c.as_os_str())
        }) {
            return true;
        }
        self.private_set.is_match(path)
    }

    fn is_internal(&self, host: &Host) -> bool {
        self.internal_set.iter().any(|p| p.matches_host(host))
    }

    /// Read the session facts off one call and its operations. `fs` resolves the
    /// executed files through their symlinks and tells a filled directory from a file.
    pub fn facts(
        &self,
        req: &Request,
        ops: &Operations,
        place: &Place<'_>,
        mcp: &crate::mcp::McpSettings,
    ) -> SessionFacts {
        let mut out = SessionFacts::default();
        let content_hash = req
            .input
            .get("content")
            .and_then(|v| v.as_str())
            .map(|c| blake3::hash(c.as_bytes()).to_hex().to_string());
        let single_write =
            matches!(req.action(), Ok(Action::Write { ref paths }) if paths.len() == 1);
        let mut legs: Vec<LegUse> = Vec::new();
        let mut add = |leg: Leg, target: String| {
            if !legs.iter().any(|l| l.leg == leg) {
                legs.push(LegUse { leg, target });
            }
        };
        for op in &ops.ops {
            // A path named in code, or a program's own files (its configuration, the
            // repository's `.git`): neither is data the call reads or writes on its own.
            if op.mention || op.config {
                continue;
            }
            match (&op.kind, &op.target) {
                (OpKind::Write, Target::Path(f)) => {
                    let hash = if single_write {
                        content_hash.clone()
                    } else {
                        None
                    };
                    out.writes.push(Written {
                        path: f.literal.clone(),
                        hash: hash.clone(),
                        tree: false,
                    });
                    if f.resolved != f.literal {
                        out.writes.push(Written {
                            path: f.resolved.clone(),
                            hash,
                            tree: false,
                        });
                    }
                }
                (OpKind::Read | OpKind::List, Target::Path(f)) => {
                    if self.is_private(&f.literal, op.location)
                        || self.is_private(&f.resolved, op.location)
                    {
                        add(Leg::Private, f.literal.display().to_string());
                    }
                    if op.location != Some(Location::Inside) {
                        add(Leg::Untrusted, f.literal.display().to_string());
                    }
                }
                (OpKind::Network, t) => {
                    let shown = t.display();
                    add(Leg::Untrusted, shown.clone());
                    let internal =
                        matches!(t, Target::Net { dest: Ok((h, _)), .. } if self.is_internal(h));
                    if !internal {
                        add(Leg::External, shown);
                    }
                }
                (OpKind::Search, t) => {
                    add(
                        Leg::Untrusted,
                        format!("a web search for `{}`", t.display()),
                    );
                    add(Leg::External, format!("a web search for `{}`", t.display()));
                }
                (OpKind::Mcp, Target::Mcp { server, tool })
                    if mcp.result_untrusted(server, tool) =>
                {
                    add(Leg::Untrusted, op.target.display());
                }
                _ => {}
            }
        }
        out.legs = legs;
        if let Some(over) = self.override_for(req, ops) {
            out.legs = over
                .iter()
                .map(|l| LegUse {
                    leg: *l,
                    target: format!("tool `{}` (configured)", req.tool),
                })
                .collect();
        }
        out.writes.extend(filled(req, ops, place));
        out.executes = executes(req, ops, place);
        out.unseen = unseen_writer(ops).map(|why| Unseen {
            dir: place.workspace.to_path_buf(),
            why,
        });
        out
    }

    fn override_for(&self, req: &Request, ops: &Operations) -> Option<&Vec<Leg>> {
        for op in &ops.ops {
            if let Target::Mcp { server, tool } = &op.target {
                return self
                    .tools
                    .get(&format!("mcp__{server}__{tool}"))
                    .or_else(|| self.tools.get(&format!("mcp__{server}")));
            }
        }
        self.tools.get(&req.tool)
    }
}

/// Credential files that are not secrets by name alone but hold them.
fn secret_adjacent(name: &std::ffi::OsStr) -> bool {
    let n = name.to_string_lossy().to_ascii_lowercase();
    matches!(
        n.as_str(),
        ".npmrc" | ".netrc" | ".pypirc" | ".git-credentials" | ".htpasswd"
    ) || n.starts_with("credentials")
        || n.starts_with("secrets")
        || n.ends_with(".secret")
        || n.ends_with(".secrets")
}

/// The literal directory a pattern lies beneath (everything before the first component
/// holding a glob character), ending in `/`, or the whole path when it has no glob.
pub fn pattern_prefix(pattern: &str) -> &str {
    let mut end = 0;
    for (i, c) in pattern.char_indices() {
        if matches!(c, '*' | '?' | '[') {
            return &pattern[..end];
        }
        if c == '/' {
            end = i + 1;
        }
    }
    pattern
}

/// Does the absolute `path` match the pattern (`*`, `?`, `[…]` within a component, `**`
/// for any number of components, dot files included)?
pub fn pattern_matches(pattern: &str, path: &str) -> bool {
    PathPattern::new(pattern).matches(path)
}

/// Could the pattern match some path strictly beneath the directory `dir` (a directory
/// the session filled: anything beneath it may be new)?
pub fn pattern_reaches_beneath(pattern: &str, dir: &str) -> bool {
    PathPattern::new(pattern).reaches_beneath(dir)
}

/// A path pattern parsed once, for matching many paths: a decision in a long session
/// checks every executed pattern against every file the session wrote.
#[derive(Debug, Clone)]
pub struct PathPattern {
    comps: Vec<Comp>,
}

#[derive(Debug, Clone)]
enum Comp {
    /// `**`: any number of components.
    Any,
    /// One component's glob.
    One(cordon_shell::pattern::Pattern),
}

/// The components of a path as [`PathPattern`] matches them (empty ones dropped): split
/// a path once to match it against many patterns.
pub fn components(path: &str) -> Vec<&str> {
    path.split('/').filter(|c| !c.is_empty()).collect()
}

impl PathPattern {
    /// Parse `pattern` (see [`pattern_matches`]).
    pub fn new(pattern: &str) -> PathPattern {
        let comps = components(pattern)
            .into_iter()
            .map(|c| match c {
                "**" => Comp::Any,
                c => Comp::One(cordon_shell::pattern::Pattern::parse(c)),
            })
            .collect();
        PathPattern { comps }
    }

    /// Does the absolute `path` match?
    pub fn matches(&self, path: &str) -> bool {
        self.matches_components(&components(path))
    }

    /// [`PathPattern::matches`] for a path already split by [`components`].
    pub fn matches_components(&self, comps: &[&str]) -> bool {
        // A pattern that ends in a glob of one component can only match a path whose
        // last component it matches: most paths fail here, before any `**` is tried.
        if let Some(Comp::One(last)) = self.comps.last()
            && !comps.last().is_some_and(|c| last.matches(c))
        {
            return false;
        }
        match_comps(&self.comps, comps)
    }

    /// Could it match some path strictly beneath the directory `dir`?
    pub fn reaches_beneath(&self, dir: &str) -> bool {
        self.reaches_beneath_components(&components(dir))
    }

    /// [`PathPattern::reaches_beneath`] for a directory already split by [`components`].
    pub fn reaches_beneath_components(&self, dir: &[&str]) -> bool {
        reaches(&self.comps, dir)
    }
}

fn reaches(pat: &[Comp], dir: &[&str]) -> bool {
    match (pat.split_first(), dir.split_first()) {
        // The pattern ends at or above the directory: it names nothing beneath it.
        (None, _) => false,
        // `**` takes in the rest of the directory; what follows it may match below.
        (Some((Comp::Any, _)), _) => true,
        // The directory is used up and the pattern goes on: something beneath matches.
        (Some(_), None) => true,
        (Some((Comp::One(p), prest)), Some((d, drest))) => p.matches(d) && reaches(prest, drest),
    }
}

fn match_comps(pat: &[Comp], comps: &[&str]) -> bool {
    match pat.split_first() {
        None => comps.is_empty(),
        Some((Comp::Any, rest)) => (0..=comps.len()).any(|i| match_comps(rest, &comps[i..])),
        Some((Comp::One(p), rest)) => match comps.split_first() {
            Some((c, crest)) => p.matches(c) && match_comps(rest, crest),
            None => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_paths() {
        assert!(pattern_matches("/w/pkg/*.go", "/w/pkg/x_test.go"));
        assert!(!pattern_matches("/w/pkg/*.go", "/w/pkg/sub/x_test.go"));
        assert!(pattern_matches("/w/**/*.rs", "/w/a/b/build.rs"));
        assert!(pattern_matches("/w/**/*.rs", "/w/build.rs"));
        assert!(pattern_matches(
            "/w/**/conftest.py",
            "/w/.hidden/conftest.py"
        ));
        assert!(!pattern_matches("/w/package.json", "/w/package.json5"));
        assert_eq!(pattern_prefix("/w/pkg/*.go"), "/w/pkg/");
        assert_eq!(pattern_prefix("/w/**/x"), "/w/");
        assert_eq!(pattern_prefix("/w/package.json"), "/w/package.json");
        assert_eq!(lexical("/w/./a/../b/*.go"), "/w/b/*.go");
    }

    #[test]
    fn filled_directories_reach_the_patterns_beneath() {
        assert!(pattern_reaches_beneath("/w/pkg/*.go", "/w/pkg"));
        assert!(pattern_reaches_beneath("/w/pkg/*.go", "/w"));
        assert!(pattern_reaches_beneath("/w/**", "/w/deep/er"));
        assert!(pattern_reaches_beneath("/w/**/*.rs", "/"));
        assert!(!pattern_reaches_beneath("/w/pkg/*.go", "/w/other"));
        assert!(!pattern_reaches_beneath("/w/run.sh", "/w/run.sh"));
        assert!(!pattern_reaches_beneath("/w/pkg/*.go", "/w/pkg/sub"));
    }
}
