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

use cordon_policy::credential::{Apply, Destination};
use cordon_policy::net::Host;

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
    env: Option<String>,
    value: String,
    placeholder: String,
    destinations: Vec<Destination>,
    apply: Apply,
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credential")
            .field("name", &self.name)
            .field("env", &self.env)
            .field("destinations", &self.destinations)
            .field("apply", &self.apply)
            .finish_non_exhaustive()
    }
}

/// Why a credential could not be set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CredentialError(pub(crate) String);

impl fmt::Display for CredentialError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CredentialError {}

impl Credential {
    /// A credential named `name`, with its real `value`, added as `apply` says to the
    /// requests `destinations` cover; `env` is the variable inside the sandbox that holds
    /// its placeholder. A fresh placeholder is drawn.
    pub fn new(
        name: &str,
        value: String,
        apply: Apply,
        destinations: Vec<Destination>,
        env: Option<String>,
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
        if destinations.is_empty() {
            return Err(CredentialError(format!("credential {name} names no host")));
        }
        let placeholder = placeholder_for(&value);
        Ok(Credential {
            name: name.to_owned(),
            env,
            value,
            placeholder,
            destinations,
            apply,
        })
    }

    /// The credential of `--credential VAR:HOST[:PORT]`: named `name` (also the variable
    /// inside), sent as a bearer token to each of `hosts`, which must be named exactly.
    pub fn bearer(
        name: &str,
        value: String,
        hosts: &[&str],
    ) -> Result<Credential, CredentialError> {
        let destinations = hosts
            .iter()
            .map(|h| Destination::parse(h, &[], &[]))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| CredentialError(format!("credential {name}: {e}")))?;
        Credential::new(
            name,
            value,
            Apply::Bearer,
            destinations,
            Some(name.to_owned()),
        )
    }

    /// Limit every destination to these methods.
    pub fn with_methods(mut self, methods: &[&str]) -> Credential {
        let methods: Vec<String> = methods.iter().map(|m| m.to_ascii_uppercase()).collect();
        for d in &mut self.destinations {
            d.methods = methods.clone();
        }
        self
    }

    /// Limit every destination to these path prefixes (segment boundaries).
    pub fn with_paths(mut self, paths: &[&str]) -> Result<Credential, CredentialError> {
        let parsed = paths
            .iter()
            .map(|p| cordon_policy::net::PathPrefix::parse(p))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| CredentialError(format!("credential {}: {e}", self.name)))?;
        for d in &mut self.destinations {
            d.paths = parsed.clone();
        }
        Ok(self)
    }

    /// The name (in events and audit records).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The variable inside the sandbox that holds the placeholder, if any.
    pub fn env(&self) -> Option<&str> {
        self.env.as_deref()
    }

    /// What the sandbox holds instead of the value.
    pub fn placeholder(&self) -> &str {
        &self.placeholder
    }

    /// Where it may go.
    pub fn destinations(&self) -> &[Destination] {
        &self.destinations
    }

    /// How it is added.
    pub fn apply(&self) -> &Apply {
        &self.apply
    }

    /// The real value, for the sandbox builder to keep out of the command's environment
    /// and arguments. Nothing else outside the proxy needs it.
    pub fn withheld_value(&self) -> String {
        self.value.clone()
    }

    pub(crate) fn value(&self) -> &str {
        &self.value
    }

    /// Whether the credential speaks about `host:port` at all.
    pub(crate) fn covers_host(&self, host: &Host, port: u16) -> bool {
        self.destinations.iter().any(|d| d.covers_host(host, port))
    }

    /// Whether it may be added to this request.
    pub(crate) fn covers(&self, host: &Host, port: u16, method: &str, path: &str) -> bool {
        self.destinations
            .iter()
            .any(|d| d.covers(host, port, method, path))
    }
}

/// Refuse a set of credentials two of which could be added to one request.
pub fn check_unambiguous(credentials: &[Credential]) -> Result<(), CredentialError> {
    cordon_policy::credential::check_unambiguous(
        credentials.iter().map(|c| (c.name(), c.destinations())),
    )
    .map_err(|e| CredentialError(e.to_string()))
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
            .with_paths(&["/repos/org"])
            .unwrap();
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
