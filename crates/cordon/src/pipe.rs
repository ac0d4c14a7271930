//! A closed pipe on stdout ends the command quietly, the way it ends `ls` or
//! `cat`: killed by `SIGPIPE` (141 in a shell), nothing on stderr.
//!
//! The Rust runtime ignores `SIGPIPE`, so a write to a closed pipe fails with `EPIPE`:
//! `println!` panics ("failed printing to stdout") and `writeln!(…)?` returns an error.
//! The disposition is not restored for the whole process, because the servers (`serve`,
//! `ui`, the egress proxy, the MCP gateway) write to sockets and pipes whose peer may go
//! away, and must see that as an error rather than die. Instead the two ways a printing
//! command meets a closed stdout end here: the panic hook recognises the print macros'
//! panic, and the exit path recognises a broken-pipe error while stdout itself is a
//! broken pipe. Children are unaffected: the standard library restores the default
//! disposition in every child it spawns, and the sandbox helper does so itself.

use std::io::ErrorKind;

/// Install the panic hook that turns a failed print to a closed stdout into death by
/// `SIGPIPE`; every other panic is reported as before. A failed print to stderr is left
/// alone: the servers log to stderr from worker threads, and a harness that closed their
/// stderr must not end them.
pub fn install() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if is_print_to_closed_pipe(payload) {
            die_of_sigpipe();
        }
        previous(info);
    }));
}

/// The print macros' panic on a closed stdout: "failed printing to stdout: Broken pipe …".
fn is_print_to_closed_pipe(message: &str) -> bool {
    message.starts_with("failed printing to stdout") && message.contains("Broken pipe")
}

/// Is `err` (a command's failure) a write to stdout after its reader went away? Only a
/// broken-pipe error while stdout is itself a pipe with no reader: the same error from a
/// socket to a server that went away is reported as an error.
pub fn is_closed_stdout(err: &anyhow::Error) -> bool {
    let broken = err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == ErrorKind::BrokenPipe)
    });
    broken && stdout_has_no_reader()
}

/// `poll` reports `POLLERR` on the write end of a pipe whose read end is closed.
#[allow(unsafe_code)]
fn stdout_has_no_reader() -> bool {
    let mut fd = libc::pollfd {
        fd: libc::STDOUT_FILENO,
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: `fd` is a valid, initialised pollfd and the count is 1; a zero timeout
    // makes the call return at once.
    let n = unsafe { libc::poll(&raw mut fd, 1, 0) };
    n == 1 && fd.revents & libc::POLLERR != 0
}

/// End the process by `SIGPIPE` with its default action, as a C program would have been
/// ended by the write itself; exits with 141 should the signal somehow not end it.
#[allow(unsafe_code)]
pub fn die_of_sigpipe() -> ! {
    // SAFETY: installing SIG_DFL runs no handler code; unblocking and raising a signal
    // whose action is to terminate ends the process, and nothing here touches memory
    // other than the local signal set.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut set);
        libc::sigaddset(&raw mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &raw const set, std::ptr::null_mut());
        libc::raise(libc::SIGPIPE);
    }
    std::process::exit(141)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_print_macros_closed_pipe_panic_is_recognised() {
        assert!(is_print_to_closed_pipe(
            "failed printing to stdout: Broken pipe (os error 32)"
        ));
        assert!(!is_print_to_closed_pipe(
            "failed printing to stderr: Broken pipe (os error 32)"
        ));
        assert!(!is_print_to_closed_pipe(
            "failed printing to stdout: No space left on device (os error 28)"
        ));
        assert!(!is_print_to_closed_pipe("Broken pipe"));
    }
}
