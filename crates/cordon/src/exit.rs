//! The one place where outcomes become process exit codes.

use std::process::ExitCode;

/// `cordon check` / general: the request or config was invalid.
pub const INVALID: u8 = 2;
/// `cordon check` / general: cordon itself failed.
pub const INTERNAL: u8 = 1;

/// An error that already knows its exit code and its one-sentence message.
#[derive(Debug)]
pub struct Exit {
    /// Process exit status.
    pub code: u8,
    /// Printed on stderr (without a trailing newline); empty prints nothing.
    pub message: String,
}

impl Exit {
    /// An error with an exit code and a message.
    pub fn new(code: u8, message: impl Into<String>) -> Self {
        Exit {
            code,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Exit {}

/// Map a subcommand result to an exit code: `Ok(code)` is the status to exit with; an
/// [`Exit`] error carries its own; any other error is internal (1).
pub fn to_exit_code(result: anyhow::Result<u8>) -> ExitCode {
    match result {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            let (code, msg) = match err.downcast_ref::<Exit>() {
                Some(e) => (e.code, e.message.clone()),
                None => (INTERNAL, format!("{err:#}")),
            };
            if !msg.is_empty() {
                eprintln!("cordon: {msg}");
            }
            ExitCode::from(code)
        }
    }
}
