//! Credentials kept outside the sandbox: which one is added where, and where their values
//! are refused, against a local HTTPS upstream whose test CA the proxy trusts explicitly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::tls::{TestCa, TlsClient, https_upstream_seen};
use common::*;
use cordon_egress::{Credential, EgressHandle, EgressProxy, NetCode, ProxyConfig, RunCa};
use cordon_policy::credential::{Apply, Destination};
use cordon_policy::net::NetworkPolicy;
use rustls::pki_types::CertificateDer;

const REAL_A: &str = "ghp_AAAARealValue0123456789abcdefABCDEF";
const REAL_B: &str = "ghp_BBBBRealValue0123456789abcdefABCDEF";

fn start(
    allow: &[String],
    creds: Vec<Credential>,
    root: Option<&CertificateDer<'static>>,
) -> (EgressHandle, CertificateDer<'static>) {
    let none: &[String] = &[];
    let policy = NetworkPolicy::from_lists(allow, none, &[LOOPBACK.to_string()]).unwrap();
    let ca = RunCa::generate().unwrap();
    let ca_cert = ca.cert_der().clone();
    let mut config = ProxyConfig::new(policy)
        .with_resolver(resolver(&[
            ("up.test", "127.0.0.1"),
            ("other.test", "127.0.0.1"),
        ]))
        .with_limits(fast_limits())
        .with_ca(ca)
        .with_credentials(creds);
    if let Some(root) = root {
        config = config.with_extra_upstream_roots(vec![root.clone()]);
    }
    (
        EgressProxy::start_tcp(config, "127.0.0.1:0".parse().unwrap()).unwrap(),
        ca_cert,
    )
}

// Finding: the credential's path scope used its own prefix test, so a path that the
// server decodes into another one (`%2e%2e`) got the credential.
#[tokio::test]
async fn a_path_the_server_would_decode_elsewhere_gets_no_credential() {
    let test_ca = TestCa::new();
    let (up, seen) = https_upstream_seen(&test_ca, &["up.test"]).await;
    let host = format!("up.test:{}", up.port());
    let cred = Credential::bearer("A", REAL_A.into(), &[&host])
        .unwrap()
        .with_paths(&["/api"])
        .unwrap();
    let (proxy, run_ca) = start(std::slice::from_ref(&host), vec![cred], Some(&test_ca.cert));
    let mut c = TlsClient::connect(proxy.tcp_addr().unwrap(), "up.test", up.port(), &run_ca)
        .await
        .unwrap();
    let ok = c.send("GET", "/api/x", &[], "").await;
    assert_eq!(ok.status, 200);
    assert!(seen.lock().unwrap().last().unwrap().contains(REAL_A));
    for sneaky in ["/api/%2e%2e/admin", "/api/%2E%2E/admin", "/api/..;/admin"] {
        let n = seen.lock().unwrap().len();
        let _ = c.send("GET", sneaky, &[], "").await;
        let log = seen.lock().unwrap();
        assert!(
            log.len() == n || !log[n].contains(REAL_A),
            "{sneaky} was sent with the credential: {}",
            log[n]
        );
    }
}

// Finding: with two credentials on one host, only the first was ever added.
#[tokio::test]
async fn two_credentials_on_one_host_each_go_where_their_scope_says() {
    let test_ca = TestCa::new();
    let (up, seen) = https_upstream_seen(&test_ca, &["up.test"]).await;
    let host = format!("up.test:{}", up.port());
    let a = Credential::bearer("A", REAL_A.into(), &[&host])
        .unwrap()
        .with_paths(&["/a"])
        .unwrap();
    let b = Credential::bearer("B", REAL_B.into(), &[&host])
        .unwrap()
        .with_paths(&["/b"])
        .unwrap();
    let (pa, pb) = (a.placeholder().to_owned(), b.placeholder().to_owned());
    let (proxy, run_ca) = start(std::slice::from_ref(&host), vec![a, b], Some(&test_ca.cert));
    let mut c = TlsClient::connect(proxy.tcp_addr().unwrap(), "up.test", up.port(), &run_ca)
        .await
        .unwrap();
    let r = c
        .send(
            "GET",
            "/b/x",
            &[("authorization", &format!("Bearer {pb}"))],
            "",
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    assert!(
        seen.lock()
            .unwrap()
            .last()
            .unwrap()
            .contains(&format!("Bearer {REAL_B}"))
    );
    let r = c
        .send(
            "GET",
            "/a/x",
            &[("authorization", &format!("Bearer {pa}"))],
            "",
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    assert!(
        seen.lock()
            .unwrap()
            .last()
            .unwrap()
            .contains(&format!("Bearer {REAL_A}"))
    );
    // B's placeholder where only A may go is a leak.
    let r = c
        .send(
            "GET",
            "/a/x",
            &[("authorization", &format!("Bearer {pb}"))],
            "",
        )
        .await;
    assert_eq!(r.block.as_deref(), Some("credential-leak"));
}

// Finding: a plain-HTTP request's body was not checked for credential values.
#[tokio::test]
async fn a_plain_http_body_carrying_a_credential_is_refused() {
    let up = http_server("127.0.0.1", 0, "plain").await;
    let port = up.addr.port();
    let cred = Credential::bearer("A", REAL_A.into(), &["api.example.com"]).unwrap();
    let ph = cred.placeholder().to_owned();
    let (proxy, _) = start(&[format!("up.test:{port}")], vec![cred], None);
    let addr = proxy.tcp_addr().unwrap();
    for value in [REAL_A, ph.as_str()] {
        let body = format!("token={value}");
        let req = format!(
            "POST http://up.test:{port}/echo HTTP/1.1\r\nHost: up.test\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let r = raw(addr, req.as_bytes()).await;
        assert_eq!(
            (r.status, r.block()),
            (403, Some("credential-leak")),
            "{r:?}"
        );
    }
    let req = format!(
        "POST http://up.test:{port}/echo HTTP/1.1\r\nHost: up.test\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello"
    );
    let r = raw(addr, req.as_bytes()).await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.text(), "hello");
    let ev = events(&proxy, 3).await;
    let leaks: Vec<_> = ev
        .iter()
        .filter(|e| e.code == NetCode::CredentialLeak)
        .collect();
    assert_eq!(leaks.len(), 2, "{ev:?}");
    for e in leaks {
        assert_eq!(e.credential.as_deref(), Some("A"));
        assert_eq!(e.method.as_deref(), Some("POST"));
        assert_eq!(e.path.as_deref(), Some("/echo"));
        assert!(!e.to_json().contains(REAL_A));
    }
}

// The other half of that finding: two credentials that could both go on one request
// are refused when the proxy starts, naming both, rather than one being picked.
#[test]
fn two_credentials_that_could_cover_one_request_are_refused_at_start() {
    let all = Credential::bearer("A", REAL_A.into(), &["up.test:8443"]).unwrap();
    let some = Credential::bearer("B", REAL_B.into(), &["up.test:8443"])
        .unwrap()
        .with_paths(&["/b"])
        .unwrap();
    let policy =
        NetworkPolicy::from_lists(&["up.test:8443"], &[] as &[&str], &[] as &[&str]).unwrap();
    let config = ProxyConfig::new(policy)
        .with_ca(RunCa::generate().unwrap())
        .with_credentials(vec![all, some]);
    let err = EgressProxy::start_tcp(config, "127.0.0.1:0".parse().unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("credentials A and B could both be added"),
        "{err}"
    );
}

fn dest(host: &str, paths: &[&str]) -> Destination {
    let paths: Vec<String> = paths.iter().map(|p| (*p).to_owned()).collect();
    Destination::parse(host, &paths, &[]).unwrap()
}

#[tokio::test]
async fn basic_header_and_query_credentials_go_in_their_own_place() {
    let test_ca = TestCa::new();
    let (up, seen) = https_upstream_seen(&test_ca, &["up.test"]).await;
    let host = format!("up.test:{}", up.port());
    let basic = Credential::new(
        "registry",
        REAL_A.into(),
        Apply::Basic { user: "ci".into() },
        vec![dest(&host, &["/basic"])],
        None,
    )
    .unwrap();
    let header = Credential::new(
        "api-key",
        REAL_B.into(),
        Apply::Header("X-Api-Key".into()),
        vec![dest(&host, &["/header"])],
        Some("API_KEY".into()),
    )
    .unwrap();
    let query = Credential::new(
        "maps",
        "AIzaQueryValue0123456789".into(),
        Apply::Query("key".into()),
        vec![dest(&host, &["/query"])],
        None,
    )
    .unwrap();
    let (proxy, run_ca) = start(
        std::slice::from_ref(&host),
        vec![basic, header, query],
        Some(&test_ca.cert),
    );
    let mut c = TlsClient::connect(proxy.tcp_addr().unwrap(), "up.test", up.port(), &run_ca)
        .await
        .unwrap();
    let last = || seen.lock().unwrap().last().unwrap().clone();

    let r = c.send("GET", "/basic/x", &[], "").await;
    assert_eq!(r.status, 200);
    // base64("ci:" + REAL_A)
    let pair = format!("ci:{REAL_A}");
    let b64 = base64(pair.as_bytes());
    assert!(
        last().contains(&format!("authorization: Basic {b64}")),
        "{}",
        last()
    );
    // The upstream echoes what it saw; the sandbox gets it back without the value.
    assert!(
        !r.body.contains(&b64) && !r.body.contains(REAL_A),
        "{}",
        r.body
    );

    let r = c.send("GET", "/header/x", &[], "").await;
    assert_eq!(r.status, 200);
    assert!(
        last().contains(&format!("x-api-key: {REAL_B}")),
        "{}",
        last()
    );
    assert!(!last().contains("authorization"), "{}", last());
    assert!(!r.body.contains(REAL_B), "{}", r.body);

    let r = c.send("GET", "/query/x?a=1", &[], "").await;
    assert_eq!(r.status, 200);
    assert!(
        last().starts_with("GET /query/x?a=1&key=AIzaQueryValue0123456789\n"),
        "{}",
        last()
    );
    assert!(!r.body.contains("AIzaQueryValue0123456789"), "{}", r.body);

    // Each is added only under its own prefix.
    let r = c.send("GET", "/elsewhere", &[], "").await;
    assert_eq!(r.status, 200);
    assert!(
        !last().contains(REAL_A) && !last().contains(REAL_B) && !last().contains("key="),
        "{}",
        last()
    );
    let ev = events(&proxy, 4).await;
    let named: Vec<(Option<&str>, Option<&str>)> = ev
        .iter()
        .map(|e| (e.credential.as_deref(), e.path.as_deref()))
        .collect();
    assert_eq!(
        named,
        [
            (Some("registry"), Some("/basic/x")),
            (Some("api-key"), Some("/header/x")),
            (Some("maps"), Some("/query/x?a=1")),
            (None, Some("/elsewhere")),
        ]
    );
    for e in &ev {
        let json = e.to_json();
        assert!(
            !json.contains(REAL_A) && !json.contains(REAL_B) && !json.contains("AIzaQuery"),
            "{json}"
        );
        assert_eq!(e.method.as_deref(), Some("GET"));
        assert_eq!(e.host, "up.test");
    }
}

fn base64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(A[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}
