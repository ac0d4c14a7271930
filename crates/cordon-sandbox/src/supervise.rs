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

/// Where the deadline's signal handler finds what to write and how to exit: a message
/// leaked for the life of the process, set before the handler is installed.
static DEADLINE_MESSAGE: std::sync::atomic::AtomicPtr<u8> =
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());
static DEADLINE_MESSAGE_LEN: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);
static DEADLINE_STATUS: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(1);

/// A deadline set by [`exit_at_deadline`]; [`Deadline::cancel`] lifts it.
#[must_use = "the process ends at the deadline unless it is cancelled"]
pub struct Deadline(());

impl Deadline {
    /// Lifts the deadline: the process goes on past it.
    pub fn cancel(self) {
        set_timer(Duration::ZERO);
    }
}

/// Ends this process at `deadline` from now, however busy it is, by writing `message` to
/// standard error and exiting with `status`: for a computation that must answer in time
/// but cannot be run in a child ([`in_child`] unavailable). A signal (`SIGALRM`) does it,
/// so a thread stuck in a loop cannot hold it back; only `write` and `_exit` run then.
pub fn exit_at_deadline(deadline: Duration, status: u8, message: &str) -> Result<Deadline, String> {
    use std::sync::atomic::Ordering::Release;
    let leaked: &'static mut [u8] = Box::leak(message.as_bytes().to_vec().into_boxed_slice());
    DEADLINE_MESSAGE_LEN.store(leaked.len(), Release);
    DEADLINE_MESSAGE.store(leaked.as_mut_ptr(), Release);
    DEADLINE_STATUS.store(i32::from(status), Release);
    install_deadline_handler()
        .map_err(|e| format!("cannot install the deadline's signal handler: {e}"))?;
    // A zero deadline would disarm the timer: the least is a microsecond.
    if !set_timer(deadline.max(Duration::from_micros(1))) {
        return Err(format!(
            "cannot set the deadline's timer: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(Deadline(()))
}

/// The handler: the message, then `_exit` with the status.
#[allow(unsafe_code)]
extern "C" fn on_deadline(_: libc::c_int) {
    use std::sync::atomic::Ordering::Acquire;
    let ptr = DEADLINE_MESSAGE.load(Acquire);
    let len = DEADLINE_MESSAGE_LEN.load(Acquire);
    // SAFETY: `write` and `_exit` are async-signal-safe; `ptr` and `len` describe a slice
    // leaked (never freed) before the handler was installed, or are null and 0.
    unsafe {
        if !ptr.is_null() {
            libc::write(libc::STDERR_FILENO, ptr.cast(), len);
        }
        libc::_exit(DEADLINE_STATUS.load(Acquire));
    }
}

/// `sigaction(SIGALRM, on_deadline)`.
#[allow(unsafe_code)]
fn install_deadline_handler() -> nix::Result<()> {
    use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};
    let action = SigAction::new(
        SigHandler::Handler(on_deadline),
        SaFlags::empty(),
        SigSet::empty(),
    );
    // SAFETY: the handler calls only async-signal-safe functions (`write`, `_exit`) and
    // reads atomics.
    unsafe { sigaction(Signal::SIGALRM, &action) }.map(|_| ())
}

/// Arms the process's real-time timer for `after` (zero disarms it); whether it could.
#[allow(unsafe_code)]
fn set_timer(after: Duration) -> bool {
    let value = libc::timeval {
        tv_sec: libc::time_t::try_from(after.as_secs()).unwrap_or(libc::time_t::MAX),
        tv_usec: libc::suseconds_t::from(after.subsec_micros()),
    };
    let timer = libc::itimerval {
        it_interval: libc::timeval {
            tv_sec: 0,
            tv_usec: 0,
        },
        it_value: value,
    };
    // SAFETY: `timer` is a valid `itimerval`; the old value is not asked for (null).
    unsafe { libc::setitimer(libc::ITIMER_REAL, &timer, std::ptr::null_mut()) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Set in the environment of the test binary run again as the process under test.
    const CHILD: &str = "CORDON_TEST_DEADLINE_CHILD";

    /// The process under test: a deadline, then a computation that never ends (or, with
    /// `cancel`, the deadline lifted first and a normal exit after it would have fired).
    #[test]
    fn deadline_child() {
        let Ok(mode) = std::env::var(CHILD) else {
            return;
        };
        let deadline = exit_at_deadline(Duration::from_millis(200), 2, "blocked at the deadline\n")
            .expect("deadline set");
        if mode == "cancel" {
            deadline.cancel();
            std::thread::sleep(Duration::from_millis(600));
            std::process::exit(0);
        }
        loop {
            std::hint::spin_loop();
        }
    }

    fn run_child(mode: &str) -> std::process::Output {
        std::process::Command::new(std::env::current_exe().expect("test binary"))
            .args([
                "--exact",
                "supervise::tests::deadline_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, mode)
            .output()
            .expect("test binary runs")
    }

    /// A process that never answers still ends at its deadline, with the status and the
    /// message it was given (the hook's block), not killed by the signal.
    #[test]
    fn a_busy_process_ends_at_its_deadline_with_its_answer() {
        let out = run_child("spin");
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("blocked at the deadline"));
        let out = run_child("cancel");
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert!(!String::from_utf8_lossy(&out.stderr).contains("blocked at the deadline"));
    }
}
