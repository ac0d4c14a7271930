//! A computation run in a forked child, so that its crash is an answer the parent gives
//! rather than an exit status a caller may read as "go ahead".
//!
//! A harness reads a hook's exit status: 0 and 2 are answers, anything else (an abort on
//! allocation failure, 134; a stack overflow, SIGSEGV; the OOM killer, SIGKILL) lets the
//! call proceed in some harnesses. A panic hook covers panics only. Run in a child, every
//! way the judgement can die becomes `Err` here, and the parent answers "blocked".

use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use nix::sys::wait::{WaitStatus, waitpid};
use nix::unistd::ForkResult;

/// How the child failed to hand back its output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChildEnded {
    /// Killed by this signal (an abort, a segmentation fault, SIGKILL).
    Signal(i32),
    /// Exited with a status other than 0.
    Status(i32),
    /// Wrote more than the limit.
    TooLong,
    /// Had not answered when the deadline passed, and was killed.
    TimedOut(Duration),
    /// The process has threads, so it cannot fork soundly; or fork, pipe or wait failed.
    Unavailable(String),
}

impl std::fmt::Display for ChildEnded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Signal(s) => write!(f, "was killed by signal {s}"),
            Self::Status(s) => write!(f, "exited with status {s}"),
            Self::TooLong => f.write_str("wrote more than its answer may hold"),
            Self::TimedOut(d) => write!(f, "had not answered after {} ms", d.as_millis()),
            Self::Unavailable(why) => write!(f, "could not be started ({why})"),
        }
    }
}

impl std::error::Error for ChildEnded {}

/// Run `f` in a forked child and return the bytes it produced, at most `limit`, within
/// `deadline`: a child still running then is killed (`TimedOut`), so a computation that
/// hangs is an answer too. The calling process must be single-threaded (checked: a process
/// with threads gets `Unavailable`, and the caller decides whether to run `f` itself).
pub fn in_child(
    limit: usize,
    deadline: Duration,
    f: impl FnOnce() -> Vec<u8>,
) -> Result<Vec<u8>, ChildEnded> {
    let until = Instant::now() + deadline;
    let unavailable =
        |what: &str, e: &dyn std::fmt::Display| ChildEnded::Unavailable(format!("{what}: {e}"));
    let threads = std::fs::read_dir("/proc/self/task")
        .map_err(|e| unavailable("cannot count this process's threads", &e))?
        .count();
    if threads != 1 {
        return Err(ChildEnded::Unavailable(format!(
            "the process has {threads} threads"
        )));
    }
    let (read_end, write_end) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
        .map_err(|e| unavailable("cannot make a pipe", &e))?;
    match fork_single_threaded().map_err(|e| unavailable("cannot fork", &e))? {
        ForkResult::Child => {
            drop(read_end);
            let out = f();
            let mut w = std::fs::File::from(write_end);
            let status = if w.write_all(&out).is_ok() { 0 } else { 1 };
            drop(w);
            std::process::exit(status);
        }
        ForkResult::Parent { child } => {
            drop(write_end);
            let out = read_bounded(read_end, limit, until, deadline);
            if matches!(out, Err(ChildEnded::TimedOut(_) | ChildEnded::TooLong)) {
                let _ = nix::sys::signal::kill(child, nix::sys::signal::Signal::SIGKILL);
            }
            let status = loop {
                match waitpid(child, None) {
                    Err(nix::errno::Errno::EINTR) => continue,
                    other => break other,
                }
            };
            let status = status.map_err(|e| unavailable("cannot wait for the child", &e))?;
            let out = out?;
            match status {
                WaitStatus::Exited(_, 0) => Ok(out),
                WaitStatus::Exited(_, code) => Err(ChildEnded::Status(code)),
                WaitStatus::Signaled(_, sig, _) => Err(ChildEnded::Signal(sig as i32)),
                other => Err(ChildEnded::Unavailable(format!(
                    "the child stopped unexpectedly ({other:?})"
                ))),
            }
        }
    }
}

/// The child's answer: what it writes until it closes the pipe, at most `limit` bytes,
/// by `until` (`deadline` from the start).
fn read_bounded(
    fd: OwnedFd,
    limit: usize,
    until: Instant,
    deadline: Duration,
) -> Result<Vec<u8>, ChildEnded> {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::os::fd::AsFd;
    let file = std::fs::File::from(fd);
    let mut out = Vec::new();
    let mut buf = [0u8; 64 * 1024];
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ChildEnded::TimedOut(deadline));
        }
        let wait = PollTimeout::try_from(left).unwrap_or(PollTimeout::MAX);
        match poll(&mut [PollFd::new(file.as_fd(), PollFlags::POLLIN)], wait) {
            Ok(0) => return Err(ChildEnded::TimedOut(deadline)),
            Ok(_) | Err(nix::errno::Errno::EINTR) => {}
            Err(e) => {
                return Err(ChildEnded::Unavailable(format!(
                    "cannot wait for the child's answer: {e}"
                )));
            }
        }
        match (&file).read(&mut buf) {
            Ok(0) => return Ok(out),
            Ok(n) => {
                out.extend_from_slice(&buf[..n]);
                if out.len() > limit {
                    return Err(ChildEnded::TooLong);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                return Err(ChildEnded::Unavailable(format!(
                    "cannot read the child's answer: {e}"
                )));
            }
        }
    }
}

/// `fork` in a process just checked to have one thread.
#[allow(unsafe_code)]
fn fork_single_threaded() -> nix::Result<ForkResult> {
    // SAFETY: `in_child` counted the process's threads right before (one: this one), so
    // the child cannot inherit a lock another thread holds; the child runs only the
    // caller's closure and exits.
    unsafe { nix::unistd::fork() }
}
