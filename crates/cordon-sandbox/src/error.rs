//! Errors of the sandbox, each one sentence a user can act on.

use std::fmt;

/// What went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SandboxErrorKind {
    /// The request itself is invalid (no command, a root that is not a directory…).
    Invalid,
    /// A protected path inside a writable root is a symlink: refusing to start.
    ProtectedSymlink,
    /// Full containment was required but the host cannot provide it.
    TierUnavailable,
    /// Building the sandbox failed.
    Setup,
    /// The command was not found inside the sandbox.
    NotFound,
}

/// An error of the sandbox: the run did not happen (or was cut short by cordon).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxError {
    /// The category.
    pub kind: SandboxErrorKind,
    /// One sentence.
    pub message: String,
}

impl SandboxError {
    pub(crate) fn new(kind: SandboxErrorKind, message: impl Into<String>) -> Self {
        SandboxError {
            kind,
            message: message.into(),
        }
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Self::new(SandboxErrorKind::Invalid, message)
    }

    pub(crate) fn setup(message: impl Into<String>) -> Self {
        Self::new(SandboxErrorKind::Setup, message)
    }

    pub(crate) fn io(context: impl Into<String>, err: std::io::Error) -> Self {
        Self::new(
            SandboxErrorKind::Setup,
            format!("{}: {err}", context.into()),
        )
    }

    pub(crate) fn sys(context: impl fmt::Display, err: nix::Error) -> Self {
        Self::new(
            SandboxErrorKind::Setup,
            format!("{context}: {}", err.desc()),
        )
    }
}

impl fmt::Display for SandboxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SandboxError {}
