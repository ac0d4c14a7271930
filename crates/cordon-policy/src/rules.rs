//! Permission rules: parsing the Claude Code forms (`Bash(npm run test:*)`, `Read(./src/**)`,
//! `WebFetch(domain:example.com)`, `mcp__server__tool`) and matching them against operations.
//!
//! Path anchoring follows Claude Code: `//abs` is absolute, `~/x` is under HOME, `/x` and
//! `./x` (or a bare `x`) are relative to the workspace. Globs use `globset` with literal
//! separators: `*` stays within one component, `**` crosses them. A pattern without glob
//! characters also matches everything beneath it, so `Read(./secrets)` covers the directory.

use crate::verdict::Decision;
use globset::{Glob, GlobBuilder, GlobMatcher, GlobSet, GlobSetBuilder};
use std::path::{Path, PathBuf};

/// Where a rule was written, for verdict sources and error messages.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RuleOrigin {
    /// The config file, if the rule came from one.
    pub file: Option<PathBuf>,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// The layer name (`managed`, `flags`, `user`, `project`, `attenuation`).
    pub layer: &'static str,
}

/// Which operations a path rule applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathTool {
    /// `Read(…)`: reads and listings.
    Read,
    /// `Edit(…)` / `Write(…)`: writes and deletes.
    Edit,
}

/// A command pattern of a `Bash(…)` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandPattern {
    /// `Bash(npm run test:*)`: these words, then anything.
    Prefix(Vec<String>),
    /// `Bash(ls -la)`: exactly these words.
    Exact(Vec<String>),
    /// `Bash(git log *)`: a wildcard pattern over the words joined by spaces.
    Wildcard(String),
}

impl CommandPattern {
    /// Does the pattern match a sub-command's words (program first)?
    pub fn matches(&self, words: &[String]) -> bool {
        match self {
            CommandPattern::Prefix(p) => words.len() >= p.len() && words[..p.len()] == p[..],
            CommandPattern::Exact(p) => words == &p[..],
            CommandPattern::Wildcard(w) => {
                let joined = words.join(" ");
                // `git log *` also covers a bare `git log`.
                wildcard(w, &joined)
                    || w.strip_suffix(" *")
                        .is_some_and(|head| wildcard(head, &joined))
            }
        }
    }

    /// The words the pattern names literally (a wildcard stands for none of the rest).
    pub fn literal_words(&self) -> Vec<&str> {
        match self {
            CommandPattern::Prefix(p) | CommandPattern::Exact(p) => {
                p.iter().map(String::as_str).collect()
            }
            CommandPattern::Wildcard(w) => w
                .split(' ')
                .filter(|t| !t.is_empty() && !t.contains('*'))
                .collect(),
        }
    }
}

/// `*` matches any run of characters (spaces included); everything else is literal.
fn wildcard(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&b| b == b'*')
}

/// What a rule matches.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Matcher {
    /// Every call of a tool kind: `Bash`, `Read`, `Edit`, `WebFetch`, `WebSearch`.
    Tool(crate::request::ToolKind),
    /// A tool cordon does not know, named literally.
    UnknownTool(String),
    /// A sub-command of a shell call.
    Command(CommandPattern),
    /// A path glob for reads or for edits.
    Path {
        /// Which operations.
        tool: PathTool,
        /// The anchored absolute glob.
        glob: String,
    },
    /// A network destination (`WebFetch(domain:HOST[:PORT])`): any port unless one is named.
    Domain(crate::net::HostPattern),
    /// An MCP server, or one of its tools.
    Mcp {
        /// Server name.
        server: String,
        /// Tool name; `None` for every tool of the server.
        tool: Option<String>,
    },
}

/// One parsed rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// What the rule decides.
    pub action: Decision,
    /// The rule as written.
    pub text: String,
    /// What it matches.
    pub matcher: Matcher,
    /// Where it was written.
    pub origin: RuleOrigin,
    /// The author's reason, for structured rules.
    pub reason: Option<String>,
}

/// Context for anchoring path patterns.
#[derive(Debug, Clone)]
pub struct Anchors {
    /// The workspace root: `./x`, `x` and `/x` are relative to it.
    pub workspace: PathBuf,
    /// HOME: `~/x` is relative to it.
    pub home: PathBuf,
}

/// Parse one rule in Claude Code syntax.
pub fn parse_rule(text: &str, anchors: &Anchors) -> Result<Matcher, RuleError> {
    use crate::request::ToolKind;
    let t = text.trim();
    if t.is_empty() {
        return Err(RuleError::Empty);
    }
    if let Some(rest) = t.strip_prefix("mcp__") {
        let (server, tool) = match rest.split_once("__") {
            Some((s, "*")) => (s, None),
            Some((s, tool)) => (s, Some(tool.to_string())),
            None => (rest, None),
        };
        if server.is_empty() || tool.as_deref() == Some("") {
            return Err(RuleError::Mcp(t.to_string()));
        }
        return Ok(Matcher::Mcp {
            server: server.to_string(),
            tool,
        });
    }
    let (name, arg) = match t.split_once('(') {
        Some((name, rest)) => {
            let Some(arg) = rest.strip_suffix(')') else {
                return Err(RuleError::Unclosed(t.to_string()));
            };
            (name, Some(arg))
        }
        None => (t, None),
    };
    let kind = match name {
        "Bash" => ToolKind::Bash,
        "Read" => ToolKind::Read,
        "Edit" | "Write" => ToolKind::Edit,
        "WebFetch" => ToolKind::WebFetch,
        "WebSearch" => ToolKind::WebSearch,
        other
            if arg.is_none()
                && other
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_') =>
        {
            return Ok(Matcher::UnknownTool(other.to_string()));
        }
        other => {
            return Err(RuleError::UnknownTool {
                tool: other.to_string(),
                rule: t.to_string(),
            });
        }
    };
    let Some(arg) = arg.map(str::trim) else {
        return Ok(Matcher::Tool(kind));
    };
    if arg.is_empty() || arg == "*" || arg == "**" {
        return Ok(Matcher::Tool(kind));
    }
    match kind {
        ToolKind::Bash => Ok(Matcher::Command(parse_command_pattern(arg)?)),
        ToolKind::Read | ToolKind::Edit => {
            let tool = if kind == ToolKind::Read {
                PathTool::Read
            } else {
                PathTool::Edit
            };
            let glob = anchor(arg, anchors)?;
            Ok(Matcher::Path { tool, glob })
        }
        ToolKind::WebFetch => {
            let Some(d) = arg.strip_prefix("domain:") else {
                return Err(RuleError::WebFetchForm(t.to_string()));
            };
            let p = crate::net::HostPattern::parse(d.trim()).map_err(|source| RuleError::Host {
                rule: t.to_string(),
                source,
            })?;
            Ok(Matcher::Domain(p))
        }
        _ => Err(RuleError::NoArgument(t.to_string())),
    }
}

fn parse_command_pattern(arg: &str) -> Result<CommandPattern, RuleError> {
    let words = |s: &str| -> Vec<String> { s.split_whitespace().map(String::from).collect() };
    if let Some(prefix) = arg.strip_suffix(":*") {
        let w = words(prefix);
        if w.is_empty() {
            return Err(RuleError::EmptyPrefix(arg.to_string()));
        }
        if w.iter().any(|x| x.contains('*')) {
            return Err(RuleError::PrefixWithWildcard(arg.to_string()));
        }
        return Ok(CommandPattern::Prefix(w));
    }
    if arg.contains('*') {
        let normalized = words(arg).join(" ");
        if normalized
            .split(' ')
            .next()
            .is_some_and(|p| p.contains('*'))
        {
            return Err(RuleError::WildcardProgram(arg.to_string()));
        }
        return Ok(CommandPattern::Wildcard(normalized));
    }
    Ok(CommandPattern::Exact(words(arg)))
}

/// Anchor a path pattern to an absolute glob.
fn anchor(pattern: &str, a: &Anchors) -> Result<String, RuleError> {
    if pattern.contains('\0') {
        return Err(RuleError::NulInPath);
    }
    let joined = if let Some(abs) = pattern.strip_prefix("//") {
        format!("/{abs}")
    } else if let Some(rest) = pattern.strip_prefix("~/") {
        format!("{}/{rest}", a.home.display())
    } else if pattern == "~" {
        a.home.display().to_string()
    } else if let Some(rest) = pattern.strip_prefix('/') {
        format!("{}/{rest}", a.workspace.display())
    } else {
        let rest = pattern.strip_prefix("./").unwrap_or(pattern);
        format!("{}/{rest}", a.workspace.display())
    };
    // Clean `.`/`..` lexically, but keep glob characters as they are.
    let mut parts: Vec<&str> = Vec::new();
    for c in joined.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    Ok(format!("/{}", parts.join("/")))
}

fn build_glob(glob: &str) -> Result<Glob, PathGlobError> {
    GlobBuilder::new(glob)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|source| PathGlobError::Invalid {
            glob: glob.to_string(),
            source,
        })
}

/// Compile a path glob into matchers for the path itself and for everything beneath it.
pub fn path_globs(glob: &str) -> Result<Vec<Glob>, PathGlobError> {
    let mut out = vec![build_glob(glob)?];
    if !glob.ends_with("/**") {
        out.push(build_glob(&format!("{}/**", glob.trim_end_matches('/')))?);
    }
    Ok(out)
}

/// A single compiled path matcher (used to check a rule's `match`/`not_match` examples).
pub fn path_matcher(glob: &str) -> Result<Vec<GlobMatcher>, PathGlobError> {
    Ok(path_globs(glob)?
        .into_iter()
        .map(|g| g.compile_matcher())
        .collect())
}

/// Path rules of one action and tool, compiled into one `GlobSet` so matching 200 rules costs
/// about as much as matching one.
#[derive(Debug, Clone)]
pub struct PathIndex {
    set: GlobSet,
    /// For each glob in the set, the index of its rule.
    owners: Vec<usize>,
}

impl PathIndex {
    /// Build an index over `(rule index, glob)` pairs.
    pub fn build(globs: &[(usize, &str)]) -> Result<PathIndex, PathGlobError> {
        let mut b = GlobSetBuilder::new();
        let mut owners = Vec::new();
        for (idx, g) in globs {
            for glob in path_globs(g)? {
                b.add(glob);
                owners.push(*idx);
            }
        }
        let set = b.build().map_err(PathGlobError::Compile)?;
        Ok(PathIndex { set, owners })
    }

    /// The lowest rule index whose glob matches `path`.
    pub fn first_match(&self, path: &Path) -> Option<usize> {
        if self.owners.is_empty() || !self.set.is_match(path) {
            return None;
        }
        self.set
            .matches(path)
            .into_iter()
            .map(|i| self.owners[i])
            .min()
    }
}

/// Why a rule does not parse ([`parse_rule`]). Each names the rule (or its argument) as
/// written.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RuleError {
    /// The rule is empty.
    Empty,
    /// An MCP rule that is not `mcp__SERVER`, `mcp__SERVER__TOOL` or `mcp__SERVER__*`.
    Mcp(String),
    /// An opening parenthesis without the closing one at the end.
    Unclosed(String),
    /// A tool cordon has no rules for, with an argument.
    UnknownTool {
        /// The tool's name.
        tool: String,
        /// The rule.
        rule: String,
    },
    /// A `WebFetch` argument that is not `domain:HOST`.
    WebFetchForm(String),
    /// A `WebFetch(domain:HOST)` whose host pattern does not parse.
    Host {
        /// The rule.
        rule: String,
        /// Why the host pattern does not parse.
        source: crate::net::OriginError,
    },
    /// A tool that takes no argument was given one.
    NoArgument(String),
    /// `Bash(:*)`: a prefix rule without a prefix (the argument).
    EmptyPrefix(String),
    /// `:*` with other wildcards in the prefix (the argument).
    PrefixWithWildcard(String),
    /// A wildcard in the program's name (the argument).
    WildcardProgram(String),
    /// A path pattern with a NUL byte.
    NulInPath,
}

impl std::fmt::Display for RuleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RuleError::Empty => f.write_str("the rule is empty"),
            RuleError::Mcp(t) => write!(
                f,
                "`{t}` must be mcp__SERVER, mcp__SERVER__TOOL or mcp__SERVER__*"
            ),
            RuleError::Unclosed(t) => write!(
                f,
                "`{t}` has an opening parenthesis but does not end with `)`"
            ),
            RuleError::UnknownTool { tool, rule } => {
                write!(f, "unknown tool `{tool}` in rule `{rule}`")
            }
            RuleError::WebFetchForm(t) => write!(
                f,
                "`{t}`: WebFetch rules take the form WebFetch(domain:HOST)"
            ),
            RuleError::Host { rule, source } => write!(f, "`{rule}`: {source}"),
            RuleError::NoArgument(t) => write!(f, "`{t}`: this tool takes no argument"),
            RuleError::EmptyPrefix(arg) => write!(f, "`Bash({arg})` has an empty prefix"),
            RuleError::PrefixWithWildcard(arg) => write!(
                f,
                "`Bash({arg})`: `:*` cannot be combined with other wildcards"
            ),
            RuleError::WildcardProgram(arg) => write!(
                f,
                "`Bash({arg})`: the program name must be literal, not a wildcard"
            ),
            RuleError::NulInPath => f.write_str("a path pattern contains a NUL byte"),
        }
    }
}

impl std::error::Error for RuleError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RuleError::Host { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Why path globs cannot be compiled ([`path_globs`], [`PathIndex::build`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PathGlobError {
    /// One glob is not a valid pattern.
    Invalid {
        /// The glob.
        glob: String,
        /// What is wrong with it.
        source: globset::Error,
    },
    /// The globs could not be compiled into one set.
    Compile(globset::Error),
}

impl std::fmt::Display for PathGlobError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PathGlobError::Invalid { glob, source } => {
                write!(f, "invalid path pattern `{glob}`: {source}")
            }
            PathGlobError::Compile(e) => write!(f, "cannot compile path rules: {e}"),
        }
    }
}

impl std::error::Error for PathGlobError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PathGlobError::Invalid { source, .. } | PathGlobError::Compile(source) => Some(source),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn anchors() -> Anchors {
        Anchors {
            workspace: "/w/proj".into(),
            home: "/home/u".into(),
        }
    }

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn cmd(rule: &str) -> CommandPattern {
        match parse_rule(rule, &anchors()) {
            Ok(Matcher::Command(c)) => c,
            other => panic!("{rule}: {other:?}"),
        }
    }

    #[test]
    fn command_patterns() {
        let p = cmd("Bash(npm run test:*)");
        assert!(p.matches(&words("npm run test")));
        assert!(p.matches(&words("npm run test --watch")));
        assert!(!p.matches(&words("npm run testx")));
        assert!(!p.matches(&words("npm run")));
        let e = cmd("Bash(ls -la)");
        assert!(e.matches(&words("ls -la")));
        assert!(!e.matches(&words("ls -la /")));
        let w = cmd("Bash(git log *)");
        assert!(w.matches(&words("git log --oneline -5")));
        assert!(w.matches(&words("git log")));
        assert!(!w.matches(&words("git logx")));
        assert!(!w.matches(&words("git push")));
        assert_eq!(w.literal_words(), vec!["git", "log"]);
        assert!(parse_rule("Bash(*)", &anchors()).is_ok_and(|m| matches!(m, Matcher::Tool(_))));
        assert!(parse_rule("Bash(* rm)", &anchors()).is_err());
        assert!(parse_rule("Bash(:*)", &anchors()).is_err());
    }

    #[test]
    fn path_anchoring() {
        let a = anchors();
        assert_eq!(anchor("//etc/**", &a).unwrap(), "/etc/**");
        assert_eq!(anchor("~/.aws/**", &a).unwrap(), "/home/u/.aws/**");
        assert_eq!(anchor("/src/**", &a).unwrap(), "/w/proj/src/**");
        assert_eq!(anchor("./src/**", &a).unwrap(), "/w/proj/src/**");
        assert_eq!(anchor("src/*.rs", &a).unwrap(), "/w/proj/src/*.rs");
        assert_eq!(anchor("./a/../b", &a).unwrap(), "/w/proj/b");
    }

    #[test]
    fn path_globs_respect_separators() {
        let m = path_matcher("/w/proj/src/*.rs").unwrap();
        let any = |p: &str| m.iter().any(|g| g.is_match(p));
        assert!(any("/w/proj/src/main.rs"));
        assert!(!any("/w/proj/src/sub/main.rs"));
        let d = path_matcher("/w/proj/secrets").unwrap();
        assert!(d.iter().any(|g| g.is_match("/w/proj/secrets/key")));
        assert!(!d.iter().any(|g| g.is_match("/w/proj/secrets2/key")));
    }

    #[test]
    fn index_reports_first_rule() {
        let idx = PathIndex::build(&[(3, "/w/**"), (1, "/w/proj/**")]).unwrap();
        assert_eq!(idx.first_match(Path::new("/w/proj/x")), Some(1));
        assert_eq!(idx.first_match(Path::new("/w/other")), Some(3));
        assert_eq!(idx.first_match(Path::new("/etc")), None);
    }

    #[test]
    fn mcp_and_tool_rules() {
        let a = anchors();
        assert!(matches!(
            parse_rule("mcp__github__create_issue", &a),
            Ok(Matcher::Mcp { tool: Some(_), .. })
        ));
        assert!(matches!(
            parse_rule("mcp__github__*", &a),
            Ok(Matcher::Mcp { tool: None, .. })
        ));
        assert!(matches!(
            parse_rule("mcp__github", &a),
            Ok(Matcher::Mcp { tool: None, .. })
        ));
        assert!(matches!(parse_rule("WebFetch", &a), Ok(Matcher::Tool(_))));
        assert!(matches!(
            parse_rule("MyTool", &a),
            Ok(Matcher::UnknownTool(_))
        ));
        assert!(parse_rule("Read(./x", &a).is_err());
        assert!(parse_rule("Frob(x)", &a).is_err());
        assert!(parse_rule("WebFetch(example.com)", &a).is_err());
    }

    #[test]
    fn each_refusal_is_typed_and_one_sentence() {
        let a = anchors();
        let refused = |rule: &str| parse_rule(rule, &a).unwrap_err();
        for (rule, error, sentence) in [
            (" ", RuleError::Empty, "the rule is empty"),
            (
                "mcp____x",
                RuleError::Mcp("mcp____x".into()),
                "`mcp____x` must be mcp__SERVER, mcp__SERVER__TOOL or mcp__SERVER__*",
            ),
            (
                "Read(./x",
                RuleError::Unclosed("Read(./x".into()),
                "`Read(./x` has an opening parenthesis but does not end with `)`",
            ),
            (
                "Frob(x)",
                RuleError::UnknownTool {
                    tool: "Frob".into(),
                    rule: "Frob(x)".into(),
                },
                "unknown tool `Frob` in rule `Frob(x)`",
            ),
            (
                "WebFetch(example.com)",
                RuleError::WebFetchForm("WebFetch(example.com)".into()),
                "`WebFetch(example.com)`: WebFetch rules take the form WebFetch(domain:HOST)",
            ),
            (
                "WebSearch(x)",
                RuleError::NoArgument("WebSearch(x)".into()),
                "`WebSearch(x)`: this tool takes no argument",
            ),
            (
                "Bash(:*)",
                RuleError::EmptyPrefix(":*".into()),
                "`Bash(:*)` has an empty prefix",
            ),
            (
                "Bash(git * push:*)",
                RuleError::PrefixWithWildcard("git * push:*".into()),
                "`Bash(git * push:*)`: `:*` cannot be combined with other wildcards",
            ),
            (
                "Bash(* rm)",
                RuleError::WildcardProgram("* rm".into()),
                "`Bash(* rm)`: the program name must be literal, not a wildcard",
            ),
            (
                "Read(a\0b)",
                RuleError::NulInPath,
                "a path pattern contains a NUL byte",
            ),
        ] {
            let e = refused(rule);
            assert_eq!(e, error, "{rule}");
            assert_eq!(e.to_string(), sentence, "{rule}");
        }
        assert!(matches!(
            refused("WebFetch(domain:a b)"),
            RuleError::Host { .. }
        ));
        let bad = path_globs("/w/[").unwrap_err();
        assert!(matches!(&bad, PathGlobError::Invalid { glob, .. } if glob == "/w/["));
        assert!(bad.to_string().starts_with("invalid path pattern `/w/[`: "));
        assert!(PathIndex::build(&[(0, "/w/[")]).is_err());
    }
}
