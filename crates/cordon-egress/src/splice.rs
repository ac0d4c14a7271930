//! The two syscalls of the zero-copy relay: a non-blocking pipe, and splice(2) between a
//! socket and that pipe. The only unsafe code of the proxy.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Bytes moved per splice call (the pipe holds 64 KiB by default; more is taken as room
/// allows).
pub(crate) const CHUNK: usize = 1 << 20;

pub(crate) const EINVAL: i32 = libc::EINVAL;

/// A pipe used as the in-kernel buffer between two sockets. Both ends close on drop.
pub(crate) struct Pipe {
    read: OwnedFd,
    write: OwnedFd,
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
        Ok(Pipe { read, write })
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
