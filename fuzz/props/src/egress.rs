//! The egress proxy's front door: HTTP/1.1 request heads, CONNECT lines and SOCKS5
//! greetings, sent as raw bytes to a running proxy.
//!
//! The proxy allows only `allowed.test` (resolved to 127.0.0.1, which `allow_private`
//! lets through); nothing listens there, so an allowed connection fails fast. Properties:
//! no crash or hang of the proxy (each input gets its connection closed within 10 s, and the proxy keeps answering the next input); every event the proxy
//! reports as allowed names `allowed.test` (any other spelling of a host that reaches an
//! allow is a policy bypass) and, when it has an address, 127.0.0.1.

use cordon_egress::{
    Decision, EgressEvent, EgressHandle, EgressProxy, Limits, ProxyConfig, StaticResolver,
};
use cordon_policy::net::NetworkPolicy;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

static VIOLATIONS: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn on_event(e: &EgressEvent) {
    let local = IpAddr::V4(Ipv4Addr::LOCALHOST);
    if e.decision == Decision::Allow
        && (!e.host.eq_ignore_ascii_case("allowed.test")
            || e.address.is_some_and(|a| a.ip() != local))
        && let Ok(mut v) = VIOLATIONS.lock()
    {
        v.push(e.to_json());
    }
}

fn proxy() -> SocketAddr {
    static P: OnceLock<(EgressHandle, SocketAddr)> = OnceLock::new();
    P.get_or_init(|| {
        let policy =
            NetworkPolicy::from_lists(&["allowed.test"], &[] as &[&str], &["127.0.0.1/32"])
                .expect("the policy compiles");
        let limits = Limits {
            header_timeout: Duration::from_millis(500),
            connect_timeout: Duration::from_millis(500),
            idle_timeout: Duration::from_secs(2),
            worker_threads: 1,
            ..Limits::default()
        };
        let config = ProxyConfig::new(policy)
            .with_limits(limits)
            .with_resolver(
                StaticResolver::new().with("allowed.test", &[IpAddr::V4(Ipv4Addr::LOCALHOST)]),
            )
            .with_sink(on_event);
        let handle = EgressProxy::start_tcp(config, "127.0.0.1:0".parse().expect("an address"))
            .expect("the proxy starts");
        let addr = handle.tcp_addr().expect("a TCP proxy");
        (handle, addr)
    })
    .1
}

fn violations() {
    let v = std::mem::take(&mut *VIOLATIONS.lock().expect("the lock"));
    assert!(v.is_empty(), "the proxy allowed a host it must not: {v:#?}");
}

/// The property.
pub fn check(data: &[u8]) {
    let addr = proxy();
    violations();
    let mut s = TcpStream::connect(addr).expect("the proxy accepts");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("a timeout");
    s.set_write_timeout(Some(Duration::from_secs(10)))
        .expect("a timeout");
    let _ = s.write_all(data);
    let _ = s.shutdown(std::net::Shutdown::Write);
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                panic!(
                    "the proxy held a finished client for 10 s ({} bytes answered)",
                    out.len()
                )
            }
            Err(_) => break,
        }
        if out.len() > 1 << 20 {
            break;
        }
    }
    drop(s);
    // Events of this connection are emitted as it closes.
    std::thread::sleep(Duration::from_millis(2));
    violations();
}
