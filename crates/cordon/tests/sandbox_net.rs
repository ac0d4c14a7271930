//! The sandbox's sockets, tested with real processes: the loopback of the full tier's
//! network namespace works for the command and reaches nothing of the host's.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code

mod common;

use common::{World, bin, text};
use std::os::unix::fs::PermissionsExt;

/// A Python program that binds TCP and UDP on loopback, connects to itself and swaps
/// bytes; `SELF-OK` at the end means every exchange worked.
const LOOPBACK_PY: &str = r#"
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
c = socket.create_connection(s.getsockname()); a, _ = s.accept()
c.sendall(b"ping"); assert a.recv(4) == b"ping"; a.sendall(b"pong"); assert c.recv(4) == b"pong"
d = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); d.bind(("127.0.0.1", 0))
e = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); e.sendto(b"udp", d.getsockname())
assert d.recv(3) == b"udp"
try:
    v6 = socket.socket(socket.AF_INET6); v6.bind(("::1", 0)); v6.listen(1)
    c6 = socket.create_connection(v6.getsockname()[:2]); a6, _ = v6.accept()
    c6.sendall(b"v6"); assert a6.recv(2) == b"v6"; print("V6-OK")
except OSError as err:
    print("V6-UNAVAILABLE", err)
print("SELF-OK")
"#;

/// Connect to 127.0.0.1:PORT over TCP and send a datagram to 127.0.0.1:UPORT; prints
/// what happened to each.
const REACH_HOST_PY: &str = r#"
import socket, sys
port, uport = int(sys.argv[1]), int(sys.argv[2])
try:
    socket.create_connection(("127.0.0.1", port), timeout=3).sendall(b"escaped")
    print("TCP-CONNECTED")
except OSError as err:
    print("TCP-FAILED", type(err).__name__)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    u.sendto(b"escaped", ("127.0.0.1", uport))
    print("UDP-SENT")
except OSError as err:
    print("UDP-FAILED", type(err).__name__)
"#;

fn write_py(w: &World, name: &str, body: &str) {
    std::fs::write(w.ws.join(name), body).unwrap();
}

#[test]
fn loopback_works_inside_the_full_tier_without_flags() {
    need_sandbox!("loopback_works_inside_the_full_tier_without_flags");
    let w = World::new();
    write_py(&w, "lo.py", LOOPBACK_PY);
    let o = w.run("exec python3 lo.py", &[]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("SELF-OK"), "{out}\n{err}");
    // Nothing was blocked that the command needed, so nothing is reported.
    assert!(!err.contains("containment blocked"), "{err}");
}

#[test]
fn the_hosts_loopback_is_unreachable_from_inside() {
    need_sandbox!("the_hosts_loopback_is_unreachable_from_inside");
    let w = World::new();
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = tcp.local_addr().unwrap().port();
    tcp.set_nonblocking(true).unwrap();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let uport = udp.local_addr().unwrap().port();
    udp.set_nonblocking(true).unwrap();
    // Both are reachable from the host, so a failure inside is the sandbox's doing.
    drop(std::net::TcpStream::connect(("127.0.0.1", port)).unwrap());
    let (probe, _) = tcp.accept().unwrap();
    drop(probe);
    write_py(&w, "reach.py", REACH_HOST_PY);
    // No network, and the proxy mode, whose namespace also carries the forwarder.
    for extra in [&[][..], &["--allow-net", "example.com"][..]] {
        let o = w.run(&format!("exec python3 reach.py {port} {uport}"), extra);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{extra:?}: {out}\n{err}");
        assert!(
            out.contains("TCP-FAILED ConnectionRefusedError"),
            "{extra:?}: {out}\n{err}"
        );
        // The datagram leaves the socket, into a namespace where nobody listens.
        assert!(out.contains("UDP-SENT"), "{extra:?}: {out}\n{err}");
        assert!(
            matches!(tcp.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
            "{extra:?}: the host's listener was reached"
        );
        let mut buf = [0u8; 16];
        assert!(
            matches!(udp.recv(&mut buf), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
            "{extra:?}: the host's UDP socket got a datagram"
        );
    }
}

#[test]
fn the_fallback_tier_keeps_ip_sockets_refused() {
    need_sandbox!("the_fallback_tier_keeps_ip_sockets_refused");
    let w = World::new();
    // Inside the sandbox, seccomp refuses new user namespaces: a nested cordon falls
    // back to Landlock and seccomp, with no network namespace of its own.
    std::fs::write(
        w.ws.join("inner.toml"),
        common::ALLOW_ALL.replace("./t.sh", "./inner.sh"),
    )
    .unwrap();
    std::fs::write(
        w.ws.join("inner.sh"),
        "#!/bin/sh\nexec python3 -c 'import socket; socket.socket(); print(\"INNER-SOCKET\")'\n",
    )
    .unwrap();
    std::fs::set_permissions(
        w.ws.join("inner.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let o = w.run(
        &format!(
            "{} exec --isolated --config inner.toml --workspace . -- ./inner.sh; echo \"rc=$?\"",
            bin().display()
        ),
        &[],
    );
    let (out, err) = text(&o);
    assert!(err.contains("fallback tier"), "{out}\n{err}");
    assert!(!out.contains("INNER-SOCKET"), "{out}\n{err}");
    assert!(err.contains("PermissionError"), "{out}\n{err}");
}
