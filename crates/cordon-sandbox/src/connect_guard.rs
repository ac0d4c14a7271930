//! The fallback tier's check of the command's TCP with a proxy: the one network
//! destination is the forwarder on `127.0.0.1:PORT` of the host's loopback.
//!
//! Without a network namespace, Landlock's TCP rules could only name the forwarder's
//! port, at any address: any host listening on that port would be reachable. So in this
//! mode Landlock lets the command itself connect to no TCP port at all, and bind none;
//! its `connect` and `listen` calls are seccomp user notifications (in the observing
//! filter, `observe.rs`), answered here by its supervisor:
//! - `connect` to `127.0.0.1:PORT` (or its IPv4-mapped IPv6 form), read from the
//!   command's memory: the supervisor, which Landlock does not restrict, connects the
//!   command's own socket (a duplicate of its descriptor, `pidfd_getfd`) to the address
//!   it read and checked, and answers with the result. The kernel never reads the
//!   address from the command's memory again, so another thread of the command cannot
//!   change it between the check and the connection;
//! - `connect` to another IP address: refused with `EACCES` and recorded;
//! - any other `connect` (a Unix socket, `AF_UNSPEC`): the kernel decides (`CONTINUE`).
//!   Should another thread swap in an IP address or an IP socket meanwhile, the
//!   kernel's own check is Landlock's, which allows no TCP connection;
//! - `listen`: on an IP socket refused (an unbound TCP socket would be bound to a port
//!   of every address by `listen`, which Landlock's bind rule does not see), on any
//!   other done by the supervisor on the command's socket and answered with the result.
//!
//! What it must never do: answer `CONTINUE` to a `listen`, or connect anything but the
//! forwarder's address for the command.

use crate::observe::{NotifResponse, SeccompNotif, notif_id_valid};
use crate::report::{Blocked, BlockedKind};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

/// What to answer a `connect`, and what to record.
pub(crate) struct ConnectAnswer {
    /// The answer to the notification.
    pub resp: NotifResponse,
    /// A refused destination, for the denial report.
    pub record: Option<Blocked>,
}

/// The destination of a `connect`, from its raw `sockaddr`.
#[derive(Debug, PartialEq, Eq)]
enum Dest {
    /// `AF_UNIX` or `AF_UNSPEC` (a disconnect): not a network destination.
    Local,
    Ip(SocketAddr),
    /// Another family, or an address too short for its family.
    Other(i32),
}

fn parse(raw: &[u8]) -> Dest {
    let family = match raw.get(..2) {
        Some(b) => i32::from(u16::from_ne_bytes([b[0], b[1]])),
        None => return Dest::Other(-1),
    };
    let port = |b: &[u8]| u16::from_be_bytes([b[2], b[3]]);
    match family {
        libc::AF_UNIX | libc::AF_UNSPEC => Dest::Local,
        libc::AF_INET if raw.len() >= 8 => {
            let ip = Ipv4Addr::new(raw[4], raw[5], raw[6], raw[7]);
            Dest::Ip(SocketAddr::V4(SocketAddrV4::new(ip, port(raw))))
        }
        libc::AF_INET6 if raw.len() >= 24 => {
            let mut octets = [0u8; 16];
            octets.copy_from_slice(&raw[8..24]);
            let ip = std::net::Ipv6Addr::from(octets);
            Dest::Ip(SocketAddr::V6(SocketAddrV6::new(ip, port(raw), 0, 0)))
        }
        f => Dest::Other(f),
    }
}

/// Whether `dest` is the forwarder at `127.0.0.1:port`.
fn is_forwarder(dest: SocketAddr, port: u16) -> bool {
    let ip = match dest {
        SocketAddr::V4(a) => Some(*a.ip()),
        SocketAddr::V6(a) => a.ip().to_ipv4_mapped(),
    };
    dest.port() == port && ip == Some(Ipv4Addr::LOCALHOST)
}

/// Read `len` bytes at `addr` of `pid`'s memory.
fn read_mem(pid: u32, addr: u64, len: usize) -> Option<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    // The kernel's view of the process's memory, never a FIFO.
    #[allow(clippy::disallowed_methods)]
    let mem = std::fs::File::open(format!("/proc/{pid}/mem")).ok()?;
    let mut buf = vec![0u8; len];
    mem.read_exact_at(&mut buf, addr).ok()?;
    Some(buf)
}

/// A system call's `int` argument: the kernel reads the low 32 bits of the register.
fn int_arg(v: u64) -> i32 {
    v as u32 as i32
}

/// A duplicate of descriptor `fd` of process `pid`.
#[allow(unsafe_code)]
fn steal_fd(pid: u32, fd: RawFd) -> Result<OwnedFd, i32> {
    let errno = || {
        std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO)
    };
    // SAFETY: pidfd_open takes a pid and flags and touches no memory of ours.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    if pidfd < 0 {
        return Err(errno());
    }
    // SAFETY: the kernel just returned this descriptor; nothing else owns it.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd as RawFd) };
    use std::os::fd::AsRawFd;
    // SAFETY: pidfd_getfd takes descriptors and flags and touches no memory of ours.
    let got = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) };
    if got < 0 {
        return Err(errno());
    }
    // SAFETY: as above, a new descriptor of ours.
    Ok(unsafe { OwnedFd::from_raw_fd(got as RawFd) })
}

/// Connect `sock` (the command's socket) to `dest`; 0 or an errno.
fn connect_as_command(sock: &OwnedFd, dest: SocketAddr) -> i32 {
    use nix::sys::socket::{SockaddrIn, SockaddrIn6, connect};
    use std::os::fd::AsRawFd;
    let r = match dest {
        SocketAddr::V4(a) => connect(sock.as_raw_fd(), &SockaddrIn::from(a)),
        SocketAddr::V6(a) => connect(sock.as_raw_fd(), &SockaddrIn6::from(a)),
    };
    match r {
        Ok(()) => 0,
        Err(e) => e as i32,
    }
}

/// Judge one `connect` or `listen` notification from the listener `listener`, for the
/// forwarder on `port`.
pub(crate) fn judge(listener: RawFd, req: &SeccompNotif, port: u16) -> ConnectAnswer {
    if i64::from(req.data.nr) == libc::SYS_listen {
        return judge_listen(listener, req);
    }
    judge_connect(listener, req, port)
}

/// `listen(fd, backlog)`: refused on an IP socket, else done here.
fn judge_listen(listener: RawFd, req: &SeccompNotif) -> ConnectAnswer {
    use nix::sys::socket::{AddressFamily, SockaddrLike, SockaddrStorage, getsockname};
    use std::os::fd::AsRawFd;
    let refuse = |errno: i32| ConnectAnswer {
        resp: NotifResponse::error(req.id, errno),
        record: None,
    };
    let [fd, backlog, ..] = req.data.args;
    let sock = match steal_fd(req.pid, int_arg(fd)) {
        Ok(s) => s,
        Err(errno) => return refuse(errno),
    };
    if !notif_id_valid(listener, req.id) {
        return refuse(libc::EINTR);
    }
    let family = getsockname::<SockaddrStorage>(sock.as_raw_fd())
        .ok()
        .and_then(|a| a.family());
    match family {
        Some(AddressFamily::Inet | AddressFamily::Inet6) => ConnectAnswer {
            resp: NotifResponse::error(req.id, libc::EACCES),
            record: Some(Blocked {
                kind: BlockedKind::Connect,
                target: "listen on a TCP port".into(),
                detail: "listening for TCP connections refused: without a network namespace (fallback tier) the command may only connect to cordon's proxy forwarder".into(),
            }),
        },
        None => refuse(libc::ENOTSOCK),
        Some(_) => {
            let backlog = int_arg(backlog);
            // SAFETY: listen takes a descriptor of ours and an integer.
            #[allow(unsafe_code)]
            let rc = unsafe { libc::listen(sock.as_raw_fd(), backlog) };
            if rc == 0 {
                ConnectAnswer {
                    resp: NotifResponse::value(req.id, 0),
                    record: None,
                }
            } else {
                refuse(
                    std::io::Error::last_os_error()
                        .raw_os_error()
                        .unwrap_or(libc::EIO),
                )
            }
        }
    }
}

/// `connect(fd, addr, len)`: see the module's list.
fn judge_connect(listener: RawFd, req: &SeccompNotif, port: u16) -> ConnectAnswer {
    let refuse = |errno: i32, record: Option<Blocked>| ConnectAnswer {
        resp: NotifResponse::error(req.id, errno),
        record,
    };
    let [fd, addr, len, ..] = req.data.args;
    // `socklen_t`, an unsigned 32-bit value to the kernel.
    let len = (len as u32 as usize).min(128);
    let Some(raw) = read_mem(req.pid, addr, len) else {
        return refuse(libc::EFAULT, None);
    };
    if !notif_id_valid(listener, req.id) {
        return refuse(libc::EINTR, None);
    }
    match parse(&raw) {
        Dest::Local => ConnectAnswer {
            resp: NotifResponse::proceed(req.id),
            record: None,
        },
        Dest::Ip(dest) if is_forwarder(dest, port) => {
            let sock = match steal_fd(req.pid, int_arg(fd)) {
                Ok(s) => s,
                Err(errno) => return refuse(errno, None),
            };
            // The descriptor is the one of the process that still waits on this call.
            if !notif_id_valid(listener, req.id) {
                return refuse(libc::EINTR, None);
            }
            match connect_as_command(&sock, dest) {
                0 => ConnectAnswer {
                    resp: NotifResponse::value(req.id, 0),
                    record: None,
                },
                errno => refuse(errno, None),
            }
        }
        Dest::Ip(dest) => refuse(
            libc::EACCES,
            Some(Blocked {
                kind: BlockedKind::Connect,
                target: dest.to_string(),
                detail: format!(
                    "connect to {dest} refused: without a network namespace (fallback tier) the command may reach only cordon's proxy forwarder at 127.0.0.1:{port}"
                ),
            }),
        ),
        Dest::Other(family) => refuse(
            libc::EACCES,
            Some(Blocked {
                kind: BlockedKind::Connect,
                target: format!("address family {family}"),
                detail: "connect with an address family other than Unix, IPv4 and IPv6 refused (fallback tier)".into(),
            }),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(ip: [u8; 4], port: u16) -> Vec<u8> {
        let mut raw = (libc::AF_INET as u16).to_ne_bytes().to_vec();
        raw.extend(port.to_be_bytes());
        raw.extend(ip);
        raw.extend([0u8; 8]);
        raw
    }

    #[test]
    fn only_the_forwarder_is_an_allowed_destination() {
        let lo = parse(&v4([127, 0, 0, 1], 4000));
        assert_eq!(lo, Dest::Ip("127.0.0.1:4000".parse().unwrap()));
        let Dest::Ip(a) = lo else { unreachable!() };
        assert!(is_forwarder(a, 4000));
        assert!(!is_forwarder(a, 4001));
        for other in [[127, 0, 0, 2], [10, 0, 0, 1], [0, 0, 0, 0]] {
            let Dest::Ip(a) = parse(&v4(other, 4000)) else {
                panic!("not parsed")
            };
            assert!(!is_forwarder(a, 4000), "{a}");
        }
        let mapped: SocketAddr = "[::ffff:127.0.0.1]:4000".parse().unwrap();
        assert!(is_forwarder(mapped, 4000));
        let v6lo: SocketAddr = "[::1]:4000".parse().unwrap();
        assert!(!is_forwarder(v6lo, 4000));
        assert_eq!(parse(&(libc::AF_UNIX as u16).to_ne_bytes()), Dest::Local);
        assert_eq!(
            parse(&v4([127, 0, 0, 1], 1)[..6]),
            Dest::Other(libc::AF_INET)
        );
        assert_eq!(parse(&[]), Dest::Other(-1));
    }
}
