//! Tests of origin parsing and canonical forms.

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
