//! The stable codes of network decisions: one enum for the policy's refusals, the egress
//! proxy's `X-Cordon-Block` header and events, and the gate that reads those events.
//!
//! The codes are a contract (audit records, `--verbose` lines, the block header): their
//! text is fixed by [`NetCode::as_str`] and serde uses the same kebab-case spelling.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::ip::AddrClass;

/// The stable code of a network decision: `allow`, or why a destination was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum NetCode {
    /// The connection was made.
    Allow,
    /// On the network deny list.
    DeniedHost,
    /// Nothing is allowlisted: no network at all.
    NoAllowlist,
    /// The host is not on the allowlist.
    NotAllowed,
    /// The host is on the allowlist, but not with this port.
    PortNotAllowed,
    /// The policy core could not tell the destination.
    Unknown,
    /// A loopback address ([`AddrClass::Loopback`]).
    Loopback,
    /// A private address ([`AddrClass::Private`]).
    Private,
    /// A link-local address ([`AddrClass::LinkLocal`]).
    LinkLocal,
    /// A carrier-grade NAT address ([`AddrClass::Cgnat`]).
    Cgnat,
    /// A multicast address ([`AddrClass::Multicast`]).
    Multicast,
    /// An unspecified address ([`AddrClass::Unspecified`]).
    Unspecified,
    /// The broadcast address ([`AddrClass::Broadcast`]).
    Broadcast,
    /// A documentation address ([`AddrClass::Documentation`]).
    Documentation,
    /// A benchmarking address ([`AddrClass::Benchmarking`]).
    Benchmarking,
    /// A cloud metadata endpoint ([`AddrClass::Metadata`]).
    Metadata,
    /// Any other non-public address ([`AddrClass::Reserved`]).
    Reserved,
    /// A request rule of the host does not allow this method.
    MethodNotAllowed,
    /// A request rule of the host does not cover this path.
    PathNotAllowed,
    /// A `git push` (smart-HTTP `git-receive-pack`) to a host whose rule allows fetch only.
    GitPush,
    /// A credential (or its placeholder) sent where that credential may not go.
    CredentialLeak,
    /// The TLS handshake with the client or the upstream failed.
    TlsError,
    /// The URL is not absolute.
    NotAbsolute,
    /// A scheme other than `http` or `https`.
    BadScheme,
    /// The URL carries userinfo (`user@host`).
    Userinfo,
    /// A backslash in the authority.
    Backslash,
    /// NUL or other control bytes in the destination.
    ControlBytes,
    /// No host.
    EmptyHost,
    /// A percent-encoded host.
    PercentHost,
    /// An international name that IDNA refuses.
    Idna,
    /// An IPv4 literal that does not decode.
    BadIpv4,
    /// An IPv6 literal that does not decode.
    BadIpv6,
    /// A host name that is not valid.
    BadHost,
    /// A port outside `1..=65535`.
    BadPort,
    /// A host pattern that cannot be used.
    BadPattern,
    /// An `allow_private` entry that is not a CIDR.
    BadCidr,
    /// The request is not valid HTTP/1.1 or SOCKS5.
    Malformed,
    /// The request head did not arrive in time.
    HeaderTimeout,
    /// The request head is larger than allowed.
    HeaderTooLarge,
    /// An origin-form request sent to the proxy.
    NotProxyRequest,
    /// Plain HTTP to an `https` URL: the client must use `CONNECT`.
    UseConnect,
    /// A SOCKS5 client that offers no acceptable authentication.
    SocksAuth,
    /// A SOCKS5 command other than `CONNECT`.
    SocksCommand,
    /// The proxy's connection limit was reached.
    TooManyConnections,
    /// The name did not resolve.
    ResolveFailed,
    /// Resolving the name timed out.
    ResolveTimeout,
    /// Connecting to the checked address failed.
    ConnectFailed,
    /// Connecting to the checked address timed out.
    ConnectTimeout,
    /// The upstream answered with something unusable.
    UpstreamError,
    /// The upstream did not answer in time.
    UpstreamTimeout,
}

impl NetCode {
    /// Every code, for tests and documentation.
    pub const ALL: [NetCode; 50] = [
        NetCode::Allow,
        NetCode::DeniedHost,
        NetCode::NoAllowlist,
        NetCode::NotAllowed,
        NetCode::PortNotAllowed,
        NetCode::Unknown,
        NetCode::Loopback,
        NetCode::Private,
        NetCode::LinkLocal,
        NetCode::Cgnat,
        NetCode::Multicast,
        NetCode::Unspecified,
        NetCode::Broadcast,
        NetCode::Documentation,
        NetCode::Benchmarking,
        NetCode::Metadata,
        NetCode::Reserved,
        NetCode::MethodNotAllowed,
        NetCode::PathNotAllowed,
        NetCode::GitPush,
        NetCode::CredentialLeak,
        NetCode::TlsError,
        NetCode::NotAbsolute,
        NetCode::BadScheme,
        NetCode::Userinfo,
        NetCode::Backslash,
        NetCode::ControlBytes,
        NetCode::EmptyHost,
        NetCode::PercentHost,
        NetCode::Idna,
        NetCode::BadIpv4,
        NetCode::BadIpv6,
        NetCode::BadHost,
        NetCode::BadPort,
        NetCode::BadPattern,
        NetCode::BadCidr,
        NetCode::Malformed,
        NetCode::HeaderTimeout,
        NetCode::HeaderTooLarge,
        NetCode::NotProxyRequest,
        NetCode::UseConnect,
        NetCode::SocksAuth,
        NetCode::SocksCommand,
        NetCode::TooManyConnections,
        NetCode::ResolveFailed,
        NetCode::ResolveTimeout,
        NetCode::ConnectFailed,
        NetCode::ConnectTimeout,
        NetCode::UpstreamError,
        NetCode::UpstreamTimeout,
    ];

    /// The code as written in headers, events and audit records.
    pub fn as_str(self) -> &'static str {
        match self {
            NetCode::Allow => "allow",
            NetCode::DeniedHost => "denied-host",
            NetCode::NoAllowlist => "no-allowlist",
            NetCode::NotAllowed => "not-allowed",
            NetCode::PortNotAllowed => "port-not-allowed",
            NetCode::Unknown => "unknown",
            NetCode::Loopback => "loopback",
            NetCode::Private => "private",
            NetCode::LinkLocal => "link-local",
            NetCode::Cgnat => "cgnat",
            NetCode::Multicast => "multicast",
            NetCode::Unspecified => "unspecified",
            NetCode::Broadcast => "broadcast",
            NetCode::Documentation => "documentation",
            NetCode::Benchmarking => "benchmarking",
            NetCode::Metadata => "metadata",
            NetCode::Reserved => "reserved",
            NetCode::MethodNotAllowed => "method-not-allowed",
            NetCode::PathNotAllowed => "path-not-allowed",
            NetCode::GitPush => "git-push",
            NetCode::CredentialLeak => "credential-leak",
            NetCode::TlsError => "tls-error",
            NetCode::NotAbsolute => "not-absolute",
            NetCode::BadScheme => "bad-scheme",
            NetCode::Userinfo => "userinfo",
            NetCode::Backslash => "backslash",
            NetCode::ControlBytes => "control-bytes",
            NetCode::EmptyHost => "empty-host",
            NetCode::PercentHost => "percent-host",
            NetCode::Idna => "idna",
            NetCode::BadIpv4 => "bad-ipv4",
            NetCode::BadIpv6 => "bad-ipv6",
            NetCode::BadHost => "bad-host",
            NetCode::BadPort => "bad-port",
            NetCode::BadPattern => "bad-pattern",
            NetCode::BadCidr => "bad-cidr",
            NetCode::Malformed => "malformed",
            NetCode::HeaderTimeout => "header-timeout",
            NetCode::HeaderTooLarge => "header-too-large",
            NetCode::NotProxyRequest => "not-proxy-request",
            NetCode::UseConnect => "use-connect",
            NetCode::SocksAuth => "socks-auth",
            NetCode::SocksCommand => "socks-command",
            NetCode::TooManyConnections => "too-many-connections",
            NetCode::ResolveFailed => "resolve-failed",
            NetCode::ResolveTimeout => "resolve-timeout",
            NetCode::ConnectFailed => "connect-failed",
            NetCode::ConnectTimeout => "connect-timeout",
            NetCode::UpstreamError => "upstream-error",
            NetCode::UpstreamTimeout => "upstream-timeout",
        }
    }

    /// Whether a request rule (method, path, git push) refused the request: a refusal a
    /// human may lift by widening that host's rule.
    pub fn is_request_rule(self) -> bool {
        matches!(
            self,
            NetCode::MethodNotAllowed | NetCode::PathNotAllowed | NetCode::GitPush
        )
    }

    /// Whether the destination was refused only for not being on the allowlist
    /// (`no-allowlist`, `not-allowed`, `port-not-allowed`): the refusals a human may
    /// lift by allowing that host, unlike the deny list or an address class.
    pub fn is_not_listed(self) -> bool {
        matches!(
            self,
            NetCode::NoAllowlist | NetCode::NotAllowed | NetCode::PortNotAllowed
        )
    }

    /// The refusal code of an address class; `None` for [`AddrClass::Public`], which is
    /// not refused.
    pub fn of_class(class: AddrClass) -> Option<NetCode> {
        Some(match class {
            AddrClass::Public => return None,
            AddrClass::Loopback => NetCode::Loopback,
            AddrClass::Private => NetCode::Private,
            AddrClass::LinkLocal => NetCode::LinkLocal,
            AddrClass::Cgnat => NetCode::Cgnat,
            AddrClass::Multicast => NetCode::Multicast,
            AddrClass::Unspecified => NetCode::Unspecified,
            AddrClass::Broadcast => NetCode::Broadcast,
            AddrClass::Documentation => NetCode::Documentation,
            AddrClass::Benchmarking => NetCode::Benchmarking,
            AddrClass::Metadata => NetCode::Metadata,
            AddrClass::Reserved => NetCode::Reserved,
        })
    }
}

impl fmt::Display for NetCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_spelling_is_the_stable_text() {
        for code in NetCode::ALL {
            let json = serde_json::to_string(&code).unwrap();
            assert_eq!(json, format!("\"{}\"", code.as_str()), "{code:?}");
            let back: NetCode = serde_json::from_str(&json).unwrap();
            assert_eq!(back, code);
        }
    }

    #[test]
    fn codes_are_distinct() {
        let mut seen = std::collections::HashSet::new();
        for code in NetCode::ALL {
            assert!(seen.insert(code.as_str()), "{code:?}");
        }
    }

    #[test]
    fn only_allowlist_refusals_are_not_listed() {
        let listed: Vec<_> = NetCode::ALL
            .into_iter()
            .filter(|c| c.is_not_listed())
            .collect();
        assert_eq!(
            listed,
            [
                NetCode::NoAllowlist,
                NetCode::NotAllowed,
                NetCode::PortNotAllowed
            ]
        );
    }

    #[test]
    fn address_classes_keep_their_codes() {
        assert_eq!(NetCode::of_class(AddrClass::Public), None);
        assert_eq!(
            NetCode::of_class(AddrClass::Metadata),
            Some(NetCode::Metadata)
        );
        assert_eq!(NetCode::LinkLocal.as_str(), "link-local");
        assert_eq!(NetCode::Cgnat.as_str(), "cgnat");
    }
}
