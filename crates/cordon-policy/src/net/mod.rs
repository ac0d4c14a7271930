//! Network normalization and the `[network]` policy: one implementation shared by the
//! policy core (`web_fetch`, URLs in shell commands) and the egress proxy.
//!
//! This module owns turning text into a destination ([`Origin`], [`Authority`], [`Host`]),
//! classifying addresses ([`classify`], [`AddrClass`]) and judging destinations against the
//! allow/deny lists ([`NetworkPolicy`]). It must never do I/O: no sockets, no DNS. Name
//! resolution belongs to the proxy, which feeds every resolved address back through
//! [`NetworkPolicy::check_resolved`].
//!
//! Threats handled here, each with tests beside the code: `startsWith`-style domain
//! checks (`allowed.com.evil.com`), userinfo, backslashes, trailing dots, case, IDN
//! homographs (punycode keeps `аpple.com` apart from `apple.com`), IPv4 literals in
//! decimal, octal, hex and short forms, IPv4-mapped / NAT64 / 6to4 IPv6, `0.0.0.0`,
//! CGNAT, metadata addresses, NUL and control bytes, non-HTTP schemes, ports outside the
//! allowlist.

mod code;
mod ip;
mod origin;
mod pattern;
mod policy;
mod request;

pub use code::NetCode;
pub use ip::{AddrClass, classify, embedded_ipv4};
pub use origin::{Authority, Host, Origin, OriginError, Scheme};
pub use pattern::HostPattern;
pub use policy::{NetCheck, NetworkPolicy, TUNNEL_DEFAULT_PORTS};
pub use request::{
    GitService, PathPrefix, PathPrefixError, READ_ONLY_METHODS, RequestRefusal, RequestRule,
    RequestRuleSpec, check_request, path_is_judgeable,
};
