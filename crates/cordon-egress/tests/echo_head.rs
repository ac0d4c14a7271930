//! A credential's own host handing its value back where a placeholder cannot go or
//! where the check cannot look: in the status line's reason phrase, in a header's name,
//! case-folded, or in a body compressed though no `Content-Encoding` says so. The
//! sandboxed client must never receive the value, in any case.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code

mod common;

use common::tls::TestCa;
use common::*;
use cordon_egress::{Credential, EgressProxy, ProxyConfig, RunCa};
use cordon_policy::net::NetworkPolicy;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A value that can stand in a header name (a token), so the name echo is possible.
const REAL: &str = "ghp_EchoRealValue0123456789abcdefABCD";

fn b64(data: &[u8]) -> String {
    const STD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(STD[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The raw response the upstream sends for `path`.
fn answer(path: &str) -> Vec<u8> {
    let ok = |head: &str, body: &[u8]| {
        [
            format!("{head}\r\nContent-Length: {}\r\n\r\n", body.len()).as_bytes(),
            body,
        ]
        .concat()
    };
    match path {
        "/reason" => ok(&format!("HTTP/1.1 401 bad token {REAL}"), b""),
        "/reason-lower" => ok(
            &format!("HTTP/1.1 401 bad token {}", REAL.to_lowercase()),
            b"",
        ),
        "/reason-b64" => ok(&format!("HTTP/1.1 403 {}", b64(REAL.as_bytes())), b""),
        "/reason-benign" => ok("HTTP/1.1 401 go away", b"no"),
        "/name" => ok(&format!("HTTP/1.1 200 OK\r\nX-{REAL}: 1"), b"fine"),
        "/name-hex" => {
            let hex: String = REAL.bytes().map(|b| format!("{b:02x}")).collect();
            ok(&format!("HTTP/1.1 200 OK\r\nx{hex}: 1"), b"fine")
        }
        "/upper" => ok(
            "HTTP/1.1 200 OK",
            format!("<{}>", REAL.to_uppercase()).as_bytes(),
        ),
        "/lower" => ok(
            "HTTP/1.1 200 OK",
            format!("<{}>", REAL.to_lowercase()).as_bytes(),
        ),
        "/upper-header" => ok(
            &format!("HTTP/1.1 200 OK\r\nx-echo: {}", REAL.to_uppercase()),
            b"",
        ),
        "/gzip" => ok(
            "HTTP/1.1 200 OK",
            &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xcb],
        ),
        "/zstd" => ok(
            "HTTP/1.1 200 OK",
            &[0x28, 0xb5, 0x2f, 0xfd, 0x24, 0x05, 0x29],
        ),
        "/zlib" => ok(
            "HTTP/1.1 200 OK",
            &[0x78, 0x9c, 0xcb, 0x48, 0xcd, 0xc9, 0xc9],
        ),
        "/text" => ok("HTTP/1.1 200 OK", b"x^2 is text"),
        _ => ok("HTTP/1.1 404 Not Found", b""),
    }
}

async fn upstream(ca: &TestCa) -> SocketAddr {
    let config = Arc::new(ca.server_config(&["up.test"]));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = tokio_rustls::TlsAcceptor::from(config.clone());
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                while let Ok((head, _)) = read_head(&mut tls).await {
                    let head = String::from_utf8_lossy(&head).into_owned();
                    let path = head.split(' ').nth(1).unwrap_or("/").to_owned();
                    if tls.write_all(&answer(&path)).await.is_err() {
                        return;
                    }
                    let _ = tls.flush().await;
                }
            });
        }
    });
    addr
}

/// What the client behind the proxy receives, raw, for `GET path`.
async fn fetch(
    proxy: SocketAddr,
    host: &str,
    run_ca: &rustls::pki_types::CertificateDer<'static>,
    path: &str,
) -> String {
    let (resp, tcp) = connect(proxy, host).await;
    assert_eq!(resp.status, 200);
    let mut roots = rustls::RootCertStore::empty();
    roots.add(run_ca.clone()).unwrap();
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let mut tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect("up.test".try_into().unwrap(), tcp)
        .await
        .unwrap();
    tls.write_all(
        format!("GET {path} HTTP/1.1\r\nHost: up.test\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .await
    .unwrap();
    let mut raw = Vec::new();
    let _ = tls.read_to_end(&mut raw).await;
    String::from_utf8_lossy(&raw).into_owned()
}

#[tokio::test]
async fn the_value_never_reaches_the_client_through_the_head_case_or_compression() {
    let test_ca = TestCa::new();
    let up = upstream(&test_ca).await;
    let host = format!("up.test:{}", up.port());
    let cred = Credential::bearer("api", REAL.into(), &[&host]).unwrap();
    let ph = cred.placeholder().to_owned();
    let none: &[String] = &[];
    let policy =
        NetworkPolicy::from_lists(std::slice::from_ref(&host), none, &[LOOPBACK.to_string()])
            .unwrap();
    let ca = RunCa::generate().unwrap();
    let run_ca = ca.cert_der().clone();
    let config = ProxyConfig::new(policy)
        .with_resolver(resolver(&[("up.test", "127.0.0.1")]))
        .with_limits(fast_limits())
        .with_ca(ca)
        .with_credentials(vec![cred])
        .with_extra_upstream_roots(vec![test_ca.cert.clone()]);
    let proxy = EgressProxy::start_tcp(config, "127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = proxy.tcp_addr().unwrap();
    let leaks = |text: &str| text.to_lowercase().contains(&REAL.to_lowercase());
    // Refused outright: nothing of the upstream's answer reaches the client.
    for path in [
        "/reason",
        "/reason-lower",
        "/reason-b64",
        "/name",
        "/name-hex",
        "/gzip",
        "/zstd",
        "/zlib",
    ] {
        let text = fetch(addr, &host, &run_ca, path).await;
        assert!(text.starts_with("HTTP/1.1 502 "), "{path}: {text}");
        assert!(!leaks(&text), "{path}: {text}");
        assert!(!text.contains(&b64(REAL.as_bytes())), "{path}: {text}");
    }
    // A reason phrase without the value still gives way to the canonical one.
    let text = fetch(addr, &host, &run_ca, "/reason-benign").await;
    assert!(text.starts_with("HTTP/1.1 401 Unauthorized\r\n"), "{text}");
    // Case-folded echoes come back as the placeholder folded the same way.
    for (path, want) in [
        ("/upper", ph.to_uppercase()),
        ("/lower", ph.to_lowercase()),
        ("/upper-header", ph.to_uppercase()),
    ] {
        let text = fetch(addr, &host, &run_ca, path).await;
        assert!(text.starts_with("HTTP/1.1 200 "), "{path}: {text}");
        assert!(!leaks(&text), "{path}: {text}");
        assert!(text.contains(&want), "{path}: {text}");
    }
    // A text body that merely starts like a zlib header is passed on.
    let text = fetch(addr, &host, &run_ca, "/text").await;
    assert!(
        text.starts_with("HTTP/1.1 200 ") && text.ends_with("x^2 is text"),
        "{text}"
    );
}
