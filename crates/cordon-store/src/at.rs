//! Where the store lives: the embedded SQLite file (the default) or a PostgreSQL database
//! shared by a fleet of machines.
//!
//! A [`PgTarget`] never holds a password in its URL: a URL carrying one is refused (a
//! password in a config file or a command line ends up in logs and `ps`), and the password
//! comes from a file or the environment as a [`Password`], whose `Debug` and `Display`
//! never show it.
//!
//! TLS ([`StoreTls`], `[store] ca_file`) is verify-full or nothing: the server's
//! certificate must chain to the configured CA and name the host the URL names, the
//! connection asks for TLS first and never falls back to plaintext (a server that
//! declines TLS is refused), and no weaker `sslmode` is accepted. Without TLS only a Unix
//! socket or a loopback address is accepted: a password or a lease sent in clear over a
//! network is refused before any connection, not risked.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use crate::error::{StoreError, StoreErrorKind};

/// Where the shared store lives.
#[derive(Debug, Clone)]
pub enum StoreAt {
    /// The embedded SQLite file (default; unchanged behaviour).
    File(PathBuf),
    /// A PostgreSQL database shared by a fleet of machines.
    Postgres(PgTarget),
}

/// A database password; its `Debug` and `Display` never show it, and it is overwritten
/// when dropped.
#[derive(Clone)]
pub struct Password(String);

impl Password {
    /// A password taken from the environment or a prompt.
    pub fn new(s: String) -> Password {
        Password(s)
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

fn wipe(s: &mut String) {
    let mut bytes = std::mem::take(s).into_bytes();
    bytes.fill(0);
    std::hint::black_box(&bytes);
}

impl Drop for Password {
    fn drop(&mut self) {
        wipe(&mut self.0);
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Password(hidden)")
    }
}

impl fmt::Display for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(hidden)")
    }
}

/// TLS to the store's server, verify-full: the certificate chain is checked against the
/// CA certificates given (and nothing else: not the system's roots, unless the file given
/// is the system's bundle), and the certificate must name the host the URL names.
#[derive(Clone)]
pub struct StoreTls {
    pub(crate) config: Arc<rustls::ClientConfig>,
    ca_file: PathBuf,
}

impl fmt::Debug for StoreTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreTls")
            .field("ca_file", &self.ca_file)
            .finish_non_exhaustive()
    }
}

/// Largest CA file read (a system bundle of every public root is about 200 KiB).
pub const MAX_CA_FILE: u64 = 1 << 20;

impl StoreTls {
    /// TLS trusting the CA certificates in `pem` (the text of `ca_file`, PEM; other PEM
    /// sections are ignored). Refused when it holds no certificate or one that cannot be
    /// used as a trust anchor.
    pub fn from_pem(pem: &[u8], ca_file: &Path) -> Result<StoreTls, StoreError> {
        StoreTls::build(pem, ca_file, None)
    }

    /// [`StoreTls::from_pem`], presenting a client certificate: `cert_pem` (the text of
    /// `cert_file`: the certificate, then any intermediates) and its private key
    /// `key_pem` (PKCS#8, PKCS#1 or SEC1, PEM).
    pub fn with_client_cert(
        pem: &[u8],
        ca_file: &Path,
        cert_pem: &[u8],
        key_pem: &[u8],
        cert_file: &Path,
    ) -> Result<StoreTls, StoreError> {
        StoreTls::build(pem, ca_file, Some((cert_pem, key_pem, cert_file)))
    }

    fn build(
        pem: &[u8],
        ca_file: &Path,
        client: Option<(&[u8], &[u8], &Path)>,
    ) -> Result<StoreTls, StoreError> {
        use rustls::pki_types::pem::PemObject;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let bad = |file: &Path, why: String| {
            StoreError::new(
                file,
                StoreErrorKind::Invalid(format!("the store's TLS files cannot be used: {why}")),
            )
        };
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert =
                cert.map_err(|e| bad(ca_file, format!("its PEM could not be read ({e})")))?;
            roots.add(cert).map_err(|e| {
                bad(
                    ca_file,
                    format!("a certificate in it is not a usable CA ({e})"),
                )
            })?;
        }
        if roots.is_empty() {
            return Err(bad(
                ca_file,
                "it holds no certificate (PEM, -----BEGIN CERTIFICATE-----)".into(),
            ));
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| bad(ca_file, e.to_string()))?
            .with_root_certificates(roots);
        let mut config = match client {
            None => builder.with_no_client_auth(),
            Some((cert_pem, key_pem, cert_file)) => {
                let chain = CertificateDer::pem_slice_iter(cert_pem)
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| bad(cert_file, format!("its PEM could not be read ({e})")))?;
                if chain.is_empty() {
                    return Err(bad(
                        cert_file,
                        "it holds no certificate (PEM, -----BEGIN CERTIFICATE-----)".into(),
                    ));
                }
                // The key's text never appears in a message.
                let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|_| {
                    bad(
                        cert_file,
                        "the key file beside it holds no private key in PEM".into(),
                    )
                })?;
                builder.with_client_auth_cert(chain, key).map_err(|e| {
                    bad(
                        cert_file,
                        format!("the certificate and the key do not make a client identity ({e})"),
                    )
                })?
            }
        };
        // PostgreSQL's ALPN name, as libpq 17 sends it: a server taking TLS directly
        // (`sslnegotiation=direct`) requires it; others ignore it.
        config.alpn_protocols = vec![b"postgresql".to_vec()];
        Ok(StoreTls {
            config: Arc::new(config),
            ca_file: ca_file.to_path_buf(),
        })
    }

    /// The CA file the certificates came from.
    pub fn ca_file(&self) -> &Path {
        &self.ca_file
    }
}

/// A PostgreSQL database to use as the store.
#[derive(Clone)]
pub struct PgTarget {
    /// The URL as given (it holds no password: one that did was refused).
    url: String,
    pub(crate) config: Box<postgres::Config>,
    machine: String,
    /// TLS (verify-full), when configured; `None`: a Unix socket or loopback only.
    pub(crate) tls: Option<StoreTls>,
}

impl fmt::Debug for PgTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PgTarget")
            .field("url", &self.url)
            .field("machine", &self.machine)
            .field("tls", &self.tls)
            .finish_non_exhaustive()
    }
}

/// What the URL's `sslmode` asks for (read by cordon, not by the driver, which knows no
/// `verify-full`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum SslAsk {
    /// Not given: TLS when `ca_file` is set.
    Unsaid,
    /// `disable`: no TLS.
    Disable,
    /// `verify-full`: TLS, verified fully.
    VerifyFull,
}

/// `url` without its `sslmode` parameter, and what that parameter asked for; an `sslmode`
/// that verifies less than everything is refused.
fn take_sslmode(url: &str) -> Result<(String, SslAsk), String> {
    let Some((head, query)) = url.split_once('?') else {
        return Ok((url.to_string(), SslAsk::Unsaid));
    };
    let mut ask = SslAsk::Unsaid;
    let mut kept = Vec::new();
    for kv in query.split('&') {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        // Compared as the driver reads it: `ssl%6Dode` is `sslmode`.
        if !percent_decoded(k).trim().eq_ignore_ascii_case("sslmode") {
            kept.push(kv);
            continue;
        }
        ask = match percent_decoded(v).trim() {
            "verify-full" => SslAsk::VerifyFull,
            "disable" => SslAsk::Disable,
            other => {
                return Err(format!(
                    "`sslmode={other}` verifies less than cordon requires: cordon uses TLS only as verify-full (the certificate chain against `[store] ca_file` and the host name); write sslmode=verify-full or leave sslmode out"
                ));
            }
        };
    }
    let url = if kept.is_empty() {
        head.to_string()
    } else {
        format!("{head}?{}", kept.join("&"))
    };
    Ok((url, ask))
}

/// Whether `host` names this machine: a loopback name or address.
fn loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|a| a.is_loopback())
}

impl PgTarget {
    /// `url`: `postgres://user@host:port/db?...` or `postgresql:///db?host=/run/socket/dir`.
    /// A URL holding a password is refused (passwords come from a file or the environment).
    /// `machine`: this machine's name in the fleet (shown in the console, stored with
    /// pending approvals and shipped decisions). Without TLS: a Unix socket or a loopback
    /// host only (see [`PgTarget::with_tls`]).
    pub fn new(
        url: &str,
        password: Option<Password>,
        machine: &str,
    ) -> Result<PgTarget, StoreError> {
        PgTarget::with_tls(url, password, machine, None)
    }

    /// [`PgTarget::new`] with TLS: `tls` given, every host is reached over TCP with TLS,
    /// verify-full, any host allowed (loopback too); `None`, a host that is not this
    /// machine is refused, naming `[store] ca_file`.
    pub fn with_tls(
        url: &str,
        password: Option<Password>,
        machine: &str,
        tls: Option<StoreTls>,
    ) -> Result<PgTarget, StoreError> {
        // A refused URL is shown without its user and query, where a password could be in
        // any spelling; an accepted one holds none.
        let short = short_url(url);
        let bad = |why: String| StoreError::new(Path::new(&short), StoreErrorKind::Invalid(why));
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(bad(
                "a shared store is named by a URL starting with postgres:// or postgresql://"
                    .into(),
            ));
        }
        let (plain_url, ssl) = take_sslmode(url).map_err(bad)?;
        let mut config = postgres::Config::from_str(&plain_url).map_err(|e| {
            bad(format!(
                "the URL could not be read ({})",
                scrub(&scrub(&e.to_string(), url), &plain_url)
            ))
        })?;
        // `user%3Apw@`: a user name holding `:` is a password in another spelling.
        if config.get_password().is_some() || config.get_user().is_some_and(|u| u.contains(':')) {
            return Err(bad(
                "the URL holds a password; give it in a password file or an environment variable instead"
                    .into(),
            ));
        }
        if config.get_hosts().is_empty() {
            return Err(bad(
                "the URL names no host; give a host name or a socket directory (?host=/run/postgresql)"
                    .into(),
            ));
        }
        match (&tls, ssl) {
            (Some(_), SslAsk::Disable) => {
                return Err(bad(
                    "the URL says sslmode=disable but `[store] ca_file` asks for TLS; remove one"
                        .into(),
                ));
            }
            (None, SslAsk::VerifyFull) => {
                return Err(bad(
                    "the URL says sslmode=verify-full but `[store] ca_file` is not set; set it to the PEM file of the CA that signed the server's certificate".into(),
                ));
            }
            _ => {}
        }
        if tls.is_some() {
            for host in config.get_hosts() {
                if let postgres::config::Host::Unix(dir) = host {
                    return Err(bad(format!(
                        "`[store] ca_file` asks for TLS, which PostgreSQL does not speak on a Unix socket ({}); name a TCP host, or remove `ca_file` to use the socket",
                        dir.display()
                    )));
                }
            }
            // The certificate is checked against the host's name: an address alone has
            // none (`hostaddr` needs a `host` beside it, as libpq's verify-full asks).
            if config.get_hosts().len() != config.get_hostaddrs().len()
                && !config.get_hostaddrs().is_empty()
            {
                return Err(bad(
                    "with TLS every `hostaddr` needs a host name beside it, which the server's certificate is checked against".into(),
                ));
            }
            config.ssl_mode(postgres::config::SslMode::Require);
        } else {
            for host in config.get_hosts() {
                if let postgres::config::Host::Tcp(name) = host
                    && name.is_empty()
                {
                    return Err(bad(
                        "the URL names an empty host; give a host name or a socket directory (?host=/run/postgresql)".into(),
                    ));
                }
                if let postgres::config::Host::Tcp(name) = host
                    && !loopback(name)
                {
                    return Err(bad(format!(
                        "host {name} is not this machine and TLS is not configured: set `[store] ca_file` to the CA certificate (PEM) of the server, which cordon then verifies with the host name (verify-full), or use a Unix socket or a loopback address"
                    )));
                }
            }
            for addr in config.get_hostaddrs() {
                if !addr.is_loopback() {
                    return Err(bad(format!(
                        "host address {addr} is not this machine and TLS is not configured: set `[store] ca_file` to the CA certificate (PEM) of the server, or use a Unix socket or a loopback address"
                    )));
                }
            }
            config.ssl_mode(postgres::config::SslMode::Disable);
        }
        if config.get_dbname().is_none_or(str::is_empty) {
            return Err(bad("the URL names no database".into()));
        }
        let machine = machine.trim();
        if !cordon_policy::settings::valid_machine_name(machine) {
            return Err(bad(format!(
                "a machine name must be 1 to {} letters, digits, `.`, `-` or `_`",
                cordon_policy::settings::MAX_MACHINE_NAME
            )));
        }
        if let Some(p) = &password {
            config.password(p.expose());
        }
        if config.get_application_name().is_none() {
            config.application_name("cordon");
        }
        Ok(PgTarget {
            url: redact_url(url),
            config: Box::new(config),
            machine: machine.to_string(),
            tls,
        })
    }

    /// This machine's name in the fleet.
    pub fn machine(&self) -> &str {
        &self.machine
    }

    /// The URL, for messages (it holds no password).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// TLS to the server, when configured.
    pub fn tls(&self) -> Option<&StoreTls> {
        self.tls.as_ref()
    }

    /// Where the server is reached on this machine: the Unix socket files
    /// (`DIR/.s.PGSQL.PORT`) and the TCP ports of the loopback hosts (another host's port
    /// is not this machine's).
    pub fn endpoints(&self) -> (Vec<PathBuf>, Vec<u16>) {
        let ports = self.config.get_ports();
        let port_of = |i: usize| match ports {
            [] => 5432,
            [one] => *one,
            many => many.get(i).copied().unwrap_or(5432),
        };
        let mut sockets = Vec::new();
        let mut tcp = Vec::new();
        for (i, host) in self.config.get_hosts().iter().enumerate() {
            match host {
                postgres::config::Host::Unix(dir) => {
                    sockets.push(dir.join(format!(".s.PGSQL.{}", port_of(i))));
                }
                postgres::config::Host::Tcp(name) => {
                    // With `hostaddr` the address is what is reached.
                    let local = match self.config.get_hostaddrs().get(i) {
                        Some(a) => a.is_loopback(),
                        None => loopback(name),
                    };
                    if local {
                        tcp.push(port_of(i));
                    }
                }
            }
        }
        for (i, a) in self.config.get_hostaddrs().iter().enumerate() {
            if a.is_loopback() {
                tcp.push(port_of(i));
            }
        }
        tcp.sort_unstable();
        tcp.dedup();
        (sockets, tcp)
    }
}

/// What failed, when `e` is a failed TLS handshake (or a server that declined TLS): the
/// driver's own message says only "error performing TLS handshake", its cause says why.
pub(crate) fn tls_failure(e: &tokio_postgres::Error) -> Option<String> {
    if e.to_string() != "error performing TLS handshake" {
        return None;
    }
    let mut why = Vec::new();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        let text = c.to_string();
        if why.last() != Some(&text) {
            why.push(text);
        }
        cause = c.source();
    }
    let why = why.join(": ");
    Some(if why == "server does not support TLS" {
        "the server does not offer TLS, and cordon never falls back to plaintext".into()
    } else if why.is_empty() {
        "the handshake failed".into()
    } else {
        why
    })
}

/// `scheme://host[:port]/db` of `url`: no user, no query (`postgresql://` plus the path
/// alone for a socket URL).
fn short_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return "(a URL that is not postgres://)".into();
    };
    let (auth, tail) = match rest.find(['/', '?', '#']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let host = auth.rsplit_once('@').map_or(auth, |(_, h)| h);
    let path = tail.split(['?', '#']).next().unwrap_or("");
    format!("{scheme}://{host}{path}")
}

/// `url` for messages about an accepted URL: the user (no password, which was refused),
/// host, database and the query parameters that say where the server is; any other
/// parameter's value is hidden.
fn redact_url(url: &str) -> String {
    // A `#fragment` is not part of what libpq reads and may hold anything: never shown.
    let url = url.split('#').next().unwrap_or("");
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (auth, tail) = match rest.find(['/', '?']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let mut out = format!("{scheme}://");
    match auth.rsplit_once('@') {
        Some((user, host)) => {
            let user = user.split_once(':').map_or(user, |(u, _)| u);
            out.push_str(&format!("{user}@{host}"));
        }
        None => out.push_str(auth),
    }
    // A password given as a query parameter.
    let (path, query) = tail.split_once('?').unwrap_or((tail, ""));
    out.push_str(path);
    if !query.is_empty() {
        let query = query
            .split('&')
            .map(|kv| {
                let (k, _) = kv.split_once('=').unwrap_or((kv, ""));
                let safe = [
                    "host",
                    "hostaddr",
                    "port",
                    "dbname",
                    "user",
                    "application_name",
                ];
                if safe.contains(&k) {
                    kv.to_string()
                } else {
                    "(hidden)".to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("&");
        out.push('?');
        out.push_str(&query);
    }
    out
}

/// `s` with its `%XX` escapes decoded (an invalid escape is kept as written).
fn percent_decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| char::from(c).to_digit(16);
        if b[i] == b'%'
            && let (Some(h), Some(l)) = (
                b.get(i + 1).copied().and_then(hex),
                b.get(i + 2).copied().and_then(hex),
            )
        {
            out.push(u8::try_from(h * 16 + l).unwrap_or(b'%'));
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A parser's message about `url` without any part of the URL in it.
fn scrub(msg: &str, url: &str) -> String {
    if url.len() > 3 && msg.contains(url) {
        msg.replace(url, "(the URL)")
    } else {
        msg.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_with_a_password_is_refused_without_showing_it() {
        for url in [
            "postgres://cordon:hunter2@localhost/cordon",
            "postgresql://cordon@localhost/cordon?password=hunter2",
            "postgresql:///cordon?host=/run/postgresql&user=cordon&pass%77ord=hunter2",
            "postgresql://cordon:@localhost/cordon?%70assword=hunter2",
            "postgresql://cordon%3Ahunter2@localhost/cordon",
            "postgresql://cordon@localhost/cordon?passwor%64=hunter2&application_name=x",
        ] {
            let e = PgTarget::new(url, None, "m1").unwrap_err().to_string();
            assert!(e.contains("password"), "{e}");
            assert!(!e.contains("hunter2"), "{e}");
        }
        // An accepted URL is shown with only the parameters that say where the server is.
        let t = PgTarget::new(
            "postgresql:///c?host=/run/pg&options=-csecret%3Dx&user=u",
            None,
            "m1",
        )
        .unwrap();
        assert_eq!(t.url(), "postgresql:///c?host=/run/pg&(hidden)&user=u");
    }

    #[test]
    fn only_local_hosts_without_tls() {
        for ok in [
            "postgres://cordon@localhost/c",
            "postgres://cordon@127.0.0.1:5433/c",
            "postgres://cordon@[::1]/c",
            "postgresql:///c?host=/run/postgresql",
        ] {
            PgTarget::new(ok, None, "m").unwrap();
        }
        for bad in [
            "postgres://cordon@db.example.com/c",
            "postgres://cordon@10.0.0.5/c",
            "postgresql:///c?host=db.example.com",
            "postgres://cordon@localhost/c?hostaddr=10.1.2.3",
            "mysql://x@localhost/c",
            "postgres://cordon@localhost/",
        ] {
            assert!(PgTarget::new(bad, None, "m").is_err(), "{bad}");
        }
        let e = PgTarget::new("postgres://cordon@db.example.com/c", None, "m")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("is not this machine and TLS is not configured: set `[store] ca_file`"),
            "{e}"
        );
    }

    fn tls() -> StoreTls {
        // Any certificate parses as a trust anchor; these tests never connect.
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["ca".into()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        StoreTls::from_pem(cert.pem().as_bytes(), Path::new("/ca.pem")).unwrap()
    }

    #[test]
    fn tls_is_verify_full_or_nothing() {
        let with = |url: &str| PgTarget::with_tls(url, None, "m", Some(tls()));
        // Any host with TLS, loopback too; `sslmode=verify-full` may be spelled out.
        for ok in [
            "postgres://cordon@db.example.com/c",
            "postgres://cordon@db.example.com/c?sslmode=verify-full",
            "postgres://cordon@db.example.com/c?ssl%6Dode=verify-full&application_name=x",
            "postgres://cordon@10.0.0.5:5433/c",
            "postgres://cordon@localhost/c",
            "postgres://cordon@db.example.com/c?hostaddr=10.0.0.5",
        ] {
            let t = with(ok).unwrap();
            assert!(t.tls().is_some());
            assert_eq!(
                t.config.get_ssl_mode(),
                postgres::config::SslMode::Require,
                "{ok}"
            );
            assert!(!t.url().contains("sslmode"), "{}", t.url());
        }
        // Without TLS the driver never tries it (a local socket or loopback only).
        let plain = PgTarget::new("postgres://cordon@localhost/c", None, "m").unwrap();
        assert_eq!(
            plain.config.get_ssl_mode(),
            postgres::config::SslMode::Disable
        );
        // Every sslmode that verifies less, in any spelling, with TLS or without.
        for weak in [
            "require",
            "prefer",
            "allow",
            "verify-ca",
            "REQUIRE",
            "bogus",
        ] {
            for url in [
                format!("postgres://cordon@db.example.com/c?sslmode={weak}"),
                format!("postgres://cordon@localhost/c?ssl%6dode={weak}"),
                format!("postgres://cordon@localhost/c?application_name=a&SSLMODE={weak}"),
            ] {
                let e = with(&url).unwrap_err().to_string();
                assert!(
                    e.contains("verifies less than cordon requires"),
                    "{url}: {e}"
                );
                assert!(PgTarget::new(&url, None, "m").is_err(), "{url}");
            }
        }
        // Contradictions and what TLS cannot do.
        for (url, says) in [
            (
                "postgres://cordon@db.example.com/c?sslmode=disable",
                "sslmode=disable but `[store] ca_file`",
            ),
            (
                "postgresql:///c?host=/run/postgresql",
                "does not speak on a Unix socket",
            ),
            (
                "postgres://cordon@localhost/c?host=/run/postgresql",
                "does not speak on a Unix socket",
            ),
            (
                "postgres://cordon@db1.example.com,db2.example.com/c?hostaddr=10.0.0.5",
                "needs a host name beside it",
            ),
            ("postgres://cordon@/c?hostaddr=10.0.0.5", "names no host"),
        ] {
            let e = with(url).unwrap_err().to_string();
            assert!(e.contains(says), "{url}: {e}");
        }
        let e = PgTarget::new(
            "postgres://cordon@localhost/c?sslmode=verify-full",
            None,
            "m",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("`[store] ca_file` is not set"), "{e}");
        // libpq's certificate parameters are not read from the URL: `ca_file` is the one
        // source of trust.
        for url in [
            "postgres://cordon@db.example.com/c?sslrootcert=/tmp/evil.pem",
            "postgres://cordon@localhost/c?sslrootcert=system",
        ] {
            let e = with(url).unwrap_err().to_string();
            assert!(e.contains("could not be read"), "{url}: {e}");
            assert!(!e.contains("evil"), "{url}: {e}");
        }
        // `sslmode=disable` without TLS changes nothing: still loopback only.
        PgTarget::new("postgres://cordon@localhost/c?sslmode=disable", None, "m").unwrap();
        assert!(
            PgTarget::new(
                "postgres://cordon@db.example.com/c?sslmode=disable",
                None,
                "m"
            )
            .is_err()
        );
    }

    #[test]
    fn a_ca_file_without_a_certificate_is_refused() {
        for pem in [
            &b""[..],
            b"not pem",
            b"-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n",
            b"-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n",
        ] {
            let e = StoreTls::from_pem(pem, Path::new("/etc/cordon/ca.pem"))
                .unwrap_err()
                .to_string();
            assert!(e.contains("/etc/cordon/ca.pem"), "{e}");
            assert!(e.contains("the store's TLS files cannot be used"), "{e}");
        }
    }

    #[test]
    fn a_password_never_shows() {
        let p = Password::new("hunter2".into());
        assert!(!format!("{p:?} {p}").contains("hunter2"));
        let t = PgTarget::new("postgres://u@localhost/c", Some(p), "m").unwrap();
        assert!(!format!("{t:?}").contains("hunter2"));
        assert_eq!(t.machine(), "m");
    }
}
