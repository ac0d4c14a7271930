//! The per-run certificate authority and the TLS settings of interception.
//!
//! A [`RunCa`] is made fresh for every run: its key lives only in this process's memory
//! (never written to disk, never shown to the sandbox), and only its certificate is given
//! to the sandboxed command, as part of a bundle that also holds the system's roots so
//! that tools reading one bundle file keep trusting everything else.
//!
//! Upstreams of intercepted connections are verified against the system's roots, plus
//! extra roots only when the caller passes them explicitly (`--upstream-ca`, tests):
//! there is no environment variable that widens what the proxy trusts. The system's roots
//! are read from the distribution's fixed bundle paths, so `SSL_CERT_FILE` and
//! `SSL_CERT_DIR` in cordon's own environment (which `rustls-native-certs` would honour)
//! change nothing: whoever starts cordon does not choose whom it trusts.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::{ClientConfig, RootCertStore, ServerConfig};

/// Why interception could not be set up.
#[derive(Debug)]
pub struct TlsSetupError(pub(crate) String);

impl fmt::Display for TlsSetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot set up TLS interception: {}", self.0)
    }
}

impl std::error::Error for TlsSetupError {}

impl TlsSetupError {
    /// An error with this explanation.
    pub fn new(why: impl Into<String>) -> TlsSetupError {
        TlsSetupError(why.into())
    }
}

/// A certificate authority made for one run.
pub struct RunCa {
    cert_der: CertificateDer<'static>,
    cert_pem: String,
    issuer: Issuer<'static, KeyPair>,
    /// One key for every leaf of the run: leaves only prove the CA's say-so.
    leaf_key: KeyPair,
}

impl fmt::Debug for RunCa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunCa").finish_non_exhaustive()
    }
}

impl RunCa {
    /// Make a new CA with a fresh random key.
    pub fn generate() -> Result<RunCa, TlsSetupError> {
        let err = |e: rcgen::Error| TlsSetupError(e.to_string());
        let key = KeyPair::generate().map_err(err)?;
        let mut params = CertificateParams::default();
        let mut name = DistinguishedName::new();
        let tag: u64 = rand::random();
        name.push(DnType::CommonName, format!("cordon run CA {tag:016x}"));
        name.push(DnType::OrganizationName, "cordon");
        params.distinguished_name = name;
        params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let cert = params.self_signed(&key).map_err(err)?;
        let leaf_key = KeyPair::generate().map_err(err)?;
        Ok(RunCa {
            cert_der: cert.der().clone(),
            cert_pem: cert.pem(),
            issuer: Issuer::new(params, key),
            leaf_key,
        })
    }

    /// The CA certificate as PEM (what the sandbox may see).
    pub fn cert_pem(&self) -> &str {
        &self.cert_pem
    }

    /// The CA certificate as DER.
    pub fn cert_der(&self) -> &CertificateDer<'static> {
        &self.cert_der
    }

    /// The system's roots followed by this CA, as one PEM bundle for `SSL_CERT_FILE` and
    /// its kin inside the sandbox.
    pub fn bundle_pem(&self) -> String {
        let mut out = String::new();
        for cert in system_roots() {
            out.push_str(&pem_encode("CERTIFICATE", cert.as_ref()));
        }
        out.push_str(&self.cert_pem);
        out
    }

    fn leaf(&self, host: &str) -> Result<ServerConfig, TlsSetupError> {
        let err = |e: rcgen::Error| TlsSetupError(e.to_string());
        let mut params = CertificateParams::new(vec![host.to_owned()]).map_err(err)?;
        let mut name = DistinguishedName::new();
        name.push(DnType::CommonName, host);
        params.distinguished_name = name;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
        params.use_authority_key_identifier_extension = true;
        let cert = params
            .signed_by(&self.leaf_key, &self.issuer)
            .map_err(err)?;
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.leaf_key.serialize_der()));
        let mut config = ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsSetupError(e.to_string()))?
            .with_no_client_auth()
            .with_single_cert(vec![cert.der().clone(), self.cert_der.clone()], key)
            .map_err(|e| TlsSetupError(e.to_string()))?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(config)
    }
}

/// Where Linux distributions keep the system's root bundle, in the order `openssl-probe`
/// (which `rustls-native-certs` uses) looks for them; the first that exists is used.
const SYSTEM_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt", // Debian, Ubuntu, Gentoo, Arch
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", // Fedora, RHEL, CentOS
    "/etc/pki/tls/certs/ca-bundle.crt",   // older Fedora and RHEL
    "/etc/ssl/ca-bundle.pem",             // openSUSE
    "/etc/pki/tls/cacert.pem",            // OpenELEC
    "/etc/ssl/cert.pem",                  // Alpine
];

/// Directories of single root files (hashed names), used when no bundle file exists.
const SYSTEM_DIRS: &[&str] = &["/etc/ssl/certs", "/etc/pki/tls/certs"];

/// The system's roots, from fixed paths only: never from `SSL_CERT_FILE` or
/// `SSL_CERT_DIR`.
pub fn system_roots() -> Vec<CertificateDer<'static>> {
    let file = SYSTEM_BUNDLES
        .iter()
        .map(std::path::Path::new)
        .find(|p| p.is_file());
    let dir = match file {
        Some(_) => None,
        None => SYSTEM_DIRS
            .iter()
            .map(std::path::Path::new)
            .find(|p| p.is_dir()),
    };
    rustls_native_certs::load_certs_from_paths(file, dir).certs
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// What the proxy holds to intercept: the run's CA, a cache of leaf configs, and the
/// client config that verifies upstreams.
pub(crate) struct Interception {
    ca: RunCa,
    leaves: Mutex<HashMap<String, Arc<ServerConfig>>>,
    pub(crate) upstream: Arc<ClientConfig>,
}

impl Interception {
    pub(crate) fn new(
        ca: RunCa,
        extra_roots: &[CertificateDer<'static>],
    ) -> Result<Interception, TlsSetupError> {
        let mut roots = RootCertStore::empty();
        let _ = roots.add_parsable_certificates(system_roots());
        for extra in extra_roots {
            roots
                .add(extra.clone())
                .map_err(|e| TlsSetupError(format!("an extra upstream root is unusable: {e}")))?;
        }
        let mut upstream = ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsSetupError(e.to_string()))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        upstream.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Interception {
            ca,
            leaves: Mutex::new(HashMap::new()),
            upstream: Arc::new(upstream),
        })
    }

    /// The server config presenting a certificate for `host`, made once per host.
    pub(crate) fn server_config(&self, host: &str) -> Result<Arc<ServerConfig>, TlsSetupError> {
        let mut leaves = self
            .leaves
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(c) = leaves.get(host) {
            return Ok(c.clone());
        }
        let config = Arc::new(self.ca.leaf(host)?);
        leaves.insert(host.to_owned(), config.clone());
        Ok(config)
    }
}

/// Parse PEM certificates (for extra upstream roots).
pub fn parse_pem_certs(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, TlsSetupError> {
    use rustls::pki_types::pem::PemObject;
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TlsSetupError(format!("the certificate file is not PEM: {e}")))?;
    if certs.is_empty() {
        return Err(TlsSetupError(
            "the certificate file holds no certificate".into(),
        ));
    }
    Ok(certs)
}

fn pem_encode(label: &str, der: &[u8]) -> String {
    let b64 = crate::inject::base64(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in b64.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(line));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pem_round_trips() {
        let ca = RunCa::generate().unwrap();
        let again = pem_encode("CERTIFICATE", ca.cert_der().as_ref());
        let parsed = parse_pem_certs(again.as_bytes()).unwrap();
        assert_eq!(parsed[0].as_ref(), ca.cert_der().as_ref());
        assert!(ca.bundle_pem().ends_with(ca.cert_pem()));
    }

    #[test]
    fn the_system_roots_are_found() {
        // The test machines have Debian's ca-certificates installed.
        if std::path::Path::new(SYSTEM_BUNDLES[0]).is_file() {
            assert!(system_roots().len() > 50);
        }
    }

    #[test]
    fn every_run_gets_a_new_ca() {
        let a = RunCa::generate().unwrap();
        let b = RunCa::generate().unwrap();
        assert_ne!(a.cert_der().as_ref(), b.cert_der().as_ref());
        assert!(!a.cert_pem().contains("PRIVATE KEY"));
    }
}
