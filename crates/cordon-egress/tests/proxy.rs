//! The egress proxy against real upstream servers on loopback.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::*;
use cordon_egress::{
    Decision, EgressProxy, Limits, ListenAddr, NetCode, Protocol, ProxyConfig, ResolveFuture,
    Resolver, StaticResolver,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

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

// ---------------------------------------------------------------- policy refusals

async fn connect_block(proxy: std::net::SocketAddr, target: &str) -> (u16, String) {
    let (resp, _s) = connect(proxy, target).await;
    (resp.status, resp.block().unwrap_or("").to_owned())
}

#[tokio::test]
async fn the_test_upstream_is_refused_without_allow_private() {
    let up = echo_server("127.0.0.1", 0).await;
    let port = up.addr.port();
    let proxy = start(
        policy(&[&format!("up.test:{port}"), "127.0.0.1"], &[], &[]),
        resolver(&[("up.test", "127.0.0.1")]),
    );
    let p = proxy.tcp_addr().unwrap();
    let (resp, _s) = connect(p, &format!("up.test:{port}")).await;
    assert_eq!(resp.status, 403);
    assert_eq!(resp.block(), Some("loopback"));
    assert_eq!(
        resp.text(),
        "cordon: up.test resolves to 127.0.0.1: 127.0.0.1 is a loopback address of the host \
         cordon runs on; to let the command reach the host's own services, pass \
         `--allow-private 127.0.0.1/32` or add `allow_private = [\"127.0.0.1/32\"]` under \
         `[network]` in the policy file\n"
    );
    let resp = get(p, &format!("http://up.test:{port}/hello")).await;
    assert_eq!((resp.status, resp.block()), (403, Some("loopback")));
    assert_eq!(
        up.accepted.load(Ordering::SeqCst),
        0,
        "no connection was made"
    );
    let ev = events(&proxy, 2).await;
    assert!(
        ev.iter()
            .all(|e| e.decision == Decision::Deny && e.code == NetCode::Loopback)
    );
}

#[tokio::test]
async fn hosts_and_ports_outside_the_allowlist_are_refused() {
    let up = echo_server("127.0.0.1", 0).await;
    let port = up.addr.port();
    let names = [
        "up.test",
        "a.wild.test",
        "wild.test",
        "allowed.test.evil.test",
        "xn--pple-43d.test",
        "apple.test",
        "gist.wild.test",
    ];
    let r = names.iter().fold(StaticResolver::new(), |r, n| {
        r.with(n, &["127.0.0.1".parse().unwrap()])
    });
    let proxy = start(
        policy(
            &[
                &format!("up.test:{port}"),
                &format!("*.wild.test:{port}"),
                &format!("allowed.test:{port}"),
                &format!("apple.test:{port}"),
            ],
            &["gist.wild.test"],
            &[LOOPBACK],
        ),
        r,
    );
    let p = proxy.tcp_addr().unwrap();
    let cases = [
        (format!("up.test:{port}"), 200, ""),
        (format!("UP.Test.:{port}"), 200, ""),
        (
            format!("up.test:{}", port.wrapping_add(1)),
            403,
            "port-not-allowed",
        ),
        ("up.test:443".to_owned(), 403, "port-not-allowed"),
        (format!("other.test:{port}"), 403, "not-allowed"),
        (format!("a.wild.test:{port}"), 200, ""),
        (format!("wild.test:{port}"), 403, "not-allowed"),
        (format!("allowed.test.evil.test:{port}"), 403, "not-allowed"),
        // Cyrillic "а": its punycode is not apple.test.
        (format!("xn--pple-43d.test:{port}"), 403, "not-allowed"),
        (format!("apple.test:{port}"), 200, ""),
        (format!("gist.wild.test:{port}"), 403, "denied-host"),
        (format!("user@up.test:{port}"), 403, "userinfo"),
        ("up.test:0".to_owned(), 403, "bad-port"),
    ];
    for (target, status, code) in cases {
        let (got_status, got_code) = connect_block(p, &target).await;
        assert_eq!(
            (got_status, got_code.as_str()),
            (status, code),
            "CONNECT {target}"
        );
    }
    // URL-level tricks in plain HTTP requests.
    for (url, code) in [
        (format!("http://up.test@other.test:{port}/"), "userinfo"),
        (
            format!("http://allowed.test.evil.test:{port}/"),
            "not-allowed",
        ),
        (
            format!("http://other.test:{port}/allowed.test"),
            "not-allowed",
        ),
        (format!("http://up.test:{port}.evil.test/"), "bad-port"),
    ] {
        let resp = get(p, &url).await;
        assert_eq!((resp.status, resp.block()), (403, Some(code)), "GET {url}");
    }
}

#[tokio::test]
async fn every_ip_literal_form_of_loopback_is_refused() {
    let up = http_server("127.0.0.1", 0, "up").await;
    let port = up.addr.port();
    // The literal is on the allowlist: only the address class refuses it.
    let proxy = start(
        policy(
            &[&format!("127.0.0.1:{port}"), &format!("[::1]:{port}")],
            &[],
            &[],
        ),
        StaticResolver::new(),
    );
    let p = proxy.tcp_addr().unwrap();
    for host in [
        "127.0.0.1",
        "2130706433",
        "0177.0.0.1",
        "0x7f.1",
        "0x7f000001",
        "127.1",
        "127.0.1",
        "[::1]",
        "[::ffff:127.0.0.1]",
        "[::ffff:7f00:1]",
        "[64:ff9b::7f00:1]",
        "[2002:7f00:1::]",
    ] {
        let resp = get(p, &format!("http://{host}:{port}/hello")).await;
        assert_eq!(
            (resp.status, resp.block()),
            (403, Some("loopback")),
            "GET {host}"
        );
        let (status, code) = connect_block(p, &format!("{host}:{port}")).await;
        assert_eq!((status, code.as_str()), (403, "loopback"), "CONNECT {host}");
    }
    for (host, code) in [
        ("0.0.0.0", "unspecified"),
        ("0", "unspecified"),
        ("169.254.169.254", "metadata"),
        ("2852039166", "metadata"),
        ("[::ffff:169.254.169.254]", "metadata"),
        ("[fd00:ec2::254]", "metadata"),
        ("100.100.100.200", "metadata"),
        ("100.64.0.1", "cgnat"),
        ("10.0.0.1", "private"),
        ("0xa.0.0.1", "private"),
        ("192.168.1.1", "private"),
        ("[fd00::1]", "private"),
        ("[fe80::1]", "link-local"),
        ("224.0.0.1", "multicast"),
        ("255.255.255.255", "broadcast"),
    ] {
        let (status, got) = connect_block(p, &format!("{host}:{port}")).await;
        assert_eq!((status, got.as_str()), (403, code), "CONNECT {host}");
    }
    assert_eq!(up.accepted.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn names_resolving_to_internal_addresses_are_refused() {
    let proxy = start(
        policy(
            &[
                "loop.test",
                "ten.test",
                "meta.test",
                "mixed.test",
                "mapped.test",
                "cg.test",
            ],
            &[],
            &[],
        ),
        StaticResolver::new()
            .with("loop.test", &["127.0.0.1".parse().unwrap()])
            .with("ten.test", &["10.1.2.3".parse().unwrap()])
            .with("meta.test", &["169.254.169.254".parse().unwrap()])
            .with("cg.test", &["100.64.1.1".parse().unwrap()])
            .with("mapped.test", &["::ffff:192.168.0.1".parse().unwrap()])
            // One public and one internal answer: refused as a whole.
            .with(
                "mixed.test",
                &[
                    "93.184.215.14".parse().unwrap(),
                    "127.0.0.1".parse().unwrap(),
                ],
            ),
    );
    let p = proxy.tcp_addr().unwrap();
    for (name, code) in [
        ("loop.test", "loopback"),
        ("ten.test", "private"),
        ("meta.test", "metadata"),
        ("cg.test", "cgnat"),
        ("mapped.test", "private"),
        ("mixed.test", "loopback"),
    ] {
        let (status, got) = connect_block(p, &format!("{name}:443")).await;
        assert_eq!((status, got.as_str()), (403, code), "CONNECT {name}");
        let resp = get(p, &format!("http://{name}/")).await;
        assert_eq!((resp.status, resp.block()), (403, Some(code)), "GET {name}");
    }
    let ev = proxy.events();
    let meta = ev.iter().find(|e| e.host == "meta.test").unwrap();
    assert_eq!(meta.address, Some("169.254.169.254:443".parse().unwrap()));
}

#[tokio::test]
async fn empty_allowlist_means_no_network() {
    let up = echo_server("127.0.0.1", 0).await;
    let proxy = start(
        policy(&[], &[], &[LOOPBACK]),
        resolver(&[("up.test", "127.0.0.1")]),
    );
    let (status, code) = connect_block(
        proxy.tcp_addr().unwrap(),
        &format!("up.test:{}", up.addr.port()),
    )
    .await;
    assert_eq!((status, code.as_str()), (403, "no-allowlist"));
}

/// Answers from a script, one entry per call, and counts the calls.
struct Scripted {
    answers: Vec<IpAddr>,
    calls: Arc<AtomicUsize>,
}

impl Resolver for Scripted {
    fn resolve<'a>(&'a self, _host: &'a str, _port: u16) -> ResolveFuture<'a> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        let ip = self.answers[n.min(self.answers.len() - 1)];
        Box::pin(async move { Ok(vec![ip]) })
    }
}

#[tokio::test]
async fn a_rebinding_resolver_cannot_switch_the_checked_address() {
    // The honest upstream on 127.0.0.1 and an "internal" one on 127.0.0.2, same port.
    let good = http_server("127.0.0.1", 0, "good").await;
    let port = good.addr.port();
    let internal = http_server("127.0.0.2", port, "internal").await;
    let calls = Arc::new(AtomicUsize::new(0));
    let proxy = start(
        // Only 127.0.0.1 is exempt; 127.0.0.2 is a refused loopback address.
        policy(&[&format!("rebind.test:{port}")], &[], &["127.0.0.1/32"]),
        Scripted {
            answers: vec![
                "127.0.0.1".parse().unwrap(),
                "127.0.0.2".parse().unwrap(),
                "127.0.0.2".parse().unwrap(),
            ],
            calls: calls.clone(),
        },
    );
    let p = proxy.tcp_addr().unwrap();
    // First request: checked 127.0.0.1, and connected there — not to what a second lookup
    // would now say.
    let resp = get(p, &format!("http://rebind.test:{port}/hello")).await;
    assert_eq!(resp.status, 200);
    assert_eq!(resp.text(), "hello from good");
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "exactly one lookup per request"
    );
    // Second request: the answer is now internal, and refused without connecting.
    let resp = get(p, &format!("http://rebind.test:{port}/hello")).await;
    assert_eq!((resp.status, resp.block()), (403, Some("loopback")));
    let (status, code) = connect_block(p, &format!("rebind.test:{port}")).await;
    assert_eq!((status, code.as_str()), (403, "loopback"));
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    assert_eq!(internal.accepted.load(Ordering::SeqCst), 0);
    assert_eq!(good.accepted.load(Ordering::SeqCst), 1);
    let ev = events(&proxy, 3).await;
    assert_eq!(ev[0].address, Some(good.addr));
}

#[tokio::test]
async fn redirects_are_passed_back_and_the_follow_up_is_checked() {
    let up = http_server("127.0.0.1", 0, "up").await;
    let port = up.addr.port();
    let proxy = start(
        policy(&[&format!("up.test:{port}")], &[], &["127.0.0.1/32"]),
        resolver(&[("up.test", "127.0.0.1")]),
    );
    let p = proxy.tcp_addr().unwrap();
    for (location, code) in [
        (format!("http://127.0.0.2:{port}/hello"), "loopback"),
        (
            "http://169.254.169.254/latest/meta-data/".to_owned(),
            "metadata",
        ),
        (format!("http://127.0.0.1:{port}/hello"), "not-allowed"),
    ] {
        let resp = get(p, &format!("http://up.test:{port}/redirect?to={location}")).await;
        assert_eq!(resp.status, 302, "the redirect is not followed");
        assert_eq!(resp.headers.get("location"), Some(&location));
        let follow = get(p, &location).await;
        assert_eq!(
            (follow.status, follow.block()),
            (403, Some(code)),
            "{location}"
        );
    }
    assert_eq!(
        up.accepted.load(Ordering::SeqCst),
        3,
        "only the redirecting requests"
    );
}

#[tokio::test]
async fn https_urls_must_use_connect() {
    let proxy = start(policy(&["up.test"], &[], &[]), StaticResolver::new());
    let resp = get(proxy.tcp_addr().unwrap(), "https://up.test/").await;
    assert_eq!((resp.status, resp.block()), (400, Some("use-connect")));
}

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
