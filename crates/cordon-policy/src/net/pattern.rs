//! Host patterns of the `[network]` allow and deny lists.
//!
//! `example.com` matches that name only; `*.example.com` matches every name *below* it
//! and not the apex; an optional `:port` narrows the pattern to one port. Addresses may
//! be listed too (`10.0.0.5`, `[2001:db8::1]:8443`). Patterns go through the same host
//! normalization as URLs, so `*.BÜCHER.de.` and a request to `www.xn--bcher-kva.de` meet.

use std::fmt;

use super::origin::{Authority, Host, OriginError};

#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    Exact(Host),
    Subdomains(String),
}

/// One entry of an allow or deny list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern {
    target: Target,
    port: Option<u16>,
}

impl HostPattern {
    /// Parse `host`, `*.domain`, optionally followed by `:port`.
    pub fn parse(pattern: &str) -> Result<HostPattern, OriginError> {
        let bad = |why: &str| OriginError::BadPattern {
            pattern: pattern.chars().take(200).collect(),
            why: why.to_owned(),
        };
        if pattern.is_empty() {
            return Err(bad("it is empty"));
        }
        if pattern.contains("://") || pattern.contains('/') {
            return Err(bad("write a host name, not a URL"));
        }
        let (wild, rest) = match pattern.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, pattern),
        };
        if rest.contains('*') {
            return Err(bad(
                "`*` is only allowed as the whole first label, as in `*.example.com`",
            ));
        }
        if rest.ends_with(':') {
            return Err(bad("the port after `:` is missing"));
        }
        // Port 0 is never a real destination; use it to learn whether a port was written.
        let authority = Authority::parse(rest, 0).map_err(|e| bad(&e.to_string()))?;
        let port = (authority.port != 0).then_some(authority.port);
        let target = if wild {
            match authority.host {
                Host::Domain(d) => Target::Subdomains(d),
                Host::Ip(_) => return Err(bad("`*.` needs a domain name, not an address")),
            }
        } else {
            Target::Exact(authority.host)
        };
        Ok(HostPattern { target, port })
    }

    /// The port this pattern is limited to, if any.
    pub fn port(&self) -> Option<u16> {
        self.port
    }

    /// Whether `host` is named by this pattern, whatever the port.
    pub fn matches_host(&self, host: &Host) -> bool {
        match (&self.target, host) {
            (Target::Exact(want), got) => want == got,
            (Target::Subdomains(suffix), Host::Domain(name)) => name
                .strip_suffix(suffix.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
            (Target::Subdomains(_), Host::Ip(_)) => false,
        }
    }

    /// Whether `host:port` is named by this pattern: the pattern's own port, or when it
    /// has none, one of `default_ports`.
    pub fn matches(&self, host: &Host, port: u16, default_ports: &[u16]) -> bool {
        self.matches_host(host)
            && match self.port {
                Some(p) => p == port,
                None => default_ports.contains(&port),
            }
    }
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.target {
            Target::Exact(h) => write!(f, "{h}")?,
            Target::Subdomains(d) => write!(f, "*.{d}")?,
        }
        if let Some(p) = self.port {
            write!(f, ":{p}")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for HostPattern {
    type Err = OriginError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        HostPattern::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> HostPattern {
        HostPattern::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }
    fn h(s: &str) -> Host {
        Host::parse(s).unwrap()
    }

    #[test]
    fn exact_names_match_only_themselves() {
        let pat = p("allowed.com");
        assert!(pat.matches_host(&h("allowed.com")));
        assert!(pat.matches_host(&h("ALLOWED.com.")));
        assert!(!pat.matches_host(&h("allowed.com.evil.com")));
        assert!(!pat.matches_host(&h("evilallowed.com")));
        assert!(!pat.matches_host(&h("www.allowed.com")));
        assert!(!pat.matches_host(&h("allowed.co")));
    }

    #[test]
    fn wildcards_match_subdomains_not_the_apex() {
        let pat = p("*.example.com");
        assert!(pat.matches_host(&h("a.example.com")));
        assert!(pat.matches_host(&h("a.b.example.com")));
        assert!(!pat.matches_host(&h("example.com")));
        assert!(!pat.matches_host(&h("badexample.com")));
        assert!(!pat.matches_host(&h("example.com.evil.com")));
        assert!(!pat.matches_host(&h("a.example.com.evil.com")));
        assert!(!pat.matches_host(&h("127.0.0.1")));
    }

    #[test]
    fn ports_narrow_a_pattern() {
        let any = p("example.com");
        assert!(any.matches(&h("example.com"), 443, &[443]));
        assert!(!any.matches(&h("example.com"), 8443, &[443]));
        assert!(!any.matches(&h("example.com"), 80, &[443]));
        let one = p("static.example.com:8443");
        assert_eq!(one.port(), Some(8443));
        assert!(one.matches(&h("static.example.com"), 8443, &[443]));
        assert!(!one.matches(&h("static.example.com"), 443, &[443]));
        let wild = p("*.example.com:8080");
        assert!(wild.matches(&h("x.example.com"), 8080, &[443]));
    }

    #[test]
    fn patterns_are_normalized_like_urls() {
        assert_eq!(p("Example.COM.").to_string(), "example.com");
        assert_eq!(p("*.BÜCHER.de").to_string(), "*.xn--bcher-kva.de");
        assert!(p("*.bücher.de").matches_host(&h("www.xn--bcher-kva.de")));
        assert!(!p("apple.com").matches_host(&h("\u{430}pple.com")));
        assert!(p("0x7f.1").matches_host(&h("127.0.0.1")));
        assert!(p("[::1]:8080").matches(&h("[::1]"), 8080, &[]));
        assert_eq!(p("[::1]:8080").to_string(), "[::1]:8080");
    }

    #[test]
    fn garbage_is_refused_with_a_reason() {
        for bad in [
            "",
            "*",
            "*example.com",
            "a.*.com",
            "*.*.com",
            "https://example.com",
            "example.com/path",
            "example.com:",
            "example.com:0",
            "example.com:99999",
            "user@example.com",
            "exa mple.com",
            "*.127.0.0.1",
            "*.[::1]",
            "example..com",
            "xn--a.com",
        ] {
            let err = HostPattern::parse(bad).unwrap_err();
            assert_eq!(err.code().as_str(), "bad-pattern", "{bad:?}");
            assert!(err.to_string().starts_with("the host pattern"), "{err}");
        }
    }
}
