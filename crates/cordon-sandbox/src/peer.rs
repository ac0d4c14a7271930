//! Whether the process at the other end of a Unix socket is outside every sandbox.
//!
//! A sandboxed command runs as the very user a service on the host trusts, so checking
//! the peer's uid (`SO_PEERCRED`) lets it in wherever the socket's path is visible to
//! it. Every full-tier sandbox has a user namespace of its own, so a service that must
//! never answer a sandbox (cordon's decision service: it records and answers approvals)
//! serves only peers in its own user namespace.
//!
//! The peer is named by a pidfd taken from the connection itself (`SO_PEERPIDFD`, Linux
//! 6.5): it refers to the process that connected and to no other, even once that
//! process is gone and its pid reused. Its user namespace is read through `/proc`, and
//! the pidfd is checked still to name a live process with that pid afterwards, so the
//! read was of the peer. Where the kernel has no `SO_PEERPIDFD`, the pid `SO_PEERCRED`
//! gives is opened instead (a peer that exited before that, its pid taken by another
//! process, could then be mistaken for that process).

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;

/// Whether the peer of the connected Unix socket `sock` lives in this process's user
/// namespace (is not inside a sandbox). An error means the peer could not be told.
pub fn peer_shares_user_namespace(sock: BorrowedFd<'_>) -> io::Result<bool> {
    let pidfd = peer_pidfd(sock)?;
    let Some(pid) = pidfd_pid(&pidfd)? else {
        // Gone, or in a PID namespace this process cannot see: a sandbox's.
        return Ok(false);
    };
    let mine = std::fs::metadata("/proc/self/ns/user")?;
    let theirs = match std::fs::metadata(format!("/proc/{pid}/ns/user")) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    // Still the same live process: the namespace read above was the peer's.
    if pidfd_pid(&pidfd)? != Some(pid) {
        return Ok(false);
    }
    Ok(mine.dev() == theirs.dev() && mine.ino() == theirs.ino())
}

/// A pidfd for the peer of `sock`.
#[allow(unsafe_code)]
fn peer_pidfd(sock: BorrowedFd<'_>) -> io::Result<OwnedFd> {
    let mut fd: libc::c_int = -1;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `sock` is a valid open descriptor for the duration of the call; `fd` and
    // `len` are live locals of the size and type SO_PEERPIDFD writes (one int), and the
    // kernel writes at most `len` bytes.
    let rc = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            SO_PEERPIDFD,
            (&raw mut fd).cast(),
            &raw mut len,
        )
    };
    if rc == 0 && fd >= 0 {
        // SAFETY: the kernel just returned `fd` as a new descriptor this process owns
        // and nothing else holds.
        return Ok(unsafe { OwnedFd::from_raw_fd(fd) });
    }
    let err = io::Error::last_os_error();
    match err.raw_os_error() {
        // An older kernel: open the pid the credentials name.
        Some(libc::ENOPROTOOPT | libc::EINVAL) => {
            let cred =
                nix::sys::socket::getsockopt(&sock, nix::sys::socket::sockopt::PeerCredentials)
                    .map_err(io::Error::from)?;
            let pid = rustix::process::Pid::from_raw(cred.pid())
                .ok_or_else(|| io::Error::other("the peer's credentials name no process"))?;
            Ok(rustix::process::pidfd_open(
                pid,
                rustix::process::PidfdFlags::empty(),
            )?)
        }
        _ => Err(err),
    }
}

/// `SO_PEERPIDFD` (Linux 6.5; the same number on every architecture cordon builds for).
const SO_PEERPIDFD: libc::c_int = 77;

/// The pid the pidfd names in this process's PID namespace (`None`: the process has
/// exited, or is not visible from here).
#[allow(clippy::disallowed_methods)] // the kernel's files under /proc or /sys: no FIFO there, and small
fn pidfd_pid(pidfd: &OwnedFd) -> io::Result<Option<i64>> {
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", pidfd.as_raw_fd()))?;
    let pid = info
        .lines()
        .find_map(|l| l.strip_prefix("Pid:"))
        .and_then(|v| v.trim().parse::<i64>().ok())
        .ok_or_else(|| io::Error::other("the pidfd's information names no pid"))?;
    Ok((pid > 0).then_some(pid))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn a_peer_in_this_process_shares_its_user_namespace() {
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        assert!(peer_shares_user_namespace(a.as_fd()).unwrap());
    }
}
