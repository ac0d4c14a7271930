//! Test support (feature `test-support`): a throwaway PostgreSQL cluster per test process,
//! a fresh database per test, and [`Backend`], so that one test body runs against both
//! stores.
//!
//! The cluster is started by `scripts/pg-test-cluster.sh run DIR` (initdb in a temporary
//! directory, the server on a Unix socket there) and stopped when the pipe this process
//! holds to the script closes, that is when the test process ends, however it ends.
//!
//! Without PostgreSQL's server binaries the PostgreSQL half of a test is skipped with a
//! line on stderr, unless `CORDON_REQUIRE_PG_TESTS=1`, which makes it a failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};

use crate::{PgTarget, Store, StoreAt};

/// The script that runs a cluster (see the module docs).
pub fn cluster_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/pg-test-cluster.sh")
}

/// Whether a missing PostgreSQL fails the test (`CORDON_REQUIRE_PG_TESTS=1`).
pub fn required() -> bool {
    std::env::var_os("CORDON_REQUIRE_PG_TESTS").is_some_and(|v| v == "1")
}

/// A running PostgreSQL cluster on a Unix socket (and on 127.0.0.1, see
/// [`Cluster::start_tcp`]).
#[derive(Debug)]
pub struct Cluster {
    dir: PathBuf,
    /// The TCP port on 127.0.0.1, when it listens there.
    port: Option<u16>,
    /// The script, holding the server until its stdin closes.
    holder: Mutex<Option<Child>>,
}

fn random_name(prefix: &str) -> String {
    let mut b = [0u8; 8];
    getrandom::fill(&mut b).expect("random bytes");
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!("{prefix}{hex}")
}

impl Cluster {
    /// Start a new cluster of this process's own (the fault tests stop and start theirs);
    /// `None` when PostgreSQL is not installed and not [`required`].
    pub fn start_private() -> Option<Cluster> {
        Cluster::start_with(None, None, None)
    }

    /// A new cluster of this process's own that also listens on a free port of
    /// 127.0.0.1: with `tls`, TCP takes TLS only (that server certificate; every
    /// plaintext TCP login rejected); without, plaintext TCP (trust).
    pub fn start_tcp(tls: Option<&TestCert>) -> Option<Cluster> {
        Cluster::start_tcp_with_clients(tls, None)
    }

    /// [`Cluster::start_tcp`] with TLS where roles other than `postgres` log in by a
    /// client certificate signed by `clients` (its common name is the role).
    pub fn start_tcp_with_clients(
        tls: Option<&TestCert>,
        clients: Option<&TestCa>,
    ) -> Option<Cluster> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        Cluster::start_with(Some(port), tls, clients)
    }

    fn start_with(
        port: Option<u16>,
        tls: Option<&TestCert>,
        clients: Option<&TestCa>,
    ) -> Option<Cluster> {
        let dir = std::env::temp_dir().join(random_name("cordon-pg-"));
        let mut cmd = Command::new("bash");
        // Kept until the cluster is made (the script copies the files into it).
        let tls_dir = tempfile::tempdir().expect("a temporary directory");
        if let Some(port) = port {
            cmd.env("CORDON_PG_TEST_PORT", port.to_string());
        }
        if let Some(cert) = tls {
            #[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
            {
                std::fs::write(tls_dir.path().join("server.crt"), &cert.cert_pem).unwrap();
                std::fs::write(tls_dir.path().join("server.key"), &cert.key_pem).unwrap();
                if let Some(ca) = clients {
                    std::fs::write(tls_dir.path().join("client-ca.crt"), ca.pem()).unwrap();
                }
            }
            cmd.env("CORDON_PG_TEST_TLS", tls_dir.path());
        }
        let mut child = match cmd
            .arg(cluster_script())
            .arg("run")
            .arg(&dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
        {
            Ok(c) => c,
            Err(e) => return unavailable(&format!("bash could not run: {e}")),
        };
        let out = child.stdout.take().expect("stdout piped");
        let mut line = String::new();
        let _ = BufReader::new(out).read_line(&mut line);
        if !line.starts_with("ready ") {
            let _ = child.wait();
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut e, &mut err);
            }
            return unavailable(&format!("the test cluster did not start: {}", err.trim()));
        }
        Some(Cluster {
            dir,
            port,
            holder: Mutex::new(Some(child)),
        })
    }

    /// The cluster shared by every test of this process, started on first use.
    pub fn shared() -> Option<&'static Cluster> {
        static SHARED: OnceLock<Option<Cluster>> = OnceLock::new();
        SHARED.get_or_init(Cluster::start_private).as_ref()
    }

    /// The directory holding the cluster and its socket.
    pub fn socket_dir(&self) -> &Path {
        &self.dir
    }

    /// The URL of `db` in this cluster (role `postgres`, no password), on its socket.
    pub fn url(&self, db: &str) -> String {
        let port = self.port.map(|p| format!("&port={p}")).unwrap_or_default();
        format!(
            "postgresql:///{db}?host={}&user=postgres{port}",
            self.dir.display()
        )
    }

    /// The TCP port on 127.0.0.1 ([`Cluster::start_tcp`]).
    pub fn port(&self) -> Option<u16> {
        self.port
    }

    /// A client to the `postgres` database, for administration.
    pub fn admin(&self) -> postgres::Client {
        postgres::Client::connect(&self.url("postgres"), postgres::NoTls)
            .expect("connect to the test cluster")
    }

    /// A client to database `db` as `postgres`, for administration inside it (grants).
    pub fn admin_of(&self, db: &str) -> postgres::Client {
        postgres::Client::connect(&self.url(db), postgres::NoTls)
            .expect("connect to the test database")
    }

    /// A new empty database with a random name; its name.
    pub fn fresh_database(&self) -> String {
        let name = random_name("cordon_test_");
        self.admin()
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .expect("create a test database");
        name
    }

    /// A target naming `db` in this cluster, as machine `machine`.
    pub fn target(&self, db: &str, machine: &str) -> PgTarget {
        PgTarget::new(&self.url(db), None, machine).expect("a test target")
    }

    /// Stop the server (`fast` or `immediate`), keeping its data.
    pub fn stop(&self, mode: &str) {
        let ok = Command::new("bash")
            .arg(cluster_script())
            .args(["stop", &self.dir.display().to_string(), mode])
            .status()
            .expect("run the cluster script");
        assert!(ok.success(), "the test cluster did not stop");
    }

    /// Start the server again after [`Cluster::stop`].
    pub fn restart(&self) {
        let ok = Command::new("bash")
            .arg(cluster_script())
            .args(["start", &self.dir.display().to_string()])
            .status()
            .expect("run the cluster script");
        assert!(ok.success(), "the test cluster did not start again");
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Some(mut child) = self.holder.lock().ok().and_then(|mut h| h.take()) {
            // Closing the pipe stops the server and removes its directory.
            drop(child.stdin.take());
            let _ = child.wait();
        }
    }
}

/// A certificate authority made for one test, issuing server certificates.
pub struct TestCa {
    pem: String,
    issuer: rcgen::Issuer<'static, rcgen::KeyPair>,
}

impl std::fmt::Debug for TestCa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestCa").finish_non_exhaustive()
    }
}

/// A server certificate and its key, PEM.
#[derive(Debug, Clone)]
pub struct TestCert {
    /// The certificate.
    pub cert_pem: String,
    /// Its private key (PKCS#8).
    pub key_pem: String,
}

impl TestCa {
    /// A new CA named `name`, with a fresh key.
    pub fn new(name: &str) -> TestCa {
        use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyUsagePurpose};
        let key = rcgen::KeyPair::generate().expect("a CA key");
        let mut params = CertificateParams::default();
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let cert = params.self_signed(&key).expect("a CA certificate");
        TestCa {
            pem: cert.pem(),
            issuer: rcgen::Issuer::new(params, key),
        }
    }

    /// The CA's certificate, PEM.
    pub fn pem(&self) -> &str {
        &self.pem
    }

    /// A client certificate for role `role` (its common name), signed by this CA.
    pub fn issue_client(&self, role: &str) -> TestCert {
        use rcgen::{CertificateParams, DnType, ExtendedKeyUsagePurpose, KeyUsagePurpose};
        let key = rcgen::KeyPair::generate().expect("a client key");
        let mut params = CertificateParams::default();
        params.distinguished_name.push(DnType::CommonName, role);
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let cert = params
            .signed_by(&key, &self.issuer)
            .expect("a client certificate");
        TestCert {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        }
    }

    /// A server certificate for the DNS names `names`, signed by this CA.
    pub fn issue(&self, names: &[&str]) -> TestCert {
        use rcgen::{CertificateParams, DnType, ExtendedKeyUsagePurpose, KeyUsagePurpose};
        let key = rcgen::KeyPair::generate().expect("a server key");
        let names: Vec<String> = names.iter().map(|n| (*n).to_string()).collect();
        let mut params = CertificateParams::new(names.clone()).expect("server names");
        params.distinguished_name.push(
            DnType::CommonName,
            names.first().cloned().unwrap_or_default(),
        );
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let cert = params
            .signed_by(&key, &self.issuer)
            .expect("a server certificate");
        TestCert {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        }
    }
}

fn unavailable<T>(why: &str) -> Option<T> {
    assert!(
        !required(),
        "PostgreSQL tests are required (CORDON_REQUIRE_PG_TESTS=1) but {why}"
    );
    eprintln!("skipping the PostgreSQL half of this test: {why}");
    None
}

/// One of the two stores a test body runs against.
#[derive(Debug)]
pub enum Backend {
    /// A store file in a temporary directory.
    Sqlite(tempfile::TempDir, PathBuf),
    /// A fresh database in the shared test cluster.
    Postgres(PgTarget),
}

impl Backend {
    /// A new SQLite store file.
    pub fn sqlite() -> Backend {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("store.sqlite3");
        Backend::Sqlite(dir, path)
    }

    /// A new PostgreSQL database (machine `test-machine`); `None`: skip (see the module
    /// docs).
    pub fn postgres() -> Option<Backend> {
        let cluster = Cluster::shared()?;
        let db = cluster.fresh_database();
        Some(Backend::Postgres(cluster.target(&db, "test-machine")))
    }

    /// Where the store lives.
    pub fn at(&self) -> StoreAt {
        match self {
            Backend::Sqlite(_, p) => StoreAt::File(p.clone()),
            Backend::Postgres(t) => StoreAt::Postgres(t.clone()),
        }
    }

    /// A new connection to this backend's store.
    pub fn open(&self) -> Store {
        Store::open_at(&self.at()).expect("open the test store")
    }

    /// `sqlite` or `postgres`, for messages.
    pub fn name(&self) -> &'static str {
        match self {
            Backend::Sqlite(..) => "sqlite",
            Backend::Postgres(_) => "postgres",
        }
    }

    /// Whether this is the PostgreSQL backend.
    pub fn is_pg(&self) -> bool {
        matches!(self, Backend::Postgres(_))
    }
}

/// One test body, two backends: `both_backends!(fn name(b) { … })` makes a module `name`
/// with tests `sqlite` and `postgres`, each calling the body with a fresh
/// [`Backend`](crate::pg_test::Backend) `b`.
#[macro_export]
macro_rules! both_backends {
    ($(#[$meta:meta])* fn $name:ident($b:ident) $body:block) => {
        $(#[$meta])*
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            fn body($b: &$crate::pg_test::Backend) $body
            #[test]
            fn sqlite() {
                body(&$crate::pg_test::Backend::sqlite());
            }
            #[test]
            fn postgres() {
                if let Some(b) = $crate::pg_test::Backend::postgres() {
                    body(&b);
                }
            }
        }
    };
}

/// A pending approval's record as the gate writes it: the request, the verdict, and the
/// fingerprint computed from them (which answering it computes again).
#[derive(Debug, Clone)]
pub struct Asked {
    /// The fingerprint of `request` judged as `verdict`.
    pub fingerprint: String,
    /// The request (a `bash` call of `command`, with the session and operation id).
    pub request: serde_json::Value,
    /// The verdict, with the workspace and policy version.
    pub verdict: serde_json::Value,
}

/// [`Asked`] for the shell command `command` in `/w`, asked in `session` with
/// `operation_id`.
pub fn asked(command: &str, session: Option<&str>, operation_id: Option<&str>) -> Asked {
    let mut request =
        serde_json::json!({"tool": "bash", "input": {"command": command}, "cwd": "/w"});
    if let Some(s) = session {
        request["session"] = s.into();
    }
    if let Some(o) = operation_id {
        request["operation_id"] = o.into();
    }
    let verdict = serde_json::json!({"decision": "ask", "reason": "asks", "workspace": "/w", "grant_version": "v1"});
    let fingerprint = cordon_policy::fingerprint::approval_fingerprint(&request, &verdict)
        .expect("a test call has a fingerprint");
    Asked {
        fingerprint,
        request,
        verdict,
    }
}
