//! Execution settings that the policy's config carries for the other layers: the sandbox
//! mode, the approval policy, and the raw `[sandbox]` and `[network]` tables.
//!
//! The decision core does not act on these; `cordon-sandbox` and `cordon-egress` do. They
//! live here because they are read from the same layered config files.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// What the sandboxed process can physically do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum SandboxMode {
    /// Nothing is writable except a private `/tmp`.
    ReadOnly,
    /// The workspace and configured extra roots are writable.
    #[default]
    WorkspaceWrite,
    /// No filesystem containment (namespaces, seccomp and the environment allowlist still
    /// apply unless the caller asks otherwise).
    FullAccess,
}

impl SandboxMode {
    /// The word used in config files, flags and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::FullAccess => "full-access",
        }
    }
}

impl std::str::FromStr for SandboxMode {
    type Err = crate::errors::ParseSandboxModeError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "read-only" => Ok(Self::ReadOnly),
            "workspace-write" => Ok(Self::WorkspaceWrite),
            "full-access" => Ok(Self::FullAccess),
            _ => Err(crate::errors::ParseSandboxModeError::new(s)),
        }
    }
}

/// Which containment tiers `cordon exec` accepts (`--require`, `[sandbox] require`).
///
/// Without user namespaces only the fallback tier (Landlock and seccomp) is left, and it
/// cannot keep what the command writes in the workspace from being run later by the
/// host's own tools (it has no copy-on-write layer to judge), nor hide the host's
/// processes and sockets. So the fallback runs only when it is asked for: by the
/// command line, the managed or the user file, never by a project's own file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum RequiredTier {
    /// Namespaces, the mount plan, Landlock and seccomp, or nothing runs.
    #[default]
    Full,
    /// The full tier where the host gives it, else the fallback tier.
    Any,
}

impl RequiredTier {
    /// The word used in config files, flags and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            RequiredTier::Full => "full",
            RequiredTier::Any => "any",
        }
    }
}

impl std::str::FromStr for RequiredTier {
    type Err = crate::errors::ParseRequiredTierError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "full" => Ok(Self::Full),
            "any" => Ok(Self::Any),
            _ => Err(crate::errors::ParseRequiredTierError::new(s)),
        }
    }
}

/// When a human is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum ApprovalPolicy {
    /// Only known read-only commands run without asking.
    Untrusted,
    /// The policy's asks are asked.
    #[default]
    OnRequest,
    /// Run inside the sandbox first; ask only after containment blocked something.
    OnFailure,
    /// Never ask: every ask becomes a deny.
    Never,
}

impl ApprovalPolicy {
    /// The word used in config files, flags and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalPolicy::Untrusted => "untrusted",
            ApprovalPolicy::OnRequest => "on-request",
            ApprovalPolicy::OnFailure => "on-failure",
            ApprovalPolicy::Never => "never",
        }
    }
}

impl std::str::FromStr for ApprovalPolicy {
    type Err = crate::errors::ParseApprovalPolicyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "untrusted" => Ok(Self::Untrusted),
            "on-request" => Ok(Self::OnRequest),
            "on-failure" => Ok(Self::OnFailure),
            "never" => Ok(Self::Never),
            _ => Err(crate::errors::ParseApprovalPolicyError::new(s)),
        }
    }
}

/// The `[sandbox]` table, merged over the config layers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SandboxSettings {
    /// Extra writable roots beyond the workspace (absolute, `~` expanded).
    pub writable_roots: Vec<PathBuf>,
    /// Extra paths to mask (secrets), beyond the built-in sensitive list.
    pub mask: Vec<PathBuf>,
    /// Paths under HOME that stay visible read-only when HOME is hidden; `None` means the
    /// built-in toolchain list.
    pub home_readable: Option<Vec<PathBuf>>,
    /// Extra environment variable names passed into the sandbox.
    pub env_allow: Vec<String>,
    /// Names passed even though they look like secrets (explicit override).
    pub env_allow_secret: Vec<String>,
    /// Keep a contained run's changes for review instead of merging them (`hold =
    /// true` in any layer: holding only ever tightens).
    pub hold: bool,
    /// The most bytes a contained run's changes may take (`changes_limit`); the smallest
    /// of the layers wins.
    pub changes_limit: Option<u64>,
    /// `require`: the tiers accepted, from `--require` or the highest managed, `--config`
    /// or user file that sets it (a project's file is never read for it); `None` when
    /// nothing set it (see [`SandboxSettings::required_tier`]).
    pub require: Option<RequiredTier>,
    /// The file (or `--require`) that set [`SandboxSettings::require`], for messages.
    pub require_source: Option<String>,
}

impl SandboxSettings {
    /// The tiers accepted: [`SandboxSettings::require`], else [`RequiredTier::Full`].
    pub fn required_tier(&self) -> RequiredTier {
        self.require.unwrap_or_default()
    }
}

/// The `[network]` table, merged over the config layers. Strings are validated when the
/// config loads (`crate::net`), so every entry here parses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct NetworkSettings {
    /// Host patterns that may be reached (`example.com`, `*.example.com`, `host:8443`).
    pub allow: Vec<String>,
    /// Host patterns that may never be reached; wins over `allow`.
    pub deny: Vec<String>,
    /// CIDRs exempt from the private-address refusal.
    pub allow_private: Vec<String>,
    /// Method and path rules (`{ host, methods, paths, read_only, git_push }` entries of
    /// `allow`); their hosts are in `allow` too.
    pub rules: Vec<crate::net::RequestRuleSpec>,
    /// `[[credential]]` tables of the user, managed and flag layers (a project's are
    /// never used); their destinations are in `allow` too.
    pub credentials: Vec<crate::credential::CredentialSpec>,
}

/// Who shares a slot: runs of the same scope id with the same key see the same state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum SlotScope {
    /// One agent session (its session id).
    Session,
    /// One local user (the uid): the default.
    #[default]
    User,
    /// One agent (its name).
    Agent,
    /// Every run that uses this state directory.
    Global,
}

impl SlotScope {
    /// The scope's name, as on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            SlotScope::Session => "session",
            SlotScope::User => "user",
            SlotScope::Agent => "agent",
            SlotScope::Global => "global",
        }
    }

    /// Parse a scope name.
    pub fn parse(s: &str) -> Option<SlotScope> {
        Some(match s {
            "session" => SlotScope::Session,
            "user" => SlotScope::User,
            "agent" => SlotScope::Agent,
            "global" => SlotScope::Global,
            _ => return None,
        })
    }
}

impl std::fmt::Display for SlotScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `[slots]` table: defaults of `cordon exec --slot KEY`. Layers above win; the
/// project layer counts only when the workspace is trusted (a repository must not choose
/// to share a slot more widely).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SlotSettings {
    /// `scope`: who shares a slot when `--scope` is not given (default: the user).
    pub scope: Option<SlotScope>,
    /// `wait_seconds`: how long a run waits for a busy slot when `--slot-wait` is not
    /// given.
    pub wait_seconds: Option<u64>,
    /// `tmp`: the slot's directory is `/tmp` too, as with `--slot-tmp`.
    pub tmp: Option<bool>,
}

/// `[store]`: where cordon's shared state (leases, remembered rules, pending approvals,
/// sessions, operation ids, MCP pins) lives when it is not the local SQLite file. Read
/// only from the user and managed config files; a repository's file may not choose it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoreSettings {
    /// `url`: `postgres://user@host:port/db` or `postgresql:///db?host=/socket/dir`
    /// (never holding a password).
    pub url: String,
    /// Where the password comes from, if the server wants one.
    pub password: Option<StorePassword>,
    /// `machine`: this machine's name in the fleet (default: the host name).
    pub machine: Option<String>,
    /// `ca_file`: the CA certificate(s), PEM, that the server's certificate must chain
    /// to; set, the store is reached over TLS with the certificate and the host name
    /// verified (verify-full), and a host that is not this machine is allowed.
    pub ca_file: Option<PathBuf>,
    /// `cert_file` and `key_file`: a client certificate (PEM, its chain) and its private
    /// key (PEM, a file only its owner may read), presented to the server over TLS.
    pub client_cert: Option<(PathBuf, PathBuf)>,
    /// The config file that set it.
    pub file: PathBuf,
}

/// Longest machine name accepted.
pub const MAX_MACHINE_NAME: usize = 64;

/// Whether `name` may name a machine in the fleet, from any source (`[store] machine`,
/// `CORDON_MACHINE`, the host name): 1 to [`MAX_MACHINE_NAME`] ASCII letters, digits,
/// `.`, `-` or `_`.
pub fn valid_machine_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_MACHINE_NAME
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
}

impl StoreSettings {
    /// Settings naming `url`, set in `file`, with no password and the default machine.
    pub fn new(url: String, file: PathBuf) -> StoreSettings {
        StoreSettings {
            url,
            password: None,
            machine: None,
            ca_file: None,
            client_cert: None,
            file,
        }
    }
}

/// Where `[store]`'s password comes from (a closed set: a consumer must handle each).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StorePassword {
    /// `password_file`: a regular file only its owner may read.
    File(PathBuf),
    /// `password_env`: the environment variable holding it.
    Env(String),
}
