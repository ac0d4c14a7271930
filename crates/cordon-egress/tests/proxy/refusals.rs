//! Policy refusals: allowlists, internal addresses, rebinding, redirects.

use super::*;

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
    // Each refusal records the address the name resolved to (the CONNECT's and the
    // GET's, in whichever order their events were written).
    let ev = proxy.events();
    let mut meta: Vec<_> = ev
        .iter()
        .filter(|e| e.host == "meta.test")
        .map(|e| e.address)
        .collect();
    meta.sort();
    assert_eq!(
        meta,
        [
            Some("169.254.169.254:80".parse().unwrap()),
            Some("169.254.169.254:443".parse().unwrap())
        ]
    );
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
