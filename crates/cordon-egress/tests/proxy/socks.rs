//! The SOCKS5 listener under the same policy.

use super::*;

// ---------------------------------------------------------------- SOCKS5

async fn socks_connect(proxy: std::net::SocketAddr, addr: &[u8], port: u16) -> (u8, TcpStream) {
    socks_cmd(proxy, 0x01, addr, port).await
}

async fn socks_cmd(
    proxy: std::net::SocketAddr,
    cmd: u8,
    addr: &[u8],
    port: u16,
) -> (u8, TcpStream) {
    let mut s = TcpStream::connect(proxy).await.unwrap();
    s.write_all(&[0x05, 0x01, 0x00]).await.unwrap();
    let mut choice = [0u8; 2];
    s.read_exact(&mut choice).await.unwrap();
    assert_eq!(choice, [0x05, 0x00]);
    let mut req = vec![0x05, cmd, 0x00];
    req.extend_from_slice(addr);
    req.extend_from_slice(&port.to_be_bytes());
    s.write_all(&req).await.unwrap();
    let mut head = [0u8; 4];
    s.read_exact(&mut head).await.unwrap();
    let rest = match head[3] {
        0x01 => 6,
        0x04 => 18,
        other => panic!("unexpected address type {other}"),
    };
    let mut skip = vec![0u8; rest];
    s.read_exact(&mut skip).await.unwrap();
    (head[1], s)
}

fn domain(name: &str) -> Vec<u8> {
    let mut v = vec![0x03, name.len() as u8];
    v.extend_from_slice(name.as_bytes());
    v
}

#[tokio::test]
async fn socks5_applies_the_same_policy() {
    let up = echo_server("127.0.0.1", 0).await;
    let port = up.addr.port();
    let proxy = start(
        policy(&[&format!("up.test:{port}")], &[], &["127.0.0.1/32"]),
        StaticResolver::new()
            .with("up.test", &["127.0.0.1".parse().unwrap()])
            .with("other.test", &["127.0.0.1".parse().unwrap()]),
    );
    let p = proxy.tcp_addr().unwrap();
    let (rep, s) = socks_connect(p, &domain("up.test"), port).await;
    assert_eq!(rep, 0x00);
    let data = random_bytes(2 * 1024 * 1024);
    assert!(roundtrip(s, &data).await == data);

    for (addr, want) in [
        (domain("other.test"), 0x02),
        (domain("up.test.evil.test"), 0x02),
        (domain("up@test"), 0x02),
        (domain("up.test\0.x"), 0x02),
        (vec![0x01, 127, 0, 0, 2], 0x02),
        (vec![0x01, 169, 254, 169, 254], 0x02),
    ] {
        let (rep, _s) = socks_connect(p, &addr, port).await;
        assert_eq!(rep, want, "{addr:?}");
    }
    let (rep, _s) = socks_cmd(p, 0x02, &domain("up.test"), port).await;
    assert_eq!(rep, 0x07, "BIND is not supported");
    let (rep, _s) = socks_cmd(p, 0x03, &domain("up.test"), port).await;
    assert_eq!(rep, 0x07, "UDP ASSOCIATE is not supported");

    let ev = events(&proxy, 9).await;
    let allowed: Vec<_> = ev
        .iter()
        .filter(|e| e.decision == Decision::Allow)
        .collect();
    assert_eq!(allowed.len(), 1);
    assert_eq!(allowed[0].protocol, Protocol::Socks5);
    assert_eq!(allowed[0].bytes_up, data.len() as u64);
    let codes: Vec<&str> = ev.iter().map(|e| e.code.as_str()).collect();
    for code in [
        "not-allowed",
        "userinfo",
        "control-bytes",
        "loopback",
        "metadata",
        "socks-command",
    ] {
        assert!(codes.contains(&code), "{code} missing from {codes:?}");
    }
}

#[tokio::test]
async fn socks5_without_no_auth_is_refused() {
    let proxy = start(policy(&["up.test"], &[], &[]), StaticResolver::new());
    let mut s = TcpStream::connect(proxy.tcp_addr().unwrap()).await.unwrap();
    s.write_all(&[0x05, 0x01, 0x02]).await.unwrap();
    let mut choice = [0u8; 2];
    s.read_exact(&mut choice).await.unwrap();
    assert_eq!(choice, [0x05, 0xff]);
}
