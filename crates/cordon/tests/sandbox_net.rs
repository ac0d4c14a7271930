#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! The sandbox's sockets, tested with real processes: the loopback of the full tier's
//! network namespace works for the command and reaches nothing of the host's; host Unix
//! sockets are reachable only where `--allow-unix-socket` binds them in; `/var/tmp` is
//! private like `/tmp`; the fallback tier reaches only cordon's own proxy, through a
//! forwarder on a port it chose.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code

mod common;

use common::{World, bin, text};
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;

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

/// Serve HTTP on the sandbox's own loopback, then reach it with curl, Python's urllib and
/// git, which all read the proxy variables; each prints a marker when it got the page.
const LOCAL_SERVER_SH: &str = r#"
python3 -m http.server 8765 --bind 127.0.0.1 >/dev/null 2>&1 &
for _ in $(seq 50); do curl -s -o /dev/null http://127.0.0.1:8765/ --noproxy '*' && break; sleep 0.1; done
echo served > page.txt
curl -sf http://127.0.0.1:8765/page.txt && echo CURL-OK
curl -sf http://localhost:8765/page.txt && echo CURL-NAME-OK
python3 -c 'import urllib.request; print(urllib.request.urlopen("http://127.0.0.1:8765/page.txt").read().decode().strip(), "URLLIB-OK")'
python3 -c 'import urllib.request; print(urllib.request.urlopen("http://localhost:8765/page.txt").read().decode().strip(), "URLLIB-NAME-OK")'
git ls-remote http://127.0.0.1:8765/no-repo 2>&1 | grep -q 'not found\|not valid\|404\|repository' && echo GIT-REACHED
git ls-remote http://127.0.0.1:8765/no-repo 2>&1 | grep -q '403' && echo GIT-PROXY-403
kill %1
"#;

#[test]
fn loopback_servers_stay_direct_when_the_proxy_is_on() {
    need_sandbox!("loopback_servers_stay_direct_when_the_proxy_is_on");
    let w = World::new();
    std::fs::write(w.ws.join("local.sh"), LOCAL_SERVER_SH).unwrap();
    // Without an allowlist there is no proxy; with one, every client gets the proxy
    // variables and must still reach its own loopback directly.
    for extra in [&[][..], &["--allow-net", "example.com"][..]] {
        let o = w.run("exec sh local.sh", extra);
        let (out, err) = text(&o);
        for marker in [
            "CURL-OK",
            "CURL-NAME-OK",
            "URLLIB-OK",
            "URLLIB-NAME-OK",
            "GIT-REACHED",
        ] {
            assert!(out.contains(marker), "{extra:?}: no {marker}\n{out}\n{err}");
        }
        assert!(!out.contains("GIT-PROXY-403"), "{extra:?}: {out}\n{err}");
    }
}

/// Put a second cordon (`cordon-inner`), its config (`inner.toml`, allowing `./inner.sh`)
/// and the script it runs (`inner.sh`) into the workspace, which the sandbox always shows
/// (the target directory may be under /tmp, which it hides).
fn nested_cordon(w: &World, script: &str) {
    std::fs::write(
        w.ws.join("inner.toml"),
        common::ALLOW_ALL.replace("./t.sh", "./inner.sh"),
    )
    .unwrap();
    std::fs::write(w.ws.join("inner.sh"), script).unwrap();
    std::fs::set_permissions(
        w.ws.join("inner.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::fs::copy(bin(), w.ws.join("cordon-inner")).unwrap();
}

#[test]
fn the_fallback_tier_keeps_ip_sockets_refused() {
    need_sandbox!("the_fallback_tier_keeps_ip_sockets_refused");
    let w = World::new();
    // Inside the sandbox, seccomp refuses new user namespaces: a nested cordon falls
    // back to Landlock and seccomp, with no network namespace of its own.
    // It accepts that tier (`--require any`). Its state goes to the sandbox's private
    // /tmp: HOME, like every hidden directory, is read-only, and the fallback tier
    // refuses a state directory inside its writable root.
    nested_cordon(
        &w,
        "#!/bin/sh\nexec python3 -c 'import socket; socket.socket(); print(\"INNER-SOCKET\")'\n",
    );
    let o = w.run(
        "export CORDON_STATE_DIR=/tmp/inner-state; ./cordon-inner exec --isolated --config inner.toml --workspace . --require any -- ./inner.sh; echo \"rc=$?\"",
        &[],
    );
    let (out, err) = text(&o);
    assert!(err.contains("fallback tier"), "{out}\n{err}");
    assert!(!out.contains("INNER-SOCKET"), "{out}\n{err}");
    assert!(err.contains("PermissionError"), "{out}\n{err}");
}

/// A host service on a Unix socket: answers `pong` to every connection, counts them.
fn unix_service(path: &Path) -> std::sync::Arc<std::sync::atomic::AtomicUsize> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = UnixListener::bind(path).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o777)).unwrap();
    let count = std::sync::Arc::new(AtomicUsize::new(0));
    let c = count.clone();
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten() {
            c.fetch_add(1, Ordering::SeqCst);
            let _ = s.write_all(b"pong");
        }
    });
    count
}

/// Connect to the Unix socket ARGV[1], print what it answers; then a socket pair, and a
/// socket of the sandbox's own under /tmp.
const UNIX_PY: &str = r#"
import os, socket, sys
try:
    c = socket.socket(socket.AF_UNIX); c.connect(sys.argv[1]); print("HOST", c.recv(4).decode())
except OSError as err:
    print("HOST-FAILED", type(err).__name__)
a, b = socket.socketpair(); a.sendall(b"pair"); print("PAIR", b.recv(4).decode())
os.makedirs("/tmp/own", exist_ok=True)
s = socket.socket(socket.AF_UNIX); s.bind("/tmp/own/s.sock"); s.listen(1)
c = socket.socket(socket.AF_UNIX); c.connect("/tmp/own/s.sock"); x, _ = s.accept()
c.sendall(b"own"); print("OWN", x.recv(3).decode())
try:
    os.unlink(sys.argv[1]); print("UNLINKED")
except OSError as err:
    print("UNLINK-FAILED", type(err).__name__)
"#;

#[test]
fn a_host_unix_socket_is_reachable_only_when_allowed() {
    need_sandbox!("a_host_unix_socket_is_reachable_only_when_allowed");
    let w = World::new();
    // Beside the workspace under the host's /tmp, a directory the sandbox hides: a
    // stand-in for a service's socket directory.
    let dir = w.root.join("svc");
    std::fs::create_dir(&dir).unwrap();
    let sock = dir.join("svc.sock");
    let count = unix_service(&sock);
    let mut host = UnixStream::connect(&sock).unwrap();
    let mut answer = String::new();
    host.read_to_string(&mut answer).unwrap();
    assert_eq!(answer, "pong");
    write_py(&w, "unix.py", UNIX_PY);
    let body = format!("exec python3 unix.py {}", sock.display());

    let o = w.run(&body, &[]);
    let (out, err) = text(&o);
    assert!(out.contains("HOST-FAILED"), "{out}\n{err}");
    assert!(
        out.contains("PAIR pair") && out.contains("OWN own"),
        "{out}\n{err}"
    );
    assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 1);

    let o = w.run(&body, &["--allow-unix-socket", sock.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(out.contains("HOST pong"), "{out}\n{err}");
    assert!(
        out.contains("PAIR pair") && out.contains("OWN own"),
        "{out}\n{err}"
    );
    // Bound read-only: connecting works, removing or replacing it does not.
    assert!(out.contains("UNLINK-FAILED"), "{out}\n{err}");
    assert!(sock.exists());
    assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 2);
}

#[test]
fn allow_unix_socket_refuses_what_is_not_a_socket() {
    let w = World::new();
    let file = w.root.join("plain.txt");
    std::fs::write(&file, "x").unwrap();
    for path in [file.clone(), w.root.join("missing.sock")] {
        let o = w.run("echo RAN", &["--allow-unix-socket", path.to_str().unwrap()]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(125), "{out}\n{err}");
        assert!(!out.contains("RAN"), "{out}");
        assert!(err.contains(path.to_str().unwrap()), "{err}");
    }
    let o = w.run("echo RAN", &["--allow-unix-socket", file.to_str().unwrap()]);
    assert!(
        text(&o).1.contains("is not a Unix socket"),
        "{}",
        text(&o).1
    );
}

#[test]
fn var_tmp_is_private_like_tmp() {
    need_sandbox!("var_tmp_is_private_like_tmp");
    let w = World::new();
    let host = tempfile::Builder::new()
        .prefix("cordon-vartmp-")
        .tempdir_in("/var/tmp")
        .unwrap();
    std::fs::write(host.path().join("host-file"), "HOST-CONTENT").unwrap();
    let sock = host.path().join("svc.sock");
    let _count = unix_service(&sock);
    let o = w.run(
        &format!(
            r#"ls -A /var/tmp | wc -l
cat {}/host-file 2>/dev/null
echo mine > /var/tmp/mine && cat /var/tmp/mine
find /tmp /var/tmp /run /var/run /home /root -type s 2>/dev/null | wc -l"#,
            host.path().display()
        ),
        &[],
    );
    let (out, err) = text(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines, ["0", "mine", "0"], "{out}\n{err}");
    assert!(!Path::new("/var/tmp/mine").exists());
}

/// A TCP service on `127.0.0.1:port` (0: any) that answers every connection with an
/// HTTP response saying `body`, and counts connections.
fn tcp_service(
    port: u16,
    body: &'static str,
) -> Option<(u16, std::sync::Arc<std::sync::atomic::AtomicUsize>)> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = std::net::TcpListener::bind(("127.0.0.1", port)).ok()?;
    let port = listener.local_addr().unwrap().port();
    let count = std::sync::Arc::new(AtomicUsize::new(0));
    let c = count.clone();
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten() {
            c.fetch_add(1, Ordering::SeqCst);
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    Some((port, count))
}

/// Run by the fallback-tier cordon: what the proxy variables name, a request through
/// them to the upstream and to the other listener, then direct connections (the other
/// listener, 3128, the forwarder's port at other addresses, the forwarder), a UDP
/// socket, a TCP listener, and a Unix socket pair through a listener of its own.
const FALLBACK_INNER_SH: &str = r#"read UP OTHER < ports.txt
echo "proxy=[$HTTPS_PROXY]"
curl -s --max-time 10 "http://127.0.0.1:$UP/"
echo "via-proxy-other=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$OTHER/")"
exec python3 - "$OTHER" "${HTTPS_PROXY##*:}" "$UP" <<'PY'
import os, socket, sys
other, fwd, up = int(sys.argv[1]), int(sys.argv[2] or 0), int(sys.argv[3])
for name, host, port in (("OTHER", "127.0.0.1", other), ("PORT-3128", "127.0.0.1", 3128),
                         ("FWD-PORT-ELSEWHERE", "127.0.0.2", fwd), ("FWD-PORT-V6", "::1", fwd),
                         ("FWD", "127.0.0.1", fwd)):
    try:
        socket.create_connection((host, port), timeout=3); print(name, "CONNECTED")
    except OSError as err:
        print(name, "FAILED", type(err).__name__)
try:
    s6 = socket.socket(socket.AF_INET6); s6.settimeout(5); s6.connect(("::ffff:127.0.0.1", fwd))
    s6.sendall(b"GET http://127.0.0.1:%d/ HTTP/1.0\r\nHost: 127.0.0.1:%d\r\n\r\n" % (up, up))
    got = b""
    while True:
        chunk = s6.recv(4096)
        if not chunk: break
        got += chunk
    print("V6-MAPPED", b"UPSTREAM-OK" in got)
except OSError as err:
    print("V6-MAPPED FAILED", type(err).__name__)
try:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM); print("UDP-SOCKET")
except OSError as err:
    print("UDP-FAILED", type(err).__name__)
try:
    s = socket.socket(); s.listen(1); print("TCP-LISTENING", s.getsockname())
except OSError as err:
    print("LISTEN-FAILED", type(err).__name__)
if os.path.exists("unix.sock"): os.unlink("unix.sock")
u = socket.socket(socket.AF_UNIX); u.bind("unix.sock"); u.listen(1)
c = socket.socket(socket.AF_UNIX); c.connect("unix.sock"); a, _ = u.accept()
c.sendall(b"unix"); print("UNIX", a.recv(4).decode())
PY"#;

#[test]
fn the_fallback_tier_reaches_only_cordons_own_proxy() {
    if !common::landlock_tcp_or_skip("the_fallback_tier_reaches_only_cordons_own_proxy") {
        return;
    }
    use std::sync::atomic::Ordering;
    let w = World::new();
    let (up, _) = tcp_service(0, "UPSTREAM-OK\n").unwrap();
    let (other, other_count) = tcp_service(0, "OTHER\n").unwrap();
    // A proxy's usual port: this host may already have a service there.
    let at_3128 = tcp_service(3128, "PORT-3128\n");
    std::fs::write(w.ws.join("ports.txt"), format!("{up} {other}\n")).unwrap();
    w.script(FALLBACK_INNER_SH);
    let allow = format!("127.0.0.1:{up}");
    let run = |extra: &[&str]| {
        let accepted: Vec<&str> = ["--require", "any"].iter().chain(extra).copied().collect();
        let o = common::without_user_namespaces(&w.root, &w.command(&accepted))
            .output()
            .unwrap();
        let (out, err) = text(&o);
        assert!(err.contains("fallback tier"), "{out}\n{err}");
        (o.status.code(), out, err)
    };

    let (code, out, err) = run(&["--allow-net", &allow, "--allow-private", "127.0.0.0/8"]);
    // The proxy works for the allowlisted upstream, through a port of cordon's choosing.
    assert!(out.contains("UPSTREAM-OK"), "{out}\n{err}");
    assert!(out.contains("proxy=[http://127.0.0.1:"), "{out}");
    assert!(!out.contains("proxy=[http://127.0.0.1:3128]"), "{out}");
    // Through the proxy, a destination off the allowlist is refused.
    assert!(out.contains("via-proxy-other=403"), "{out}\n{err}");
    // Directly, no other port: not another listener, not 3128, not the forwarder's port
    // at another address; and no UDP at all.
    for refused in ["OTHER", "PORT-3128", "FWD-PORT-ELSEWHERE", "FWD-PORT-V6"] {
        assert!(
            out.contains(&format!("{refused} FAILED PermissionError")),
            "{refused}: {out}\n{err}"
        );
    }
    assert!(out.contains("FWD CONNECTED"), "{out}\n{err}");
    // An IPv6 socket to the forwarder's IPv4 address (as Java's clients connect) is
    // served too.
    assert!(out.contains("V6-MAPPED True"), "{out}\n{err}");
    assert!(out.contains("UDP-FAILED PermissionError"), "{out}\n{err}");
    // Nor a TCP listener (which `listen` would bind to a port of every address); Unix
    // sockets work as they do elsewhere.
    assert!(
        out.contains("LISTEN-FAILED PermissionError"),
        "{out}\n{err}"
    );
    assert!(out.contains("UNIX unix"), "{out}\n{err}");
    assert_eq!(code, Some(0), "{out}\n{err}");

    // Without an allowlist, no network: no proxy, no IP socket.
    let (code, out, err) = run(&[]);
    assert!(out.contains("proxy=[]"), "{out}\n{err}");
    assert!(!out.contains("UPSTREAM-OK"), "{out}\n{err}");
    assert!(out.contains("OTHER FAILED PermissionError"), "{out}\n{err}");
    assert!(out.contains("UDP-FAILED PermissionError"), "{out}\n{err}");
    assert_eq!(code, Some(0), "{out}\n{err}");

    assert_eq!(
        other_count.load(Ordering::SeqCst),
        0,
        "the other listener was reached"
    );
    if let Some((_, n)) = at_3128 {
        assert_eq!(
            n.load(Ordering::SeqCst),
            0,
            "the listener on 3128 was reached"
        );
    }
}

#[test]
fn a_fallback_tier_under_another_supervisor_refuses_the_proxy() {
    need_sandbox!("a_fallback_tier_under_another_supervisor_refuses_the_proxy");
    let w = World::new();
    // Nested in cordon's own sandbox, whose seccomp supervisor watches every process
    // inside, a second cordon falls back and cannot watch `connect` itself: it refuses
    // to run with a proxy rather than leave TCP narrowed by port only.
    nested_cordon(&w, "#!/bin/sh\necho INNER-RAN\n");
    let o = w.run(
        r#"export CORDON_STATE_DIR=/tmp/inner-state
./cordon-inner exec --isolated --config inner.toml --workspace . --require any --allow-net 127.0.0.1:9 --allow-private 127.0.0.0/8 -- ./inner.sh; echo "rc=$?""#,
        &[],
    );
    let (out, err) = text(&o);
    assert!(err.contains("fallback tier"), "{out}\n{err}");
    assert!(
        out.contains("rc=125") && !out.contains("INNER-RAN"),
        "{out}\n{err}"
    );
    assert!(
        err.contains("cannot check the command's connections to the egress proxy"),
        "{err}"
    );
}
