//! Interception of hosts with method and path rules, against a local HTTPS upstream whose
//! test CA the proxy is told to trust explicitly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::tls::{TestCa, TlsClient, https_upstream};
use common::*;
use cordon_egress::{Decision, EgressHandle, EgressProxy, NetCode, Protocol, ProxyConfig, RunCa};
use cordon_policy::net::{NetworkPolicy, RequestRule, RequestRuleSpec};
use rustls::pki_types::CertificateDer;

fn ruled(port: u16, spec: RequestRuleSpec, others: &[&str]) -> NetworkPolicy {
    let spec = RequestRuleSpec {
        host: format!("up.test:{port}"),
        ..spec
    };
    let allow: Vec<&str> = others.to_vec();
    let none: &[&str] = &[];
    NetworkPolicy::from_lists(&allow, none, &[LOOPBACK])
        .unwrap()
        .with_rules(vec![RequestRule::parse(&spec).unwrap()])
}

/// Start a proxy with a run CA; returns the CA certificate the sandbox would trust.
fn start_intercepting(
    policy: NetworkPolicy,
    upstream_root: Option<&CertificateDer<'static>>,
) -> (EgressHandle, CertificateDer<'static>) {
    let ca = RunCa::generate().unwrap();
    let ca_cert = ca.cert_der().clone();
    let mut config = ProxyConfig::new(policy)
        .with_resolver(resolver(&[
            ("up.test", "127.0.0.1"),
            ("other.test", "127.0.0.1"),
        ]))
        .with_limits(fast_limits())
        .with_ca(ca);
    if let Some(root) = upstream_root {
        config = config.with_extra_upstream_roots(vec![root.clone()]);
    }
    let proxy = EgressProxy::start_tcp(config, "127.0.0.1:0".parse().unwrap()).unwrap();
    (proxy, ca_cert)
}

#[tokio::test]
async fn methods_and_paths_are_judged_inside_tls() {
    let test_ca = TestCa::new();
    let up = https_upstream(&test_ca, &["up.test"]).await;
    let spec = RequestRuleSpec {
        methods: vec!["GET".into()],
        paths: vec!["/org/repo".into()],
        ..RequestRuleSpec::default()
    };
    let (proxy, run_ca) = start_intercepting(ruled(up.port(), spec, &[]), Some(&test_ca.cert));
    let addr = proxy.tcp_addr().unwrap();
    let mut c = TlsClient::connect(addr, "up.test", up.port(), &run_ca)
        .await
        .unwrap();
    let ok = c.send("GET", "/org/repo/issues?q=1", &[], "").await;
    assert_eq!(ok.status, 200, "{ok:?}");
    assert!(
        ok.body.starts_with("GET /org/repo/issues?q=1\n"),
        "{}",
        ok.body
    );
    let post = c.send("POST", "/org/repo/issues", &[], "x").await;
    assert_eq!(post.status, 403);
    assert_eq!(post.block.as_deref(), Some("method-not-allowed"));
    let other = c.send("GET", "/org/repository", &[], "").await;
    assert_eq!(other.block.as_deref(), Some("path-not-allowed"));
    let sneaky = c.send("GET", "/org/repo/../../admin", &[], "").await;
    assert_eq!(sneaky.status, 403);
    // The connection stays usable after refusals.
    let again = c.send("GET", "/org/repo", &[], "").await;
    assert_eq!(again.status, 200);
    let ev = events(&proxy, 5).await;
    let refused: Vec<_> = ev
        .iter()
        .filter(|e| e.protocol == Protocol::Intercepted && e.decision == Decision::Deny)
        .collect();
    assert_eq!(refused.len(), 3, "{ev:?}");
    assert_eq!(refused[0].code, NetCode::MethodNotAllowed);
    assert_eq!(refused[0].method.as_deref(), Some("POST"));
    assert_eq!(refused[0].path.as_deref(), Some("/org/repo/issues"));
    assert_eq!(refused[0].host, "up.test");
}

#[tokio::test]
async fn git_fetch_passes_and_push_is_refused() {
    let test_ca = TestCa::new();
    let up = https_upstream(&test_ca, &["up.test"]).await;
    let spec = RequestRuleSpec {
        read_only: true,
        paths: vec!["/org/repo".into()],
        ..RequestRuleSpec::default()
    };
    let (proxy, run_ca) = start_intercepting(ruled(up.port(), spec, &[]), Some(&test_ca.cert));
    let mut c = TlsClient::connect(proxy.tcp_addr().unwrap(), "up.test", up.port(), &run_ca)
        .await
        .unwrap();
    let refs = c
        .send(
            "GET",
            "/org/repo.git/info/refs?service=git-upload-pack",
            &[],
            "",
        )
        .await;
    assert_eq!(refs.status, 200);
    let pack = c
        .send("POST", "/org/repo.git/git-upload-pack", &[], "0000")
        .await;
    assert_eq!(pack.status, 200, "{pack:?}");
    let push_refs = c
        .send(
            "GET",
            "/org/repo.git/info/refs?service=git-receive-pack",
            &[],
            "",
        )
        .await;
    assert_eq!(push_refs.block.as_deref(), Some("git-push"));
    let push = c
        .send("POST", "/org/repo.git/git-receive-pack", &[], "0000")
        .await;
    assert_eq!(push.status, 403);
    assert_eq!(push.block.as_deref(), Some("git-push"));
    assert!(push.body.contains("git_push = true"), "{}", push.body);
}

#[tokio::test]
async fn hosts_without_rules_are_tunnelled_untouched() {
    let test_ca = TestCa::new();
    let up = https_upstream(&test_ca, &["up.test", "other.test"]).await;
    let other = format!("other.test:{}", up.port());
    let spec = RequestRuleSpec {
        read_only: true,
        ..RequestRuleSpec::default()
    };
    let (proxy, run_ca) =
        start_intercepting(ruled(up.port(), spec, &[&other]), Some(&test_ca.cert));
    let addr = proxy.tcp_addr().unwrap();
    // The upstream's own certificate arrives: the run's CA is not involved.
    let mut direct = TlsClient::connect(addr, "other.test", up.port(), &test_ca.cert)
        .await
        .unwrap();
    assert_eq!(direct.send("DELETE", "/x", &[], "").await.status, 200);
    assert!(
        TlsClient::connect(addr, "other.test", up.port(), &run_ca)
            .await
            .is_err(),
        "an unruled host must not be intercepted"
    );
}

#[tokio::test]
async fn an_upstream_that_does_not_verify_is_refused() {
    let test_ca = TestCa::new();
    let up = https_upstream(&test_ca, &["up.test"]).await;
    let spec = RequestRuleSpec {
        read_only: true,
        ..RequestRuleSpec::default()
    };
    // The test CA is not given to the proxy: the system's roots alone do not know it.
    let (proxy, run_ca) = start_intercepting(ruled(up.port(), spec, &[]), None);
    let mut c = TlsClient::connect(proxy.tcp_addr().unwrap(), "up.test", up.port(), &run_ca)
        .await
        .unwrap();
    let a = c.send("GET", "/", &[], "").await;
    assert_eq!(a.status, 502, "{a:?}");
    assert_eq!(a.block.as_deref(), Some("tls-error"));
}

#[tokio::test]
async fn without_a_ca_ruled_tls_is_refused_not_relayed() {
    let test_ca = TestCa::new();
    let up = https_upstream(&test_ca, &["up.test"]).await;
    let spec = RequestRuleSpec {
        read_only: true,
        ..RequestRuleSpec::default()
    };
    let config = ProxyConfig::new(ruled(up.port(), spec, &[]))
        .with_resolver(resolver(&[("up.test", "127.0.0.1")]))
        .with_limits(fast_limits());
    let proxy = EgressProxy::start_tcp(config, "127.0.0.1:0".parse().unwrap()).unwrap();
    let r = TlsClient::connect(
        proxy.tcp_addr().unwrap(),
        "up.test",
        up.port(),
        &test_ca.cert,
    )
    .await;
    assert!(r.is_err(), "a ruled host must never be relayed uninspected");
    let ev = events(&proxy, 1).await;
    assert_eq!(ev[0].code, NetCode::TlsError, "{ev:?}");
}

#[tokio::test]
async fn plain_http_through_a_tunnel_to_a_ruled_host_is_judged_too() {
    let up = http_server("127.0.0.1", 0, "plain").await;
    let spec = RequestRuleSpec {
        read_only: true,
        ..RequestRuleSpec::default()
    };
    let (proxy, _) = start_intercepting(ruled(up.addr.port(), spec, &[]), None);
    let (resp, mut s) = connect(
        proxy.tcp_addr().unwrap(),
        &format!("up.test:{}", up.addr.port()),
    )
    .await;
    assert_eq!(resp.status, 200);
    use tokio::io::AsyncWriteExt;
    s.write_all(b"DELETE /x HTTP/1.1\r\nHost: up.test\r\nContent-Length: 0\r\n\r\n")
        .await
        .unwrap();
    let r = read_response(&mut s, false).await;
    assert_eq!(r.status, 403);
    assert_eq!(r.block(), Some("method-not-allowed"));
}

#[tokio::test]
async fn absolute_form_plain_http_is_judged_by_the_rules() {
    let up = http_server("127.0.0.1", 0, "plain").await;
    let port = up.addr.port();
    let spec = RequestRuleSpec {
        read_only: true,
        ..RequestRuleSpec::default()
    };
    let (proxy, _) = start_intercepting(ruled(port, spec, &[]), None);
    let addr = proxy.tcp_addr().unwrap();
    // The fixture answers 404 for this path: what matters is that it was reached.
    let r = get(addr, &format!("http://up.test:{port}/a")).await;
    assert_eq!((r.status, r.block()), (404, None), "{r:?}");
    let req = format!(
        "POST http://up.test:{port}/a HTTP/1.1\r\nHost: up.test\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    let r = raw(addr, req.as_bytes()).await;
    assert_eq!(r.block(), Some("method-not-allowed"));
}

// ---------------------------------------------------------------- credentials

const REAL: &str = "ghp_R3alSecretValue0123456789abcdefABCD";

fn with_credential(
    port: u16,
    root: &CertificateDer<'static>,
) -> (EgressHandle, CertificateDer<'static>, String) {
    let cred =
        cordon_egress::Credential::bearer("GH_TOKEN", REAL.into(), &[&format!("up.test:{port}")])
            .unwrap()
            .with_methods(&["GET"])
            .with_paths(&["/api"])
            .unwrap();
    let placeholder = cred.placeholder().to_owned();
    let other = RequestRuleSpec {
        host: format!("other.test:{port}"),
        ..RequestRuleSpec::default()
    };
    let none: &[&str] = &[];
    let policy =
        NetworkPolicy::from_lists(&[format!("up.test:{port}")], &[], &[LOOPBACK.to_string()])
            .unwrap()
            .with_rules(vec![RequestRule::parse(&other).unwrap()]);
    let _ = none;
    let ca = RunCa::generate().unwrap();
    let ca_cert = ca.cert_der().clone();
    let config = ProxyConfig::new(policy)
        .with_resolver(resolver(&[
            ("up.test", "127.0.0.1"),
            ("other.test", "127.0.0.1"),
        ]))
        .with_limits(fast_limits())
        .with_ca(ca)
        .with_extra_upstream_roots(vec![root.clone()])
        .with_credentials(vec![cred]);
    let proxy = EgressProxy::start_tcp(config, "127.0.0.1:0".parse().unwrap()).unwrap();
    (proxy, ca_cert, placeholder)
}

#[tokio::test]
async fn the_placeholder_is_swapped_only_where_the_credential_may_go() {
    let test_ca = TestCa::new();
    let (up, seen) = common::tls::https_upstream_seen(&test_ca, &["up.test", "other.test"]).await;
    let (proxy, run_ca, ph) = with_credential(up.port(), &test_ca.cert);
    assert!(ph.starts_with("ghp_") && ph.len() == REAL.len() && ph != REAL);
    let addr = proxy.tcp_addr().unwrap();
    let mut c = TlsClient::connect(addr, "up.test", up.port(), &run_ca)
        .await
        .unwrap();

    // Covered: the placeholder becomes the real value upstream, and the echo of it comes
    // back redacted.
    let auth = format!("token {ph}");
    let a = c
        .send("GET", "/api/user", &[("authorization", &auth)], "")
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert!(
        seen.lock()
            .unwrap()
            .last()
            .unwrap()
            .contains(&format!("authorization: token {REAL}"))
    );
    assert!(
        !a.body.contains(REAL),
        "the real value came back: {}",
        a.body
    );
    assert!(
        a.body.contains(&format!("authorization: token {ph}")),
        "{}",
        a.body
    );

    // Covered, no header: added as a bearer token.
    let a = c.send("GET", "/api/x", &[], "").await;
    assert_eq!(a.status, 200);
    assert!(
        seen.lock()
            .unwrap()
            .last()
            .unwrap()
            .contains(&format!("authorization: Bearer {REAL}"))
    );

    // Same host, a method or path the credential does not cover: nothing is added, and
    // the placeholder is refused as a leak.
    let n = seen.lock().unwrap().len();
    let a = c.send("POST", "/api/x", &[], "").await;
    assert_eq!(a.status, 200);
    assert!(
        !seen.lock().unwrap()[n].contains(REAL),
        "added to an uncovered method"
    );
    let a = c
        .send("GET", "/elsewhere", &[("authorization", &auth)], "")
        .await;
    assert_eq!(a.block.as_deref(), Some("credential-leak"));

    // Another allowed host: the placeholder in a header, or in a body, is an exfiltration.
    let mut o = TlsClient::connect(addr, "other.test", up.port(), &run_ca)
        .await
        .unwrap();
    let a = o.send("GET", "/", &[("x-token", &ph)], "").await;
    assert_eq!(
        (a.status, a.block.as_deref()),
        (403, Some("credential-leak"))
    );
    let a = o.send("POST", "/upload", &[], &format!("token={ph}")).await;
    assert_eq!(a.block.as_deref(), Some("credential-leak"));
    let a = o.send("POST", "/upload", &[], "nothing to see").await;
    assert_eq!(a.status, 200);
    for line in seen.lock().unwrap().iter() {
        assert!(
            !line.contains(&ph) || !line.contains("other.test"),
            "{line}"
        );
    }
    let ev = events(&proxy, 6).await;
    let leaks: Vec<_> = ev
        .iter()
        .filter(|e| e.code == NetCode::CredentialLeak)
        .collect();
    assert!(leaks.len() >= 3, "{ev:?}");
    assert!(
        leaks
            .iter()
            .all(|e| e.credential.as_deref() == Some("GH_TOKEN"))
    );
    let injected = ev
        .iter()
        .filter(|e| e.credential.is_some() && e.decision == Decision::Allow)
        .count();
    assert_eq!(injected, 2, "{ev:?}");
    assert!(
        ev.iter().all(|e| !e.to_json().contains(REAL)),
        "an event holds the real value"
    );
}

#[tokio::test]
async fn a_redirect_to_another_host_carries_no_credential() {
    let test_ca = TestCa::new();
    let (up, seen) = common::tls::https_upstream_seen(&test_ca, &["up.test", "other.test"]).await;
    let (proxy, run_ca, _) = with_credential(up.port(), &test_ca.cert);
    let addr = proxy.tcp_addr().unwrap();
    let mut c = TlsClient::connect(addr, "up.test", up.port(), &run_ca)
        .await
        .unwrap();
    let to = format!("https://other.test:{}/landing", up.port());
    let a = c
        .send("GET", &format!("/api/redirect?to={to}"), &[], "")
        .await;
    assert_eq!(a.status, 302);
    assert_eq!(a.location.as_deref(), Some(to.as_str()));
    // The client follows, as a client does: a new request, judged on its own.
    let mut o = TlsClient::connect(addr, "other.test", up.port(), &run_ca)
        .await
        .unwrap();
    let b = o.send("GET", "/landing", &[], "").await;
    assert_eq!(b.status, 200);
    let log = seen.lock().unwrap();
    let landing = log.iter().find(|l| l.starts_with("GET /landing")).unwrap();
    assert!(
        !landing.contains(REAL) && !landing.contains("authorization"),
        "{landing}"
    );
}

#[tokio::test]
async fn the_real_value_goes_only_into_authorization_and_responses_come_back_unencoded() {
    let test_ca = TestCa::new();
    let (up, seen) = common::tls::https_upstream_seen(&test_ca, &["up.test", "other.test"]).await;
    let (proxy, run_ca, ph) = with_credential(up.port(), &test_ca.cert);
    let addr = proxy.tcp_addr().unwrap();
    let mut c = TlsClient::connect(addr, "up.test", up.port(), &run_ca)
        .await
        .unwrap();
    // A header the upstream might echo (an `Accept` it complains about) keeps the
    // placeholder; a compressed answer is not asked for.
    let accept = format!("application/vnd.{ph}");
    let auth = format!("token {ph}");
    let a = c
        .send(
            "GET",
            "/api/user",
            &[
                ("authorization", &auth),
                ("accept", &accept),
                ("accept-encoding", "gzip, br"),
            ],
            "",
        )
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    let head = seen.lock().unwrap().last().unwrap().clone();
    assert!(
        head.contains(&format!("authorization: token {REAL}")),
        "{head}"
    );
    assert!(
        head.contains(&format!("accept: application/vnd.{ph}")),
        "{head}"
    );
    assert!(!head.contains("gzip"), "{head}");
    assert!(head.contains("accept-encoding: identity"), "{head}");
    assert!(!a.body.contains(REAL), "{}", a.body);
}

#[tokio::test]
async fn method_overrides_and_rewrite_headers_are_judged_too() {
    let test_ca = TestCa::new();
    let up = https_upstream(&test_ca, &["up.test"]).await;
    let spec = RequestRuleSpec {
        methods: vec!["GET".into(), "POST".into()],
        paths: vec!["/org/repo".into()],
        ..RequestRuleSpec::default()
    };
    let (proxy, run_ca) = start_intercepting(ruled(up.port(), spec, &[]), Some(&test_ca.cert));
    let addr = proxy.tcp_addr().unwrap();
    let mut c = TlsClient::connect(addr, "up.test", up.port(), &run_ca)
        .await
        .unwrap();
    let plain = c.send("POST", "/org/repo/issues", &[], "x").await;
    assert_eq!(plain.status, 200, "{plain:?}");
    let header = c
        .send(
            "POST",
            "/org/repo/issues/1",
            &[("x-http-method-override", "DELETE")],
            "",
        )
        .await;
    assert_eq!(header.block.as_deref(), Some("method-not-allowed"));
    let query = c
        .send("POST", "/org/repo/issues/1?_method=delete", &[], "")
        .await;
    assert_eq!(query.block.as_deref(), Some("method-not-allowed"));
    let rewrite = c
        .send(
            "GET",
            "/org/repo",
            &[("x-original-url", "/admin/users")],
            "",
        )
        .await;
    assert_eq!(rewrite.block.as_deref(), Some("path-not-allowed"));
}
