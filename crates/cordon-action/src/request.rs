//! The structured action request.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Largest request accepted, in bytes.
pub const MAX_REQUEST_BYTES: usize = 1 << 20;

/// How a path is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    /// Read an existing file.
    Read,
    /// Create a file that does not exist yet.
    Create,
    /// Replace the content of an existing file.
    Overwrite,
    /// Delete an existing file.
    Delete,
}

impl Access {
    /// The name used in policies and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Create => "create",
            Access::Overwrite => "overwrite",
            Access::Delete => "delete",
        }
    }
}

/// One path the action touches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathUse {
    /// The path (absolute, or relative to the request's `cwd`).
    pub path: PathBuf,
    /// What the action does to it.
    pub access: Access,
}

/// One network destination the action reaches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkUse {
    /// The URL (only `http` and `https`).
    pub url: String,
    /// The HTTP method, when known (`GET` when absent).
    #[serde(default)]
    pub method: Option<String>,
    /// Whether the client follows redirects.
    #[serde(default)]
    pub follow_redirects: bool,
}

/// What kind of effect the action has beyond its declared paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SideEffect {
    /// Nothing beyond the declared paths.
    None,
    /// Reads data from elsewhere (a download, an API query).
    ExternalRead,
    /// Changes data elsewhere (a POST, a push, a message sent).
    ExternalWrite,
    /// Destroys data, here or elsewhere, beyond undoing.
    Destructive,
}

impl SideEffect {
    /// The name used in policies and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            SideEffect::None => "none",
            SideEffect::ExternalRead => "external-read",
            SideEffect::ExternalWrite => "external-write",
            SideEffect::Destructive => "destructive",
        }
    }
}

/// A structured action request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActionRequest {
    /// Who asks (an agent id).
    pub actor: String,
    /// The capability the actor invokes (a name the policy's reviewers recognize).
    pub capability: String,
    /// The exact program and arguments; no shell is involved.
    pub argv: Vec<String>,
    /// The working directory (absolute).
    pub cwd: PathBuf,
    /// Every path the action touches.
    #[serde(default)]
    pub paths: Vec<PathUse>,
    /// Every origin the action reaches.
    #[serde(default)]
    pub network: Vec<NetworkUse>,
    /// Names of the credentials (environment variables) the action needs.
    #[serde(default)]
    pub credentials: Vec<String>,
    /// The kind of side effect.
    pub side_effect: SideEffect,
    /// Why, in the actor's words (shown to the human; never trusted).
    pub reason: String,
    /// A key that makes a repeated external write harmless.
    #[serde(default)]
    pub idempotency_key: Option<String>,
}

/// Why a request is not valid input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestError(pub String);

impl std::fmt::Display for RequestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid action request: {}", self.0)
    }
}

impl std::error::Error for RequestError {}

impl ActionRequest {
    /// Parse and validate the JSON text of a request.
    pub fn from_json(text: &str) -> Result<ActionRequest, RequestError> {
        if text.len() > MAX_REQUEST_BYTES {
            return Err(RequestError(format!(
                "it is larger than {MAX_REQUEST_BYTES} bytes"
            )));
        }
        let r: ActionRequest =
            serde_json::from_str(text).map_err(|e| RequestError(e.to_string()))?;
        if r.argv.is_empty() || r.argv[0].is_empty() {
            return Err(RequestError("argv must name a program".into()));
        }
        if r.argv.iter().any(|a| a.contains('\0')) {
            return Err(RequestError("argv must not contain NUL bytes".into()));
        }
        if !r.cwd.is_absolute() {
            return Err(RequestError("cwd must be an absolute path".into()));
        }
        if r.actor.trim().is_empty() || r.capability.trim().is_empty() {
            return Err(RequestError(
                "actor and capability must not be empty".into(),
            ));
        }
        for c in &r.credentials {
            if c.is_empty() || !c.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(RequestError(format!(
                    "credential name {c:?} is not an environment variable name"
                )));
            }
        }
        if r.idempotency_key
            .as_deref()
            .is_some_and(|k| k.trim().is_empty())
        {
            return Err(RequestError(
                "idempotency_key must not be empty when given".into(),
            ));
        }
        Ok(r)
    }
}
