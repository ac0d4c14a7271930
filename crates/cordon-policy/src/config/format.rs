//! The file format: the tables of `policy.toml` as serde reads them.

use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct FileConfig {
    pub(super) mode: Option<Spanned<String>>,
    pub(super) sandbox: Option<Spanned<SandboxField>>,
    pub(super) approval: Option<Spanned<String>>,
    pub(super) trusted_workspaces: Option<Spanned<Vec<Spanned<String>>>>,
    #[serde(default)]
    pub(super) permissions: Permissions,
    pub(super) defaults: Option<BTreeMap<Spanned<String>, Spanned<String>>>,
    pub(super) contained: Option<BTreeMap<Spanned<String>, Spanned<String>>>,
    #[serde(default)]
    pub(super) network: NetworkTable,
    #[serde(default)]
    pub(super) rule: Vec<RuleTable>,
    #[serde(default)]
    pub(super) preset: Vec<Spanned<PresetTable>>,
    #[serde(default)]
    pub(super) mcp: crate::mcp::McpTable,
    #[serde(default)]
    pub(super) sessions: crate::session::SessionsTable,
    pub(super) hook: Option<Spanned<HookTable>>,
    pub(super) slots: Option<Spanned<SlotsTable>>,
    pub(super) store: Option<Spanned<StoreTable>>,
    #[serde(default)]
    pub(super) credential: Vec<Spanned<crate::credential::CredentialTable>>,
}

/// `[store]`: where the shared state lives (user and managed files only).
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct StoreTable {
    pub(super) url: Option<Spanned<String>>,
    pub(super) password_file: Option<Spanned<String>>,
    pub(super) password_env: Option<Spanned<String>>,
    pub(super) machine: Option<Spanned<String>>,
    pub(super) ca_file: Option<Spanned<String>>,
    pub(super) cert_file: Option<Spanned<String>>,
    pub(super) key_file: Option<Spanned<String>>,
}

/// Only the `[store]` table of a file, every other table accepted unread: what is needed
/// to find the store before the whole policy is loaded.
#[derive(Deserialize, Default)]
pub(super) struct StoreOnly {
    pub(super) store: Option<Spanned<StoreTable>>,
}

/// `[slots]`: defaults of `cordon exec --slot`.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct SlotsTable {
    pub(super) scope: Option<Spanned<String>>,
    pub(super) wait_seconds: Option<u64>,
    pub(super) tmp: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PresetTable {
    pub(super) tool: Spanned<String>,
    #[serde(default)]
    pub(super) set: serde_json::Map<String, serde_json::Value>,
    pub(super) cwd: Option<Spanned<String>>,
}

/// `[hook]`: how `cordon hook` treats the harness's calls.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct HookTable {
    /// Rewrite shell calls that are allowed only contained to run inside `cordon exec`.
    pub(super) contain: Option<bool>,
    /// Let the harness's `acceptEdits` mode count: file writes inside the workspace are
    /// allowed when the harness reports that mode (and cordon's own mode is `default`).
    pub(super) accept_edits: Option<bool>,
}

#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum SandboxField {
    Mode(String),
    Table(Box<SandboxTable>),
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct SandboxTable {
    pub(super) mode: Option<String>,
    #[serde(default)]
    pub(super) writable_roots: Vec<String>,
    #[serde(default)]
    pub(super) mask: Vec<String>,
    pub(super) home_readable: Option<Vec<String>>,
    #[serde(default)]
    pub(super) env_allow: Vec<String>,
    #[serde(default)]
    pub(super) env_allow_secret: Vec<String>,
    pub(super) hold: Option<bool>,
    pub(super) changes_limit: Option<u64>,
    pub(super) require: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct Permissions {
    #[serde(default)]
    pub(super) allow: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) ask: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) deny: Vec<Spanned<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct NetworkTable {
    #[serde(default)]
    pub(super) allow: Vec<Spanned<AllowEntry>>,
    #[serde(default)]
    pub(super) deny: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) allow_private: Vec<Spanned<String>>,
}

/// An entry of `[network] allow`: a host pattern, or a table with method and path rules.
#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum AllowEntry {
    Host(String),
    Rule(RequestRuleTable),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RequestRuleTable {
    pub(super) host: String,
    #[serde(default)]
    pub(super) methods: Vec<String>,
    #[serde(default)]
    pub(super) paths: Vec<String>,
    #[serde(default)]
    pub(super) read_only: bool,
    #[serde(default)]
    pub(super) git_push: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RuleTable {
    pub(super) action: Spanned<String>,
    pub(super) rule: Option<Spanned<String>>,
    pub(super) tool: Option<Spanned<String>>,
    pub(super) pattern: Option<Spanned<String>>,
    pub(super) reason: Option<String>,
    #[serde(default, rename = "match")]
    pub(super) must_match: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) not_match: Vec<Spanned<String>>,
}
