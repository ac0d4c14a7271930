//! `[mcp.servers.NAME]` tables: what the config says about each MCP server.
//!
//! Only how much a server's output is trusted, for now: results of an `untrusted` server
//! are trust-labelled and secret-redacted by the MCP gateway before the client sees them.
//! Marking a server untrusted only narrows, so every layer may say it (a project file
//! included); `trusted` is the default and no layer can override another's `untrusted`.

use serde::Deserialize;
use std::collections::BTreeMap;
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
}

impl McpSettings {
    /// The trust of the server called `name` (trusted when no layer names it).
    pub fn trust(&self, name: &str) -> Trust {
        self.servers.get(name).copied().unwrap_or_default()
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
}

impl McpTable {
    /// Merge this layer's tables into `into`; an unknown trust word is an error with its
    /// byte span.
    pub(crate) fn merge_into(
        &self,
        into: &mut McpSettings,
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
            let slot = into.servers.entry(name.clone()).or_default();
            if trust == Trust::Untrusted {
                *slot = Trust::Untrusted;
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
    fn unknown_trust_names_the_line() {
        let e = load_with(b"[mcp.servers.web]\ntrust = \"maybe\"\n", b"").unwrap_err();
        assert!(e.contains("policy.toml:2:"), "{e}");
        assert!(e.contains("unknown trust `maybe`"), "{e}");
    }
}
