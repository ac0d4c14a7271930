//! What crosses a process boundary, between cordon and the helper and between the
//! helper's own processes: the request and the result, the length-framed spec and the
//! go byte that follows it on the same pipe, the helper's network-mode argument, the
//! info lines that PID 1 and the command send the helper, and the exit statuses. The
//! caller's side (`run.rs`) and the helper both import these from here, and nothing
//! else from each other.
//!
//! It must never act on what it carries: no namespace, mount, fork or signal here, only
//! encoding, decoding, and reading and writing the pipes.

use crate::error::{SandboxError, SandboxErrorKind};
use crate::landlock::LandlockOutcome;
use crate::report::{Blocked, ProcessLimit, Tier};
use crate::spec::SandboxSpec;
use nix::errno::Errno;
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::os::fd::{OwnedFd, RawFd};

/// Exit status when cordon itself failed.
pub const EXIT_CORDON_FAILED: i32 = 125;
/// Exit status when the command was not found.
pub const EXIT_NOT_FOUND: i32 = 127;
/// Exit status when the command was found but could not be executed (as "not found":
/// 126 is cordon's "denied by policy").
pub const EXIT_NOT_EXECUTABLE: i32 = 127;
/// Exit status on timeout.
pub const EXIT_TIMEOUT: i32 = 124;

/// What the caller sends the helper.
#[derive(Serialize, Deserialize)]
pub(crate) struct HelperRequest {
    pub spec: SandboxSpec,
    pub parent: i32,
    /// The run's pids cgroup, with its `pids.max` written, or why there is none.
    pub cgroup: Result<crate::cgroup::Made, String>,
}

/// An error crossing the process boundary.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct WireError {
    pub kind: String,
    pub message: String,
}

impl WireError {
    pub(super) fn from_error(e: &SandboxError) -> Self {
        let kind = match e.kind {
            SandboxErrorKind::ProtectedSymlink => "protected-symlink",
            SandboxErrorKind::TierUnavailable => "tier-unavailable",
            SandboxErrorKind::NotFound => "not-found",
            SandboxErrorKind::Invalid => "invalid",
            _ => "setup",
        };
        WireError {
            kind: kind.into(),
            message: e.message.clone(),
        }
    }

    pub(crate) fn into_error(self) -> SandboxError {
        let kind = match self.kind.as_str() {
            "protected-symlink" => SandboxErrorKind::ProtectedSymlink,
            "tier-unavailable" => SandboxErrorKind::TierUnavailable,
            "not-found" => SandboxErrorKind::NotFound,
            "invalid" => SandboxErrorKind::Invalid,
            _ => SandboxErrorKind::Setup,
        };
        SandboxError::new(kind, self.message)
    }
}

/// What the command's process enforced before `execve`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct CommandInfo {
    pub landlock: LandlockOutcome,
    pub seccomp: bool,
    pub no_new_privs: bool,
    pub capabilities_dropped: bool,
}

/// One line on the internal info pipe (I and C → H).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "line", rename_all = "kebab-case")]
pub(super) enum InfoLine {
    Enforced(CommandInfo),
    Error(WireError),
    TimedOut,
    Blocked { records: Vec<Blocked> },
}

/// What the helper sends back to the caller.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct HelperResult {
    pub status: i32,
    pub tier: Tier,
    pub namespaces: Vec<String>,
    pub info: Option<CommandInfo>,
    pub timed_out: bool,
    pub error: Option<WireError>,
    pub blocked: Vec<Blocked>,
    pub processes: ProcessLimit,
}

/// The byte that lets the command's process go on to `execve`.
pub(crate) const GO: u8 = b'G';

/// Helper argument: the spec will ask for an isolated network (a new network namespace).
pub(crate) const NET_ISOLATE: &str = "net:isolate";
/// Helper argument: the spec will ask for the host's network.
pub(crate) const NET_SHARE: &str = "net:share";

pub(super) fn send_result(fd: OwnedFd, result: &HelperResult) {
    let mut f = std::fs::File::from(fd);
    if let Ok(bytes) = serde_json::to_vec(result) {
        let _ = f.write_all(&bytes);
    }
}

/// The longest spec the helper accepts (a spec is a few kilobytes).
const MAX_SPEC: u64 = 16 << 20;

/// Read the length-framed spec, leaving whatever follows (the go byte) in the pipe.
/// `Ok(None)`: the pipe closed before a spec began.
pub(super) fn read_spec(spec: &mut std::fs::File) -> Result<Option<Vec<u8>>, SandboxError> {
    let mut len = [0u8; 8];
    let mut got = 0;
    while got < len.len() {
        match spec.read(&mut len[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err(SandboxError::setup("the sandbox spec was cut short")),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(SandboxError::io("cannot read the sandbox spec", e)),
        }
    }
    let len = u64::from_le_bytes(len);
    if len > MAX_SPEC {
        return Err(SandboxError::setup("the sandbox spec is too large"));
    }
    let mut raw = vec![0u8; len as usize];
    spec.read_exact(&mut raw)
        .map_err(|e| SandboxError::io("cannot read the sandbox spec", e))?;
    Ok(Some(raw))
}

/// Wait for cordon's go byte on the spec pipe (inherited by every process of the
/// helper). Anything else (the pipe closed: cordon could not record the run, or
/// exited) means the command must not run.
pub(super) fn wait_for_go(go: RawFd) -> Result<(), SandboxError> {
    let mut byte = [0u8; 1];
    loop {
        #[allow(unsafe_code)]
        // SAFETY: `go` is the spec pipe's read end, open for the life of this process
        // (owned by the helper's `run`, inherited across fork); borrowing it for one read.
        let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(go) };
        match nix::unistd::read(fd, &mut byte) {
            Ok(1) if byte[0] == GO => return Ok(()),
            Err(Errno::EINTR) => {}
            _ => {
                return Err(SandboxError::setup(
                    "cordon did not confirm the start (it could not record the run, or exited); the command did not run",
                ));
            }
        }
    }
}

pub(super) fn write_info(fd: RawFd, line: &InfoLine) {
    if let Ok(mut s) = serde_json::to_string(line) {
        s.push('\n');
        #[allow(unsafe_code)]
        // SAFETY: `fd` is the write end of the info pipe, open for the life of this
        // process; it is borrowed for one write.
        let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        let _ = nix::unistd::write(fd, s.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_lines_round_trip() {
        let lines = [
            InfoLine::Error(WireError {
                kind: "not-found".into(),
                message: "command not found: x".into(),
            }),
            InfoLine::TimedOut,
            InfoLine::Enforced(CommandInfo::default()),
        ];
        for l in lines {
            let s = serde_json::to_string(&l).unwrap();
            let back: InfoLine = serde_json::from_str(&s).unwrap();
            assert_eq!(format!("{l:?}"), format!("{back:?}"));
        }
    }

    #[test]
    fn wire_errors_keep_their_kind() {
        for kind in [
            SandboxErrorKind::ProtectedSymlink,
            SandboxErrorKind::TierUnavailable,
            SandboxErrorKind::NotFound,
            SandboxErrorKind::Invalid,
            SandboxErrorKind::Setup,
        ] {
            let e = SandboxError::new(kind, "x");
            assert_eq!(WireError::from_error(&e).into_error().kind, kind);
        }
    }
}
