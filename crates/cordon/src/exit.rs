//! The one table of exit codes, the documented contract (docs/guide/check.md,
//! docs/guide/exec.md, docs/reference/cli.md). Every subcommand maps its result
//! here; the sandbox's internal statuses map onto it (a command that cannot be executed
//! is 127, like one that is not found), so that 126 always means "denied by policy".

use std::process::ExitCode;

/// The exit codes of `cordon` (`check` and `exec` list theirs in `--help`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Code {
    /// `check`: allow.
    Allow = 0,
    /// cordon itself failed unexpectedly.
    Internal = 1,
    /// Invalid request, flags or config.
    Invalid = 2,
    /// `check`: ask (the caller's human decides).
    Ask = 3,
    /// `check`: deny.
    Deny = 4,
    /// Left pending for a human (`cordon approvals approve ID`).
    Pending = 5,
    /// `import`: the config was printed, but some entries could not be converted.
    Incomplete = 6,
    /// `exec`: the timeout killed the command.
    Timeout = 124,
    /// `exec`: cordon failed (flags, config, sandbox set-up).
    Failed = 125,
    /// `exec`: denied by policy.
    Denied = 126,
    /// `exec`: the command was not found or cannot be executed.
    NotFound = 127,
}

// The sandbox's own statuses are this table's.
const _: () = assert!(cordon_sandbox::EXIT_TIMEOUT == Code::Timeout as i32);
const _: () = assert!(cordon_sandbox::EXIT_CORDON_FAILED == Code::Failed as i32);
const _: () = assert!(cordon_sandbox::EXIT_NOT_FOUND == Code::NotFound as i32);
const _: () = assert!(cordon_sandbox::EXIT_NOT_EXECUTABLE == Code::NotFound as i32);

impl Code {
    /// The status byte.
    pub fn get(self) -> u8 {
        self as u8
    }
}

/// `cordon check`'s exit codes, for `--help`.
pub const CHECK_CODES: &str = "Exit status: 0 allow, 3 ask, 4 deny, 5 left pending (--pending), \
2 invalid request or config, 1 internal error.";

/// `cordon exec`'s exit codes, for `--help`.
pub const EXEC_CODES: &str = "Exit status: the command's own; 124 timeout (the whole tree was \
killed); 125 cordon failed; 126 denied by policy; 127 command not found or not executable; \
5 left pending for a human (--pending).";

/// `cordon import`'s exit codes, for `--help`.
pub const IMPORT_CODES: &str = "Exit status: 0 every entry converted (wider denies and \
ignored non-permission settings are reported, not counted); 6 the config was printed but some \
entries were skipped or an example behaves differently (see stderr); 2 the file is not valid \
(nothing printed); 1 internal error.";

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
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Exit {
            code: code.get(),
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
            if crate::pipe::is_closed_stdout(&err) {
                crate::pipe::die_of_sigpipe();
            }
            let (code, msg) = match err.downcast_ref::<Exit>() {
                Some(e) => (e.code, e.message.clone()),
                None => (Code::Internal.get(), format!("{err:#}")),
            };
            if !msg.is_empty() {
                eprintln!(
                    "cordon: {}",
                    cordon_policy::terminal::sanitize_for_terminal(&msg)
                );
            }
            ExitCode::from(code)
        }
    }
}
