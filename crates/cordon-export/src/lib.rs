//! cordon-export: the audit log shipped off the machine as OpenTelemetry logs.
//!
//! This crate owns three things: the export settings ([`ExportConfig`]: the user's and
//! the managed `export.toml` and the standard `OTEL_EXPORTER_OTLP_*` variables, never a
//! project's files), the mapping of an audit record to an OTLP log record
//! ([`encode`]), and the shipping ([`Exporter::drain`]): batches over OTLP/HTTP
//! (protobuf), retried with backoff, the cursor kept in the store.
//!
//! It also ships the log to a fleet's shared store ([`Shipper`]): the same queue (the log
//! from a cursor on), a cursor of its own, records added to the shared decisions table.
//!
//! It sits above `cordon-store` (it reads the log and keeps its cursor there) and below
//! the surfaces that run it (`cordon serve` in the background, `cordon audit export
//! --otlp` on demand). It never runs in a decision's path: a one-shot process queues a
//! record by writing it to the log, and the queue is the log from the cursor on.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod config;
mod drain;
pub mod encode;
mod fleet;
mod http;

pub use config::{
    ConfigSources, DEFAULT_MAX_BACKLOG, ExportConfig, ExportConfigError, MANAGED_EXPORT_CONFIG,
};
pub use drain::{BATCH_BYTES, BATCH_RECORDS, Background, DrainOptions, DrainReport, Exporter};
pub use fleet::{FLEET_CURSOR_SUFFIX, Shipper};

/// Why an export stopped.
#[derive(Debug)]
#[non_exhaustive]
pub enum ExportError {
    /// The collector did not take the records in time; they stay queued.
    Unreachable {
        /// The last failure.
        why: String,
        /// What was done before.
        report: DrainReport,
    },
    /// The store or the log failed.
    Store(String),
    /// Anything else (no runtime).
    Io(String),
}

impl std::fmt::Display for ExportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExportError::Unreachable { why, report } => write!(
                f,
                "the collector did not take the records ({why}); {} sent, {} still queued",
                report.sent, report.remaining
            ),
            ExportError::Store(e) | ExportError::Io(e) => f.write_str(e),
        }
    }
}

impl std::error::Error for ExportError {}
