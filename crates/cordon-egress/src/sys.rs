//! The few syscalls tokio does not offer: a non-blocking pipe and splice(2) for the
//! zero-copy relay, a zero-timeout poll, and TCP_DEFER_ACCEPT. The only unsafe code of
//! the proxy.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Most bytes moved per splice call (as much as the pipe has room for).
pub(crate) const CHUNK: usize = 1 << 20;

const PIPE_SIZE: libc::c_int = 1 << 20;

/// A burst at least this large marks a bulk transfer: the pipe is kept and enlarged.
pub(crate) const BULK: usize = 64 * 1024;

pub(crate) const EINVAL: i32 = libc::EINVAL;

/// A pipe used as the in-kernel buffer between two sockets. Both ends close on drop.
pub(crate) struct Pipe {
    read: OwnedFd,
    write: OwnedFd,
    grown: std::cell::Cell<bool>,
}

impl Pipe {
    #[allow(unsafe_code)]
    pub(crate) fn new() -> io::Result<Pipe> {
        let mut fds: [libc::c_int; 2] = [-1, -1];
        // SAFETY: `fds` is a writable array of two ints, as pipe2 requires; it writes two
        // descriptors there on success and nothing on failure.
        let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: on success both descriptors are fresh and owned by no one else; each is
        // wrapped exactly once.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        Ok(Pipe {
            read,
            write,
            grown: std::cell::Cell::new(false),
        })
    }

    /// Enlarge the pipe for a bulk transfer: more bytes per call, fewer wake-ups. Pages
    /// are only allocated while data is in flight. A refusal (a lower pipe-max-size)
    /// keeps the default size.
    #[allow(unsafe_code)]
    pub(crate) fn grow(&self) {
        if self.grown.replace(true) {
            return;
        }
        // SAFETY: fcntl on a descriptor this pipe owns, with an integer argument.
        let _ = unsafe { libc::fcntl(self.write.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_SIZE) };
    }

    pub(crate) fn read_fd(&self) -> RawFd {
        self.read.as_raw_fd()
    }

    pub(crate) fn write_fd(&self) -> RawFd {
        self.write.as_raw_fd()
    }
}

/// Move up to `len` bytes from `from` to `to` without blocking (one side must be a pipe).
#[allow(unsafe_code)]
pub(crate) fn splice(from: RawFd, to: RawFd, len: usize) -> io::Result<usize> {
    // SAFETY: splice receives two descriptors borrowed from owners that outlive the call and
    // null offsets (required for pipes and sockets); no memory is shared with the kernel.
    let n = unsafe {
        libc::splice(
            from,
            std::ptr::null_mut(),
            to,
            std::ptr::null_mut(),
            len,
            libc::SPLICE_F_MOVE | libc::SPLICE_F_NONBLOCK,
        )
    };
    usize::try_from(n).map_err(|_| io::Error::last_os_error())
}

/// Whether `fd` is writable right now (a zero-timeout poll).
#[allow(unsafe_code)]
pub(crate) fn writable_now(fd: RawFd) -> bool {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: one valid pollfd on the stack, count 1, timeout 0: poll only writes
    // `revents` of that struct.
    let n = unsafe { libc::poll(&mut pfd, 1, 0) };
    n == 1 && pfd.revents & libc::POLLOUT != 0 && pfd.revents & (libc::POLLERR | libc::POLLHUP) == 0
}

/// Ask the kernel to hand over accepted TCP connections only once the client has sent
/// something (or after `secs`): a silent client then costs no task, and the first read
/// of an accepted one does not wait. Best effort.
#[allow(unsafe_code)]
pub(crate) fn defer_accept(fd: RawFd, secs: libc::c_int) {
    // SAFETY: setsockopt with a pointer to an int that lives across the call and its
    // exact size.
    let _ = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_DEFER_ACCEPT,
            (&secs as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
}
