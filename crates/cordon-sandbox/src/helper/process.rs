//! The helper's processes themselves: forking one soundly, and telling whether the
//! process that reads a child's reports is still there.
//!
//! It must never start a thread: `fork` is sound only because every process of the
//! helper stays single-threaded until its last fork.

use crate::error::SandboxError;
use nix::unistd::ForkResult;

/// `fork`, sound here because every process of the helper is single-threaded.
#[allow(unsafe_code)]
pub(super) fn fork() -> Result<ForkResult, SandboxError> {
    // SAFETY: the helper never starts a thread before its last fork (the forwarder starts
    // threads only after its own fork, in its own process), so the child cannot inherit a
    // lock held by another thread.
    unsafe { nix::unistd::fork() }.map_err(|e| SandboxError::sys("cannot fork", e))
}

/// Does the pipe whose write end is `w` still have a reader?
pub(super) fn reader_alive(w: std::os::fd::BorrowedFd<'_>) -> bool {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let mut fds = [PollFd::new(w, PollFlags::POLLOUT)];
    match poll(&mut fds, PollTimeout::ZERO) {
        Ok(_) => !fds[0]
            .revents()
            .is_some_and(|r| r.intersects(PollFlags::POLLERR | PollFlags::POLLHUP)),
        Err(_) => false,
    }
}
