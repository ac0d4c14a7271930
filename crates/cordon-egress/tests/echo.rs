//! A credential's own host handing its value back transformed: an HTTPS upstream that
//! echoes the `Authorization` header it received in one encoding per request, in 3-byte
//! chunks, in the body and in a response header. The sandboxed client must get the
//! placeholder in the same encoding, never the value.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::tls::{TestCa, TlsClient};
use common::*;
use cordon_egress::{Credential, EgressHandle, EgressProxy, ProxyConfig, RunCa};
use cordon_policy::credential::{Apply, Destination};
use cordon_policy::net::NetworkPolicy;
use rustls::pki_types::CertificateDer;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const REAL: &str = "ghp_EchoRealValue0123456789abcdefABCD/+x";

const STD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn b64(data: &[u8], alphabet: &[u8; 64], pad: bool) -> String {
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(alphabet[((n >> (18 - 6 * i)) & 63) as usize]));
            } else if pad {
                out.push('=');
            }
        }
    }
    out
}

fn unb64(text: &str, alphabet: &[u8; 64]) -> Vec<u8> {
    let digits: Vec<u32> = text
        .trim_end_matches('=')
        .bytes()
        .map(|c| alphabet.iter().position(|a| *a == c).unwrap() as u32)
        .collect();
    let mut out = Vec::new();
    for chunk in digits.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, d)| acc | (d << (18 - 6 * i)));
        for i in 0..chunk.len() - 1 {
            out.push(((n >> (16 - 8 * i)) & 0xff) as u8);
        }
    }
    out
}

fn bytewise(data: &[u8], prefix: &str, upper: bool) -> String {
    data.iter()
        .map(|b| {
            if upper {
                format!("{prefix}{b:02X}")
            } else {
                format!("{prefix}{b:02x}")
            }
        })
        .collect()
}

fn unbytewise(text: &str, prefix: &str) -> Vec<u8> {
    let digits = text.replace(prefix, "");
    (0..digits.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&digits[i..i + 2], 16).unwrap())
        .collect()
}

/// `data` in the named encoding, and back.
fn encode(enc: &str, data: &[u8]) -> String {
    match enc {
        "b64" => b64(data, STD, true),
        "b64-nopad" => b64(data, STD, false),
        "b64url" => b64(data, URL, true),
        "b64url-nopad" => b64(data, URL, false),
        "hex" => bytewise(data, "", false),
        "HEX" => bytewise(data, "", true),
        "xhh" => bytewise(data, "\\x", false),
        "XHH" => bytewise(data, "\\x", true),
        "pct-all" => bytewise(data, "%", true),
        "pct-all-lower" => bytewise(data, "%", false),
        "rev" => String::from_utf8(data.iter().rev().copied().collect()).unwrap(),
        "plain" => String::from_utf8(data.to_vec()).unwrap(),
        other => panic!("no encoding {other}"),
    }
}

fn decode(enc: &str, text: &str) -> Vec<u8> {
    match enc {
        "b64" | "b64-nopad" => unb64(text, STD),
        "b64url" | "b64url-nopad" => unb64(text, URL),
        "hex" | "HEX" => unbytewise(text, ""),
        "xhh" | "XHH" => unbytewise(text, "\\x"),
        "pct-all" | "pct-all-lower" => unbytewise(text, "%"),
        "rev" => text.bytes().rev().collect(),
        _ => text.as_bytes().to_vec(),
    }
}

/// An HTTPS upstream: `GET /E/PRE` answers with `PRE` bytes of filler, the request's
/// `Authorization` value and a newline, all encoded with `E`, as the body (chunked, 3
/// bytes a chunk, each flushed) and as the `x-echo` header. `GET /stored/E/PRE` answers
/// the same with the last `Authorization` it was sent, whatever this request carried.
async fn echo_upstream(ca: &TestCa, names: &[&str]) -> SocketAddr {
    let config = Arc::new(ca.server_config(names));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let last: Arc<Mutex<String>> = Arc::default();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let acceptor = tokio_rustls::TlsAcceptor::from(config.clone());
            let last = last.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                loop {
                    let Ok((head, _)) = read_head(&mut tls).await else {
                        return;
                    };
                    let head = String::from_utf8_lossy(&head).into_owned();
                    let path = head.split(' ').nth(1).unwrap_or("/").to_owned();
                    let auth = head
                        .lines()
                        .find_map(|l| {
                            let (k, v) = l.split_once(':')?;
                            k.eq_ignore_ascii_case("authorization")
                                .then(|| v.trim().to_owned())
                        })
                        .unwrap_or_default();
                    if !auth.is_empty() {
                        *last.lock().unwrap() = auth.clone();
                    }
                    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
                    // A first segment `uN` only selects a credential's path.
                    let parts = if parts[0].starts_with('u') {
                        &parts[1..]
                    } else {
                        &parts[..]
                    };
                    let (auth, parts) = if parts[0] == "stored" {
                        (last.lock().unwrap().clone(), &parts[1..])
                    } else {
                        (auth, parts)
                    };
                    let enc = parts[0];
                    let pre: usize = parts.get(1).and_then(|p| p.parse().ok()).unwrap_or(0);
                    let mut data = b"@:!".repeat(2)[..pre].to_vec();
                    data.extend_from_slice(auth.as_bytes());
                    data.push(b'\n');
                    let body = encode(enc, &data);
                    // Only an encoding without line ends can go in a header.
                    let echo = if body.contains('\n') {
                        String::new()
                    } else {
                        format!("x-echo: {body}\r\n")
                    };
                    let header =
                        format!("HTTP/1.1 200 OK\r\n{echo}Transfer-Encoding: chunked\r\n\r\n");
                    if tls.write_all(header.as_bytes()).await.is_err() {
                        return;
                    }
                    for chunk in body.as_bytes().chunks(3) {
                        let frame =
                            [format!("{:x}\r\n", chunk.len()).as_bytes(), chunk, b"\r\n"].concat();
                        if tls.write_all(&frame).await.is_err() || tls.flush().await.is_err() {
                            return;
                        }
                    }
                    if tls.write_all(b"0\r\n\r\n").await.is_err() {
                        return;
                    }
                    let _ = tls.flush().await;
                }
            });
        }
    });
    addr
}

fn start(
    allow: &[String],
    creds: Vec<Credential>,
    root: &CertificateDer<'static>,
) -> (EgressHandle, CertificateDer<'static>) {
    let none: &[String] = &[];
    let policy = NetworkPolicy::from_lists(allow, none, &[LOOPBACK.to_string()]).unwrap();
    let ca = RunCa::generate().unwrap();
    let ca_cert = ca.cert_der().clone();
    let config = ProxyConfig::new(policy)
        .with_resolver(resolver(&[
            ("up.test", "127.0.0.1"),
            ("other.test", "127.0.0.1"),
        ]))
        .with_limits(fast_limits())
        .with_ca(ca)
        .with_credentials(creds)
        .with_extra_upstream_roots(vec![root.clone()]);
    (
        EgressProxy::start_tcp(config, "127.0.0.1:0".parse().unwrap()).unwrap(),
        ca_cert,
    )
}

const ENCODINGS: &[&str] = &[
    "plain",
    "b64",
    "b64-nopad",
    "b64url",
    "b64url-nopad",
    "hex",
    "HEX",
    "xhh",
    "XHH",
    "pct-all",
    "pct-all-lower",
    "rev",
];

/// Every encoding at each of three alignments, for a bearer header and for the value
/// inside a `Basic` header's base64, in the body and in a header, and for a response
/// from the credential's host to a request that did not carry it: the client decodes
/// the placeholder where the value was, and never the value.
#[tokio::test]
async fn every_encoding_of_an_echoed_value_reaches_the_client_as_the_placeholder() {
    let test_ca = TestCa::new();
    let up = echo_upstream(&test_ca, &["up.test", "other.test"]).await;
    let bearer_host = format!("up.test:{}", up.port());
    let basic_host = format!("other.test:{}", up.port());
    let bearer = Credential::bearer("api", REAL.into(), &[&bearer_host])
        .unwrap()
        .with_paths(&[
            "/b64",
            "/b64-nopad",
            "/b64url",
            "/b64url-nopad",
            "/hex",
            "/HEX",
            "/xhh",
            "/XHH",
            "/pct-all",
            "/pct-all-lower",
            "/rev",
            "/plain",
        ])
        .unwrap();
    // Users of 2, 3 and 1 bytes put the value at each alignment of the base64.
    let users = [("ci", "/u0"), ("bob", "/u1"), ("a", "/u2")];
    let basics: Vec<Credential> = users
        .iter()
        .map(|(user, path)| {
            Credential::new(
                &format!("registry-{user}"),
                REAL.into(),
                Apply::Basic {
                    user: (*user).into(),
                },
                vec![Destination::parse(&basic_host, &[(*path).to_owned()], &[]).unwrap()],
                None,
            )
            .unwrap()
        })
        .collect();
    let ph = bearer.placeholder().to_owned();
    let basic_ph: Vec<String> = basics.iter().map(|c| c.placeholder().to_owned()).collect();
    let mut creds = vec![bearer];
    creds.extend(basics);
    let (proxy, run_ca) = start(
        &[bearer_host.clone(), basic_host.clone()],
        creds,
        &test_ca.cert,
    );
    let filler = b"@:!@:!";
    let mut checked = 0;
    for &enc in ENCODINGS {
        for pre in 0..3 {
            // Bearer: the header as sent, then the stored one on a path the
            // credential does not cover.
            for stored in [false, true] {
                let mut c =
                    TlsClient::connect(proxy.tcp_addr().unwrap(), "up.test", up.port(), &run_ca)
                        .await
                        .unwrap();
                let path = if stored {
                    format!("/stored/{enc}/{pre}")
                } else {
                    format!("/{enc}/{pre}")
                };
                let r = c.send("GET", &path, &[], "").await;
                assert_eq!(r.status, 200, "{path}: {r:?}");
                let got = decode(enc, &r.body);
                let want = [&filler[..pre], format!("Bearer {ph}\n").as_bytes()].concat();
                assert_eq!(
                    String::from_utf8_lossy(&got),
                    String::from_utf8_lossy(&want),
                    "{path}: {}",
                    r.body
                );
                assert!(!r.body.contains(REAL), "{path}");
                checked += 1;
            }
        }
    }
    // Basic: the header's base64 of `user:value`, echoed as it is, at each alignment.
    for ((user, prefix), ph) in users.iter().zip(&basic_ph) {
        let mut c = TlsClient::connect(proxy.tcp_addr().unwrap(), "other.test", up.port(), &run_ca)
            .await
            .unwrap();
        let path = format!("{prefix}/plain/0");
        let r = c.send("GET", &path, &[], "").await;
        assert_eq!(r.status, 200, "{path}: {r:?}");
        let encoded = r.body.strip_prefix("Basic ").unwrap().trim_end();
        assert_eq!(
            String::from_utf8(unb64(encoded, STD)).unwrap(),
            format!("{user}:{ph}"),
            "{path}: {}",
            r.body
        );
        assert_ne!(encoded, b64(format!("{user}:{REAL}").as_bytes(), STD, true));
        checked += 1;
    }
    assert_eq!(checked, ENCODINGS.len() * 3 * 2 + 3);
}

/// The `x-echo` header is checked like the body.
#[tokio::test]
async fn an_echo_in_a_response_header_is_replaced_too() {
    let test_ca = TestCa::new();
    let up = echo_upstream(&test_ca, &["up.test"]).await;
    let host = format!("up.test:{}", up.port());
    let cred = Credential::bearer("api", REAL.into(), &[&host]).unwrap();
    let ph = cred.placeholder().to_owned();
    let (proxy, run_ca) = start(std::slice::from_ref(&host), vec![cred], &test_ca.cert);
    let addr = proxy.tcp_addr().unwrap();
    for enc in ["b64url-nopad", "HEX", "xhh", "b64"] {
        let (resp, tcp) = connect(addr, &host).await;
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
            format!("GET /{enc}/1 HTTP/1.1\r\nHost: up.test\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .await
        .unwrap();
        let mut raw = Vec::new();
        let _ = tls.read_to_end(&mut raw).await;
        let text = String::from_utf8_lossy(&raw).into_owned();
        let header = text
            .lines()
            .find_map(|l| l.strip_prefix("x-echo: "))
            .unwrap_or_else(|| panic!("{text}"));
        let got = decode(enc, header.trim());
        assert_eq!(
            String::from_utf8_lossy(&got),
            format!("@Bearer {ph}\n"),
            "{enc}: {text}"
        );
        assert!(!text.contains(REAL));
    }
}
