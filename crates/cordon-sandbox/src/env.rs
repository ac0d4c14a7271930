//! The command's environment, built from an allowlist.
//!
//! Nothing is inherited by default. Names on the allowlist pass; names that look like
//! secrets are dropped even when configured, unless named again as an explicit override.

use serde::{Deserialize, Serialize};
use std::ffi::{OsStr, OsString};
use std::path::Path;

/// Names always passed when set: the basics of a login, and the identity a commit is
/// made under (`GIT_AUTHOR_*`, `GIT_COMMITTER_*`, `EMAIL`), which CI jobs set and which
/// carry no secret.
pub const DEFAULT_ALLOW: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "LANG",
    "TZ",
    "TMPDIR",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
    "EMAIL",
];

/// Hosts a command reaches directly, never through the proxy: the sandbox's own loopback,
/// in the spellings curl, Python (urllib, requests, pip), git and Node's proxy agents read.
pub const NO_PROXY_HOSTS: &str = "localhost,127.0.0.1,127.0.0.0/8,::1,[::1]";

/// Substrings that make a name look like a secret (matched case-insensitively).
pub const SECRET_MARKERS: &[&str] = &["TOKEN", "SECRET", "KEY", "PASSWORD", "PASSWD", "CREDENTIAL"];

/// Variables that name a bundle of trusted roots, set to the run's bundle when the egress
/// proxy inspects TLS.
pub const CA_BUNDLE_VARS: &[&str] = &[
    "SSL_CERT_FILE",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "GIT_SSL_CAINFO",
    "AWS_CA_BUNDLE",
    "DENO_CERT",
];

/// `PATH` when the caller has none.
const FALLBACK_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Which environment variables reach the command.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvPolicy {
    /// Extra names passed (secret-looking ones are still dropped).
    pub allow: Vec<String>,
    /// Names passed even though they look like secrets: the explicit override.
    pub allow_secret: Vec<String>,
}

/// Does `name` look like it holds a secret?
pub fn looks_secret(name: &OsStr) -> bool {
    let upper = name.to_string_lossy().to_ascii_uppercase();
    SECRET_MARKERS.iter().any(|m| upper.contains(m))
}

/// Is `name` one of the proxy variables that cordon sets itself?
pub fn is_proxy_name(name: &OsStr) -> bool {
    let upper = name.to_string_lossy().to_ascii_uppercase();
    matches!(
        upper.as_str(),
        "HTTP_PROXY" | "HTTPS_PROXY" | "ALL_PROXY" | "NO_PROXY" | "FTP_PROXY"
    )
}

impl EnvPolicy {
    fn allowed(&self, name: &OsStr) -> bool {
        let Some(n) = name.to_str() else {
            return false;
        };
        if self.allow_secret.iter().any(|a| a == n) {
            return true;
        }
        let listed =
            DEFAULT_ALLOW.contains(&n) || n.starts_with("LC_") || self.allow.iter().any(|a| a == n);
        listed && !looks_secret(name) && !is_proxy_name(name)
    }

    /// The environment for the command, from the caller's variables. `HOME` is set to
    /// `home` and `PATH` gets a fallback when missing.
    pub fn build(
        &self,
        vars: impl IntoIterator<Item = (OsString, OsString)>,
        home: &Path,
    ) -> Vec<(OsString, OsString)> {
        let mut out: Vec<(OsString, OsString)> = vars
            .into_iter()
            .filter(|(k, _)| self.allowed(k) && k != "HOME")
            .collect();
        out.push(("HOME".into(), home.as_os_str().to_owned()));
        if !out.iter().any(|(k, _)| k == "PATH") {
            out.push(("PATH".into(), FALLBACK_PATH.into()));
        }
        out.sort();
        out.dedup_by(|a, b| a.0 == b.0);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(list: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        list.iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect()
    }

    fn names(env: &[(OsString, OsString)]) -> Vec<String> {
        env.iter()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn allowlist_only() {
        let p = EnvPolicy::default();
        let env = p.build(
            vars(&[
                ("PATH", "/bin"),
                ("LC_ALL", "C"),
                ("AWS_SECRET_ACCESS_KEY", "x"),
                ("GITHUB_TOKEN", "x"),
                ("EDITOR", "vi"),
                ("HOME", "/elsewhere"),
                ("HTTP_PROXY", "http://evil"),
            ]),
            Path::new("/home/u"),
        );
        assert_eq!(names(&env), ["HOME", "LC_ALL", "PATH"]);
        assert!(env.contains(&("HOME".into(), "/home/u".into())));
    }

    #[test]
    fn configured_secret_needs_override() {
        let p = EnvPolicy {
            allow: vec!["NPM_TOKEN".into(), "EDITOR".into()],
            allow_secret: vec![],
        };
        let env = p.build(
            vars(&[("NPM_TOKEN", "x"), ("EDITOR", "vi")]),
            Path::new("/h"),
        );
        assert_eq!(names(&env), ["EDITOR", "HOME", "PATH"]);
        let p = EnvPolicy {
            allow: vec![],
            allow_secret: vec!["NPM_TOKEN".into()],
        };
        let env = p.build(vars(&[("NPM_TOKEN", "x")]), Path::new("/h"));
        assert_eq!(names(&env), ["HOME", "NPM_TOKEN", "PATH"]);
    }

    #[test]
    fn secret_markers() {
        for n in [
            "API_KEY",
            "db_password",
            "MY_SECRET",
            "GH_TOKEN",
            "AZURE_CREDENTIALS",
        ] {
            assert!(looks_secret(OsStr::new(n)), "{n}");
        }
        for n in ["PATH", "TERM", "LANG"] {
            assert!(!looks_secret(OsStr::new(n)), "{n}");
        }
    }
}
