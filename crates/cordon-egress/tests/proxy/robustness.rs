//! Robustness: malformed and oversize requests, timeouts, limits and shutdown.

use super::*;

// ---------------------------------------------------------------- robustness

#[tokio::test]
async fn malformed_requests_get_400_and_the_proxy_keeps_serving() {
    let up = http_server("127.0.0.1", 0, "up").await;
    let port = up.addr.port();
    let proxy = start(
        policy(&[&format!("up.test:{port}")], &[], &[LOOPBACK]),
        resolver(&[("up.test", "127.0.0.1")]),
    );
    let p = proxy.tcp_addr().unwrap();
    for garbage in [
        &b"GARBAGE\r\n\r\n"[..],
        b"GET\r\n\r\n",
        b"GET http://up.test/ HTTP/9.9\r\n\r\n",
        b"GET http://up.test/ HTTP/1.1\r\nBad Header\r\n\r\n",
        b"GET http://up.te\x00st/ HTTP/1.1\r\n\r\n",
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",
    ] {
        let resp = raw(p, garbage).await;
        assert_eq!(resp.status, 400, "{:?}", String::from_utf8_lossy(garbage));
    }
    let resp = raw(p, b"GET /hello HTTP/1.1\r\nHost: up.test\r\n\r\n").await;
    assert_eq!(
        (resp.status, resp.block()),
        (400, Some("not-proxy-request"))
    );
    let resp = raw(p, b"CONNECT /x HTTP/1.1\r\n\r\n").await;
    assert_eq!(resp.status, 400);
    // Still serving.
    let resp = get(p, &format!("http://up.test:{port}/hello")).await;
    assert_eq!(resp.text(), "hello from up");
    let ev = proxy.events();
    assert!(ev.iter().any(|e| e.code == NetCode::Malformed), "{ev:?}");
}

#[tokio::test]
async fn oversize_headers_are_refused() {
    let proxy = start_with(
        policy(&["up.test"], &[], &[]),
        StaticResolver::new(),
        Limits {
            max_header_bytes: 8 * 1024,
            ..fast_limits()
        },
    );
    let big = "a".repeat(64 * 1024);
    let req = format!("GET http://up.test/ HTTP/1.1\r\nX-Big: {big}\r\n\r\n");
    let mut s = TcpStream::connect(proxy.tcp_addr().unwrap()).await.unwrap();
    // The proxy may close before reading everything; a write error is fine.
    let _ = s.write_all(req.as_bytes()).await;
    let resp = read_response(&mut s, true).await;
    assert_eq!(resp.status, 431);
    let ev = events(&proxy, 1).await;
    assert_eq!(ev[0].code, NetCode::HeaderTooLarge);
}

async fn closed_within(s: &mut TcpStream, limit: Duration, dribble: bool) -> Duration {
    let start = Instant::now();
    let mut buf = [0u8; 1024];
    loop {
        assert!(start.elapsed() < limit, "the slow client was not cut off");
        if dribble {
            // One byte of header every 100 ms: never completes.
            if s.write_all(b"X").await.is_err() {
                return start.elapsed();
            }
        }
        match tokio::time::timeout(Duration::from_millis(100), s.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return start.elapsed(),
            // hyper may answer 408 before closing.
            Ok(Ok(_)) => {}
            Err(_) => {}
        }
    }
}

#[tokio::test]
async fn slow_clients_are_cut_off_by_the_header_timeout() {
    let proxy = start_with(
        policy(&["up.test"], &[], &[]),
        StaticResolver::new(),
        Limits {
            header_timeout: Duration::from_millis(600),
            ..fast_limits()
        },
    );
    let p = proxy.tcp_addr().unwrap();
    // Slowloris: a head that trickles in forever.
    let mut s = TcpStream::connect(p).await.unwrap();
    s.write_all(b"GET http://up.test/ HTTP/1.1\r\nX-A: ")
        .await
        .unwrap();
    let took = closed_within(&mut s, Duration::from_secs(5), true).await;
    assert!(
        took >= Duration::from_millis(400),
        "closed too early: {took:?}"
    );
    // A client that never sends anything.
    let mut s = TcpStream::connect(p).await.unwrap();
    closed_within(&mut s, Duration::from_secs(5), false).await;
    // A SOCKS5 client that stops mid-handshake.
    let mut s = TcpStream::connect(p).await.unwrap();
    s.write_all(&[0x05]).await.unwrap();
    closed_within(&mut s, Duration::from_secs(5), false).await;
    let ev = events(&proxy, 3).await;
    assert!(
        ev.iter().all(|e| e.code == NetCode::HeaderTimeout),
        "{ev:?}"
    );
}

#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed_by_the_header_timeout() {
    let up = http_server("127.0.0.1", 0, "up").await;
    let port = up.addr.port();
    let proxy = start_with(
        policy(&[&format!("up.test:{port}")], &[], &[LOOPBACK]),
        resolver(&[("up.test", "127.0.0.1")]),
        Limits {
            header_timeout: Duration::from_millis(500),
            ..fast_limits()
        },
    );
    let mut s = TcpStream::connect(proxy.tcp_addr().unwrap()).await.unwrap();
    s.write_all(
        format!("GET http://up.test:{port}/hello HTTP/1.1\r\nHost: up.test\r\n\r\n").as_bytes(),
    )
    .await
    .unwrap();
    let resp = read_response(&mut s, false).await;
    assert_eq!(resp.text(), "hello from up");
    // The connection is kept alive for a next request, but not forever.
    let took = closed_within(&mut s, Duration::from_secs(5), false).await;
    assert!(took >= Duration::from_millis(300), "{took:?}");
}

#[tokio::test]
async fn a_stalled_upstream_response_is_cut_by_the_idle_timeout() {
    // An upstream that promises 100 bytes, sends 10, and stalls.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            tokio::spawn(async move {
                let _ = read_head(&mut s).await;
                let _ = s
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")
                    .await;
                tokio::time::sleep(Duration::from_secs(30)).await;
            });
        }
    });
    let proxy = start_with(
        policy(&[&format!("up.test:{port}")], &[], &[LOOPBACK]),
        resolver(&[("up.test", "127.0.0.1")]),
        Limits {
            idle_timeout: Duration::from_millis(500),
            ..fast_limits()
        },
    );
    let mut s = TcpStream::connect(proxy.tcp_addr().unwrap()).await.unwrap();
    s.write_all(format!("GET http://up.test:{port}/ HTTP/1.1\r\nHost: up.test\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let resp = read_response(&mut s, true).await;
    assert_eq!(resp.status, 200);
    let took = closed_within(&mut s, Duration::from_secs(5), false).await;
    assert!(took >= Duration::from_millis(300), "{took:?}");
    let ev = events(&proxy, 1).await;
    assert_eq!(ev[0].bytes_down, 10);
    assert!(ev[0].reason.contains("stalled"), "{ev:?}");
}

#[tokio::test]
async fn idle_tunnels_are_closed() {
    let up = echo_server("127.0.0.1", 0).await;
    let port = up.addr.port();
    let proxy = start_with(
        policy(&[&format!("up.test:{port}")], &[], &[LOOPBACK]),
        resolver(&[("up.test", "127.0.0.1")]),
        Limits {
            idle_timeout: Duration::from_millis(500),
            ..fast_limits()
        },
    );
    let (resp, mut s) = connect(proxy.tcp_addr().unwrap(), &format!("up.test:{port}")).await;
    assert_eq!(resp.status, 200);
    s.write_all(b"ping").await.unwrap();
    let mut buf = [0u8; 4];
    s.read_exact(&mut buf).await.unwrap();
    let took = closed_within(&mut s, Duration::from_secs(5), false).await;
    assert!(took >= Duration::from_millis(300), "{took:?}");
    let ev = events(&proxy, 1).await;
    assert!(ev[0].reason.contains("idle"), "{ev:?}");
    assert_eq!((ev[0].bytes_up, ev[0].bytes_down), (4, 4));
}

#[tokio::test]
async fn the_connection_limit_is_enforced() {
    let proxy = start_with(
        policy(&["up.test"], &[], &[]),
        StaticResolver::new(),
        Limits {
            max_connections: 2,
            ..fast_limits()
        },
    );
    let p = proxy.tcp_addr().unwrap();
    // Two clients that started a request and stalled hold both slots.
    let mut a = TcpStream::connect(p).await.unwrap();
    a.write_all(b"GET http://up.test/ HTTP/1.1\r\n")
        .await
        .unwrap();
    let mut b = TcpStream::connect(p).await.unwrap();
    b.write_all(b"GET http://up.test/ HTTP/1.1\r\n")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let resp = get(p, "http://up.test/").await;
    assert_eq!(
        (resp.status, resp.block()),
        (503, Some("too-many-connections"))
    );
    drop(a);
    // A slot is free again once the proxy has seen the close: the request is then judged
    // (and refused by policy: no resolver answer), not turned away.
    let deadline = Instant::now() + Duration::from_secs(10);
    let resp = loop {
        let resp = get(p, "http://up.test/").await;
        if resp.status != 503 || Instant::now() > deadline {
            break resp;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!((resp.status, resp.block()), (502, Some("resolve-failed")));
}

#[tokio::test]
async fn shutdown_closes_the_listener_and_open_tunnels() {
    let up = echo_server("127.0.0.1", 0).await;
    let port = up.addr.port();
    let proxy = start(
        policy(&[&format!("up.test:{port}")], &[], &[LOOPBACK]),
        resolver(&[("up.test", "127.0.0.1")]),
    );
    let p = proxy.tcp_addr().unwrap();
    let (resp, mut s) = connect(p, &format!("up.test:{port}")).await;
    assert_eq!(resp.status, 200);
    let started = Instant::now();
    proxy.shutdown();
    assert!(started.elapsed() < Duration::from_secs(3));
    let mut buf = [0u8; 16];
    let n = tokio::time::timeout(Duration::from_secs(2), s.read(&mut buf))
        .await
        .expect("the tunnel is closed")
        .unwrap_or(0);
    assert_eq!(n, 0);
    assert!(
        TcpStream::connect(p).await.is_err(),
        "nothing listens any more"
    );
}
