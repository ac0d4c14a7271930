//! Errors of the gate, named after what failed.

/// The audit log could not take a record. A caller must not let the call proceed.
#[derive(Debug)]
pub struct AuditError {
    /// The log file, when it was known.
    pub path: Option<std::path::PathBuf>,
    /// What went wrong.
    pub source: cordon_store::StoreError,
}

impl std::fmt::Display for AuditError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.path {
            Some(p) => write!(
                f,
                "the audit log {} cannot be written: {}",
                p.display(),
                self.source
            ),
            None => write!(f, "the audit log cannot be written: {}", self.source),
        }
    }
}

impl std::error::Error for AuditError {}

/// A contained run could not be carried out as decided.
#[derive(Debug)]
#[non_exhaustive]
pub enum GateError {
    /// The sandbox could not be built or run.
    Sandbox(cordon_sandbox::SandboxError),
    /// The egress proxy could not start.
    Egress(String),
    /// The network allowlist does not compile.
    Network(String),
    /// The run was not recorded, so it did not start.
    Audit(AuditError),
    /// A directory offered for an on-failure re-run changed after it was approved.
    Changed(std::path::PathBuf),
    /// The approval store could not be used.
    Store(cordon_store::StoreError),
    /// An edited input cannot be approved (it is invalid, or the policy denies it).
    Edit(String),
}

impl std::fmt::Display for GateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GateError::Sandbox(e) => f.write_str(&e.message),
            GateError::Egress(e) => write!(f, "cannot start the egress proxy: {e}"),
            GateError::Network(e) => write!(f, "invalid network allowlist: {e}"),
            GateError::Audit(e) => write!(f, "{e}; fix it or pass --no-audit"),
            GateError::Changed(p) => write!(
                f,
                "{} changed after it was approved; not re-running",
                p.display()
            ),
            GateError::Store(e) => write!(f, "the approval store cannot be used: {e}"),
            GateError::Edit(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for GateError {}
