//! TLS to a shared store, against real PostgreSQL servers on 127.0.0.1: verify-full with
//! the right CA works; another CA, a certificate for another name, and a server that
//! declines TLS are refused with one sentence and nothing sent; a host that is not this
//! machine without TLS is refused before any connection.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

use cordon_store::pg_test::{Cluster, TestCa};
use cordon_store::{
    Password, PgTarget, Scope, Store, StoreAt, StoreError, StoreErrorKind, StoreTls,
};

fn tls_of(ca: &TestCa) -> StoreTls {
    StoreTls::from_pem(ca.pem().as_bytes(), Path::new("/etc/cordon/store-ca.pem")).unwrap()
}

fn open(url: &str, password: Option<&str>, tls: StoreTls) -> Result<Store, StoreError> {
    let t = PgTarget::with_tls(
        url,
        password.map(|p| Password::new(p.into())),
        "m1",
        Some(tls),
    )
    .unwrap();
    Store::open_at(&StoreAt::Postgres(t))
}

/// A refusal by TLS: the kind, the user-facing sentence, and no retries (a certificate
/// that was refused does not get better within the connect budget).
fn assert_tls_refused(r: Result<Store, StoreError>, took: Duration, why: &str) -> String {
    let e = r.expect_err("TLS must refuse this server");
    let text = e.to_string();
    assert!(matches!(e.kind(), StoreErrorKind::Tls(_)), "{text}");
    assert!(
        text.contains("TLS with verify-full failed")
            && text.contains("no login, password or query was sent")
            && text.contains("nothing was granted"),
        "{text}"
    );
    assert!(text.contains(why), "{why:?} not in: {text}");
    assert!(!text.contains("hunter2"), "{text}");
    assert!(took < Duration::from_millis(1500), "retried: {took:?}");
    text
}

/// verify-full with the CA that signed the server's certificate for `localhost`: the
/// store opens and works, over TLS (the server rejects every plaintext TCP login, and
/// its own view of the connection says TLS), also for a role logging in with a password
/// (SCRAM, with channel binding to the certificate).
#[test]
fn verify_full_with_the_right_ca_connects_and_works() {
    let ca = TestCa::new("cordon test CA");
    let Some(c) = Cluster::start_tcp(Some(&ca.issue(&["localhost"]))) else {
        return;
    };
    let port = c.port().unwrap();
    let db = c.fresh_database();
    let url = format!("postgres://postgres@localhost:{port}/{db}");
    let s = open(&url, None, tls_of(&ca)).unwrap();
    s.grant("fp", Scope::Once, None, "t").unwrap();
    assert!(s.consume("fp", None).unwrap().is_some());
    assert!(s.consume("fp", None).unwrap().is_none(), "spent once");
    // `sslmode=verify-full` spelled out is the same.
    let s2 = open(&format!("{url}?sslmode=verify-full"), None, tls_of(&ca)).unwrap();
    s2.grant("fp2", Scope::Always, None, "t").unwrap();
    assert!(s.consume("fp2", None).unwrap().is_some());
    // A role with a password, owning a database of its own: SCRAM over TLS.
    let mut admin = c.admin();
    admin
        .batch_execute("CREATE ROLE fleet LOGIN PASSWORD 'hunter2-tls'")
        .unwrap();
    admin
        .batch_execute(&format!("CREATE DATABASE {db}_f OWNER fleet"))
        .unwrap();
    let url = format!("postgres://fleet@localhost:{port}/{db}_f?channel_binding=require");
    let f = open(&url, Some("hunter2-tls"), tls_of(&ca)).unwrap();
    f.grant("fp3", Scope::Once, None, "t").unwrap();
    assert!(f.consume("fp3", None).unwrap().is_some());
    let row = c
        .admin()
        .query_one(
            "SELECT count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE a.usename = 'fleet' AND s.ssl",
            &[],
        )
        .unwrap();
    assert_eq!(
        row.get::<_, i64>(0),
        1,
        "the password role's connection is TLS"
    );
    // A wrong password is still refused by the server (the password is checked, over TLS).
    let start = Instant::now();
    let e = open(&url, Some("hunter2-wrong"), tls_of(&ca)).unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(2));
    assert!(!e.to_string().contains("hunter2"), "{e}");
}

/// A CA that did not sign the server's certificate (a server impersonating the store):
/// refused, naming why, before any login.
#[test]
fn a_wrong_ca_is_refused() {
    let ca = TestCa::new("cordon test CA");
    let Some(c) = Cluster::start_tcp(Some(&ca.issue(&["localhost"]))) else {
        return;
    };
    let db = c.fresh_database();
    let url = format!("postgres://postgres@localhost:{}/{db}", c.port().unwrap());
    // Another CA; and another CA under the same name as the right one (found by name,
    // refused by signature).
    for (other, why) in [
        (TestCa::new("another CA"), "UnknownIssuer"),
        (TestCa::new("cordon test CA"), "BadSignature"),
    ] {
        let start = Instant::now();
        let r = open(&url, Some("hunter2-x"), tls_of(&other));
        let text = assert_tls_refused(r, start.elapsed(), "invalid peer certificate");
        assert!(text.contains(why), "{text}");
    }
    // Second spelling: a self-signed server certificate given as its own "CA".
    let cert = ca.issue(&["localhost"]);
    let leaf_as_ca = StoreTls::from_pem(cert.cert_pem.as_bytes(), Path::new("/ca.pem"));
    if let Ok(t) = leaf_as_ca {
        let start = Instant::now();
        assert_tls_refused(
            open(&url, None, t),
            start.elapsed(),
            "invalid peer certificate",
        );
    }
    // Third: the system's public roots do not vouch for a private CA's certificate.
    let system = Path::new("/etc/ssl/certs/ca-certificates.crt");
    #[allow(clippy::disallowed_methods)] // reading a fixture
    if let Ok(pem) = std::fs::read(system) {
        let t = StoreTls::from_pem(&pem, system).unwrap();
        let start = Instant::now();
        assert_tls_refused(open(&url, None, t), start.elapsed(), "UnknownIssuer");
    }
}

/// The right CA, but the server's certificate names `localhost` and the URL another
/// host: refused, whether the other name is a DNS name reached at the same address
/// (`hostaddr`) or the address itself.
#[test]
fn a_certificate_for_another_name_is_refused() {
    let ca = TestCa::new("cordon test CA");
    let Some(c) = Cluster::start_tcp(Some(&ca.issue(&["localhost"]))) else {
        return;
    };
    let port = c.port().unwrap();
    let db = c.fresh_database();
    for url in [
        format!("postgres://postgres@db.fleet.test:{port}/{db}?hostaddr=127.0.0.1"),
        format!("postgres://postgres@127.0.0.1:{port}/{db}"),
    ] {
        let start = Instant::now();
        let text = assert_tls_refused(
            open(&url, None, tls_of(&ca)),
            start.elapsed(),
            "invalid peer certificate",
        );
        assert!(text.contains("not valid for name"), "{url}: {text}");
    }
    // The name that is on the certificate works at the same address.
    let url = format!("postgres://postgres@localhost:{port}/{db}?hostaddr=127.0.0.1");
    open(&url, None, tls_of(&ca)).unwrap();
}

/// A real server that serves plaintext TCP: with TLS configured cordon refuses it rather
/// than log in in plaintext (no downgrade), while a plaintext client shows that the
/// server would have taken one.
#[test]
fn a_server_without_tls_is_refused_not_downgraded() {
    let Some(c) = Cluster::start_tcp(None) else {
        return;
    };
    let port = c.port().unwrap();
    let db = c.fresh_database();
    let url = format!("postgres://postgres@localhost:{port}/{db}");
    // The server takes plaintext logins on TCP.
    postgres::Client::connect(&format!("{url}?sslmode=disable"), postgres::NoTls).unwrap();
    let ca = TestCa::new("cordon test CA");
    let start = Instant::now();
    assert_tls_refused(
        open(&url, Some("hunter2-x"), tls_of(&ca)),
        start.elapsed(),
        "the server does not offer TLS, and cordon never falls back to plaintext",
    );
}

/// What a client configured with TLS sends to a server that declines it: the 8-byte
/// SSLRequest and nothing after (no startup message with the user, no password).
#[test]
fn nothing_follows_a_declined_tls_request() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let mut got = Vec::new();
        // One connection per attempt; the client gives up on the first.
        listener.set_nonblocking(false).unwrap();
        let (mut conn, _) = listener.accept().unwrap();
        conn.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        let mut req = [0u8; 8];
        conn.read_exact(&mut req).unwrap();
        got.extend_from_slice(&req);
        conn.write_all(b"N").unwrap();
        let mut rest = [0u8; 256];
        while let Ok(n) = conn.read(&mut rest) {
            if n == 0 {
                break;
            }
            got.extend_from_slice(&rest[..n]);
        }
        listener.set_nonblocking(true).unwrap();
        let again = listener.accept().is_ok();
        (got, again)
    });
    let ca = TestCa::new("cordon test CA");
    let url = format!("postgres://secretuser@localhost:{port}/db");
    let start = Instant::now();
    let r = open(&url, Some("hunter2-x"), tls_of(&ca));
    assert_tls_refused(r, start.elapsed(), "does not offer TLS");
    let (got, again) = server.join().unwrap();
    // SSLRequest: length 8, code 80877103.
    assert_eq!(
        got,
        [0, 0, 0, 8, 4, 210, 22, 47],
        "sent after the refusal: {got:?}"
    );
    assert!(!again, "a second, plaintext attempt was made");
}

/// Without TLS a host that is not this machine is refused when the target is made, before
/// any connection, with one sentence naming the key to set; a listener at the address
/// the URL points to sees nothing.
#[test]
fn a_remote_host_without_tls_is_refused_before_any_connection() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    for url in [
        format!("postgres://u@db.fleet.test:{port}/c?hostaddr=127.0.0.1"),
        format!("postgres://u@db.fleet.test:{port}/c"),
        "postgres://u@10.0.0.5/c".to_string(),
        format!("postgres://u@localhost:{port}/c?hostaddr=192.0.2.7"),
    ] {
        let e = PgTarget::new(&url, Some(Password::new("hunter2-x".into())), "m1")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("is not this machine and TLS is not configured: set `[store] ca_file`"),
            "{url}: {e}"
        );
        assert!(!e.contains("hunter2"), "{e}");
    }
    std::thread::sleep(Duration::from_millis(100));
    assert!(listener.accept().is_err(), "a connection was made");
}

/// A client certificate (`cert_file`, `key_file`) logs a role in without a password on a
/// server that asks for one; no certificate, one for another role, or one from another
/// CA is refused.
#[test]
fn a_client_certificate_logs_in_and_others_are_refused() {
    let ca = TestCa::new("cordon test CA");
    let clients = TestCa::new("cordon clients CA");
    let Some(c) = Cluster::start_tcp_with_clients(Some(&ca.issue(&["localhost"])), Some(&clients))
    else {
        return;
    };
    let db = c.fresh_database();
    let mut admin = c.admin();
    admin.batch_execute("CREATE ROLE fleet_m1 LOGIN").unwrap();
    admin
        .batch_execute(&format!("CREATE DATABASE {db}_c OWNER fleet_m1"))
        .unwrap();
    let url = format!("postgres://fleet_m1@localhost:{}/{db}_c", c.port().unwrap());
    let with_cert = |cert: &cordon_store::pg_test::TestCert| {
        StoreTls::with_client_cert(
            ca.pem().as_bytes(),
            Path::new("/ca.pem"),
            cert.cert_pem.as_bytes(),
            cert.key_pem.as_bytes(),
            Path::new("/client.pem"),
        )
        .unwrap()
    };
    let s = open(&url, None, with_cert(&clients.issue_client("fleet_m1"))).unwrap();
    s.grant("fp", Scope::Once, None, "t").unwrap();
    assert!(s.consume("fp", None).unwrap().is_some());
    for (tls, what) in [
        (tls_of(&ca), "no client certificate"),
        (
            with_cert(&clients.issue_client("postgres")),
            "another role's certificate",
        ),
        (
            with_cert(&TestCa::new("cordon clients CA").issue_client("fleet_m1")),
            "a certificate from another CA",
        ),
    ] {
        let e = open(&url, None, tls).expect_err(what);
        assert!(e.to_string().contains("nothing was granted"), "{what}: {e}");
    }
    // A key that does not belong to the certificate is refused before connecting.
    let cert = clients.issue_client("fleet_m1");
    let other = clients.issue_client("fleet_m1");
    let e = StoreTls::with_client_cert(
        ca.pem().as_bytes(),
        Path::new("/ca.pem"),
        cert.cert_pem.as_bytes(),
        other.key_pem.as_bytes(),
        Path::new("/client.pem"),
    );
    let e = e.expect_err("a key of another certificate");
    assert!(e.to_string().contains("/client.pem"), "{e}");
    assert!(
        e.to_string().contains("do not make a client identity"),
        "{e}"
    );
}

/// Numbers for the report: opening a store over TLS (handshake, login, schema check)
/// against the same server's Unix socket. `cargo test -p cordon-store --release --test
/// tls -- --ignored --nocapture measure_open`
#[test]
#[ignore = "a measurement, not a check"]
fn measure_open() {
    let ca = TestCa::new("cordon test CA");
    let Some(c) = Cluster::start_tcp(Some(&ca.issue(&["localhost"]))) else {
        return;
    };
    let db = c.fresh_database();
    let url = format!("postgres://postgres@localhost:{}/{db}", c.port().unwrap());
    drop(open(&url, None, tls_of(&ca)).unwrap());
    const N: u32 = 50;
    let start = Instant::now();
    for _ in 0..N {
        drop(open(&url, None, tls_of(&ca)).unwrap());
    }
    let tls = start.elapsed() / N;
    let start = Instant::now();
    for _ in 0..N {
        drop(Store::open_at(&StoreAt::Postgres(c.target(&db, "m1"))).unwrap());
    }
    let socket = start.elapsed() / N;
    let s = open(&url, None, tls_of(&ca)).unwrap();
    let start = Instant::now();
    for i in 0..N {
        s.grant(&format!("fp-{i}"), Scope::Once, None, "t").unwrap();
        assert!(s.consume(&format!("fp-{i}"), None).unwrap().is_some());
    }
    let round = start.elapsed() / N;
    eprintln!("open over TLS {tls:?}, over the socket {socket:?}; grant+spend over TLS {round:?}");
}
