//! `cordon review-toolset`: which combinations of a toolset reach the lethal trifecta.
//!
//! A toolset file lists the tools one agent is given:
//!
//! ```toml
//! [[tool]]
//! name = "Read"                 # as the harness spells it
//!
//! [[tool]]
//! name = "mcp__github__create_issue"
//! server = "github"             # optional: the MCP server (taken from the name otherwise)
//! legs = ["external"]           # optional: replaces the defaults of the tool's kind
//!
//! [[tool]]
//! name = "Bash"
//! contained = true              # runs inside `cordon exec` without network
//! ```
//!
//! Each tool carries the legs its kind can reach without looking at any argument (a read
//! tool can read private data; a fetch takes in untrusted input and can send data out;
//! an uncontained shell can do all three; an MCP tool carries what the config says about
//! its server). The review lists every smallest combination of tools that together hold
//! all three legs, and suggests a split into two agents of which neither can. Pure: the
//! caller reads the file.

use crate::mcp::{McpSettings, Trust};
use crate::request::{Request, ToolKind};
use crate::session::{Leg, SessionSettings};
use serde::Deserialize;
use serde_json::Value;

/// A toolset file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Toolset {
    /// The tools.
    #[serde(default)]
    pub tool: Vec<ToolEntry>,
}

/// One tool of a toolset.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolEntry {
    /// The tool name as the harness spells it.
    pub name: String,
    /// The MCP server, when the name does not say it.
    pub server: Option<String>,
    /// The legs, replacing the defaults.
    pub legs: Option<Vec<String>>,
    /// Runs contained without network (shell tools only).
    #[serde(default)]
    pub contained: bool,
}

/// A tool with its legs and why it has them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ToolLegs {
    /// The tool name.
    pub name: String,
    /// Its legs.
    #[serde(serialize_with = "ser_legs")]
    pub legs: Vec<Leg>,
    /// Where they come from.
    pub why: String,
}

fn ser_legs<S: serde::Serializer>(legs: &[Leg], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(legs.iter().map(|l| l.as_str()))
}

/// The review of one toolset.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Review {
    /// Every tool with its legs.
    pub tools: Vec<ToolLegs>,
    /// Smallest combinations (tool names) that hold all three legs.
    pub trifectas: Vec<Vec<String>>,
    /// A suggested split into two agents, neither of which holds all three; empty when
    /// no combination does.
    pub split: Vec<Vec<String>>,
    /// Tools that fit in neither half of the split (they hold the two legs it separates).
    pub unplaced: Vec<String>,
    /// The leg the split keeps apart from the others.
    pub split_on: Option<String>,
}

/// Parse a toolset file; the error says what is wrong.
pub fn parse(text: &str) -> Result<Toolset, ToolsetError> {
    let t: Toolset = toml::from_str(text).map_err(ToolsetError::Toml)?;
    if t.tool.is_empty() {
        return Err(ToolsetError::NoTools);
    }
    for e in &t.tool {
        for l in e.legs.iter().flatten() {
            if Leg::parse(l).is_none() {
                return Err(ToolsetError::UnknownLeg {
                    tool: e.name.clone(),
                    leg: l.clone(),
                });
            }
        }
    }
    Ok(t)
}

/// Why a toolset file cannot be reviewed ([`parse`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolsetError {
    /// The file is not TOML of a toolset's shape.
    Toml(toml::de::Error),
    /// The file lists no tool.
    NoTools,
    /// A tool names a leg that is not `private`, `untrusted` or `external`.
    UnknownLeg {
        /// The tool's name.
        tool: String,
        /// The leg as written.
        leg: String,
    },
}

impl std::fmt::Display for ToolsetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ToolsetError::Toml(e) => write!(f, "{e}"),
            ToolsetError::NoTools => f.write_str("the toolset lists no `[[tool]]`"),
            ToolsetError::UnknownLeg { tool, leg } => write!(
                f,
                "tool `{tool}`: unknown leg `{leg}`: expected private, untrusted or external"
            ),
        }
    }
}

impl std::error::Error for ToolsetError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ToolsetError::Toml(e) => Some(e),
            _ => None,
        }
    }
}

/// The kind the adapters give a tool name: the first of a few typical inputs that the
/// tool's adapter accepts says what the tool does.
fn kind_of(name: &str) -> ToolKind {
    let probes = [
        serde_json::json!({"file_path": "x"}),
        serde_json::json!({"path": "x"}),
        serde_json::json!({"absolute_path": "x"}),
        serde_json::json!({"command": "true"}),
        serde_json::json!({"command": ["true"]}),
        serde_json::json!({"url": "https://a.example/", "prompt": "p"}),
        serde_json::json!({"url": "https://a.example/"}),
        serde_json::json!({"prompt": "https://a.example/"}),
        serde_json::json!({"query": "q"}),
        serde_json::json!({"pattern": "x"}),
        serde_json::json!({"input": "*** Begin Patch\n*** End Patch"}),
        serde_json::json!({}),
    ];
    for input in probes {
        let Value::Object(input) = input else {
            continue;
        };
        let req = Request {
            tool: name.to_string(),
            input,
            cwd: None,
            session: None,
            agent: None,
            operation_id: None,
        };
        match req.kind() {
            ToolKind::Unknown => continue,
            k => return k,
        }
    }
    ToolKind::Unknown
}

/// The legs a tool can reach, from its kind, the config and the entry.
fn legs_of(e: &ToolEntry, sessions: &SessionSettings, mcp: &McpSettings) -> (Vec<Leg>, String) {
    if let Some(l) = &e.legs {
        return (
            l.iter().filter_map(|l| Leg::parse(l)).collect(),
            "the toolset file".into(),
        );
    }
    let kind = kind_of(&e.name);
    let server = e.server.clone().or_else(|| {
        e.name
            .strip_prefix("mcp__")
            .and_then(|r| r.split("__").next())
            .map(str::to_string)
    });
    let configured = server
        .as_ref()
        .and_then(|s| {
            let tool = e.name.rsplit("__").next().unwrap_or_default();
            sessions
                .tools
                .get(&format!("mcp__{s}__{tool}"))
                .or_else(|| sessions.tools.get(&format!("mcp__{s}")))
        })
        .or_else(|| sessions.tools.get(&e.name));
    if let Some(l) = configured {
        return (l.clone(), "the config's [sessions.tools]".into());
    }
    use Leg::*;
    match (kind, server) {
        (_, Some(s)) => {
            let tool = e.name.rsplit("__").next().unwrap_or_default();
            if mcp.trust(&s) == Trust::Untrusted {
                (
                    vec![Untrusted],
                    format!("MCP server `{s}` is marked untrusted"),
                )
            } else if mcp.result_untrusted(&s, tool) {
                (
                    vec![Untrusted],
                    format!(
                        "MCP server `{s}` is not marked trusted, so its results are untrusted input (mark it with `trust = \"trusted\"` or list the tool in `trusted_tools`)"
                    ),
                )
            } else {
                (
                    Vec::new(),
                    format!(
                        "MCP server `{s}` is marked trusted: no legs declared (say them with `legs`)"
                    ),
                )
            }
        }
        (ToolKind::Read, _) => (vec![Private], "a read tool can read private files".into()),
        (ToolKind::Edit, _) => (Vec::new(), "a write tool only changes files".into()),
        (ToolKind::WebFetch | ToolKind::WebSearch, _) => (
            vec![Untrusted, External],
            "the web is untrusted input, and a request can carry data out".into(),
        ),
        (ToolKind::Bash, _) if e.contained => (
            vec![Private],
            "contained without network: it can read, not send".into(),
        ),
        (ToolKind::Bash, _) => (
            vec![Private, Untrusted, External],
            "an uncontained shell can read anything and reach any host".into(),
        ),
        _ => (
            vec![Private, Untrusted, External],
            "a tool cordon does not know may do anything".into(),
        ),
    }
}

/// Review a toolset under the config's settings.
pub fn review(t: &Toolset, sessions: &SessionSettings, mcp: &McpSettings) -> Review {
    let tools: Vec<ToolLegs> = t
        .tool
        .iter()
        .map(|e| {
            let (legs, why) = legs_of(e, sessions, mcp);
            ToolLegs {
                name: e.name.clone(),
                legs,
                why,
            }
        })
        .collect();
    let holds_all = |idx: &[usize]| {
        Leg::ALL
            .iter()
            .all(|l| idx.iter().any(|i| tools[*i].legs.contains(l)))
    };
    // A smallest combination has at most three tools (one per leg).
    let n = tools.len();
    let mut found: Vec<Vec<usize>> = Vec::new();
    let mut consider = |c: Vec<usize>| {
        if holds_all(&c) && !found.iter().any(|f| f.iter().all(|i| c.contains(i))) {
            found.push(c);
        }
    };
    for a in 0..n {
        consider(vec![a]);
    }
    for a in 0..n {
        for b in a + 1..n {
            consider(vec![a, b]);
        }
    }
    for a in 0..n {
        for b in a + 1..n {
            for c in b + 1..n {
                consider(vec![a, b, c]);
            }
        }
    }
    let trifectas: Vec<Vec<String>> = found
        .iter()
        .map(|c| c.iter().map(|i| tools[*i].name.clone()).collect())
        .collect();
    let mut review = Review {
        tools: tools.clone(),
        trifectas,
        split: Vec::new(),
        unplaced: Vec::new(),
        split_on: None,
    };
    if review.trifectas.is_empty() {
        return review;
    }
    // Split on the leg pair that leaves the fewest tools unplaced: half one has no tool
    // with leg A, half two none with leg B; a tool with both fits in neither.
    let mut best: Option<(usize, Leg, Leg)> = None;
    for (a, b) in [
        (Leg::External, Leg::Private),
        (Leg::External, Leg::Untrusted),
        (Leg::Private, Leg::Untrusted),
    ] {
        let unplaced = tools
            .iter()
            .filter(|t| t.legs.contains(&a) && t.legs.contains(&b))
            .count();
        if best.is_none_or(|(u, _, _)| unplaced < u) {
            best = Some((unplaced, a, b));
        }
    }
    if let Some((_, a, b)) = best {
        let half = |without: Leg| {
            tools
                .iter()
                .filter(|t| !t.legs.contains(&without))
                .map(|t| t.name.clone())
                .collect::<Vec<_>>()
        };
        review.split = vec![half(a), half(b)];
        review.unplaced = tools
            .iter()
            .filter(|t| t.legs.contains(&a) && t.legs.contains(&b))
            .map(|t| t.name.clone())
            .collect();
        review.split_on = Some(format!(
            "one agent without {}, one without {}",
            a.describe(),
            b.describe()
        ));
    }
    review
}

/// The review as JSON.
pub fn to_json(r: &Review) -> Value {
    serde_json::to_value(r).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str) -> Review {
        review(
            &parse(text).unwrap(),
            &SessionSettings::default(),
            &McpSettings::default(),
        )
    }

    #[test]
    fn read_and_fetch_reach_all_three_and_are_split() {
        let r = run(
            "[[tool]]\nname = \"Read\"\n[[tool]]\nname = \"WebFetch\"\n[[tool]]\nname = \"Write\"\n",
        );
        assert_eq!(
            r.trifectas,
            vec![vec!["Read".to_string(), "WebFetch".to_string()]]
        );
        assert!(r.unplaced.is_empty());
        assert_eq!(r.split.len(), 2);
        for half in &r.split {
            assert!(
                !(half.contains(&"Read".to_string()) && half.contains(&"WebFetch".to_string()))
            );
        }
    }

    #[test]
    fn an_uncontained_shell_reaches_all_three_alone() {
        let r = run("[[tool]]\nname = \"Bash\"\n[[tool]]\nname = \"Read\"\n");
        assert_eq!(r.trifectas, vec![vec!["Bash".to_string()]]);
        assert_eq!(r.unplaced, vec!["Bash".to_string()]);
        let r = run("[[tool]]\nname = \"Bash\"\ncontained = true\n[[tool]]\nname = \"Read\"\n");
        assert!(r.trifectas.is_empty());
    }

    #[test]
    fn declared_legs_count() {
        let r = run(
            "[[tool]]\nname = \"mcp__db__query\"\nlegs = [\"private\"]\n[[tool]]\nname = \"mcp__web__get\"\nlegs = [\"untrusted\"]\n[[tool]]\nname = \"mcp__slack__post\"\nlegs = [\"external\"]\n",
        );
        assert_eq!(r.trifectas.len(), 1);
        assert_eq!(r.trifectas[0].len(), 3);
        assert_eq!(
            parse("[[tool]]\nname = \"x\"\nlegs = [\"loud\"]\n")
                .unwrap_err()
                .to_string(),
            "tool `x`: unknown leg `loud`: expected private, untrusted or external"
        );
        assert!(matches!(parse(""), Err(ToolsetError::NoTools)));
        assert!(matches!(parse("[[tool]"), Err(ToolsetError::Toml(_))));
    }
}
