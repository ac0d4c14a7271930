//! URL and origin normalization, differential against the `url` crate (WHATWG URL).
//!
//! Whatever [`Origin::parse_url`] accepts, `url` must read as the same origin: the same
//! scheme, the same host (a domain as a domain, in the same ASCII form; an address as the
//! same address) and the same effective port. cordon may refuse what `url` accepts (it is
//! stricter on purpose), never the other way round with a different meaning: a host the
//! policy judges as one name while a client connects to another is an egress bypass.
//! [`Origin::parse_authority`] (CONNECT targets, SOCKS names) is held to the same on
//! `http://AUTHORITY/`.

use cordon_policy::net::{Host, Origin, Scheme};

fn same(input: &str, o: &Origin) {
    let Ok(u) = url::Url::parse(input) else {
        panic!("cordon accepts {input:?} as {o} but the url crate refuses it");
    };
    assert_eq!(u.scheme(), o.scheme.as_str(), "{input:?}");
    assert_eq!(
        u.port_or_known_default(),
        Some(o.port),
        "{input:?}: port {} for cordon",
        o.port
    );
    match (&o.host, u.host()) {
        (Host::Domain(d), Some(url::Host::Domain(w))) => {
            let norm = |s: &str| s.trim_end_matches('.').to_ascii_lowercase();
            assert_eq!(norm(d), norm(w), "{input:?}: host");
        }
        (Host::Ip(ip), Some(url::Host::Ipv4(w))) => {
            assert_eq!(*ip, std::net::IpAddr::V4(w), "{input:?}: address")
        }
        (Host::Ip(ip), Some(url::Host::Ipv6(w))) => {
            assert_eq!(*ip, std::net::IpAddr::V6(w), "{input:?}: address")
        }
        (h, w) => panic!("{input:?}: cordon reads host {h:?}, the url crate {w:?}"),
    }
}

/// The property.
pub fn check(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(o) = Origin::parse_url(s) {
        same(s, &o);
    }
    if let Ok(a) = Origin::parse_authority(s, 443) {
        let url = format!("https://{s}/");
        let o = Origin {
            scheme: Scheme::Https,
            host: a.host.clone(),
            port: a.port,
        };
        // An authority that is not a URL authority (`a/b`) simply does not compare.
        if !s.contains(['/', '?', '#', '@']) {
            same(&url, &o);
        }
    }
}
