//! Allowed traffic: tunnels, plain HTTP forwarding and the Unix socket listener.

use super::*;

// ---------------------------------------------------------------- allowed traffic

#[tokio::test]
async fn connect_tunnel_carries_large_payload_both_ways() {
    let up = echo_server("127.0.0.1", 0).await;
    let port = up.addr.port();
    let proxy = start(
        policy(&[&format!("up.test:{port}")], &[], &[LOOPBACK]),
        resolver(&[("up.test", "127.0.0.1")]),
    );
    let (resp, s) = connect(proxy.tcp_addr().unwrap(), &format!("up.test:{port}")).await;
    assert_eq!(resp.status, 200, "{resp:?}");
    assert!(resp.body.is_empty());
    let data = random_bytes(8 * 1024 * 1024);
    let got = roundtrip(s, &data).await;
    assert!(got == data, "payload corrupted in the tunnel");
    let ev = events(&proxy, 1).await;
    let e = &ev[0];
    assert_eq!(e.protocol, Protocol::Connect);
    assert_eq!(e.decision, Decision::Allow);
    assert_eq!(e.code, NetCode::Allow);
    assert_eq!(e.host, "up.test");
    assert_eq!(e.port, port);
    assert_eq!(e.address, Some(up.addr));
    assert_eq!(e.bytes_up, data.len() as u64);
    assert_eq!(e.bytes_down, data.len() as u64);
    let json = e.to_json();
    assert!(json.contains("\"decision\":\"allow\""), "{json}");
    assert!(json.contains("\"bytes_up\":8388608"), "{json}");
}

#[tokio::test]
async fn bytes_sent_with_the_connect_head_reach_the_upstream_first() {
    let up = echo_server("127.0.0.1", 0).await;
    let port = up.addr.port();
    let proxy = start(
        policy(&[&format!("up.test:{port}")], &[], &[LOOPBACK]),
        resolver(&[("up.test", "127.0.0.1")]),
    );
    let mut s = TcpStream::connect(proxy.tcp_addr().unwrap()).await.unwrap();
    s.write_all(format!("CONNECT up.test:{port} HTTP/1.1\r\n\r\nhello").as_bytes())
        .await
        .unwrap();
    let resp = read_response(&mut s, true).await;
    assert_eq!(resp.status, 200);
    let mut got = resp.body;
    while got.len() < 5 {
        let mut buf = [0u8; 16];
        let n = s.read(&mut buf).await.unwrap();
        assert!(n > 0);
        got.extend_from_slice(&buf[..n]);
    }
    assert_eq!(got, b"hello");
    drop(s);
    let ev = events(&proxy, 1).await;
    assert_eq!((ev[0].bytes_up, ev[0].bytes_down), (5, 5));
}

#[tokio::test]
async fn a_connect_head_sent_in_pieces_takes_the_general_path_and_works() {
    let up = echo_server("127.0.0.1", 0).await;
    let port = up.addr.port();
    let proxy = start(
        policy(&[&format!("up.test:{port}")], &["up.test:1"], &[LOOPBACK]),
        resolver(&[("up.test", "127.0.0.1")]),
    );
    let p = proxy.tcp_addr().unwrap();
    for (target, want) in [
        (format!("up.test:{port}"), 200),
        ("up.test:1".to_owned(), 403),
    ] {
        let mut s = TcpStream::connect(p).await.unwrap();
        s.write_all(format!("CONNECT {target} HTTP/1.1\r\n").as_bytes())
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        s.write_all(b"Host: x\r\n\r\nearly").await.unwrap();
        let resp = read_response(&mut s, true).await;
        assert_eq!(resp.status, want, "{target}");
        if want == 200 {
            // Bytes sent right behind the head reach the upstream first.
            let mut got = [0u8; 5];
            s.read_exact(&mut got).await.unwrap();
            assert_eq!(&got, b"early");
            let data = random_bytes(1024 * 1024);
            assert!(roundtrip(s, &data).await == data);
        } else {
            assert_eq!(resp.block(), Some("denied-host"));
        }
    }
}

#[tokio::test]
async fn plain_http_is_forwarded_with_headers_cleaned() {
    let up = http_server("127.0.0.1", 0, "up").await;
    let port = up.addr.port();
    let proxy = start(
        policy(&[&format!("up.test:{port}")], &[], &[LOOPBACK]),
        resolver(&[("up.test", "127.0.0.1")]),
    );
    let p = proxy.tcp_addr().unwrap();
    let resp = get(p, &format!("http://up.test:{port}/hello")).await;
    assert_eq!(resp.status, 200);
    assert_eq!(resp.text(), "hello from up");
    // Hop-by-hop and Proxy-* headers of the upstream do not reach the client.
    assert!(
        !resp.headers.contains_key("keep-alive"),
        "{:?}",
        resp.headers
    );
    assert!(
        !resp.headers.contains_key("proxy-agent"),
        "{:?}",
        resp.headers
    );

    let req = format!(
        "GET http://up.test:{port}/headers HTTP/1.1\r\nHost: internal.example\r\n\
         Proxy-Authorization: Basic c2VjcmV0\r\nProxy-Connection: keep-alive\r\n\
         Connection: close, X-Hop\r\nX-Hop: 1\r\nX-Keep: yes\r\n\r\n"
    );
    let resp = raw(p, req.as_bytes()).await;
    assert_eq!(resp.status, 200);
    let seen = resp.text();
    assert!(seen.contains(&format!("host: up.test:{port}\n")), "{seen}");
    assert!(seen.contains("x-keep: yes\n"), "{seen}");
    assert!(!seen.contains("proxy-"), "{seen}");
    assert!(!seen.contains("x-hop"), "{seen}");
    assert!(!seen.contains("internal.example"), "{seen}");

    let body = random_bytes(3 * 1024 * 1024);
    let mut req = format!(
        "POST http://up.test:{port}/echo HTTP/1.1\r\nHost: up.test\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    req.extend_from_slice(&body);
    let resp = raw(p, &req).await;
    assert_eq!(resp.status, 200);
    assert!(resp.body == body, "body corrupted through the proxy");
    let ev = events(&proxy, 3).await;
    let post = ev
        .iter()
        .find(|e| e.method.as_deref() == Some("POST"))
        .unwrap();
    assert_eq!(post.decision, Decision::Allow);
    assert_eq!(post.status, Some(200));
    assert_eq!(post.bytes_up, body.len() as u64);
    assert_eq!(post.bytes_down, body.len() as u64);
    assert_eq!(post.address, Some(up.addr));
}

#[tokio::test]
async fn unix_socket_listener_serves_the_same_proxy() {
    let up = echo_server("127.0.0.1", 0).await;
    let port = up.addr.port();
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("egress.sock");
    let config = ProxyConfig::new(policy(&[&format!("up.test:{port}")], &[], &[LOOPBACK]))
        .with_resolver(resolver(&[("up.test", "127.0.0.1")]));
    let proxy = EgressProxy::start_unix(config, &sock).unwrap();
    assert_eq!(proxy.local_addr(), &ListenAddr::Unix(sock.clone()));
    let mut s = tokio::net::UnixStream::connect(&sock).await.unwrap();
    s.write_all(format!("CONNECT up.test:{port} HTTP/1.1\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let resp = read_response(&mut s, true).await;
    assert_eq!(resp.status, 200);
    let data = random_bytes(1024 * 1024);
    assert!(roundtrip(s, &data).await == data);
    // A second proxy cannot take over an existing path.
    let config = ProxyConfig::new(policy(&["x.test"], &[], &[]));
    assert!(EgressProxy::start_unix(config, &sock).is_err());
    proxy.shutdown();
    assert!(!sock.exists(), "the socket is removed on shutdown");
}
