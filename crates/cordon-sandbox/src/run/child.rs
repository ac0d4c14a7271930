//! Starting the helper's process: a `fork` of this process when it has one thread, else
//! `/proc/self/exe` executed again.
//!
//! Executing the binary again costs a whole start of a static binary: the kernel maps a
//! fresh image, glibc detects the CPU's features and caches (CPUID, which traps to the
//! hypervisor in a VM), the image relocates itself and faults its pages in. About one
//! millisecond of CPU per run, paid before the sandbox can be built. A `fork` of a
//! single-threaded process skips all of it, and is sound for the same reason the helper's
//! own forks are: no other thread can hold a lock the child inherits.
//!
//! What the fresh executable gave, the forked child gets here before it runs a line of
//! the helper:
//! - **No descriptor but the inherited ones**: every descriptor this process opened with
//!   `O_CLOEXEC` (which `execve` would have closed) is closed; the pipe ends passed to the
//!   helper, the standard streams and any descriptor opened without `O_CLOEXEC` stay, as
//!   they would across `execve`.
//! - **Nothing of the caller's in `/proc/PID/cmdline` or `environ`**: the bytes of the
//!   argument and environment strings are overwritten with zeros and the environment is
//!   emptied, so PID 1's `/proc/1/cmdline` inside the sandbox (which any process there may
//!   read) shows nothing of cordon's command line, and `environ` nothing at all, as after
//!   `execve` with an empty environment.
//! - **The signal mask emptied**, as `std::process::Command` does for its children.
//!
//! The rest of cordon's memory (its parsed arguments, nothing of the policy yet: the
//! helper is started first thing) stays in the child's address space. That is no wider
//! than what the executed helper holds anyway, the whole spec: the helper is not dumpable
//! before anything of the sandbox exists, so no process inside can read either.
//!
//! With more than one thread (a server, a test harness), `fork` could inherit a lock held
//! by another thread: the binary is executed again, as before.

use crate::error::SandboxError;
use nix::unistd::Pid;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, ExitStatus};

/// The helper's process, however it was started.
#[derive(Debug)]
pub(crate) struct HelperChild {
    pid: Pid,
    status: Option<ExitStatus>,
    /// The command's stdout, when the caller captures it.
    pub(crate) stdout: Option<File>,
    /// The command's stderr, when the caller captures it.
    pub(crate) stderr: Option<File>,
}

impl HelperChild {
    /// A helper started by `std::process::Command`.
    pub(crate) fn from_std(mut child: Child) -> HelperChild {
        HelperChild {
            pid: Pid::from_raw(child.id() as i32),
            status: None,
            stdout: child.stdout.take().map(|s| File::from(OwnedFd::from(s))),
            stderr: child.stderr.take().map(|s| File::from(OwnedFd::from(s))),
        }
    }

    /// The helper's process id.
    pub(crate) fn id(&self) -> u32 {
        self.pid.as_raw() as u32
    }

    /// `SIGKILL` the helper, unless it was already reaped (its id may be another's now).
    pub(crate) fn kill(&mut self) {
        if self.status.is_none() {
            let _ = nix::sys::signal::kill(self.pid, nix::sys::signal::Signal::SIGKILL);
        }
    }

    /// Wait for the helper to exit (once; later calls return the same status).
    pub(crate) fn wait(&mut self) -> io::Result<ExitStatus> {
        if let Some(s) = self.status {
            return Ok(s);
        }
        let mut raw: libc::c_int = 0;
        loop {
            #[allow(unsafe_code)]
            // SAFETY: waitpid writes one int through a pointer to a live local.
            let r = unsafe { libc::waitpid(self.pid.as_raw(), &mut raw, 0) };
            if r == self.pid.as_raw() {
                let s = ExitStatus::from_raw(raw);
                self.status = Some(s);
                return Ok(s);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

/// Does this process have exactly one thread? (Unknown counts as more.)
#[allow(clippy::disallowed_methods)] // the kernel's files under /proc or /sys: no FIFO there, and small
pub(crate) fn single_threaded() -> bool {
    #[allow(clippy::disallowed_methods)] // a kernel interface, read only
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .is_some_and(|n| n.trim() == "1")
}

/// Fork the helper: the child runs `helper` with the two pipe ends (made inheritable by
/// the caller) and exits with its code; with `capture`, its stdout and stderr are pipes
/// whose read ends the returned child holds. Only when [`single_threaded`] said so.
pub(crate) fn fork_helper(
    spec_r: &OwnedFd,
    res_w: &OwnedFd,
    capture: bool,
    helper: impl FnOnce(RawFd, RawFd) -> i32,
) -> Result<HelperChild, SandboxError> {
    let pipes = if capture {
        let p = || {
            nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
                .map_err(|e| SandboxError::sys("cannot create a pipe", e))
        };
        Some((p()?, p()?))
    } else {
        None
    };
    #[allow(unsafe_code)]
    // SAFETY: the caller checked that this process has a single thread, so no lock
    // (allocator, stdio) can be held by another thread in the child; the child runs the
    // helper, which is single-threaded, and never returns into the caller's code.
    let forked = unsafe { nix::unistd::fork() };
    match forked.map_err(|e| SandboxError::sys("cannot start the sandbox helper", e))? {
        nix::unistd::ForkResult::Child => {
            let code = match child_setup(pipes.as_ref().map(|(o, e)| (&o.1, &e.1))) {
                Ok(()) => helper(spec_r.as_raw_fd(), res_w.as_raw_fd()),
                Err(what) => {
                    eprintln!("cordon: cannot start the sandbox helper: {what}");
                    crate::helper::wire::EXIT_CORDON_FAILED
                }
            };
            #[allow(unsafe_code)]
            // SAFETY: `_exit` ends the process without running the caller's exit
            // handlers or destructors, which belong to the parent.
            unsafe {
                libc::_exit(code)
            }
        }
        nix::unistd::ForkResult::Parent { child } => {
            let (stdout, stderr) = match pipes {
                Some((o, e)) => (Some(File::from(o.0)), Some(File::from(e.0))),
                None => (None, None),
            };
            Ok(HelperChild {
                pid: child,
                status: None,
                stdout,
                stderr,
            })
        }
    }
}

/// In the forked child: what `execve` with an empty environment would have given.
fn child_setup(capture: Option<(&OwnedFd, &OwnedFd)>) -> Result<(), &'static str> {
    if let Some((out, err)) = capture {
        // `dup2` leaves the new descriptor without `O_CLOEXEC`.
        for (from, to, what) in [
            (out, 1, "cannot redirect stdout"),
            (err, 2, "cannot redirect stderr"),
        ] {
            #[allow(unsafe_code)]
            // SAFETY: dup2 onto a standard stream's number; both descriptors are open.
            if unsafe { libc::dup2(from.as_raw_fd(), to) } < 0 {
                return Err(what);
            }
        }
    }
    close_cloexec().ok_or("cannot list its descriptors")?;
    scrub_args_and_env().ok_or("cannot clear its arguments and environment")?;
    nix::sys::signal::sigprocmask(
        nix::sys::signal::SigmaskHow::SIG_SETMASK,
        Some(&nix::sys::signal::SigSet::empty()),
        None,
    )
    .map_err(|_| "cannot clear its signal mask")?;
    Ok(())
}

/// Close every descriptor marked close-on-exec, as `execve` would.
fn close_cloexec() -> Option<()> {
    let mut fds: Vec<RawFd> = Vec::new();
    {
        let dir = std::fs::read_dir("/proc/self/fd").ok()?;
        for entry in dir {
            let name = entry.ok()?.file_name();
            fds.push(name.to_str()?.parse().ok()?);
        }
    }
    // The listing's own descriptor is closed by now: F_GETFD fails on it and it is skipped.
    for fd in fds {
        #[allow(unsafe_code)]
        // SAFETY: F_GETFD reads the flags of a descriptor number; a closed one gives EBADF.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        if flags >= 0 && flags & libc::FD_CLOEXEC != 0 {
            #[allow(unsafe_code)]
            // SAFETY: the descriptor belongs to the parent's objects, which this child
            // never touches again (it runs the helper and `_exit`s).
            unsafe {
                libc::close(fd);
            }
        }
    }
    Some(())
}

/// Overwrite the argument and environment strings (the span `/proc/PID/cmdline` and
/// `environ` read) with zeros, and empty the environment.
#[allow(clippy::disallowed_methods)] // the kernel's files under /proc or /sys: no FIFO there, and small
fn scrub_args_and_env() -> Option<()> {
    #[allow(clippy::disallowed_methods)] // a kernel interface, read only
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name, which is in parentheses and may hold anything.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    // Fields 48–51 of proc(5) (arg_start, arg_end, env_start, env_end); `rest` starts at
    // field 3.
    let field = |n: usize| -> Option<usize> { fields.get(n - 3)?.trim().parse().ok() };
    let spans = [(field(48)?, field(49)?), (field(50)?, field(51)?)];
    #[allow(unsafe_code)]
    // SAFETY: nothing reads the environment concurrently (one thread); `clearenv`
    // only resets the `environ` pointer.
    unsafe {
        libc::clearenv();
    }
    for (start, end) in spans {
        if start == 0 || end <= start {
            continue;
        }
        #[allow(unsafe_code)]
        // SAFETY: the kernel reports these spans of this process's own stack, where it
        // placed the argument and environment strings at `execve`; they stay mapped and
        // writable for the life of the process, and nothing reads them from here on
        // (the environment was just emptied; the helper takes no arguments from argv).
        unsafe {
            std::ptr::write_bytes(start as *mut u8, 0, end - start);
        }
    }
    Some(())
}
