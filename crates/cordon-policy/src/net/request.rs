//! Rules finer than a host: which methods and path prefixes of an allowlisted host may be
//! used, with git smart-HTTP understood.
//!
//! A host named by any request rule is *ruled*: every request to it must match one of its
//! rules, and the egress proxy has to see the requests to judge them (it terminates TLS
//! for ruled hosts only). A rule lists methods (or the read-only shorthand GET, HEAD,
//! OPTIONS) and path prefixes; a prefix matches at a segment boundary (`/org/repo` covers
//! `/org/repo`, `/org/repo/…` and `/org/repo.git/…`, never `/org/repository`).
//!
//! Git over smart HTTP fetches with `GET …/info/refs?service=git-upload-pack` and
//! `POST …/git-upload-pack`, and pushes with the `git-receive-pack` pair. A read-only
//! rule still lets fetch and clone through (their POST reads); a push is refused unless
//! the rule says `git_push = true`, whatever its methods.
//!
//! What this must never do: match a path by plain string prefix, or judge a path whose
//! meaning depends on a later decoding step (`%2e`, `%2f`, `%5c`, `.` and `..` segments,
//! empty segments): those are refused, not guessed at.

use std::fmt;

use serde::Serialize;

use super::code::NetCode;
use super::origin::{Host, OriginError};
use super::pattern::HostPattern;

/// The methods of the read-only shorthand.
pub const READ_ONLY_METHODS: [&str; 3] = ["GET", "HEAD", "OPTIONS"];

/// One `{ host = …, methods = […], paths = […] }` entry of `[network] allow`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRule {
    host: HostPattern,
    /// Upper-case method names; empty means every method.
    methods: Vec<String>,
    /// Path prefixes; empty means every path.
    paths: Vec<PathPrefix>,
    git_push: bool,
}

/// A path prefix of a request rule or a credential's scope. It matches at a segment
/// boundary (`/org/repo` covers `/org/repo`, `/org/repo/…` and `/org/repo.git/…`, never
/// `/org/repository`), and only paths that [`path_is_judgeable`] accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathPrefix(String);

impl PathPrefix {
    /// A written prefix: it must start with `/` and hold no query or spelling whose
    /// meaning a server could change by decoding it.
    pub fn parse(p: &str) -> Result<PathPrefix, PathPrefixError> {
        if !p.starts_with('/') || unsafe_path(p) || p.contains('?') {
            return Err(PathPrefixError { path: p.to_owned() });
        }
        // `/org/repo/` and `/org/repo` mean the same prefix.
        let trimmed = p.trim_end_matches('/');
        Ok(PathPrefix(if trimmed.is_empty() {
            "/".to_owned()
        } else {
            trimmed.to_owned()
        }))
    }

    /// Whether `path` (without its query) is under this prefix. A path that cannot be
    /// judged ([`path_is_judgeable`]) is under no prefix.
    pub fn matches(&self, path: &str) -> bool {
        path_is_judgeable(path) && prefix_matches(&self.0, path)
    }

    /// Whether some path could be under both prefixes (one covers the other).
    pub fn overlaps(&self, other: &PathPrefix) -> bool {
        prefix_matches(&self.0, &other.0) || prefix_matches(&other.0, &self.0)
    }

    /// The prefix as written (trailing `/` dropped).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for PathPrefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A written path prefix that does not start with `/`, or holds a query or a spelling a
/// server could decode into another path ([`PathPrefix::parse`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathPrefixError {
    /// The prefix as written.
    pub path: String,
}

impl fmt::Display for PathPrefixError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "path `{}` must start with `/` and hold no `?`, `%2e`, `%2f`, `%5c`, `.` or `..` segments",
            self.path
        )
    }
}

impl std::error::Error for PathPrefixError {}

/// Whether a request path (without its query) has one meaning: it starts with `/` and
/// holds no encoded or dot segment a server would decode or normalize into another path.
/// Rules and credential scopes judge only such paths.
pub fn path_is_judgeable(path: &str) -> bool {
    path.starts_with('/') && !unsafe_path(path)
}

/// The written form of a request rule, as config files and flags give it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestRuleSpec {
    /// Host pattern (`github.com`, `*.example.com:8443`).
    pub host: String,
    /// Methods allowed; empty means every method unless `read_only` is set.
    pub methods: Vec<String>,
    /// Path prefixes; empty means every path.
    pub paths: Vec<String>,
    /// Shorthand for GET, HEAD and OPTIONS (added to `methods`).
    pub read_only: bool,
    /// Allow `git push` over smart HTTP (`git-receive-pack`).
    pub git_push: bool,
}

impl RequestRule {
    /// Compile a written rule; the first unusable part is the error.
    pub fn parse(spec: &RequestRuleSpec) -> Result<RequestRule, OriginError> {
        let host = HostPattern::parse(&spec.host)?;
        let bad = |why: String| OriginError::BadPattern {
            pattern: spec.host.chars().take(200).collect(),
            why,
        };
        let mut methods = Vec::new();
        for m in &spec.methods {
            let valid =
                !m.is_empty() && m.len() <= 32 && m.bytes().all(|b| b.is_ascii_alphabetic());
            if !valid {
                return Err(bad(format!("`{m}` is not an HTTP method")));
            }
            methods.push(m.to_ascii_uppercase());
        }
        if spec.read_only {
            methods.extend(READ_ONLY_METHODS.iter().map(|m| (*m).to_owned()));
        }
        methods.sort();
        methods.dedup();
        let mut paths = Vec::new();
        for p in &spec.paths {
            paths.push(PathPrefix::parse(p).map_err(|e| bad(e.to_string()))?);
        }
        Ok(RequestRule {
            host,
            methods,
            paths,
            git_push: spec.git_push,
        })
    }

    /// The host pattern this rule is about.
    pub fn host(&self) -> &HostPattern {
        &self.host
    }

    /// Whether this rule speaks about `host:port` (a pattern without a port covers 443
    /// and 80, as a tunnel's allowlist entry does).
    pub fn covers(&self, host: &Host, port: u16) -> bool {
        self.host.matches(host, port, &super::TUNNEL_DEFAULT_PORTS)
    }

    fn judge(&self, method: &str, path: &str, git: Option<GitService>) -> Result<(), NetCode> {
        if !self.paths.is_empty() && !self.paths.iter().any(|p| p.matches(path)) {
            return Err(NetCode::PathNotAllowed);
        }
        match git {
            Some(GitService::ReceivePack) => {
                return if self.git_push {
                    Ok(())
                } else {
                    Err(NetCode::GitPush)
                };
            }
            // Fetch and clone only read, whatever their method.
            Some(GitService::UploadPack) => return Ok(()),
            None => {}
        }
        if !self.methods.is_empty() && !self.methods.iter().any(|m| m == method) {
            return Err(NetCode::MethodNotAllowed);
        }
        Ok(())
    }
}

impl fmt::Display for RequestRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{ host = \"{}\"", self.host)?;
        if !self.methods.is_empty() {
            write!(f, ", methods = {:?}", self.methods)?;
        }
        if !self.paths.is_empty() {
            let paths: Vec<&str> = self.paths.iter().map(PathPrefix::as_str).collect();
            write!(f, ", paths = {paths:?}")?;
        }
        if self.git_push {
            write!(f, ", git_push = true")?;
        }
        write!(f, " }}")
    }
}

/// Which git smart-HTTP service a request belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum GitService {
    /// Fetch and clone.
    UploadPack,
    /// Push.
    ReceivePack,
}

impl GitService {
    /// Recognize a smart-HTTP request from its method, path and query, as git's
    /// `http-protocol` documentation describes it.
    ///
    /// Fetch is recognized only in its two exact shapes (`GET …/info/refs?service=
    /// git-upload-pack` and `POST …/git-upload-pack`), since a fetch passes a rule's
    /// method list: any other request that merely ends in those names is judged by its
    /// method like any request. Push is recognized in every spelling a server might route
    /// as one (any method, any case, a trailing `/`), since it is what is refused.
    pub fn of(method: &str, path: &str, query: Option<&str>) -> Option<GitService> {
        let trimmed = path.strip_suffix('/').unwrap_or(path);
        let last = trimmed.rsplit('/').next().unwrap_or_default();
        let names = |name: &str| -> Option<GitService> {
            if name.eq_ignore_ascii_case("git-receive-pack") {
                Some(GitService::ReceivePack)
            } else if name.eq_ignore_ascii_case("git-upload-pack") {
                Some(GitService::UploadPack)
            } else {
                None
            }
        };
        let asked = query
            .into_iter()
            .flat_map(|q| q.split('&'))
            .filter_map(|kv| kv.split_once('='))
            .filter(|(k, _)| k.eq_ignore_ascii_case("service"))
            .map(|(_, v)| names(v))
            .collect::<Vec<_>>();
        if names(last) == Some(GitService::ReceivePack)
            || asked.contains(&Some(GitService::ReceivePack))
        {
            return Some(GitService::ReceivePack);
        }
        let fetch = (method == "GET"
            && path.ends_with("/info/refs")
            && query == Some("service=git-upload-pack"))
            || (method == "POST" && path.ends_with("/git-upload-pack") && query.is_none());
        fetch.then_some(GitService::UploadPack)
    }
}

/// A request that a rule refused: its code and one sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRefusal {
    /// [`NetCode::MethodNotAllowed`], [`NetCode::PathNotAllowed`], [`NetCode::GitPush`]
    /// or [`NetCode::Malformed`].
    pub code: NetCode,
    /// One human sentence.
    pub reason: String,
}

/// Judge one request to a ruled host: allowed when any rule covering `host:port` allows
/// it. `Ok(())` also when no rule covers the host (then the host allowlist alone decides).
pub fn check_request(
    rules: &[RequestRule],
    host: &Host,
    port: u16,
    method: &str,
    path_and_query: &str,
) -> Result<(), RequestRefusal> {
    let covering: Vec<&RequestRule> = rules.iter().filter(|r| r.covers(host, port)).collect();
    if covering.is_empty() {
        return Ok(());
    }
    let (path, query) = match path_and_query.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (path_and_query, None),
    };
    if !path_is_judgeable(path) {
        return Err(RequestRefusal {
            code: NetCode::Malformed,
            reason: format!(
                "the path of {method} {host}:{port} holds encoded or dot segments that rules cannot judge"
            ),
        });
    }
    let git = GitService::of(method, path, query);
    let mut worst = NetCode::PathNotAllowed;
    for rule in &covering {
        match rule.judge(method, path, git) {
            Ok(()) => return Ok(()),
            // The most telling refusal: a push refusal over a method one, over a path one.
            Err(code) => worst = rank(worst, code),
        }
    }
    let shown: String = path.chars().take(200).collect();
    let reason = match worst {
        NetCode::GitPush => format!(
            "git push to {host}{shown} is refused: the network rule for {host} allows fetch only (add git_push = true to allow it)"
        ),
        NetCode::PathNotAllowed => format!(
            "{method} {host}{shown} is refused: the path is outside the network rules for {host}"
        ),
        _ => format!(
            "{method} {host}{shown} is refused: the network rules for {host} do not allow {method} there"
        ),
    };
    Err(RequestRefusal {
        code: worst,
        reason,
    })
}

fn rank(a: NetCode, b: NetCode) -> NetCode {
    let score = |c: NetCode| match c {
        NetCode::GitPush => 3,
        NetCode::MethodNotAllowed => 2,
        _ => 1,
    };
    if score(b) > score(a) { b } else { a }
}

/// A prefix matches at a segment boundary; `/org/repo` also covers `/org/repo.git`.
fn prefix_matches(prefix: &str, path: &str) -> bool {
    if prefix == "/" {
        return true;
    }
    let Some(rest) = path.strip_prefix(prefix) else {
        return false;
    };
    let rest = rest.strip_prefix(".git").unwrap_or(rest);
    rest.is_empty() || rest.starts_with('/')
}

/// Paths whose meaning a later decoding or normalization could change.
fn unsafe_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    if lower.contains("%2f")
        || lower.contains("%5c")
        || lower.contains("%25")
        || lower.contains('\\')
        || lower.contains(';')
    {
        return true;
    }
    // A percent-encoded unreserved character (`%2e` for `.`, `%2d` for `-`, letters,
    // digits) is never needed, and a server that decodes it sees another path than the
    // rule did (`git%2Dreceive%2Dpack`).
    let bytes = path.as_bytes();
    let hex = |b: u8| char::from(b).to_digit(16);
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            let decoded = u8::try_from(h * 16 + l).unwrap_or(0);
            if decoded.is_ascii_alphanumeric() || b"-._~".contains(&decoded) {
                return true;
            }
        }
    }
    if path.bytes().any(|b| b.is_ascii_control() || b == b'#') {
        return true;
    }
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let last = segments.len().saturating_sub(1);
    segments
        .iter()
        .enumerate()
        .any(|(i, seg)| *seg == "." || *seg == ".." || (seg.is_empty() && i != last))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(
        host: &str,
        methods: &[&str],
        paths: &[&str],
        read_only: bool,
        push: bool,
    ) -> RequestRule {
        RequestRule::parse(&RequestRuleSpec {
            host: host.into(),
            methods: methods.iter().map(|s| (*s).to_owned()).collect(),
            paths: paths.iter().map(|s| (*s).to_owned()).collect(),
            read_only,
            git_push: push,
        })
        .unwrap()
    }

    fn judge(rules: &[RequestRule], method: &str, target: &str) -> &'static str {
        let host = Host::parse("github.com").unwrap();
        match check_request(rules, &host, 443, method, target) {
            Ok(()) => "allow",
            Err(r) => r.code.as_str(),
        }
    }

    macro_rules! case {
        ($rules:expr, $method:expr, $target:expr, $want:expr) => {
            assert_eq!(
                judge(&$rules, $method, $target),
                $want,
                "{} {}",
                $method,
                $target
            );
        };
    }

    #[test]
    fn methods_and_paths() {
        let r = [rule("github.com", &["GET"], &["/org/repo"], false, false)];
        case!(r, "GET", "/org/repo", "allow");
        case!(r, "GET", "/org/repo/", "allow");
        case!(r, "GET", "/org/repo/issues?q=1", "allow");
        case!(r, "GET", "/org/repo.git/info/refs", "allow");
        case!(r, "GET", "/org/repository", "path-not-allowed");
        case!(r, "GET", "/org/repo.gitx", "path-not-allowed");
        case!(r, "GET", "/org", "path-not-allowed");
        case!(r, "POST", "/org/repo", "method-not-allowed");
        case!(r, "DELETE", "/other", "path-not-allowed");
    }

    #[test]
    fn spellings_that_could_change_meaning_are_refused() {
        let r = [rule("github.com", &["GET"], &["/org/repo"], false, false)];
        case!(r, "GET", "/org/repo/../other", "malformed");
        case!(r, "GET", "/org/repo/./x", "malformed");
        case!(r, "GET", "/org/repo%2f..%2fother", "malformed");
        case!(r, "GET", "/org/repo/%2E%2E/x", "malformed");
        case!(r, "GET", "/org//repo", "malformed");
        case!(r, "GET", "/org/repo\\..\\x", "malformed");
        case!(r, "GET", "*", "malformed");
    }

    #[test]
    fn read_only_lets_git_fetch_through_and_refuses_push() {
        let r = [rule("github.com", &[], &["/org/repo"], true, false)];
        case!(r, "HEAD", "/org/repo", "allow");
        case!(r, "OPTIONS", "/org/repo", "allow");
        case!(r, "PUT", "/org/repo", "method-not-allowed");
        case!(
            r,
            "GET",
            "/org/repo.git/info/refs?service=git-upload-pack",
            "allow"
        );
        case!(r, "POST", "/org/repo.git/git-upload-pack", "allow");
        case!(
            r,
            "GET",
            "/org/repo.git/info/refs?service=git-receive-pack",
            "git-push"
        );
        case!(r, "POST", "/org/repo.git/git-receive-pack", "git-push");
        case!(r, "POST", "/other.git/git-upload-pack", "path-not-allowed");
    }

    #[test]
    fn push_is_refused_even_when_every_method_is_allowed_unless_said() {
        let open = [rule("github.com", &[], &[], false, false)];
        case!(open, "POST", "/a/b.git/git-receive-pack", "git-push");
        case!(open, "POST", "/a/b", "allow");
        let push = [rule("github.com", &[], &[], false, true)];
        case!(push, "POST", "/a/b.git/git-receive-pack", "allow");
    }

    #[test]
    fn any_covering_rule_may_allow_and_others_hosts_are_untouched() {
        let r = [
            rule("github.com", &["GET"], &["/a"], false, false),
            rule("github.com", &["POST"], &["/b"], false, false),
        ];
        case!(r, "POST", "/b/x", "allow");
        case!(r, "POST", "/a/x", "method-not-allowed");
        let other = Host::parse("example.com").unwrap();
        assert!(check_request(&r, &other, 443, "DELETE", "/").is_ok());
        // A port-limited rule does not rule other ports.
        let p = [rule("github.com:8443", &["GET"], &[], false, false)];
        let gh = Host::parse("github.com").unwrap();
        assert!(check_request(&p, &gh, 443, "DELETE", "/").is_ok());
        assert!(check_request(&p, &gh, 8443, "DELETE", "/").is_err());
    }

    #[test]
    fn bad_rules_fail_to_load() {
        for (m, p) in [
            ("G ET", "/a"),
            ("GET", "a"),
            ("GET", "/a/../b"),
            ("GET", "/a?x"),
        ] {
            let spec = RequestRuleSpec {
                host: "github.com".into(),
                methods: vec![m.into()],
                paths: vec![p.into()],
                ..RequestRuleSpec::default()
            };
            assert!(RequestRule::parse(&spec).is_err(), "{m} {p}");
        }
    }

    #[test]
    fn git_services() {
        let up = Some(GitService::UploadPack);
        let push = Some(GitService::ReceivePack);
        assert_eq!(
            GitService::of("GET", "/a/info/refs", Some("service=git-upload-pack")),
            up
        );
        assert_eq!(GitService::of("POST", "/a/git-upload-pack", None), up);
        assert_eq!(
            GitService::of("GET", "/a/info/refs", Some("x=1&service=git-receive-pack")),
            push
        );
        assert_eq!(GitService::of("GET", "/a/info/refs", None), None);
        assert_eq!(GitService::of("POST", "/a/git-receive-pack", None), push);
        assert_eq!(GitService::of("POST", "/a/GIT-Receive-Pack/", None), push);
        assert_eq!(GitService::of("GET", "/a/b", None), None);
        // Only the exact fetch shapes are fetches.
        assert_eq!(
            GitService::of("PUT", "/a/info/refs", Some("service=git-upload-pack")),
            None
        );
        assert_eq!(GitService::of("DELETE", "/a/git-upload-pack", None), None);
        assert_eq!(
            GitService::of("POST", "/a/git-upload-pack", Some("x=1")),
            None
        );
    }

    #[test]
    fn writes_dressed_as_fetches_are_judged_by_their_method() {
        let ro = [rule("github.com", &[], &["/repos/o/r"], true, false)];
        // A contents API write whose path ends like a fetch.
        case!(
            ro,
            "PUT",
            "/repos/o/r/contents/x/info/refs?service=git-upload-pack",
            "method-not-allowed"
        );
        case!(
            ro,
            "DELETE",
            "/repos/o/r/git/refs/heads/git-upload-pack",
            "method-not-allowed"
        );
        case!(
            ro,
            "PATCH",
            "/repos/o/r/git/refs/heads/git-upload-pack",
            "method-not-allowed"
        );
        // The real fetch still passes a read-only rule.
        case!(ro, "POST", "/repos/o/r/git-upload-pack", "allow");
    }

    #[test]
    fn paths_a_server_would_decode_or_split_are_refused() {
        let open = [rule("github.com", &[], &["/o/r"], false, false)];
        for target in [
            "/o/r/..;/other/x",
            "/o/r;x/y",
            "/o/r.git/git%2Dreceive%2Dpack",
            "/o/r/%2e%2e/x",
            "/o/r/%252e%252e/x",
            "/o/%72/x",
        ] {
            case!(open, "POST", target, "malformed");
        }
        // A push in another case or with a trailing slash is still a push.
        case!(open, "POST", "/o/r.git/GIT-RECEIVE-PACK", "git-push");
        case!(open, "POST", "/o/r.git/git-receive-pack/", "git-push");
        // Encoded reserved characters are ordinary.
        case!(open, "GET", "/o/r/a%20b", "allow");
    }
}
