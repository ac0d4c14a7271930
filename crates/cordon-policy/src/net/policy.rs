//! The `[network]` policy: which origins may be reached, judged before and after name
//! resolution. Shared by the policy core (`web_fetch`, URLs in shell commands) and the
//! egress proxy, so both refuse the same things for the same reasons.

use std::net::IpAddr;

use ipnet::IpNet;

use super::code::NetCode;
use super::ip::{AddrClass, classify, embedded_ipv4};
use super::origin::{Authority, Host, Origin, OriginError};
use super::pattern::HostPattern;
use super::request::{RequestRefusal, RequestRule, check_request};
use crate::settings::NetworkSettings;

/// The outcome of a network check.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NetCheck {
    /// The destination may be reached.
    Allow,
    /// Refused by a rule that nothing overrides: the deny list, or an address class.
    Deny {
        /// Stable code ([`NetCode::DeniedHost`], an address class such as
        /// [`NetCode::Loopback`], …).
        code: NetCode,
        /// One human sentence.
        reason: String,
    },
    /// Not on the allowlist. The policy core maps this to its `network` default (ask);
    /// the proxy refuses it.
    NotListed {
        /// Stable code: [`NetCode::NoAllowlist`], [`NetCode::NotAllowed`] or
        /// [`NetCode::PortNotAllowed`] (or [`NetCode::Unknown`] when the policy core cannot
        /// tell the destination).
        code: NetCode,
        /// One human sentence.
        reason: String,
    },
}

impl NetCheck {
    /// Whether this is [`NetCheck::Allow`].
    pub fn is_allow(&self) -> bool {
        matches!(self, NetCheck::Allow)
    }

    /// The stable code of a refusal ([`NetCode::Allow`] for [`NetCheck::Allow`]).
    pub fn code(&self) -> NetCode {
        match self {
            NetCheck::Allow => NetCode::Allow,
            NetCheck::Deny { code, .. } | NetCheck::NotListed { code, .. } => *code,
        }
    }

    /// The human sentence of a refusal (empty for [`NetCheck::Allow`]).
    pub fn reason(&self) -> &str {
        match self {
            NetCheck::Allow => "",
            NetCheck::Deny { reason, .. } | NetCheck::NotListed { reason, .. } => reason,
        }
    }
}

/// Ports a port-less pattern covers for a tunnel (`CONNECT`, SOCKS5), which may carry
/// either HTTPS or plain HTTP/WebSocket traffic.
pub const TUNNEL_DEFAULT_PORTS: [u16; 2] = [443, 80];

/// The compiled `[network]` table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetworkPolicy {
    allow: Vec<HostPattern>,
    deny: Vec<HostPattern>,
    allow_private: Vec<IpNet>,
    rules: Vec<RequestRule>,
}

impl NetworkPolicy {
    /// Compile the settings; the first unusable entry is the error.
    pub fn from_settings(s: &NetworkSettings) -> Result<NetworkPolicy, OriginError> {
        let rules = s
            .rules
            .iter()
            .map(RequestRule::parse)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(NetworkPolicy::from_lists(&s.allow, &s.deny, &s.allow_private)?.with_rules(rules))
    }

    /// Add method and path rules; each rule's host is allowlisted too.
    pub fn with_rules(mut self, rules: Vec<RequestRule>) -> NetworkPolicy {
        for r in &rules {
            if !self.allow.contains(r.host()) {
                self.allow.push(r.host().clone());
            }
        }
        self.rules.extend(rules);
        self
    }

    /// The method and path rules.
    pub fn rules(&self) -> &[RequestRule] {
        &self.rules
    }

    /// Whether requests to `host:port` are judged one by one (a rule covers it), so the
    /// proxy must see them.
    pub fn is_ruled(&self, host: &Host, port: u16) -> bool {
        self.rules.iter().any(|r| r.covers(host, port))
    }

    /// Judge one request (method and path-and-query) to `host:port` by the rules that
    /// cover it; `Ok` when none does.
    pub fn check_request(
        &self,
        host: &Host,
        port: u16,
        method: &str,
        path_and_query: &str,
    ) -> Result<(), RequestRefusal> {
        check_request(&self.rules, host, port, method, path_and_query)
    }

    /// Compile from plain lists (command-line flags, tests).
    pub fn from_lists<S: AsRef<str>>(
        allow: &[S],
        deny: &[S],
        allow_private: &[S],
    ) -> Result<NetworkPolicy, OriginError> {
        let patterns = |list: &[S]| -> Result<Vec<HostPattern>, OriginError> {
            list.iter()
                .map(|s| HostPattern::parse(s.as_ref()))
                .collect()
        };
        let nets = allow_private
            .iter()
            .map(|s| parse_cidr(s.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(NetworkPolicy {
            allow: patterns(allow)?,
            deny: patterns(deny)?,
            allow_private: nets,
            rules: Vec::new(),
        })
    }

    /// No allowlist: no network at all.
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty()
    }

    /// The allow patterns.
    pub fn allow(&self) -> &[HostPattern] {
        &self.allow
    }

    /// The deny patterns.
    pub fn deny(&self) -> &[HostPattern] {
        &self.deny
    }

    /// The CIDRs exempt from the private-address refusal.
    pub fn allow_private(&self) -> &[IpNet] {
        &self.allow_private
    }

    /// Judge an origin before resolution: the deny list wins; an address literal is
    /// judged as an address; then the host and port must be on the allowlist (a pattern
    /// without a port covers only the scheme's default port).
    pub fn check_origin(&self, o: &Origin) -> NetCheck {
        self.check(&o.host, o.port, &[o.scheme.default_port()])
    }

    /// Judge a tunnel target (`CONNECT host:port`, a SOCKS5 request) before resolution.
    /// As [`NetworkPolicy::check_origin`], except that a pattern without a port covers
    /// both 443 and 80 ([`TUNNEL_DEFAULT_PORTS`]): a tunnel may carry HTTPS or plain
    /// HTTP/WebSocket, and plain HTTP to the same host is allowed anyway.
    pub fn check_tunnel(&self, a: &Authority) -> NetCheck {
        self.check(&a.host, a.port, &TUNNEL_DEFAULT_PORTS)
    }

    fn check(&self, host: &Host, port: u16, default_ports: &[u16]) -> NetCheck {
        if let Some(rule) = self.deny.iter().find(|p| p.matches_deny(host, port)) {
            return NetCheck::Deny {
                code: NetCode::DeniedHost,
                reason: format!("{host}:{port} is on the network deny list ({rule})"),
            };
        }
        if let Some(ip) = host.ip()
            && let NetCheck::Deny { code, reason } = self.check_address(ip)
        {
            return NetCheck::Deny { code, reason };
        }
        if self.allow.is_empty() {
            return NetCheck::NotListed {
                code: NetCode::NoAllowlist,
                reason: format!(
                    "{host}:{port} cannot be reached: no network destination is allowed; {}",
                    way_in(host, port, default_ports)
                ),
            };
        }
        if self
            .allow
            .iter()
            .any(|p| p.matches(host, port, default_ports))
        {
            return NetCheck::Allow;
        }
        if self.allow.iter().any(|p| p.matches_host(host)) {
            return NetCheck::NotListed {
                code: NetCode::PortNotAllowed,
                reason: format!(
                    "port {port} of {host} is not on the network allowlist; {}",
                    way_in(host, port, &[])
                ),
            };
        }
        NetCheck::NotListed {
            code: NetCode::NotAllowed,
            reason: format!(
                "{host} is not on the network allowlist; {}",
                way_in(host, port, default_ports)
            ),
        }
    }

    /// Judge an address after resolution (or an address literal): only public addresses,
    /// unless the address falls in an `allow_private` CIDR; an address on the deny list is
    /// refused.
    pub fn check_resolved(&self, ip: IpAddr) -> NetCheck {
        let host = Host::Ip(ip);
        if let Some(rule) = self.deny.iter().find(|p| p.matches_host(&host)) {
            return NetCheck::Deny {
                code: NetCode::DeniedHost,
                reason: format!("{host} is on the network deny list ({rule})"),
            };
        }
        self.check_address(ip)
    }

    fn check_address(&self, ip: IpAddr) -> NetCheck {
        let class = classify(ip);
        let Some(code) = NetCode::of_class(class) else {
            return NetCheck::Allow;
        };
        if self.private_allowed(ip) {
            return NetCheck::Allow;
        }
        let shown = Host::Ip(ip);
        let net = match ip {
            IpAddr::V4(_) => format!("{ip}/32"),
            IpAddr::V6(_) => format!("{ip}/128"),
        };
        // `0.0.0.0` and `::` reach the proxy's own host: no hint leads there, and one
        // for loopback says whose loopback it is.
        let reason = match class {
            AddrClass::Unspecified | AddrClass::Broadcast | AddrClass::Multicast => format!(
                "{shown} is {class}, which a command is never led to (through the proxy it would reach the host's own services)"
            ),
            AddrClass::Loopback => format!(
                "{shown} is {class} of the host cordon runs on; to let the command reach the host's own services, pass `--allow-private {net}` or add `allow_private = [\"{net}\"]` under `[network]` in the policy file"
            ),
            _ => format!(
                "{shown} is {class}; to reach it, pass `--allow-private {net}` or add `allow_private = [\"{net}\"]` under `[network]` in the policy file"
            ),
        };
        NetCheck::Deny { code, reason }
    }

    fn private_allowed(&self, ip: IpAddr) -> bool {
        let embedded = match ip {
            IpAddr::V6(v6) => embedded_ipv4(v6).map(IpAddr::V4),
            IpAddr::V4(_) => None,
        };
        self.allow_private
            .iter()
            .any(|net| net.contains(&ip) || embedded.is_some_and(|e| net.contains(&e)))
    }
}

impl HostPattern {
    /// Deny patterns without a port cover every port.
    fn matches_deny(&self, host: &Host, port: u16) -> bool {
        self.matches_host(host) && self.port().is_none_or(|p| p == port)
    }
}

fn parse_cidr(s: &str) -> Result<IpNet, OriginError> {
    let bad = || OriginError::BadCidr(s.chars().take(200).collect());
    if let Ok(net) = s.parse::<IpNet>() {
        return Ok(net);
    }
    s.parse::<IpAddr>().map(IpNet::from).map_err(|_| bad())
}

/// The flag and the config line that would let `host:port` through (the port named only
/// when it is not one the host gets by default).
fn way_in(host: &Host, port: u16, default_ports: &[u16]) -> String {
    let entry = if default_ports.contains(&port) {
        host.to_string()
    } else {
        format!("{host}:{port}")
    };
    format!(
        "to allow it, add `allow = [\"{entry}\"]` under `[network]` in the policy file (or pass `--allow-net {entry}` to `cordon exec`)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(allow: &[&str], deny: &[&str], private: &[&str]) -> NetworkPolicy {
        NetworkPolicy::from_lists(allow, deny, private).unwrap()
    }
    fn url(p: &NetworkPolicy, u: &str) -> NetCheck {
        p.check_origin(&Origin::parse_url(u).unwrap())
    }
    fn code(p: &NetworkPolicy, u: &str) -> &'static str {
        url(p, u).code().as_str()
    }
    fn tunnel(p: &NetworkPolicy, a: &str) -> &'static str {
        p.check_tunnel(&Authority::parse(a, 443).unwrap())
            .code()
            .as_str()
    }

    #[test]
    fn empty_allowlist_means_no_network() {
        let p = policy(&[], &[], &[]);
        assert!(p.is_empty());
        assert_eq!(code(&p, "https://example.com/"), "no-allowlist");
        assert!(matches!(
            url(&p, "https://example.com/"),
            NetCheck::NotListed { .. }
        ));
        // Literal private addresses are still refused outright.
        assert_eq!(code(&p, "http://127.0.0.1/"), "loopback");
    }

    #[test]
    fn allowlist_exact_wildcard_and_ports() {
        let p = policy(
            &["github.com", "*.npmjs.org", "static.example.com:8443"],
            &[],
            &[],
        );
        assert!(!p.is_empty());
        assert_eq!(code(&p, "https://github.com/x"), "allow");
        assert_eq!(code(&p, "http://github.com/x"), "allow");
        assert_eq!(code(&p, "https://GitHub.com./x"), "allow");
        assert_eq!(code(&p, "https://github.com:8443/"), "port-not-allowed");
        assert_eq!(code(&p, "https://github.com:80/"), "port-not-allowed");
        assert_eq!(code(&p, "https://github.com.evil.com/"), "not-allowed");
        assert_eq!(code(&p, "https://registry.npmjs.org/"), "allow");
        assert_eq!(code(&p, "https://npmjs.org/"), "not-allowed");
        assert_eq!(code(&p, "https://static.example.com:8443/"), "allow");
        assert_eq!(code(&p, "https://static.example.com/"), "port-not-allowed");
        assert_eq!(code(&p, "https://\u{261}ithub.com/"), "not-allowed");
        assert_eq!(tunnel(&p, "github.com:443"), "allow");
        assert_eq!(tunnel(&p, "github.com:80"), "allow");
        assert_eq!(tunnel(&p, "github.com:22"), "port-not-allowed");
    }

    #[test]
    fn deny_list_wins_on_every_port() {
        let p = policy(&["*.github.com", "github.com"], &["gist.github.com"], &[]);
        assert_eq!(code(&p, "https://api.github.com/"), "allow");
        assert_eq!(code(&p, "https://gist.github.com/"), "denied-host");
        assert_eq!(code(&p, "http://gist.github.com:8080/"), "denied-host");
        assert_eq!(tunnel(&p, "GIST.github.com.:443"), "denied-host");
        let p = policy(
            &["example.com:8080", "example.com"],
            &["example.com:8080"],
            &[],
        );
        assert_eq!(code(&p, "https://example.com:8080/"), "denied-host");
        assert_eq!(code(&p, "https://example.com/"), "allow");
    }

    #[test]
    fn ip_literals_are_judged_as_addresses() {
        let p = policy(&["example.com", "127.0.0.1", "8.8.8.8"], &[], &[]);
        for (u, want) in [
            ("http://127.0.0.1/", "loopback"),
            ("http://2130706433/", "loopback"),
            ("http://0177.0.0.1/", "loopback"),
            ("http://0x7f.1/", "loopback"),
            ("http://127.1/", "loopback"),
            ("http://[::1]/", "loopback"),
            ("http://[::ffff:127.0.0.1]/", "loopback"),
            ("http://[64:ff9b::7f00:1]/", "loopback"),
            ("http://0.0.0.0/", "unspecified"),
            ("http://0/", "unspecified"),
            ("http://10.0.0.1/", "private"),
            ("http://[fd00::1]/", "private"),
            ("http://169.254.169.254/", "metadata"),
            ("http://[::ffff:a9fe:a9fe]/", "metadata"),
            ("http://[fd00:ec2::254]/", "metadata"),
            ("http://100.100.100.200/", "metadata"),
            ("http://100.64.1.1/", "cgnat"),
            ("http://[fe80::1]/", "link-local"),
            ("http://224.0.0.1/", "multicast"),
            ("http://255.255.255.255/", "broadcast"),
            ("http://192.0.2.1/", "documentation"),
            ("http://198.18.0.1/", "benchmarking"),
            ("http://240.0.0.1/", "reserved"),
            ("http://8.8.8.8/", "allow"),
            ("http://8.8.4.4/", "not-allowed"),
        ] {
            assert_eq!(code(&p, u), want, "{u}");
        }
    }

    #[test]
    fn allow_private_exempts_only_its_cidrs() {
        let p = policy(
            &["127.0.0.1:8080", "localtest.me:8080"],
            &[],
            &["127.0.0.0/8"],
        );
        assert_eq!(code(&p, "http://127.0.0.1:8080/"), "allow");
        assert_eq!(code(&p, "http://[::ffff:127.0.0.1]:8080/"), "not-allowed");
        assert_eq!(
            p.check_resolved("127.0.0.1".parse().unwrap()),
            NetCheck::Allow
        );
        assert_eq!(
            p.check_resolved("::ffff:127.0.0.2".parse().unwrap()),
            NetCheck::Allow
        );
        assert_eq!(
            p.check_resolved("10.0.0.1".parse().unwrap())
                .code()
                .as_str(),
            "private"
        );
        assert_eq!(
            p.check_resolved("::1".parse().unwrap()).code().as_str(),
            "loopback"
        );
        let single = policy(&["x.test"], &[], &["10.1.2.3"]);
        assert_eq!(
            single.check_resolved("10.1.2.3".parse().unwrap()),
            NetCheck::Allow
        );
        assert_eq!(
            single
                .check_resolved("10.1.2.4".parse().unwrap())
                .code()
                .as_str(),
            "private"
        );
    }

    #[test]
    fn resolved_addresses_are_classified() {
        let p = policy(&["example.com"], &["93.184.215.14"], &[]);
        assert_eq!(
            p.check_resolved("8.8.8.8".parse().unwrap()),
            NetCheck::Allow
        );
        assert_eq!(
            p.check_resolved("2606:4700::1111".parse().unwrap()),
            NetCheck::Allow
        );
        for (ip, want) in [
            ("127.0.0.1", "loopback"),
            ("10.0.0.1", "private"),
            ("192.168.0.1", "private"),
            ("172.20.0.1", "private"),
            ("169.254.169.254", "metadata"),
            ("64:ff9b::a9fe:a9fe", "metadata"),
            ("2002:a00:1::", "private"),
            ("93.184.215.14", "denied-host"),
        ] {
            assert_eq!(
                p.check_resolved(ip.parse().unwrap()).code().as_str(),
                want,
                "{ip}"
            );
        }
        let NetCheck::Deny { reason, .. } = p.check_resolved("169.254.169.254".parse().unwrap())
        else {
            panic!("metadata must be denied");
        };
        assert_eq!(
            reason,
            "169.254.169.254 is a cloud metadata address; to reach it, pass `--allow-private \
             169.254.169.254/32` or add `allow_private = [\"169.254.169.254/32\"]` under \
             `[network]` in the policy file"
        );
    }

    #[test]
    fn no_hint_leads_to_the_hosts_own_services_unnamed() {
        let p = NetworkPolicy::default();
        for ip in ["0.0.0.0", "::", "255.255.255.255"] {
            let reason = p.check_resolved(ip.parse().unwrap()).reason().to_string();
            assert!(!reason.contains("--allow-private"), "{ip}: {reason}");
        }
        let reason = p
            .check_resolved("127.0.0.1".parse().unwrap())
            .reason()
            .to_string();
        assert!(reason.contains("of the host cordon runs on"), "{reason}");
    }

    #[test]
    fn settings_errors_name_the_entry() {
        let s = NetworkSettings {
            allow: vec!["ok.com".into(), "bad..com".into()],
            ..NetworkSettings::default()
        };
        let err = NetworkPolicy::from_settings(&s).unwrap_err();
        assert_eq!(err.code(), NetCode::BadPattern);
        assert!(err.to_string().contains("bad..com"), "{err}");
        let s = NetworkSettings {
            allow_private: vec!["10.0.0.0/33".into()],
            ..NetworkSettings::default()
        };
        let err = NetworkPolicy::from_settings(&s).unwrap_err();
        assert_eq!(err.code(), NetCode::BadCidr);
        let s = NetworkSettings {
            allow: vec!["ok.com".into()],
            allow_private: vec!["10.0.0.0/8".into(), "fd00::/8".into(), "127.0.0.1".into()],
            ..NetworkSettings::default()
        };
        assert_eq!(
            NetworkPolicy::from_settings(&s)
                .unwrap()
                .allow_private()
                .len(),
            3
        );
    }
}
