//! Credentials kept outside the sandbox and added by the proxy.
//!
//! The sandboxed command holds only a *placeholder*: random, of the same length and with
//! the same well-known prefix as the real token (so client-side format checks pass), and
//! never derived from it. The proxy swaps the placeholder for the real value — or adds
//! the value as a bearer token — only on a request whose host, port, method and path the
//! credential names, inside a TLS connection it terminated itself.
//!
//! Leaks are checked both ways: a placeholder or a real value in a request to anywhere
//! else is refused (and reported as an exfiltration attempt), and a real value in a
//! response is replaced by the placeholder before the sandbox sees it.
//!
//! What this must never do: print, log or report a real value (events name the
//! credential, never its value; `Debug` hides it), or add a value to a request the
//! credential does not cover.

use std::fmt;

use cordon_policy::net::{Host, HostPattern, OriginError};

/// Well-known token prefixes, longest first so `sk-ant-` wins over `sk-`.
const KNOWN_PREFIXES: &[&str] = &[
    "github_pat_",
    "sk-ant-api03-",
    "sk-proj-",
    "sk-ant-",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "glpat-",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "npm_",
    "hf_",
    "sk-",
    "AKIA",
];

/// One credential the proxy may add.
#[derive(Clone)]
pub struct Credential {
    name: String,
    value: String,
    placeholder: String,
    hosts: Vec<HostPattern>,
    methods: Vec<String>,
    paths: Vec<String>,
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credential")
            .field("name", &self.name)
            .field("hosts", &self.hosts)
            .field("methods", &self.methods)
            .field("paths", &self.paths)
            .finish_non_exhaustive()
    }
}

/// Why a credential could not be set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CredentialError(String);

impl fmt::Display for CredentialError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CredentialError {}

impl Credential {
    /// A credential named `name` (the variable the sandbox sees) with its real `value`,
    /// sent as a bearer token to `hosts` (host patterns with optional ports). A fresh
    /// placeholder is drawn.
    pub fn bearer(
        name: &str,
        value: String,
        hosts: &[&str],
    ) -> Result<Credential, CredentialError> {
        if value.trim().is_empty() {
            return Err(CredentialError(format!("the credential {name} is empty")));
        }
        if value.len() < 8 {
            return Err(CredentialError(format!(
                "the credential {name} is shorter than 8 characters, too short to tell apart from ordinary text"
            )));
        }
        if value.bytes().any(|b| b.is_ascii_control() || b == b' ') {
            return Err(CredentialError(format!(
                "the credential {name} holds spaces or control characters; it cannot be sent in a header"
            )));
        }
        // A credential goes to hosts named exactly: a wildcard would send it, unasked, to
        // every subdomain, some of which serve other people's content.
        if let Some(h) = hosts.iter().find(|h| h.contains('*')) {
            return Err(CredentialError(format!(
                "credential {name}: `{h}` is a wildcard; name each host the credential may go to"
            )));
        }
        let hosts = hosts
            .iter()
            .map(|h| HostPattern::parse(h))
            .collect::<Result<Vec<_>, OriginError>>()
            .map_err(|e| CredentialError(format!("credential {name}: {e}")))?;
        if hosts.is_empty() {
            return Err(CredentialError(format!("credential {name} names no host")));
        }
        let placeholder = placeholder_for(&value);
        Ok(Credential {
            name: name.to_owned(),
            value,
            placeholder,
            hosts,
            methods: Vec::new(),
            paths: Vec::new(),
        })
    }

    /// Limit the credential to these methods (upper-cased).
    pub fn with_methods(mut self, methods: &[&str]) -> Credential {
        self.methods = methods.iter().map(|m| m.to_ascii_uppercase()).collect();
        self
    }

    /// Limit the credential to these path prefixes (segment boundaries).
    pub fn with_paths(mut self, paths: &[&str]) -> Credential {
        self.paths = paths
            .iter()
            .map(|p| p.trim_end_matches('/').to_owned())
            .collect();
        self
    }

    /// The name (the variable inside the sandbox).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the sandbox holds instead of the value.
    pub fn placeholder(&self) -> &str {
        &self.placeholder
    }

    /// The host patterns it may go to.
    pub fn hosts(&self) -> &[HostPattern] {
        &self.hosts
    }

    pub(crate) fn value(&self) -> &str {
        &self.value
    }

    /// Whether the credential speaks about `host:port` at all.
    pub(crate) fn covers_host(&self, host: &Host, port: u16) -> bool {
        self.hosts
            .iter()
            .any(|p| p.matches(host, port, &cordon_policy::net::TUNNEL_DEFAULT_PORTS))
    }

    /// Whether it may be added to this request.
    pub(crate) fn covers(&self, host: &Host, port: u16, method: &str, path: &str) -> bool {
        let path = path.split('?').next().unwrap_or(path);
        self.covers_host(host, port)
            && (self.methods.is_empty() || self.methods.iter().any(|m| m == method))
            && (self.paths.is_empty()
                || self.paths.iter().any(|p| {
                    p.is_empty()
                        || path
                            .strip_prefix(p.as_str())
                            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
                }))
    }
}

/// A random stand-in of the same length, keeping a well-known prefix and the character
/// classes of the rest (digits stay digits, letters letters, so format checks pass).
fn placeholder_for(value: &str) -> String {
    use rand::Rng;
    let prefix = KNOWN_PREFIXES
        .iter()
        .find(|p| value.starts_with(*p))
        .copied()
        .unwrap_or("");
    let mut rng = rand::rng();
    let mut out = String::with_capacity(value.len());
    out.push_str(prefix);
    const LOWER: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
    const UPPER: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    const DIGIT: &[u8] = b"0123456789";
    for c in value[prefix.len()..].chars() {
        let pick = |set: &[u8], rng: &mut rand::rngs::ThreadRng| {
            char::from(set[rng.random_range(0..set.len())])
        };
        out.push(match c {
            'a'..='z' => pick(LOWER, &mut rng),
            'A'..='Z' => pick(UPPER, &mut rng),
            '0'..='9' => pick(DIGIT, &mut rng),
            other => other,
        });
    }
    if out == value {
        // Only possible for a value made of separators alone; never hand it back.
        out = format!("{prefix}cordon-placeholder-{:016x}", rng.random::<u64>());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_keep_the_shape_not_the_value() {
        for v in [
            "ghp_0123456789abcdefABCDEF0123456789abcd",
            "sk-ant-api03-abcDEF123_xyz-000000",
            "xoxb-1234-5678-abcdef",
            "plainsecretvalue123",
        ] {
            let c = Credential::bearer("T", v.into(), &["example.com"]).unwrap();
            let p = c.placeholder();
            assert_eq!(p.len(), v.len(), "{v}");
            assert_ne!(p, v);
            let prefix = KNOWN_PREFIXES.iter().find(|x| v.starts_with(*x));
            if let Some(prefix) = prefix {
                assert!(p.starts_with(prefix), "{p}");
            }
            // Never a copy of the secret's characters: two draws differ.
            let again = Credential::bearer("T", v.into(), &["example.com"]).unwrap();
            assert_ne!(again.placeholder(), p);
            assert!(!format!("{c:?}").contains(v));
        }
    }

    #[test]
    fn covers_host_port_method_and_path() {
        let c = Credential::bearer("T", "ghp_0123456789abcdef".into(), &["api.github.com"])
            .unwrap()
            .with_methods(&["GET"])
            .with_paths(&["/repos/org"]);
        let gh = Host::parse("api.github.com").unwrap();
        assert!(c.covers(&gh, 443, "GET", "/repos/org/x?y=1"));
        assert!(!c.covers(&gh, 443, "POST", "/repos/org/x"));
        assert!(!c.covers(&gh, 443, "GET", "/repos/organisation"));
        assert!(!c.covers(&gh, 8443, "GET", "/repos/org"));
        assert!(!c.covers(
            &Host::parse("github.com").unwrap(),
            443,
            "GET",
            "/repos/org"
        ));
    }

    #[test]
    fn unusable_values_are_refused() {
        assert!(Credential::bearer("T", String::new(), &["a.com"]).is_err());
        assert!(Credential::bearer("T", "short".into(), &["a.com"]).is_err());
        assert!(Credential::bearer("T", "has space inside".into(), &["a.com"]).is_err());
        assert!(Credential::bearer("T", "longenough1".into(), &[]).is_err());
        assert!(Credential::bearer("T", "longenough1".into(), &["*.example.com"]).is_err());
        assert!(Credential::bearer("T", "longenough1".into(), &["*"]).is_err());
        assert!(Credential::bearer("T", "longenough1".into(), &["api.example.com"]).is_ok());
    }
}
