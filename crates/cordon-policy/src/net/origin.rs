//! URL and authority parsing into a normalized [`Origin`]: the one place where text that
//! names a network destination becomes a scheme, a host and a port.
//!
//! The parser is deliberately stricter than a browser: where the WHATWG URL standard would
//! silently repair input (strip control bytes, turn `\` into `/`, drop userinfo, decode
//! `%`-escapes in the host), this refuses, because any repair is a place where two parsers
//! can disagree about which host is meant. What it does accept, it reads the way WHATWG
//! URL and `inet_aton` do, so that `http://0x7f.1/` is understood as `127.0.0.1` and never
//! as a harmless-looking name.
//!
//! Scheme policy: only `http` and `https` are origins. `ws`/`wss` are refused here (a
//! WebSocket through the proxy is a `CONNECT` tunnel, judged by [`Authority`]); `ftp`,
//! `file`, `gopher`, `data`, `javascript` and every other scheme are refused.

use std::fmt;
use std::net::{IpAddr, Ipv6Addr};

use idna::uts46::{AsciiDenyList, DnsLength, Hyphens, Uts46};
use serde::Serialize;

use super::code::NetCode;
use super::ip::{AddrClass, V4Parse, classify, embedded_ipv4, parse_ipv4_host};

/// A URL scheme that names a network origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Scheme {
    /// `http`, default port 80.
    Http,
    /// `https`, default port 443.
    Https,
}

impl Scheme {
    /// The port used when a URL names none.
    pub fn default_port(self) -> u16 {
        match self {
            Scheme::Http => 80,
            Scheme::Https => 443,
        }
    }

    /// The scheme as written in a URL.
    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
        }
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A normalized host: a DNS name in its ASCII (punycode) form, or an IP address.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Host {
    /// Lowercase, IDNA-to-ASCII (UTS-46, non-transitional), without a trailing dot, and
    /// only `a-z 0-9 - _ .` characters.
    Domain(String),
    /// An address literal, decoded from any of the forms WHATWG URL accepts.
    Ip(IpAddr),
}

impl Host {
    /// Parse and normalize a bare host (no port, no scheme). IPv6 literals must be in
    /// brackets, as in a URL.
    pub fn parse(input: &str) -> Result<Host, OriginError> {
        check_text(input)?;
        if input.is_empty() {
            return Err(OriginError::EmptyHost);
        }
        if input.contains('@') {
            return Err(OriginError::Userinfo);
        }
        if input.contains('%') {
            return Err(OriginError::PercentHost);
        }
        if let Some(inner) = input.strip_prefix('[') {
            let inner = inner
                .strip_suffix(']')
                .ok_or_else(|| OriginError::BadIpv6(shown(input)))?;
            let ip: Ipv6Addr = inner
                .parse()
                .map_err(|_| OriginError::BadIpv6(shown(input)))?;
            return Ok(Host::Ip(IpAddr::V6(ip)));
        }
        if input.contains(':') {
            return Err(OriginError::BadHost(shown(input)));
        }
        let ascii = Uts46::new()
            .to_ascii(
                input.as_bytes(),
                AsciiDenyList::URL,
                Hyphens::Allow,
                DnsLength::Ignore,
            )
            .map_err(|_| OriginError::Idna(shown(input)))?;
        match parse_ipv4_host(&ascii) {
            V4Parse::Addr(v4) => return Ok(Host::Ip(IpAddr::V4(v4))),
            V4Parse::Invalid => return Err(OriginError::BadIpv4(shown(input))),
            V4Parse::NotNumeric => {}
        }
        let name = ascii.strip_suffix('.').unwrap_or(&ascii);
        if !is_dns_name(name) {
            return Err(OriginError::BadHost(shown(input)));
        }
        Ok(Host::Domain(name.to_owned()))
    }

    /// The DNS name, if this host is one.
    pub fn domain(&self) -> Option<&str> {
        match self {
            Host::Domain(d) => Some(d),
            Host::Ip(_) => None,
        }
    }

    /// The address, if this host is a literal.
    pub fn ip(&self) -> Option<IpAddr> {
        match self {
            Host::Domain(_) => None,
            Host::Ip(ip) => Some(*ip),
        }
    }

    /// For an IPv6 literal that embeds an IPv4 address (mapped, NAT64, 6to4, …), that
    /// IPv4 address.
    pub fn embedded_ipv4(&self) -> Option<std::net::Ipv4Addr> {
        match self {
            Host::Ip(IpAddr::V6(v6)) => embedded_ipv4(*v6),
            _ => None,
        }
    }

    /// The address class of a literal; `None` for a name (it is classified after
    /// resolution).
    pub fn class(&self) -> Option<AddrClass> {
        self.ip().map(classify)
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Domain(d) => f.write_str(d),
            Host::Ip(IpAddr::V4(v4)) => write!(f, "{v4}"),
            Host::Ip(IpAddr::V6(v6)) => write!(f, "[{v6}]"),
        }
    }
}

impl Serialize for Host {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A host and port without a scheme: the target of `CONNECT host:port`, a SOCKS5
/// request, `ssh host`, …
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Authority {
    /// The normalized host.
    pub host: Host,
    /// The port (the caller's default when the text named none).
    pub port: u16,
}

impl Authority {
    /// Parse `host`, `host:port`, `[v6]` or `[v6]:port` with the same host rules as a URL.
    pub fn parse(input: &str, default_port: u16) -> Result<Authority, OriginError> {
        check_text(input)?;
        if input.contains('@') {
            return Err(OriginError::Userinfo);
        }
        if input.contains(['/', '?', '#']) {
            return Err(OriginError::BadHost(shown(input)));
        }
        let (host, port) = split_host_port(input)?;
        let port = parse_port(port, default_port)?;
        Ok(Authority {
            host: Host::parse(host)?,
            port,
        })
    }
}

impl fmt::Display for Authority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.host, self.port)
    }
}

/// A normalized network origin: scheme, host and effective port.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Origin {
    /// `http` or `https`.
    pub scheme: Scheme,
    /// The normalized host.
    pub host: Host,
    /// The effective port (the scheme's default when the URL names none).
    pub port: u16,
}

impl Origin {
    /// Parse an absolute `http://` or `https://` URL into its origin.
    ///
    /// Refused: other schemes, relative or scheme-relative URLs, userinfo (`a@b`),
    /// backslashes, NUL/control bytes and whitespace anywhere, `%` in the host, hosts that
    /// fail IDNA, numeric hosts that are not valid IPv4, and ports outside `1..=65535`.
    pub fn parse_url(url: &str) -> Result<Origin, OriginError> {
        check_text(url)?;
        if url.is_empty() {
            return Err(OriginError::NotAbsolute);
        }
        let Some((scheme, rest)) = url.split_once(':') else {
            return Err(OriginError::NotAbsolute);
        };
        let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
        if !scheme_ok {
            return Err(OriginError::NotAbsolute);
        }
        let scheme = match scheme.to_ascii_lowercase().as_str() {
            "http" => Scheme::Http,
            "https" => Scheme::Https,
            other => return Err(OriginError::BadScheme(shown(other))),
        };
        let Some(rest) = rest.strip_prefix("//") else {
            return Err(OriginError::NotAbsolute);
        };
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let authority = &rest[..end];
        if authority.contains('@') {
            return Err(OriginError::Userinfo);
        }
        if authority.is_empty() {
            return Err(OriginError::EmptyHost);
        }
        let (host, port) = split_host_port(authority)?;
        let port = parse_port(port, scheme.default_port())?;
        Ok(Origin {
            scheme,
            host: Host::parse(host)?,
            port,
        })
    }

    /// Parse a `host:port` authority (see [`Authority::parse`]).
    pub fn parse_authority(host_port: &str, default_port: u16) -> Result<Authority, OriginError> {
        Authority::parse(host_port, default_port)
    }

    /// The origin as an authority (host and port).
    pub fn authority(&self) -> Authority {
        Authority {
            host: self.host.clone(),
            port: self.port,
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}:{}", self.scheme, self.host, self.port)
    }
}

/// Why a URL, authority, host, pattern or CIDR was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum OriginError {
    /// Not an absolute `scheme://` URL.
    NotAbsolute,
    /// A scheme other than `http`/`https`.
    BadScheme(String),
    /// `user@host` or `user:pass@host`.
    Userinfo,
    /// A backslash, which parsers disagree about.
    Backslash,
    /// NUL, another control byte, or whitespace.
    ControlBytes,
    /// Nothing where the host should be.
    EmptyHost,
    /// A `%`-escape in the host.
    PercentHost,
    /// The host failed IDNA processing (disallowed code points, bad punycode, …).
    Idna(String),
    /// A numeric host that is not a valid IPv4 address.
    BadIpv4(String),
    /// A bracketed host that is not a valid IPv6 address.
    BadIpv6(String),
    /// Not a valid DNS name (empty label, label or name too long, odd characters).
    BadHost(String),
    /// The port is not a number in `1..=65535`.
    BadPort(String),
    /// A host pattern that cannot be used.
    BadPattern {
        /// The pattern as written.
        pattern: String,
        /// Why it is unusable.
        why: String,
    },
    /// An `allow_private` entry that is not a CIDR or address.
    BadCidr(String),
}

impl OriginError {
    /// A stable, short code for block headers and events.
    pub fn code(&self) -> NetCode {
        match self {
            OriginError::NotAbsolute => NetCode::NotAbsolute,
            OriginError::BadScheme(_) => NetCode::BadScheme,
            OriginError::Userinfo => NetCode::Userinfo,
            OriginError::Backslash => NetCode::Backslash,
            OriginError::ControlBytes => NetCode::ControlBytes,
            OriginError::EmptyHost => NetCode::EmptyHost,
            OriginError::PercentHost => NetCode::PercentHost,
            OriginError::Idna(_) => NetCode::Idna,
            OriginError::BadIpv4(_) => NetCode::BadIpv4,
            OriginError::BadIpv6(_) => NetCode::BadIpv6,
            OriginError::BadHost(_) => NetCode::BadHost,
            OriginError::BadPort(_) => NetCode::BadPort,
            OriginError::BadPattern { .. } => NetCode::BadPattern,
            OriginError::BadCidr(_) => NetCode::BadCidr,
        }
    }
}

impl fmt::Display for OriginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OriginError::NotAbsolute => {
                f.write_str("the URL is not an absolute http:// or https:// URL")
            }
            OriginError::BadScheme(s) => {
                write!(
                    f,
                    "the scheme {s:?} is not allowed; only http and https are"
                )
            }
            OriginError::Userinfo => {
                f.write_str("the address contains userinfo (`user@host`), which is refused")
            }
            OriginError::Backslash => f.write_str("the address contains a backslash"),
            OriginError::ControlBytes => {
                f.write_str("the address contains a NUL, control or whitespace character")
            }
            OriginError::EmptyHost => f.write_str("the address has an empty host"),
            OriginError::PercentHost => {
                f.write_str("the host contains a %-escape, which is refused")
            }
            OriginError::Idna(h) => {
                write!(f, "the host {h:?} is not a valid international domain name")
            }
            OriginError::BadIpv4(h) => {
                write!(f, "the host {h:?} is numeric but not a valid IPv4 address")
            }
            OriginError::BadIpv6(h) => write!(f, "the host {h:?} is not a valid IPv6 address"),
            OriginError::BadHost(h) => write!(f, "the host {h:?} is not a valid DNS name"),
            OriginError::BadPort(p) => write!(f, "the port {p:?} is not a number from 1 to 65535"),
            OriginError::BadPattern { pattern, why } => {
                write!(f, "the host pattern {pattern:?} is unusable: {why}")
            }
            OriginError::BadCidr(c) => {
                write!(
                    f,
                    "the allow_private entry {c:?} is not a CIDR or an IP address"
                )
            }
        }
    }
}

impl std::error::Error for OriginError {}

/// Input as it may be shown in a message: bounded in length (the `Debug` formatting used
/// by the messages escapes anything unprintable).
fn shown(s: &str) -> String {
    const MAX: usize = 200;
    if s.len() <= MAX {
        return s.to_owned();
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

fn check_text(s: &str) -> Result<(), OriginError> {
    for c in s.chars() {
        if c.is_control() || c.is_whitespace() || is_invisible(c) {
            return Err(OriginError::ControlBytes);
        }
        if c == '\\' {
            return Err(OriginError::Backslash);
        }
    }
    Ok(())
}

/// Format and zero-width characters that IDNA would silently drop or that make two hosts
/// look alike on screen.
fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{feff}' | '\u{ad}')
}

fn split_host_port(authority: &str) -> Result<(&str, Option<&str>), OriginError> {
    if authority.starts_with('[') {
        let close = authority
            .find(']')
            .ok_or_else(|| OriginError::BadIpv6(shown(authority)))?;
        let (host, after) = authority.split_at(close + 1);
        if after.is_empty() {
            return Ok((host, None));
        }
        let port = after
            .strip_prefix(':')
            .ok_or_else(|| OriginError::BadIpv6(shown(authority)))?;
        return Ok((host, Some(port)));
    }
    match authority.rsplit_once(':') {
        Some((host, port)) => Ok((host, Some(port))),
        None => Ok((authority, None)),
    }
}

fn parse_port(port: Option<&str>, default: u16) -> Result<u16, OriginError> {
    let Some(port) = port else {
        return Ok(default);
    };
    if port.is_empty() {
        return Ok(default);
    }
    if !port.bytes().all(|b| b.is_ascii_digit()) {
        return Err(OriginError::BadPort(shown(port)));
    }
    let trimmed = port.trim_start_matches('0');
    if trimmed.len() > 5 {
        return Err(OriginError::BadPort(shown(port)));
    }
    match trimmed.parse::<u16>() {
        Ok(p) if p != 0 => Ok(p),
        _ => Err(OriginError::BadPort(shown(port))),
    }
}

fn is_dns_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    fn origin(url: &str) -> Origin {
        Origin::parse_url(url).unwrap_or_else(|e| panic!("{url}: {e}"))
    }
    fn refused(url: &str) -> &'static str {
        match Origin::parse_url(url) {
            Ok(o) => panic!("{url} parsed as {o}"),
            Err(e) => e.code().as_str(),
        }
    }
    fn host_of(url: &str) -> Host {
        origin(url).host
    }
    fn v4(a: u8, b: u8, c: u8, d: u8) -> Host {
        Host::Ip(IpAddr::V4(Ipv4Addr::new(a, b, c, d)))
    }
    fn dom(s: &str) -> Host {
        Host::Domain(s.to_owned())
    }

    #[test]
    fn plain_urls_normalize() {
        let o = origin("https://Example.COM/path?q=1#frag");
        assert_eq!(o.scheme, Scheme::Https);
        assert_eq!(o.host, dom("example.com"));
        assert_eq!(o.port, 443);
        assert_eq!(o.to_string(), "https://example.com:443");
        assert_eq!(origin("HTTP://example.com").port, 80);
        assert_eq!(origin("http://example.com:8080/").port, 8080);
        assert_eq!(origin("http://example.com:/").port, 80);
        assert_eq!(origin("https://example.com:0443").port, 443);
        assert_eq!(origin("https://example.com?x").host, dom("example.com"));
        assert_eq!(origin("https://example.com#x").host, dom("example.com"));
    }

    #[test]
    fn trailing_dot_is_removed_once() {
        assert_eq!(host_of("https://example.com./"), dom("example.com"));
        assert_eq!(refused("https://example.com../"), "bad-host");
        assert_eq!(refused("https://./"), "bad-host");
    }

    #[test]
    fn lookalike_suffixes_stay_distinct() {
        assert_eq!(
            host_of("https://allowed.com.evil.com/"),
            dom("allowed.com.evil.com")
        );
        assert_eq!(host_of("https://evil.com/allowed.com"), dom("evil.com"));
        assert_eq!(host_of("https://evil.com?@allowed.com"), dom("evil.com"));
        assert_eq!(host_of("https://evil.com#@allowed.com"), dom("evil.com"));
    }

    #[test]
    fn idn_homographs_become_punycode() {
        // Cyrillic "а" (U+0430) in place of Latin "a".
        let h = host_of("https://\u{430}pple.com/");
        assert_eq!(h, dom("xn--pple-43d.com"));
        assert_ne!(h, dom("apple.com"));
        assert_eq!(host_of("https://bücher.de/"), dom("xn--bcher-kva.de"));
        assert_eq!(host_of("https://BÜCHER.de/"), dom("xn--bcher-kva.de"));
        // Non-transitional: ß stays ß (not "ss").
        assert_eq!(host_of("https://faß.de/"), dom("xn--fa-hia.de"));
        // Fullwidth letters and ideographic full stop map to ASCII.
        assert_eq!(host_of("https://ｅｘａｍｐｌｅ。com/"), dom("example.com"));
    }

    #[test]
    fn idna_failures_are_refused() {
        assert_eq!(refused("https://xn--a.com/"), "idna");
        assert_eq!(refused("https://a<b.com/"), "idna");
        assert_eq!(refused("https://exa|mple.com/"), "idna");
        assert_eq!(refused("https://exa\u{200b}mple.com/"), "control-bytes");
        assert_eq!(refused("https://exa\u{feff}mple.com/"), "control-bytes");
        assert_eq!(refused("https://exa\u{3000}mple.com/"), "control-bytes");
    }

    #[test]
    fn userinfo_is_refused() {
        assert_eq!(refused("https://allowed.com@evil.com/"), "userinfo");
        assert_eq!(refused("https://user:pass@example.com/"), "userinfo");
        assert_eq!(refused("https://@example.com/"), "userinfo");
        assert_eq!(
            Authority::parse("git@github.com", 22)
                .unwrap_err()
                .code()
                .as_str(),
            "userinfo"
        );
    }

    #[test]
    fn backslashes_are_refused() {
        assert_eq!(refused("https://evil.com\\@allowed.com/"), "backslash");
        assert_eq!(refused("https:\\\\evil.com/"), "backslash");
        assert_eq!(refused("https://example.com/a\\b"), "backslash");
    }

    #[test]
    fn control_bytes_and_whitespace_are_refused() {
        for url in [
            "https://example.com\0.evil.com/",
            "https://exa\tmple.com/",
            "https://exa\nmple.com/",
            "https://exa\rmple.com/",
            " https://example.com/",
            "https://example.com /",
            "https://example.com\x7f/",
            "https://example.com/\x1b[31m",
            "https://example.com\u{85}/",
        ] {
            assert_eq!(refused(url), "control-bytes", "{url:?}");
        }
    }

    #[test]
    fn non_http_schemes_are_refused() {
        for url in [
            "ftp://example.com/",
            "file:///etc/passwd",
            "gopher://example.com/",
            "data:text/plain,hi",
            "javascript:alert(1)",
            "ws://example.com/",
            "wss://example.com/",
            "httpx://example.com/",
        ] {
            assert_eq!(refused(url), "bad-scheme", "{url}");
        }
        assert_eq!(refused("example.com"), "not-absolute");
        assert_eq!(refused("//example.com/"), "not-absolute");
        assert_eq!(refused("http:example.com"), "not-absolute");
        assert_eq!(refused("http:/example.com"), "not-absolute");
        assert_eq!(refused(""), "not-absolute");
        assert_eq!(refused("1http://x"), "not-absolute");
        assert_eq!(refused("http:///example.com"), "empty-host");
        assert_eq!(refused("http://:80/"), "empty-host");
    }

    #[test]
    fn ports_are_checked() {
        assert_eq!(refused("https://example.com:0/"), "bad-port");
        assert_eq!(refused("https://example.com:65536/"), "bad-port");
        assert_eq!(refused("https://example.com:-1/"), "bad-port");
        assert_eq!(refused("https://example.com:+443/"), "bad-port");
        assert_eq!(refused("https://example.com:44 3/"), "control-bytes");
        assert_eq!(refused("https://example.com:0x50/"), "bad-port");
        assert_eq!(
            refused("https://example.com:99999999999999999999/"),
            "bad-port"
        );
        assert_eq!(refused("https://example.com:443:443/"), "bad-host");
        assert_eq!(origin("https://example.com:65535/").port, 65535);
    }

    #[test]
    fn percent_escapes_in_host_are_refused() {
        assert_eq!(refused("https://%65xample.com/"), "percent-host");
        assert_eq!(refused("https://127.0.0.%31/"), "percent-host");
        assert_eq!(refused("https://[fe80::1%25eth0]/"), "percent-host");
        assert_eq!(
            origin("https://example.com/%2e%2e").host,
            dom("example.com")
        );
    }

    #[test]
    fn every_ipv4_literal_form_decodes() {
        for url in [
            "http://127.0.0.1/",
            "http://2130706433/",
            "http://0177.0.0.1/",
            "http://0x7f.1/",
            "http://0x7f000001/",
            "http://0X7F.0.0.1/",
            "http://127.1/",
            "http://127.0.1/",
            "http://0177.1/",
            "http://0x7f.0.0.0x1/",
            "http://127.0.0.1./",
            "http://１２７.０.０.１/",
        ] {
            assert_eq!(host_of(url), v4(127, 0, 0, 1), "{url}");
        }
        assert_eq!(host_of("http://0/"), v4(0, 0, 0, 0));
        assert_eq!(host_of("http://0.0.0.0/"), v4(0, 0, 0, 0));
        assert_eq!(host_of("http://169.254.43518/"), v4(169, 254, 169, 254));
        assert_eq!(host_of("http://2852039166/"), v4(169, 254, 169, 254));
        assert_eq!(refused("http://1.2.3.4.5/"), "bad-ipv4");
        assert_eq!(refused("http://256.1.1.1/"), "bad-ipv4");
        assert_eq!(refused("http://4294967296/"), "bad-ipv4");
        assert_eq!(refused("http://foo.09/"), "bad-ipv4");
    }

    #[test]
    fn ipv6_literals_decode() {
        let ip6 = |s: &str| Host::Ip(IpAddr::V6(s.parse::<Ipv6Addr>().unwrap()));
        assert_eq!(host_of("http://[::1]/"), ip6("::1"));
        assert_eq!(host_of("http://[::1]:8080/"), ip6("::1"));
        assert_eq!(origin("http://[::1]:8080/").port, 8080);
        assert_eq!(origin("http://[::1]/").to_string(), "http://[::1]:80");
        let mapped = host_of("http://[::ffff:127.0.0.1]/");
        assert_eq!(mapped.embedded_ipv4(), Some(Ipv4Addr::LOCALHOST));
        assert_eq!(mapped.class(), Some(AddrClass::Loopback));
        let nat64 = host_of("http://[64:ff9b::7f00:1]/");
        assert_eq!(nat64.embedded_ipv4(), Some(Ipv4Addr::LOCALHOST));
        assert_eq!(nat64.class(), Some(AddrClass::Loopback));
        assert_eq!(
            host_of("http://[64:ff9b::a9fe:a9fe]/").class(),
            Some(AddrClass::Metadata)
        );
        assert_eq!(refused("http://[::1/"), "bad-ipv6");
        assert_eq!(refused("http://[::g]/"), "bad-ipv6");
        assert_eq!(refused("http://[::1]x/"), "bad-ipv6");
        assert_eq!(refused("http://[127.0.0.1]/"), "bad-ipv6");
        assert_eq!(refused("http://::1/"), "bad-host");
    }

    #[test]
    fn authorities_parse_with_the_same_rules() {
        let a = Authority::parse("Example.COM.:443", 443).unwrap();
        assert_eq!(a.host, dom("example.com"));
        assert_eq!(a.port, 443);
        assert_eq!(a.to_string(), "example.com:443");
        assert_eq!(Authority::parse("github.com", 22).unwrap().port, 22);
        assert_eq!(
            Authority::parse("[::ffff:7f00:1]:22", 22)
                .unwrap()
                .host
                .class(),
            Some(AddrClass::Loopback)
        );
        assert_eq!(
            Authority::parse("0x7f.1:80", 80).unwrap().host,
            v4(127, 0, 0, 1)
        );
        for (bad, code) in [
            ("", "empty-host"),
            (":443", "empty-host"),
            ("a.com:0", "bad-port"),
            ("a.com/x:443", "bad-host"),
            ("a.com\0:443", "control-bytes"),
            ("a\\b.com:443", "backslash"),
            ("u@a.com:443", "userinfo"),
        ] {
            assert_eq!(
                Authority::parse(bad, 443).unwrap_err().code().as_str(),
                code,
                "{bad:?}"
            );
        }
    }

    #[test]
    fn dns_names_are_bounded() {
        let long_label = "a".repeat(64);
        assert_eq!(refused(&format!("https://{long_label}.com/")), "bad-host");
        let ok_label = "a".repeat(63);
        assert!(Origin::parse_url(&format!("https://{ok_label}.com/")).is_ok());
        let long_name = vec!["abcdefghi"; 26].join(".");
        assert_eq!(refused(&format!("https://{long_name}/")), "bad-host");
        assert_eq!(refused("https://a..b/"), "bad-host");
        assert_eq!(
            host_of("https://under_score.example/"),
            dom("under_score.example")
        );
    }

    #[test]
    fn messages_are_one_sentence_and_escape_input() {
        let err = Origin::parse_url("ftp\u{1b}://x").unwrap_err();
        assert!(!err.to_string().contains('\u{1b}'));
        let err = Origin::parse_url("gopher://x").unwrap_err();
        assert_eq!(
            err.to_string(),
            "the scheme \"gopher\" is not allowed; only http and https are"
        );
        assert!(!err.to_string().contains('\n'));
    }
    mod props {
        use super::super::*;
        use proptest::prelude::*;

        fn host_piece() -> impl Strategy<Value = String> {
            prop_oneof![
                Just("a".to_owned()),
                Just("EXAMPLE".to_owned()),
                Just("0x7f".to_owned()),
                Just("0177".to_owned()),
                Just("127".to_owned()),
                Just("1".to_owned()),
                Just("xn--".to_owned()),
                Just("\u{430}".to_owned()),
                Just("ß".to_owned()),
                Just("[::1]".to_owned()),
                Just("[".to_owned()),
                Just("]".to_owned()),
                Just(".".to_owned()),
                Just(":".to_owned()),
                Just("@".to_owned()),
                Just("%2e".to_owned()),
                Just("\\".to_owned()),
                Just("\0".to_owned()),
                Just("/".to_owned()),
                Just("?".to_owned()),
                Just("#".to_owned()),
                Just("443".to_owned()),
                Just("-".to_owned()),
                Just("_".to_owned()),
                any::<char>().prop_map(String::from),
            ]
        }

        proptest! {
            /// Whatever the input, parsing returns; an accepted origin prints back to
            /// itself, and its host never carries anything a second parser could read as
            /// another host.
            #[test]
            fn parsing_is_total_and_stable(
                scheme in prop_oneof![Just("http://"), Just("https://"), Just("HTTPS://"), Just("ftp://"), Just("")],
                pieces in proptest::collection::vec(host_piece(), 0..8),
                tail in prop_oneof![Just(""), Just("/x"), Just("?q"), Just("#f")],
            ) {
                let url = format!("{scheme}{}{tail}", pieces.concat());
                if let Ok(o) = Origin::parse_url(&url) {
                    let again = Origin::parse_url(&format!("{o}/")).expect("an origin re-parses");
                    prop_assert_eq!(&again, &o);
                    let shown = o.host.to_string();
                    prop_assert!(!shown.contains(['@', '\\', '%', '/', '?', '#']), "{}", shown);
                    prop_assert!(shown.is_ascii());
                    if let Host::Domain(d) = &o.host {
                        prop_assert_eq!(d.to_ascii_lowercase(), d.clone());
                        prop_assert!(!d.ends_with('.'));
                    }
                }
            }

            /// Arbitrary text as an authority or host pattern never panics.
            #[test]
            fn authorities_and_patterns_never_panic(text in ".{0,64}") {
                let _ = Authority::parse(&text, 443);
                let _ = crate::net::HostPattern::parse(&text);
                let _ = Host::parse(&text);
            }
        }
    }
}
