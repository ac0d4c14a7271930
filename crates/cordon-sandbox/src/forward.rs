//! The forwarder to the egress proxy: listens on a loopback TCP port and relays each
//! connection to the proxy's Unix socket. It decides nothing about destinations: the
//! proxy outside does. It runs in its own process (threads are fine here), never in the
//! command's.
//!
//! At the full tier it listens on `127.0.0.1:PORT` inside the sandbox's empty network
//! namespace, where only the sandbox can reach it. In the fallback tier there is no such
//! namespace: it listens on a port of the host's loopback that the kernel chose and that
//! it holds for the run ([`Peers::SameUser`]), and serves only connections whose socket
//! belongs to the user cordon runs as, so that another user of the host cannot borrow
//! the run's proxy (and the credentials it injects).
//!
//! In the fallback tier the command reaches the forwarder only through its supervisor,
//! which makes that one connection for it (`connect_guard.rs`); Landlock lets the
//! command itself connect and bind no TCP port, and seccomp allows no IP socket but TCP.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

/// Whose connections the forwarder serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Peers {
    /// Every connection: the listener is in the sandbox's own network namespace.
    Any,
    /// Connections from `127.0.0.1` whose socket is owned by this uid (looked up in
    /// `/proc/net/tcp`); others are closed at once.
    SameUser(u32),
}

fn pump(mut from: impl Read, mut to: impl Write) {
    let mut buf = [0u8; 16 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        }
    }
}

fn relay(tcp: TcpStream, socket: &Path) {
    // A relay passes each write on as it comes. With Nagle's algorithm on, a second small
    // write (a TLS record after the handshake) waited for the client's delayed ACK: 40 ms
    // before every response's first byte.
    let _ = tcp.set_nodelay(true);
    let Ok(unix) = UnixStream::connect(socket) else {
        // The proxy is gone: the client sees a reset, which is the truth.
        return;
    };
    let (Ok(tcp_r), Ok(unix_w)) = (tcp.try_clone(), unix.try_clone()) else {
        return;
    };
    let up = std::thread::spawn(move || {
        pump(tcp_r, &unix_w);
        let _ = unix_w.shutdown(Shutdown::Write);
    });
    pump(&unix, &tcp);
    let _ = tcp.shutdown(Shutdown::Write);
    let _ = up.join();
}

/// `/proc/net/tcp`'s spelling of an IPv4 socket address: the address as the
/// kernel's 32-bit word in this machine's byte order, then the port, both in hex.
fn proc_net_addr(a: SocketAddrV4) -> String {
    format!(
        "{:08X}:{:04X}",
        u32::from_ne_bytes(a.ip().octets()),
        a.port()
    )
}

/// `/proc/net/tcp6`'s spelling of an IPv4 socket address as an IPv6 socket sees it
/// (`::ffff:a.b.c.d`, a client that connected an IPv6 socket to an IPv4 address): the
/// address as four 32-bit words in this machine's byte order, then the port.
fn proc_net_addr6(a: SocketAddrV4) -> String {
    let octets = a.ip().to_ipv6_mapped().octets();
    let words: String = octets
        .chunks(4)
        .map(|w| format!("{:08X}", u32::from_ne_bytes([w[0], w[1], w[2], w[3]])))
        .collect();
    format!("{words}:{:04X}", a.port())
}

/// The uid owning the TCP socket bound at `local` and connected to `remote`, from the
/// text of `/proc/net/tcp` (`v6`: of `/proc/net/tcp6`).
fn socket_owner(table: &str, local: SocketAddrV4, remote: SocketAddrV4, v6: bool) -> Option<u32> {
    let spell = if v6 { proc_net_addr6 } else { proc_net_addr };
    let (local, remote) = (spell(local), spell(remote));
    table.lines().skip(1).find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        (f.get(1) == Some(&local.as_str()) && f.get(2) == Some(&remote.as_str()))
            .then(|| f.get(7)?.parse().ok())
            .flatten()
    })
}

/// Whether the connection from `peer` to `me` may be served.
#[allow(clippy::disallowed_methods)] // the kernel's files under /proc or /sys: no FIFO there, and small
fn admitted(peers: Peers, peer: SocketAddr, me: SocketAddr) -> bool {
    let Peers::SameUser(uid) = peers else {
        return true;
    };
    let (SocketAddr::V4(peer), SocketAddr::V4(me)) = (peer, me) else {
        return false;
    };
    if *peer.ip() != Ipv4Addr::LOCALHOST {
        return false;
    }
    let owner = |table: &str, v6: bool| {
        std::fs::read_to_string(table)
            .ok()
            .and_then(|t| socket_owner(&t, peer, me, v6))
    };
    owner("/proc/net/tcp", false).or_else(|| owner("/proc/net/tcp6", true)) == Some(uid)
}

/// Accept forever, one thread per admitted connection.
pub(crate) fn serve(listener: TcpListener, socket: PathBuf, peers: Peers) -> ! {
    let me = listener.local_addr().ok();
    loop {
        match listener.accept() {
            Ok((tcp, peer)) => {
                if !me.is_some_and(|me| admitted(peers, peer, me)) {
                    continue;
                }
                let socket = socket.clone();
                std::thread::spawn(move || relay(tcp, &socket));
            }
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(10)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owner_of_a_loopback_connection_is_found_in_proc_net_tcp() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let me = listener.local_addr().unwrap();
        let client = TcpStream::connect(me).unwrap();
        let (_served, peer) = listener.accept().unwrap();
        assert_eq!(peer, client.local_addr().unwrap());
        let uid = nix::unistd::getuid().as_raw();
        assert!(admitted(Peers::SameUser(uid), peer, me));
        assert!(!admitted(Peers::SameUser(uid.wrapping_add(1)), peer, me));
        // An IPv6 socket connected to the IPv4 address (as Java's clients do).
        let v6 = std::net::TcpStream::connect(SocketAddr::from((
            Ipv4Addr::LOCALHOST.to_ipv6_mapped(),
            me.port(),
        )))
        .unwrap();
        let (_served6, peer6) = listener.accept().unwrap();
        assert!(v6.local_addr().unwrap().is_ipv6());
        assert!(admitted(Peers::SameUser(uid), peer6, me));
        assert!(!admitted(Peers::SameUser(uid.wrapping_add(1)), peer6, me));
        let elsewhere: SocketAddr = "10.0.0.1:4000".parse().unwrap();
        assert!(!admitted(Peers::SameUser(uid), elsewhere, me));
        assert!(admitted(Peers::Any, elsewhere, me));
    }

    #[test]
    fn proc_net_tcp_lines_are_matched_on_both_ends() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: 0100007F:9C40 0100007F:0CEA 01 00000000:00000000 00:00000000 00000000  1000        0 1 1 0\n   1: 0100007F:0CEA 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 2 1 0\n";
        let a = |p| SocketAddrV4::new(Ipv4Addr::LOCALHOST, p);
        if cfg!(target_endian = "little") {
            assert_eq!(socket_owner(table, a(0x9C40), a(0x0CEA), false), Some(1000));
            assert_eq!(socket_owner(table, a(0x0CEA), a(0x9C40), false), Some(0));
            assert_eq!(socket_owner(table, a(0x9C40), a(1), false), None);
            assert_eq!(
                proc_net_addr6(a(0x0CEA)),
                "0000000000000000FFFF00000100007F:0CEA"
            );
        }
    }
}
