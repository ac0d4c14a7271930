#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! What the proxy trusts for the upstreams it inspects: the system's roots and the roots
//! its caller passes explicitly, never a file that `SSL_CERT_FILE` or `SSL_CERT_DIR` in
//! cordon's own environment names. Whoever starts cordon (an agent harness, a nested run
//! whose environment points at a run's bundle) does not decide whom it trusts.
//!
//! One test in its own binary: it sets the variables for the whole process.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::tls::{TestCa, TlsClient, https_upstream};
use common::*;
use cordon_egress::{EgressProxy, ProxyConfig, RunCa};
use cordon_policy::net::{NetworkPolicy, RequestRule, RequestRuleSpec};

#[allow(unsafe_code)]
#[tokio::test]
async fn ssl_cert_file_in_cordons_environment_widens_nothing() {
    let test_ca = TestCa::new();
    let dir = tempfile::tempdir().unwrap();
    let pem = dir.path().join("ca.pem");
    std::fs::write(&pem, test_ca.pem()).unwrap();
    // SAFETY: the only test of this binary; nothing else reads the environment while it
    // is changed (the proxy and the upstream start after).
    unsafe {
        std::env::set_var("SSL_CERT_FILE", &pem);
        std::env::set_var("SSL_CERT_DIR", dir.path());
    }
    let up = https_upstream(&test_ca, &["up.test"]).await;
    let spec = RequestRuleSpec {
        host: format!("up.test:{}", up.port()),
        read_only: true,
        ..RequestRuleSpec::default()
    };
    let none: &[&str] = &[];
    let policy = NetworkPolicy::from_lists(none, none, &[LOOPBACK])
        .unwrap()
        .with_rules(vec![RequestRule::parse(&spec).unwrap()]);
    let ca = RunCa::generate().unwrap();
    let run_ca = ca.cert_der().clone();
    // Neither is the sandbox's bundle widened by it.
    assert!(
        !ca.bundle_pem().contains(test_ca.pem().trim()),
        "the bundle took SSL_CERT_FILE"
    );
    let config = ProxyConfig::new(policy)
        .with_resolver(resolver(&[("up.test", "127.0.0.1")]))
        .with_limits(fast_limits())
        .with_ca(ca);
    let proxy = EgressProxy::start_tcp(config, "127.0.0.1:0".parse().unwrap()).unwrap();
    let mut c = TlsClient::connect(proxy.tcp_addr().unwrap(), "up.test", up.port(), &run_ca)
        .await
        .unwrap();
    let a = c.send("GET", "/", &[], "").await;
    assert_eq!(
        (a.status, a.block.as_deref()),
        (502, Some("tls-error")),
        "an upstream trusted only through SSL_CERT_FILE was accepted: {a:?}"
    );
}
