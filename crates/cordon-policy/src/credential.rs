//! `[[credential]]` tables: named secrets that stay outside the sandbox and that cordon's
//! egress proxy adds to the requests they are for.
//!
//! ```toml
//! [[credential]]
//! name = "github"                                  # named in audit records
//! source = { command = ["gh", "auth", "token"] }   # or { env = "VAR" }, { file = "~/.gh-token" }
//! apply = "bearer"                                 # or { basic = "user" }, { header = "X-Api-Key" }, { query = "key" }
//! env = "GH_TOKEN"                                 # the variable inside that holds a placeholder
//! destinations = [{ host = "api.github.com", paths = ["/repos/org"], methods = ["GET"] }]
//! ```
//!
//! This module only describes and checks them; reading a source (a variable, a file, a
//! command) happens where the proxy is started. What it must never do: accept a
//! destination that is not one exact host and port (a wildcard would hand the secret to
//! every subdomain), or two credentials that could both be added to one request (which one
//! goes would be a guess).

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::net::{Authority, Host, OriginError, PathPrefix, PathPrefixError};

/// The longest a source command may run.
pub const MAX_COMMAND_TIMEOUT: Duration = Duration::from_secs(300);
/// How long a source command may run when its table does not say.
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

/// One named credential, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CredentialSpec {
    /// Its name in audit records and messages.
    pub name: String,
    /// Where the real value is read, outside the sandbox.
    pub source: CredentialSource,
    /// Where it may be added.
    pub destinations: Vec<Destination>,
    /// How it is added.
    pub apply: Apply,
    /// The variable inside the sandbox that holds its placeholder, if any.
    pub env: Option<String>,
}

/// Where a credential's real value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CredentialSource {
    /// A variable of cordon's own environment.
    Env(String),
    /// A file that only its owner (the user running cordon) can read.
    File(PathBuf),
    /// A program run outside the sandbox (no shell); its trimmed output is the value.
    Command {
        /// Program and arguments.
        argv: Vec<String>,
        /// How long it may run.
        timeout: Duration,
    },
}

/// How a credential is added to a request.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Apply {
    /// `Authorization: Bearer VALUE`.
    Bearer,
    /// `Authorization: Basic base64(USER:VALUE)`.
    Basic {
        /// The user name.
        user: String,
    },
    /// A named header holding the value.
    Header(String),
    /// A query parameter holding the value.
    Query(String),
}

impl fmt::Display for Apply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Apply::Bearer => f.write_str("bearer"),
            Apply::Basic { .. } => f.write_str("basic"),
            Apply::Header(h) => write!(f, "header {h}"),
            Apply::Query(q) => write!(f, "query parameter {q}"),
        }
    }
}

/// One place a credential may go: an exact host and port, optionally narrowed to path
/// prefixes and methods.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    /// The host and port (443 unless written).
    pub authority: Authority,
    /// Path prefixes; empty means every path.
    pub paths: Vec<PathPrefix>,
    /// Upper-case methods; empty means every method.
    pub methods: Vec<String>,
}

impl Destination {
    /// Parse `host[:port]` with optional path prefixes and methods. A wildcard is refused.
    pub fn parse(
        host: &str,
        paths: &[String],
        methods: &[String],
    ) -> Result<Destination, DestinationError> {
        if host.contains('*') {
            return Err(DestinationError::Wildcard(host.to_owned()));
        }
        let authority = Authority::parse(host, 443).map_err(DestinationError::Authority)?;
        let paths = paths
            .iter()
            .map(|p| PathPrefix::parse(p))
            .collect::<Result<Vec<_>, _>>()
            .map_err(DestinationError::Path)?;
        let mut out = Vec::new();
        for m in methods {
            let valid =
                !m.is_empty() && m.len() <= 32 && m.bytes().all(|b| b.is_ascii_alphabetic());
            if !valid {
                return Err(DestinationError::Method(m.clone()));
            }
            out.push(m.to_ascii_uppercase());
        }
        out.sort();
        out.dedup();
        Ok(Destination {
            authority,
            paths,
            methods: out,
        })
    }

    /// Whether a request to `host:port` is for this destination at all.
    pub fn covers_host(&self, host: &Host, port: u16) -> bool {
        self.authority.host == *host && self.authority.port == port
    }

    /// Whether this request (its path without the query) is covered. A path that rules
    /// could not judge is covered by no path prefix.
    pub fn covers(&self, host: &Host, port: u16, method: &str, path: &str) -> bool {
        let path = path.split('?').next().unwrap_or(path);
        self.covers_host(host, port)
            && (self.methods.is_empty() || self.methods.iter().any(|m| m == method))
            && crate::net::path_is_judgeable(path)
            && (self.paths.is_empty() || self.paths.iter().any(|p| p.matches(path)))
    }

    /// Whether some request could be covered by both destinations.
    pub fn overlaps(&self, other: &Destination) -> bool {
        let methods = self.methods.is_empty()
            || other.methods.is_empty()
            || self.methods.iter().any(|m| other.methods.contains(m));
        let paths = self.paths.is_empty()
            || other.paths.is_empty()
            || self
                .paths
                .iter()
                .any(|a| other.paths.iter().any(|b| a.overlaps(b)));
        self.authority == other.authority && methods && paths
    }
}

impl fmt::Display for Destination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.authority)?;
        if !self.methods.is_empty() {
            write!(f, " {}", self.methods.join("|"))?;
        }
        if !self.paths.is_empty() {
            let paths: Vec<&str> = self.paths.iter().map(PathPrefix::as_str).collect();
            write!(f, " {}", paths.join(" "))?;
        }
        Ok(())
    }
}

/// Why a credential's destination cannot be used ([`Destination::parse`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DestinationError {
    /// The host is a wildcard: a credential names each host it may go to.
    Wildcard(String),
    /// The host and port do not parse.
    Authority(OriginError),
    /// A path prefix is unusable.
    Path(PathPrefixError),
    /// A method is not an HTTP method's name.
    Method(String),
}

impl fmt::Display for DestinationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DestinationError::Wildcard(host) => write!(
                f,
                "`{host}` is a wildcard; name each host the credential may go to"
            ),
            DestinationError::Authority(e) => write!(f, "{e}"),
            DestinationError::Path(e) => write!(f, "{e}"),
            DestinationError::Method(m) => write!(f, "`{m}` is not an HTTP method"),
        }
    }
}

impl std::error::Error for DestinationError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DestinationError::Authority(e) => Some(e),
            DestinationError::Path(e) => Some(e),
            _ => None,
        }
    }
}

/// Refuse two credentials that could both be added to one request, naming both and the
/// overlap.
pub fn check_unambiguous<'a>(
    credentials: impl IntoIterator<Item = (&'a str, &'a [Destination])>,
) -> Result<(), AmbiguousCredentialsError> {
    let all: Vec<(&str, &[Destination])> = credentials.into_iter().collect();
    for (i, (a, da)) in all.iter().enumerate() {
        for (b, db) in &all[i + 1..] {
            for x in da.iter() {
                if let Some(y) = db.iter().find(|y| x.overlaps(y)) {
                    return Err(AmbiguousCredentialsError {
                        first: ((*a).to_owned(), x.to_string()),
                        second: ((*b).to_owned(), y.to_string()),
                    });
                }
            }
        }
    }
    Ok(())
}

/// Two credentials that could both be added to one request ([`check_unambiguous`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AmbiguousCredentialsError {
    /// The first credential's name and the destination that overlaps, as written.
    pub first: (String, String),
    /// The second credential's name and the destination it overlaps, as written.
    pub second: (String, String),
}

impl fmt::Display for AmbiguousCredentialsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ((a, x), (b, y)) = (&self.first, &self.second);
        write!(
            f,
            "the credentials {a} and {b} could both be added to one request ({x} and {y}); give them paths or methods that do not overlap"
        )
    }
}

impl std::error::Error for AmbiguousCredentialsError {}

/// Whether `name` can be an environment variable's name.
pub fn is_variable_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !name.as_bytes()[0].is_ascii_digit()
}

/// Whether `name` can be a credential's name (it appears in audit records).
pub fn is_credential_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
}

/// Whether `name` can be an HTTP header a credential is put in: a token, and not one
/// that frames the message or addresses the proxy.
pub fn is_credential_header(name: &str) -> bool {
    const RESERVED: &[&str] = &[
        "host",
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "te",
        "trailer",
        "upgrade",
        "cookie",
        "content-encoding",
        "accept-encoding",
    ];
    let lower = name.to_ascii_lowercase();
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b))
        && !RESERVED.contains(&lower.as_str())
        && !lower.starts_with("proxy-")
        && !lower.starts_with("x-cordon")
}

// ---- the written form ---------------------------------------------------------------

/// A `[[credential]]` table as written.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CredentialTable {
    name: Option<String>,
    source: Option<SourceTable>,
    #[serde(default)]
    apply: Option<ApplyField>,
    env: Option<String>,
    #[serde(default)]
    destinations: Vec<DestinationTable>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SourceTable {
    env: Option<String>,
    file: Option<String>,
    command: Option<Vec<String>>,
    timeout_seconds: Option<u64>,
}

#[derive(serde::Deserialize)]
#[serde(untagged)]
enum ApplyField {
    Word(String),
    Table(ApplyTable),
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ApplyTable {
    basic: Option<String>,
    header: Option<String>,
    query: Option<String>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct DestinationTable {
    host: String,
    #[serde(default)]
    paths: Vec<String>,
    #[serde(default)]
    methods: Vec<String>,
}

impl CredentialTable {
    /// Check the table; `home` expands a `~/` file path. The error names the table (by
    /// its name, or its position among the tables) and the field.
    pub(crate) fn check(
        &self,
        index: usize,
        home: &std::path::Path,
    ) -> Result<CredentialSpec, String> {
        let which = match &self.name {
            Some(n) => format!("[[credential]] `{n}`"),
            None => format!("[[credential]] number {}", index + 1),
        };
        let bad = |field: &str, why: String| format!("{which}: `{field}`: {why}");
        let name = match self.name.clone() {
            Some(n) if is_credential_name(&n) => n,
            Some(n) => {
                return Err(bad(
                    "name",
                    format!("`{n}` must be 1 to 64 letters, digits, `_`, `-` or `.`"),
                ));
            }
            None => return Err(bad("name", "every credential needs a name".into())),
        };
        let source = match &self.source {
            None => {
                return Err(bad(
                    "source",
                    "say where the value is read: { env = \"VAR\" }, { file = \"PATH\" } or { command = [\"PROGRAM\", …] }".into(),
                ));
            }
            Some(s) => check_source(s, home).map_err(|why| bad("source", why))?,
        };
        let apply = apply_of(self.apply.as_ref()).map_err(|(field, why)| bad(field, why))?;
        if let Some(v) = &self.env
            && !is_variable_name(v)
        {
            return Err(bad("env", format!("`{v}` is not a variable name")));
        }
        if self.destinations.is_empty() {
            return Err(bad(
                "destinations",
                "name at least one { host = \"HOST[:PORT]\" } the credential may go to".into(),
            ));
        }
        let mut destinations = Vec::new();
        for (i, d) in self.destinations.iter().enumerate() {
            let dest = Destination::parse(&d.host, &d.paths, &d.methods)
                .map_err(|why| bad(&format!("destinations[{i}]"), why.to_string()))?;
            destinations.push(dest);
        }
        Ok(CredentialSpec {
            name,
            source,
            destinations,
            apply,
            env: self.env.clone(),
        })
    }
}

/// How a credential is applied to a request: `"bearer"` (the default), or a table naming
/// exactly one of `basic` (a user name), `header` (a header a credential may be put in)
/// or `query` (a parameter name). An error names the field and why.
fn apply_of(apply: Option<&ApplyField>) -> Result<Apply, (&'static str, String)> {
    Ok(match apply {
        None => Apply::Bearer,
        Some(ApplyField::Word(w)) if w.as_str() == "bearer" => Apply::Bearer,
        Some(ApplyField::Word(w)) => {
            return Err((
                "apply",
                format!(
                    "`{w}` is not a way to apply a credential: write \"bearer\", {{ basic = \"USER\" }}, {{ header = \"NAME\" }} or {{ query = \"PARAM\" }}"
                ),
            ));
        }
        Some(ApplyField::Table(t)) => match (t.basic.clone(), t.header.clone(), t.query.clone()) {
            (Some(user), None, None)
                if !user.contains(':') && !user.bytes().any(|b| b.is_ascii_control()) =>
            {
                Apply::Basic { user }
            }
            (Some(_), None, None) => {
                return Err((
                    "apply.basic",
                    "a user name holds no `:` or control characters".into(),
                ));
            }
            (None, Some(h), None) if is_credential_header(&h) => Apply::Header(h),
            (None, Some(h), None) => {
                return Err((
                    "apply.header",
                    format!(
                        "`{h}` is not a header a credential may be put in (a token, not Host, Cookie, Proxy-* or a header that frames the message)"
                    ),
                ));
            }
            (None, None, Some(q))
                if !q.is_empty()
                    && q.len() <= 64
                    && q.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)) =>
            {
                Apply::Query(q)
            }
            (None, None, Some(q)) => {
                return Err((
                    "apply.query",
                    format!("`{q}` must be 1 to 64 letters, digits, `-`, `_` or `.`"),
                ));
            }
            _ => {
                return Err(("apply", "name exactly one of basic, header or query".into()));
            }
        },
    })
}

fn check_source(s: &SourceTable, home: &std::path::Path) -> Result<CredentialSource, String> {
    if s.timeout_seconds.is_some() && s.command.is_none() {
        return Err("timeout_seconds applies to a command source only".into());
    }
    match (s.env.clone(), s.file.clone(), s.command.clone()) {
        (Some(v), None, None) if is_variable_name(&v) => Ok(CredentialSource::Env(v)),
        (Some(v), None, None) => Err(format!("`{v}` is not a variable name")),
        (None, Some(f), None) => {
            let path = if let Some(rest) = f.strip_prefix("~/") {
                home.join(rest)
            } else {
                PathBuf::from(&f)
            };
            if !path.is_absolute() {
                return Err(format!(
                    "the file `{f}` must be an absolute path or start with ~/"
                ));
            }
            Ok(CredentialSource::File(path))
        }
        (None, None, Some(argv)) => {
            if argv.first().is_none_or(|p| p.is_empty()) {
                return Err(
                    "the command needs a program: command = [\"PROGRAM\", \"ARG\", …]".into(),
                );
            }
            let timeout = match s.timeout_seconds {
                None => DEFAULT_COMMAND_TIMEOUT,
                Some(0) => return Err("timeout_seconds must be at least 1".into()),
                Some(n) if Duration::from_secs(n) > MAX_COMMAND_TIMEOUT => {
                    return Err(format!(
                        "timeout_seconds must be at most {}",
                        MAX_COMMAND_TIMEOUT.as_secs()
                    ));
                }
                Some(n) => Duration::from_secs(n),
            };
            Ok(CredentialSource::Command { argv, timeout })
        }
        _ => Err("name exactly one of env, file or command".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(host: &str, paths: &[&str], methods: &[&str]) -> Destination {
        let s = |v: &[&str]| v.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
        Destination::parse(host, &s(paths), &s(methods)).unwrap()
    }

    #[test]
    fn destinations_are_exact_hosts_and_ports() {
        let a = d("api.example.com", &["/repos/org"], &["get"]);
        let h = Host::parse("api.example.com").unwrap();
        assert!(a.covers(&h, 443, "GET", "/repos/org/x?y=1"));
        assert!(a.covers(&h, 443, "GET", "/repos/org.git/info/refs"));
        assert!(!a.covers(&h, 443, "POST", "/repos/org"));
        assert!(!a.covers(&h, 443, "GET", "/repos/organisation"));
        assert!(!a.covers(&h, 8443, "GET", "/repos/org"));
        assert!(!a.covers(
            &Host::parse("example.com").unwrap(),
            443,
            "GET",
            "/repos/org"
        ));
        assert!(matches!(
            Destination::parse("*.example.com", &[], &[]),
            Err(DestinationError::Wildcard(_))
        ));
        assert!(matches!(
            Destination::parse("example.com", &["repos".into()], &[]),
            Err(DestinationError::Path(_))
        ));
        let e = Destination::parse("example.com", &[], &["G T".into()]).unwrap_err();
        assert_eq!(e.to_string(), "`G T` is not an HTTP method");
        assert!(matches!(
            Destination::parse("user@example.com", &[], &[]),
            Err(DestinationError::Authority(_))
        ));
    }

    // A path a server would decode or normalize into another one is under no prefix,
    // exactly as request rules judge it.
    #[test]
    fn credential_scopes_judge_paths_as_request_rules_do() {
        let a = d("api.example.com", &["/repos/org"], &[]);
        let h = Host::parse("api.example.com").unwrap();
        for sneaky in [
            "/repos/org/../admin",
            "/repos/org/%2e%2e/admin",
            "/repos/org/%2E%2E/admin",
            "/repos/org%2f..%2fadmin",
            "/repos/org/..;/admin",
            "/repos/org//x",
            "/repos/org/./x",
            "/repos/%6frg/x",
        ] {
            assert!(!a.covers(&h, 443, "GET", sneaky), "{sneaky}");
        }
        let open = d("api.example.com", &[], &[]);
        assert!(!open.covers(&h, 443, "GET", "/a/../b"));
        assert!(open.covers(&h, 443, "GET", "/a/b"));
    }

    #[test]
    fn overlapping_credentials_are_ambiguous() {
        let a = [d("h.example", &["/a"], &["GET"])];
        let b = [d("h.example", &["/b"], &[])];
        let c = [d("h.example", &["/a/x"], &[])];
        let e = [d("h.example", &["/a"], &["POST"])];
        let f = [d("h.example:8443", &[], &[])];
        assert!(check_unambiguous([("A", &a[..]), ("B", &b[..])]).is_ok());
        assert!(check_unambiguous([("A", &a[..]), ("E", &e[..])]).is_ok());
        assert!(check_unambiguous([("A", &a[..]), ("F", &f[..])]).is_ok());
        let err = check_unambiguous([("A", &a[..]), ("C", &c[..])]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the credentials A and C could both be added to one request (h.example:443 GET /a \
             and h.example:443 /a/x); give them paths or methods that do not overlap"
        );
        let all = [d("h.example", &[], &[])];
        assert!(check_unambiguous([("B", &b[..]), ("ALL", &all[..])]).is_err());
    }

    #[test]
    fn names() {
        assert!(is_variable_name("GH_TOKEN"));
        assert!(!is_variable_name("1X"));
        assert!(!is_variable_name("A-B"));
        assert!(is_credential_name("github.read-only"));
        assert!(!is_credential_name("a b"));
        assert!(is_credential_header("X-Api-Key"));
        for bad in ["Host", "proxy-authorization", "Content-Length", "a:b", ""] {
            assert!(!is_credential_header(bad), "{bad}");
        }
    }

    fn load_with(user: &str, project: &str) -> Result<crate::config::Merged, crate::ConfigError> {
        let fs = crate::FakeFs::new()
            .dir("/w/proj")
            .dir("/w/proj/.cordon")
            .dir("/home/u/.config/cordon")
            .file_with("/home/u/.config/cordon/policy.toml", 1, user.as_bytes())
            .file_with("/w/proj/.cordon/policy.toml", 1, project.as_bytes());
        let opts = crate::LoadOptions {
            workspace: "/w/proj".into(),
            home: "/home/u".into(),
            ..Default::default()
        };
        crate::config::load(&opts, &fs)
    }

    const GITHUB: &str = r#"
[[credential]]
name = "github"
source = { command = ["gh", "auth", "token"], timeout_seconds = 5 }
env = "GH_TOKEN"
destinations = [{ host = "api.github.com", paths = ["/repos/org"], methods = ["get", "POST"] }]

[[credential]]
name = "registry"
source = { file = "~/.config/registry-token" }
apply = { basic = "ci" }
destinations = [{ host = "registry.example.com:8443" }]
"#;

    #[test]
    fn tables_load_and_allowlist_their_hosts() {
        let m = load_with(GITHUB, "").unwrap();
        let c = &m.network.credentials;
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].name, "github");
        assert_eq!(
            c[0].source,
            CredentialSource::Command {
                argv: vec!["gh".into(), "auth".into(), "token".into()],
                timeout: Duration::from_secs(5)
            }
        );
        assert_eq!(c[0].apply, Apply::Bearer);
        assert_eq!(c[0].env.as_deref(), Some("GH_TOKEN"));
        assert_eq!(c[0].destinations[0].methods, ["GET", "POST"]);
        assert_eq!(
            c[1].source,
            CredentialSource::File("/home/u/.config/registry-token".into())
        );
        assert_eq!(c[1].apply, Apply::Basic { user: "ci".into() });
        assert!(m.network.allow.contains(&"api.github.com:443".to_string()));
        assert!(
            m.network
                .allow
                .contains(&"registry.example.com:8443".to_string())
        );
    }

    #[test]
    fn a_projects_tables_are_never_used() {
        let trusted = "trusted_workspaces = [\"/w/proj\"]\n";
        let m = load_with(trusted, GITHUB).unwrap();
        assert!(m.network.credentials.is_empty());
        assert!(m.network.allow.is_empty());
        assert!(
            m.notes
                .iter()
                .any(|n| n.contains("[[credential]] table ignored")),
            "{:?}",
            m.notes
        );
    }

    #[test]
    fn errors_name_the_table_and_the_field() {
        for (table, want) in [
            (
                "name = \"a\"\ndestinations = [{ host = \"h.example\" }]",
                "`a`: `source`",
            ),
            (
                "name = \"a\"\nsource = { env = \"X\", file = \"/f\" }\ndestinations = [{ host = \"h.example\" }]",
                "`a`: `source`: name exactly one",
            ),
            (
                "name = \"a\"\nsource = { file = \"rel/f\" }\ndestinations = [{ host = \"h.example\" }]",
                "absolute path",
            ),
            (
                "name = \"a\"\nsource = { command = [] }\ndestinations = [{ host = \"h.example\" }]",
                "needs a program",
            ),
            (
                "name = \"a\"\nsource = { env = \"X\" }\ndestinations = [{ host = \"*.example.com\" }]",
                "`a`: `destinations[0]`: `*.example.com` is a wildcard",
            ),
            (
                "name = \"a\"\nsource = { env = \"X\" }\ndestinations = []",
                "`a`: `destinations`",
            ),
            (
                "name = \"a\"\nsource = { env = \"X\" }\napply = { header = \"Host\" }\ndestinations = [{ host = \"h.example\" }]",
                "`a`: `apply.header`",
            ),
            (
                "name = \"a\"\nsource = { env = \"X\" }\napply = \"digest\"\ndestinations = [{ host = \"h.example\" }]",
                "`a`: `apply`",
            ),
            (
                "name = \"a\"\nsource = { env = \"X\" }\nenv = \"A-B\"\ndestinations = [{ host = \"h.example\" }]",
                "`a`: `env`",
            ),
            (
                "source = { env = \"X\" }\ndestinations = [{ host = \"h.example\" }]",
                "number 1: `name`",
            ),
            (
                "name = \"a\"\nsource = { env = \"X\" }\ndestinations = [{ host = \"h.example\", paths = [\"/a/../b\"] }]",
                "`destinations[0]`: path",
            ),
        ] {
            let e = load_with(&format!("[[credential]]\n{table}\n"), "").unwrap_err();
            assert!(e.message.contains(want), "{table}: {e}");
            assert!(e.message.contains("[[credential]]"), "{e}");
            assert!(e.position.is_some() && e.file.is_some(), "{e:?}");
        }
    }

    #[test]
    fn overlapping_tables_are_refused_when_the_config_loads() {
        let two = "[[credential]]\nname = \"a\"\nsource = { env = \"X\" }\ndestinations = [{ host = \"h.example\" }]\n[[credential]]\nname = \"b\"\nsource = { env = \"Y\" }\ndestinations = [{ host = \"h.example\", paths = [\"/x\"] }]\n";
        let e = load_with(two, "").unwrap_err();
        assert!(
            e.message
                .contains("credentials a and b could both be added"),
            "{e}"
        );
        let apart = two.replace(
            "destinations = [{ host = \"h.example\" }]",
            "destinations = [{ host = \"h.example\", paths = [\"/y\"] }]",
        );
        assert!(load_with(&apart, "").is_ok());
        let same = two.replace("name = \"b\"", "name = \"a\"");
        assert!(
            load_with(&same, "")
                .unwrap_err()
                .message
                .contains("another credential has this name")
        );
    }
}
