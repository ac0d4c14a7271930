//! Address facts: which class an IP address belongs to, and how the textual IPv4 forms
//! that browsers and `inet_aton` accept are decoded.
//!
//! Classification looks *through* every IPv6 form that carries an IPv4 address
//! (IPv4-mapped, IPv4-compatible, SIIT, NAT64, 6to4) so that `::ffff:127.0.0.1` is
//! loopback and `64:ff9b::a9fe:a9fe` is the metadata service. Only global unicast space
//! (`2000::/3` for IPv6) can be [`AddrClass::Public`]; anything unknown is
//! [`AddrClass::Reserved`], so a gap in this table refuses instead of allowing.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// What kind of address an IP is, for the private-address refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AddrClass {
    /// Globally routable unicast: the only class reachable without an `allow_private` CIDR.
    Public,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// RFC 1918 (`10/8`, `172.16/12`, `192.168/16`) and unique-local `fc00::/7`.
    Private,
    /// `169.254/16`, `fe80::/10`.
    LinkLocal,
    /// Carrier-grade NAT, `100.64/10`.
    Cgnat,
    /// `224/4`, `ff00::/8`.
    Multicast,
    /// `0.0.0.0/8` ("this network"; `0.0.0.0` reaches the local host on Linux) and `::`.
    Unspecified,
    /// `255.255.255.255`.
    Broadcast,
    /// `192.0.2/24`, `198.51.100/24`, `203.0.113/24`, `2001:db8::/32`, `3fff::/20`.
    Documentation,
    /// `198.18/15`, `2001:2::/48`.
    Benchmarking,
    /// Cloud instance-metadata endpoints: `169.254.169.254`, `169.254.170.2` (ECS),
    /// `100.100.100.200` (Alibaba), `168.63.129.16` (Azure), `fd00:ec2::254` (AWS).
    Metadata,
    /// Everything else that is not global unicast: `240/4`, `192.0.0/24`, `192.88.99/24`,
    /// Teredo, ORCHID, discard-only, IPv6 outside `2000::/3`, …
    Reserved,
}

impl AddrClass {
    /// Whether this class may be reached without an explicit `allow_private` CIDR.
    pub fn is_public(self) -> bool {
        self == AddrClass::Public
    }
}

impl std::fmt::Display for AddrClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            AddrClass::Public => "a public address",
            AddrClass::Loopback => "a loopback address",
            AddrClass::Private => "a private address",
            AddrClass::LinkLocal => "a link-local address",
            AddrClass::Cgnat => "a carrier-grade NAT address",
            AddrClass::Multicast => "a multicast address",
            AddrClass::Unspecified => "an unspecified (\"this network\") address",
            AddrClass::Broadcast => "the broadcast address",
            AddrClass::Documentation => "a documentation address",
            AddrClass::Benchmarking => "a benchmarking address",
            AddrClass::Metadata => "a cloud metadata address",
            AddrClass::Reserved => "a reserved address",
        })
    }
}

/// Classify an address, looking through IPv6 forms that embed an IPv4 address.
pub fn classify(ip: IpAddr) -> AddrClass {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn in_v4(ip: Ipv4Addr, net: [u8; 4], prefix: u32) -> bool {
    let mask = if prefix == 0 {
        0
    } else {
        u32::MAX << (32 - prefix)
    };
    (u32::from(ip) & mask) == (u32::from(Ipv4Addr::from(net)) & mask)
}

fn in_v6(ip: Ipv6Addr, net: [u16; 8], prefix: u32) -> bool {
    let mask = if prefix == 0 {
        0
    } else {
        u128::MAX << (128 - prefix)
    };
    (u128::from(ip) & mask) == (u128::from(Ipv6Addr::from(net)) & mask)
}

fn classify_v4(ip: Ipv4Addr) -> AddrClass {
    // Metadata first: several live inside link-local or CGNAT space.
    const METADATA: [[u8; 4]; 4] = [
        [169, 254, 169, 254],
        [169, 254, 170, 2],
        [100, 100, 100, 200],
        [168, 63, 129, 16],
    ];
    if METADATA.iter().any(|m| ip.octets() == *m) {
        return AddrClass::Metadata;
    }
    // (network, prefix, class), most specific entries before the ones containing them.
    const TABLE: &[([u8; 4], u32, AddrClass)] = &[
        ([0, 0, 0, 0], 8, AddrClass::Unspecified),
        ([10, 0, 0, 0], 8, AddrClass::Private),
        ([100, 64, 0, 0], 10, AddrClass::Cgnat),
        ([127, 0, 0, 0], 8, AddrClass::Loopback),
        ([169, 254, 0, 0], 16, AddrClass::LinkLocal),
        ([172, 16, 0, 0], 12, AddrClass::Private),
        ([192, 0, 0, 0], 24, AddrClass::Reserved),
        ([192, 0, 2, 0], 24, AddrClass::Documentation),
        ([192, 88, 99, 0], 24, AddrClass::Reserved),
        ([192, 168, 0, 0], 16, AddrClass::Private),
        ([198, 18, 0, 0], 15, AddrClass::Benchmarking),
        ([198, 51, 100, 0], 24, AddrClass::Documentation),
        ([203, 0, 113, 0], 24, AddrClass::Documentation),
        ([224, 0, 0, 0], 4, AddrClass::Multicast),
        ([255, 255, 255, 255], 32, AddrClass::Broadcast),
        ([240, 0, 0, 0], 4, AddrClass::Reserved),
    ];
    TABLE
        .iter()
        .find(|(net, prefix, _)| in_v4(ip, *net, *prefix))
        .map_or(AddrClass::Public, |(_, _, class)| *class)
}

/// The IPv4 address an IPv6 address carries, if it is one of the forms that route to (or
/// are translated into) IPv4: IPv4-mapped `::ffff:a.b.c.d`, SIIT `::ffff:0:a.b.c.d`,
/// IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::/96` and `64:ff9b:1::/48`, and 6to4
/// `2002::/16`.
pub fn embedded_ipv4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let seg = ip.segments();
    let low = Ipv4Addr::new(
        (seg[6] >> 8) as u8,
        seg[6] as u8,
        (seg[7] >> 8) as u8,
        seg[7] as u8,
    );
    if in_v6(ip, [0, 0, 0, 0, 0, 0xffff, 0, 0], 96)
        || in_v6(ip, [0, 0, 0, 0, 0xffff, 0, 0, 0], 96)
        || in_v6(ip, [0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96)
        || in_v6(ip, [0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48)
    {
        return Some(low);
    }
    if in_v6(ip, [0, 0, 0, 0, 0, 0, 0, 0], 96) && u128::from(ip) > 1 {
        return Some(low);
    }
    if seg[0] == 0x2002 {
        return Some(Ipv4Addr::new(
            (seg[1] >> 8) as u8,
            seg[1] as u8,
            (seg[2] >> 8) as u8,
            seg[2] as u8,
        ));
    }
    None
}

fn classify_v6(ip: Ipv6Addr) -> AddrClass {
    if ip == Ipv6Addr::UNSPECIFIED {
        return AddrClass::Unspecified;
    }
    if ip == Ipv6Addr::LOCALHOST {
        return AddrClass::Loopback;
    }
    if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        return AddrClass::Metadata;
    }
    if let Some(v4) = embedded_ipv4(ip) {
        let inner = classify_v4(v4);
        if !inner.is_public() {
            return inner;
        }
        // A public IPv4 inside a form that is only meaningful on a local network, or
        // deprecated, is still not a global IPv6 destination.
        let local_only = in_v6(ip, [0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48);
        let deprecated = in_v6(ip, [0, 0, 0, 0, 0, 0, 0, 0], 96);
        return if local_only {
            AddrClass::Private
        } else if deprecated {
            AddrClass::Reserved
        } else {
            AddrClass::Public
        };
    }
    const TABLE: &[([u16; 8], u32, AddrClass)] = &[
        ([0xff00, 0, 0, 0, 0, 0, 0, 0], 8, AddrClass::Multicast),
        ([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10, AddrClass::LinkLocal),
        // Deprecated site-local: private in every way that matters.
        ([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10, AddrClass::Private),
        ([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7, AddrClass::Private),
        (
            [0x2001, 0xdb8, 0, 0, 0, 0, 0, 0],
            32,
            AddrClass::Documentation,
        ),
        ([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20, AddrClass::Documentation),
        ([0x2001, 0x2, 0, 0, 0, 0, 0, 0], 48, AddrClass::Benchmarking),
        // IETF protocol assignments (Teredo, ORCHID, AMT, …): Teredo hides an IPv4
        // address behind an XOR, so the whole block is refused.
        ([0x2001, 0, 0, 0, 0, 0, 0, 0], 23, AddrClass::Reserved),
        ([0x5f00, 0, 0, 0, 0, 0, 0, 0], 16, AddrClass::Reserved),
        ([0x2000, 0, 0, 0, 0, 0, 0, 0], 3, AddrClass::Public),
    ];
    TABLE
        .iter()
        .find(|(net, prefix, _)| in_v6(ip, *net, *prefix))
        .map_or(AddrClass::Reserved, |(_, _, class)| *class)
}

/// Outcome of reading a host label sequence as an IPv4 address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum V4Parse {
    /// The host is not numeric: it is a domain name.
    NotNumeric,
    /// The host ends in a number but is not a valid IPv4 address (refused).
    Invalid,
    /// The decoded address.
    Addr(Ipv4Addr),
}

fn parse_v4_number(part: &str) -> Option<u64> {
    if part.is_empty() {
        return None;
    }
    let (digits, radix) =
        if let Some(hex) = part.strip_prefix("0x").or_else(|| part.strip_prefix("0X")) {
            (hex, 16)
        } else if part.len() > 1 && part.starts_with('0') {
            (&part[1..], 8)
        } else {
            (part, 10)
        };
    if digits.is_empty() {
        // WHATWG: "0x" alone is zero.
        return Some(0);
    }
    if !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    // Long runs of leading zeros cannot overflow; anything longer than this is over any
    // legal part value once the zeros are gone.
    let trimmed = digits.trim_start_matches('0');
    if trimmed.len() > 12 {
        return Some(u64::MAX);
    }
    if trimmed.is_empty() {
        return Some(0);
    }
    u64::from_str_radix(trimmed, radix).ok()
}

fn ends_in_number(host: &str) -> bool {
    let mut parts: Vec<&str> = host.split('.').collect();
    if parts.last() == Some(&"") {
        if parts.len() == 1 {
            return false;
        }
        parts.pop();
    }
    let Some(last) = parts.last() else {
        return false;
    };
    if !last.is_empty() && last.bytes().all(|b| b.is_ascii_digit()) {
        return true;
    }
    let hex = last.strip_prefix("0x").or_else(|| last.strip_prefix("0X"));
    matches!(hex, Some(h) if h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Decode an ASCII host the way the WHATWG URL standard (and `inet_aton`) does: 1 to 4
/// dot-separated parts, each decimal, octal (leading `0`) or hexadecimal (`0x`), the last
/// part filling the remaining bytes (`127.1`, `0x7f.1`, `2130706433`, `0177.0.0.1`).
/// A host whose last label is numeric but does not decode is [`V4Parse::Invalid`].
pub(crate) fn parse_ipv4_host(host: &str) -> V4Parse {
    if !ends_in_number(host) {
        return V4Parse::NotNumeric;
    }
    let mut parts: Vec<&str> = host.split('.').collect();
    if parts.last() == Some(&"") {
        parts.pop();
    }
    if parts.is_empty() || parts.len() > 4 {
        return V4Parse::Invalid;
    }
    let mut numbers = Vec::with_capacity(4);
    for part in &parts {
        match parse_v4_number(part) {
            Some(n) => numbers.push(n),
            None => return V4Parse::Invalid,
        }
    }
    let Some((last, head)) = numbers.split_last() else {
        return V4Parse::Invalid;
    };
    if head.iter().any(|n| *n > 255) {
        return V4Parse::Invalid;
    }
    let last_bits = 8 * (5 - numbers.len() as u32);
    if *last >= 1u64 << last_bits {
        return V4Parse::Invalid;
    }
    let mut value = *last;
    for (i, n) in head.iter().enumerate() {
        value += n << (8 * (3 - i as u32));
    }
    match u32::try_from(value) {
        Ok(v) => V4Parse::Addr(Ipv4Addr::from(v)),
        Err(_) => V4Parse::Invalid,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(s: &str) -> V4Parse {
        parse_ipv4_host(s)
    }
    fn addr(a: u8, b: u8, c: u8, d: u8) -> V4Parse {
        V4Parse::Addr(Ipv4Addr::new(a, b, c, d))
    }
    fn class(s: &str) -> AddrClass {
        classify(s.parse().unwrap())
    }

    #[test]
    fn ipv4_literal_forms_decode_like_whatwg() {
        assert_eq!(v4("127.0.0.1"), addr(127, 0, 0, 1));
        assert_eq!(v4("2130706433"), addr(127, 0, 0, 1));
        assert_eq!(v4("0177.0.0.1"), addr(127, 0, 0, 1));
        assert_eq!(v4("0x7f.1"), addr(127, 0, 0, 1));
        assert_eq!(v4("0x7F000001"), addr(127, 0, 0, 1));
        assert_eq!(v4("127.1"), addr(127, 0, 0, 1));
        assert_eq!(v4("127.0.1"), addr(127, 0, 0, 1));
        assert_eq!(v4("0x7f.0.0x0.01"), addr(127, 0, 0, 1));
        assert_eq!(v4("017700000001"), addr(127, 0, 0, 1));
        assert_eq!(v4("0"), addr(0, 0, 0, 0));
        assert_eq!(v4("0x"), addr(0, 0, 0, 0));
        assert_eq!(v4("169.254.43518"), addr(169, 254, 169, 254));
        assert_eq!(v4("0xa9fea9fe"), addr(169, 254, 169, 254));
        assert_eq!(v4("1.2.3.4."), addr(1, 2, 3, 4));
        assert_eq!(v4("00000000000000000000127.1"), addr(87, 0, 0, 1));
        assert_eq!(v4("0000000000000000000000177.1"), addr(127, 0, 0, 1));
    }

    #[test]
    fn numeric_garbage_is_invalid_not_a_domain() {
        assert_eq!(v4("1.2.3.4.5"), V4Parse::Invalid);
        assert_eq!(v4("256.0.0.1"), V4Parse::Invalid);
        assert_eq!(v4("4294967296"), V4Parse::Invalid);
        assert_eq!(v4("1.2.65536"), V4Parse::Invalid);
        assert_eq!(v4("08.0.0.1"), V4Parse::Invalid);
        assert_eq!(v4("example.123"), V4Parse::Invalid);
        assert_eq!(v4("1..1"), V4Parse::Invalid);
        assert_eq!(v4("99999999999999999999999"), V4Parse::Invalid);
    }

    #[test]
    fn names_are_not_numeric() {
        assert_eq!(v4("example.com"), V4Parse::NotNumeric);
        assert_eq!(v4("127.0.0.1.nip.io"), V4Parse::NotNumeric);
        assert_eq!(v4("0x7f.example"), V4Parse::NotNumeric);
        assert_eq!(v4("1e3"), V4Parse::NotNumeric);
    }

    #[test]
    fn ipv4_classes() {
        let table = [
            ("8.8.8.8", AddrClass::Public),
            ("1.1.1.1", AddrClass::Public),
            ("0.0.0.0", AddrClass::Unspecified),
            ("0.1.2.3", AddrClass::Unspecified),
            ("10.1.2.3", AddrClass::Private),
            ("172.16.0.1", AddrClass::Private),
            ("172.31.255.255", AddrClass::Private),
            ("172.32.0.1", AddrClass::Public),
            ("192.168.1.1", AddrClass::Private),
            ("127.0.0.1", AddrClass::Loopback),
            ("127.255.255.254", AddrClass::Loopback),
            ("169.254.1.1", AddrClass::LinkLocal),
            ("169.254.169.254", AddrClass::Metadata),
            ("169.254.170.2", AddrClass::Metadata),
            ("100.100.100.200", AddrClass::Metadata),
            ("168.63.129.16", AddrClass::Metadata),
            ("100.64.0.1", AddrClass::Cgnat),
            ("100.127.255.255", AddrClass::Cgnat),
            ("100.128.0.1", AddrClass::Public),
            ("224.0.0.1", AddrClass::Multicast),
            ("239.255.255.250", AddrClass::Multicast),
            ("240.0.0.1", AddrClass::Reserved),
            ("255.255.255.254", AddrClass::Reserved),
            ("255.255.255.255", AddrClass::Broadcast),
            ("192.0.2.1", AddrClass::Documentation),
            ("198.51.100.1", AddrClass::Documentation),
            ("203.0.113.9", AddrClass::Documentation),
            ("198.18.0.1", AddrClass::Benchmarking),
            ("198.19.255.1", AddrClass::Benchmarking),
            ("192.0.0.8", AddrClass::Reserved),
            ("192.88.99.1", AddrClass::Reserved),
        ];
        for (ip, want) in table {
            assert_eq!(class(ip), want, "{ip}");
        }
    }

    #[test]
    fn ipv6_classes_look_through_embedded_ipv4() {
        let table = [
            ("2606:4700::1111", AddrClass::Public),
            ("::", AddrClass::Unspecified),
            ("::1", AddrClass::Loopback),
            ("::ffff:127.0.0.1", AddrClass::Loopback),
            ("::ffff:7f00:1", AddrClass::Loopback),
            ("::ffff:169.254.169.254", AddrClass::Metadata),
            ("::ffff:10.0.0.1", AddrClass::Private),
            ("::ffff:8.8.8.8", AddrClass::Public),
            ("::ffff:0:127.0.0.1", AddrClass::Loopback),
            ("::127.0.0.1", AddrClass::Loopback),
            ("::8.8.8.8", AddrClass::Reserved),
            ("64:ff9b::7f00:1", AddrClass::Loopback),
            ("64:ff9b::a9fe:a9fe", AddrClass::Metadata),
            ("64:ff9b::808:808", AddrClass::Public),
            ("64:ff9b:1::a00:1", AddrClass::Private),
            ("64:ff9b:1::808:808", AddrClass::Private),
            ("2002:7f00:1::1", AddrClass::Loopback),
            ("2002:a9fe:a9fe::", AddrClass::Metadata),
            ("2002:808:808::1", AddrClass::Public),
            ("fc00::1", AddrClass::Private),
            ("fd12:3456::1", AddrClass::Private),
            ("fd00:ec2::254", AddrClass::Metadata),
            ("fe80::1", AddrClass::LinkLocal),
            ("febf::1", AddrClass::LinkLocal),
            ("fec0::1", AddrClass::Private),
            ("ff02::1", AddrClass::Multicast),
            ("2001:db8::1", AddrClass::Documentation),
            ("3fff::1", AddrClass::Documentation),
            ("2001:2::1", AddrClass::Benchmarking),
            ("2001::1", AddrClass::Reserved),
            ("2001:20::1", AddrClass::Reserved),
            ("100::1", AddrClass::Reserved),
            ("4000::1", AddrClass::Reserved),
            ("5f00::1", AddrClass::Reserved),
        ];
        for (ip, want) in table {
            assert_eq!(class(ip), want, "{ip}");
        }
    }

    #[test]
    fn embedded_ipv4_is_reported() {
        let get = |s: &str| embedded_ipv4(s.parse().unwrap());
        assert_eq!(get("::ffff:1.2.3.4"), Some(Ipv4Addr::new(1, 2, 3, 4)));
        assert_eq!(get("64:ff9b::102:304"), Some(Ipv4Addr::new(1, 2, 3, 4)));
        assert_eq!(get("2002:102:304::"), Some(Ipv4Addr::new(1, 2, 3, 4)));
        assert_eq!(get("::1"), None);
        assert_eq!(get("::"), None);
        assert_eq!(get("2606:4700::1"), None);
    }
}
