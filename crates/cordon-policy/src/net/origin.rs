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
mod tests;
