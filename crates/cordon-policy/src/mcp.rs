//! `[mcp.servers.NAME]` tables: what the config says about each MCP server.
//!
//! Only how much a server's output is trusted, for now: results of an `untrusted` server
//! are trust-labelled and secret-redacted by the MCP gateway before the client sees them.
//! Marking a server untrusted only narrows, so every layer may say it (a project file
//! included); no layer can override another's `untrusted`.
//!
//! For a session's rule of two, an MCP result is untrusted input unless the server is
//! marked `trust = "trusted"` (or the tool is listed in its `trusted_tools`) by a layer
//! cordon honours: the user's, the managed one, or a trusted workspace's. A server the
//! config never names is not labelled by the gateway, but its results still count as
//! untrusted input.

use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use toml::Spanned;

/// How far an MCP server's output is trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Trust {
    /// Results reach the client as the server sent them.
    #[default]
    Trusted,
    /// Results are labelled as untrusted data and secrets in them are redacted.
    Untrusted,
}

impl Trust {
    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Trust::Trusted => "trusted",
            Trust::Untrusted => "untrusted",
        }
    }
}

/// The merged `[mcp]` settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpSettings {
    /// Servers named in some layer, with the strictest trust any layer gave them.
    pub servers: BTreeMap<String, Trust>,
    /// Servers an honoured layer marked `trust = "trusted"` explicitly.
    pub marked_trusted: BTreeSet<String>,
    /// Per server, the tools an honoured layer listed in `trusted_tools`.
    pub trusted_tools: BTreeMap<String, BTreeSet<String>>,
}

impl McpSettings {
    /// The trust of the server called `name` (trusted when no layer names it).
    pub fn trust(&self, name: &str) -> Trust {
        self.servers.get(name).copied().unwrap_or_default()
    }

    /// Whether a result of `tool` of `server` is untrusted input for a session: yes
    /// unless the server or the tool is marked trusted, and never when any layer marks
    /// the server untrusted.
    pub fn result_untrusted(&self, server: &str, tool: &str) -> bool {
        if self.trust(server) == Trust::Untrusted {
            return true;
        }
        let tool_trusted = self
            .trusted_tools
            .get(server)
            .is_some_and(|t| t.contains(tool));
        !(self.marked_trusted.contains(server) || tool_trusted)
    }
}

/// `[mcp]` in one file.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct McpTable {
    #[serde(default)]
    servers: BTreeMap<String, ServerTable>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ServerTable {
    trust: Option<Spanned<String>>,
    #[serde(default)]
    trusted_tools: Vec<String>,
}

impl McpTable {
    /// Merge this layer's tables into `into`; an unknown trust word is an error with its
    /// byte span. `honoured` is false for an untrusted project file: it may mark a
    /// server untrusted, never trusted.
    pub(crate) fn merge_into(
        &self,
        into: &mut McpSettings,
        honoured: bool,
    ) -> Result<(), (std::ops::Range<usize>, String)> {
        for (name, t) in &self.servers {
            let trust = match &t.trust {
                None => Trust::Trusted,
                Some(s) => match s.get_ref().as_str() {
                    "trusted" => Trust::Trusted,
                    "untrusted" => Trust::Untrusted,
                    other => {
                        return Err((
                            s.span(),
                            format!(
                                "unknown trust `{other}` for MCP server `{name}`: expected trusted or untrusted"
                            ),
                        ));
                    }
                },
            };
            let explicit = t.trust.is_some();
            let slot = into.servers.entry(name.clone()).or_default();
            if trust == Trust::Untrusted {
                *slot = Trust::Untrusted;
                into.marked_trusted.remove(name);
                into.trusted_tools.remove(name);
            } else if honoured && *slot == Trust::Trusted {
                if explicit {
                    into.marked_trusted.insert(name.clone());
                }
                into.trusted_tools
                    .entry(name.clone())
                    .or_default()
                    .extend(t.trusted_tools.iter().cloned());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{LoadOptions, load};
    use crate::facts::FakeFs;

    fn load_with(user: &[u8], project: &[u8]) -> Result<McpSettings, String> {
        let fs = FakeFs::new()
            .dir("/w/proj")
            .dir("/w/proj/.cordon")
            .dir("/home/u/.config/cordon")
            .file_with("/home/u/.config/cordon/policy.toml", 1, user)
            .file_with("/w/proj/.cordon/policy.toml", 1, project);
        let opts = LoadOptions {
            workspace: "/w/proj".into(),
            home: "/home/u".into(),
            managed: Some("/etc/cordon/policy.toml".into()),
            ..Default::default()
        };
        load(&opts, &fs).map(|m| m.mcp).map_err(|e| e.to_string())
    }

    #[test]
    fn untrusted_from_any_layer_wins() {
        let m = load_with(
            b"[mcp.servers.web]\ntrust = \"trusted\"\n[mcp.servers.git]\n",
            b"[mcp.servers.web]\ntrust = \"untrusted\"\n",
        )
        .unwrap();
        assert_eq!(m.trust("web"), Trust::Untrusted);
        assert_eq!(m.trust("git"), Trust::Trusted);
        assert_eq!(m.trust("never-named"), Trust::Trusted);
    }

    #[test]
    fn results_are_untrusted_input_unless_marked_trusted() {
        let m = load_with(
            b"[mcp.servers.git]\ntrust = \"trusted\"\n[mcp.servers.docs]\ntrusted_tools = [\"search\"]\n[mcp.servers.web]\n",
            b"[mcp.servers.evil]\ntrust = \"trusted\"\n",
        )
        .unwrap();
        assert!(!m.result_untrusted("git", "log"));
        assert!(!m.result_untrusted("docs", "search"));
        assert!(m.result_untrusted("docs", "fetch"));
        assert!(m.result_untrusted("web", "get"));
        assert!(m.result_untrusted("never-named", "x"));
        // An untrusted workspace cannot vouch for a server.
        assert!(m.result_untrusted("evil", "x"));
    }

    #[test]
    fn unknown_trust_names_the_line() {
        let e = load_with(b"[mcp.servers.web]\ntrust = \"maybe\"\n", b"").unwrap_err();
        assert!(e.contains("policy.toml:2:"), "{e}");
        assert!(e.contains("unknown trust `maybe`"), "{e}");
    }
}
