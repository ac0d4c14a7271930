//! Adding a credential to a request, as its table says (a bearer token, basic auth, a
//! named header, a query parameter), and taking its real value back out of the response.
//!
//! The value goes into that one place only: a placeholder anywhere else in the request
//! (a header the upstream might echo back) goes upstream as it is. A client that already
//! fills the place with something other than the placeholder is left alone (it is not an
//! injection). What this must never do: put the value anywhere but the credential's own
//! place, or pass a response on with the value in any spelling it redacts.

use cordon_policy::credential::Apply;
use hyper::HeaderMap;
use hyper::header::{ACCEPT_ENCODING, AUTHORIZATION, HeaderName, HeaderValue};

use crate::credential::Credential;

/// Add `cred` to a request with these headers and this target (path and query). Returns
/// the target to send (changed only for a query credential) and whether the value was
/// added. The answer is asked for unencoded, so that redaction sees it.
pub(crate) fn add(cred: &Credential, headers: &mut HeaderMap, target: &str) -> (String, bool) {
    let (target, added) = match cred.apply() {
        Apply::Bearer => (
            target.to_owned(),
            put_header(
                headers,
                AUTHORIZATION,
                cred,
                &format!("Bearer {}", cred.value()),
            ),
        ),
        Apply::Basic { user } => (target.to_owned(), put_basic(headers, cred, user)),
        Apply::Header(name) => match HeaderName::from_bytes(name.as_bytes()) {
            Ok(name) => (
                target.to_owned(),
                put_header(headers, name, cred, cred.value()),
            ),
            Err(_) => (target.to_owned(), false),
        },
        Apply::Query(param) => put_query(target, param, cred),
        _ => (target.to_owned(), false),
    };
    if added {
        headers.insert(ACCEPT_ENCODING, HeaderValue::from_static("identity"));
    }
    (target, added)
}

fn sensitive(text: &str) -> Option<HeaderValue> {
    let mut v = HeaderValue::from_str(text).ok()?;
    v.set_sensitive(true);
    Some(v)
}

/// Swap the placeholder for the value in `name`, or with no such header, add `fresh`.
fn put_header(headers: &mut HeaderMap, name: HeaderName, cred: &Credential, fresh: &str) -> bool {
    if !headers.contains_key(&name) {
        return match sensitive(fresh) {
            Some(v) => {
                headers.insert(name, v);
                true
            }
            None => false,
        };
    }
    let mut added = false;
    let swapped: Vec<HeaderValue> = headers
        .get_all(&name)
        .iter()
        .map(|value| {
            let text = String::from_utf8_lossy(value.as_bytes());
            if !text.contains(cred.placeholder()) {
                return value.clone();
            }
            match sensitive(&text.replace(cred.placeholder(), cred.value())) {
                Some(v) => {
                    added = true;
                    v
                }
                None => value.clone(),
            }
        })
        .collect();
    headers.remove(&name);
    for v in swapped {
        headers.append(&name, v);
    }
    added
}

/// Basic auth: a client's `Basic base64(user:PLACEHOLDER)` (or any `Authorization`
/// naming the placeholder) becomes `Basic base64(user:VALUE)`; none is added as one.
fn put_basic(headers: &mut HeaderMap, cred: &Credential, user: &str) -> bool {
    let ours = format!(
        "Basic {}",
        base64(format!("{user}:{}", cred.value()).as_bytes())
    );
    if !headers.contains_key(AUTHORIZATION) {
        return match sensitive(&ours) {
            Some(v) => {
                headers.insert(AUTHORIZATION, v);
                true
            }
            None => false,
        };
    }
    let mut added = false;
    let swapped: Vec<HeaderValue> = headers
        .get_all(AUTHORIZATION)
        .iter()
        .map(|value| {
            let text = String::from_utf8_lossy(value.as_bytes()).into_owned();
            let decoded = text
                .get(..6)
                .filter(|s| s.eq_ignore_ascii_case("basic "))
                .and_then(|_| unbase64(text[6..].trim()))
                .and_then(|b| String::from_utf8(b).ok());
            let new = match decoded {
                Some(pair) if pair.contains(cred.placeholder()) => Some(format!(
                    "Basic {}",
                    base64(pair.replace(cred.placeholder(), cred.value()).as_bytes())
                )),
                _ if text.contains(cred.placeholder()) => Some(ours.clone()),
                _ => None,
            };
            match new.as_deref().and_then(sensitive) {
                Some(v) => {
                    added = true;
                    v
                }
                None => value.clone(),
            }
        })
        .collect();
    headers.remove(AUTHORIZATION);
    for v in swapped {
        headers.append(AUTHORIZATION, v);
    }
    added
}

/// A query parameter: `param=PLACEHOLDER` gets the value; with no `param`, it is added.
fn put_query(target: &str, param: &str, cred: &Credential) -> (String, bool) {
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (target, None),
    };
    let value = percent(cred.value());
    let Some(query) = query else {
        return (format!("{path}?{param}={value}"), true);
    };
    let mut named = false;
    let mut added = false;
    let placeholders = [cred.placeholder().to_owned(), percent(cred.placeholder())];
    let pairs: Vec<String> = query
        .split('&')
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) if k == param => {
                named = true;
                match placeholders.iter().find(|p| v.contains(p.as_str())) {
                    Some(p) => {
                        added = true;
                        format!("{k}={}", v.replace(p.as_str(), &value))
                    }
                    None => kv.to_owned(),
                }
            }
            _ => kv.to_owned(),
        })
        .collect();
    let mut query = pairs.join("&");
    if !named {
        query.push_str(&format!("&{param}={value}"));
        added = true;
    }
    (format!("{path}?{query}"), added)
}

/// Whether a response body is encoded (compressed) so that the real value could pass the
/// redaction unseen.
pub(crate) fn encoded(headers: &HeaderMap) -> bool {
    headers
        .get_all(hyper::header::CONTENT_ENCODING)
        .iter()
        .any(|v| !v.as_bytes().eq_ignore_ascii_case(b"identity"))
}

/// Whether a response body starts as a compressed stream does (gzip, zstd, or zlib that
/// is not text), though no `Content-Encoding` says so: the request asked for the identity
/// encoding, so such a body cannot be checked for the value and is refused. Brotli has no
/// magic bytes and is not recognised.
pub(crate) fn compressed(body: &[u8]) -> bool {
    let zlib = match body {
        [cmf, flg, ..] => {
            cmf & 0x0f == 8
                && cmf >> 4 <= 7
                && ((u16::from(*cmf) << 8) | u16::from(*flg)) % 31 == 0
                // A text that happens to start like a zlib header ("x^", "HK") is text.
                && std::str::from_utf8(body).is_err()
        }
        _ => false,
    };
    body.starts_with(&[0x1f, 0x8b]) || body.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) || zlib
}

/// Percent-encode all but the unreserved characters (RFC 3986 §2.3).
pub(crate) fn percent(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding (RFC 4648 §4).
pub(crate) fn base64(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                let idx = usize::try_from((n >> (18 - 6 * i)) & 63).unwrap_or(0);
                out.push(char::from(ALPHABET[idx]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decode standard base64 (padding optional); `None` for anything else.
fn unbase64(text: &str) -> Option<Vec<u8>> {
    let digits: Vec<u8> = text
        .trim_end_matches('=')
        .bytes()
        .map(|c| {
            ALPHABET
                .iter()
                .position(|a| *a == c)
                .and_then(|p| u8::try_from(p).ok())
        })
        .collect::<Option<_>>()?;
    if digits.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, d)| acc | (u32::from(*d) << (18 - 6 * i)));
        for i in 0..chunk.len() - 1 {
            out.push(u8::try_from((n >> (16 - 8 * i)) & 0xff).unwrap_or(0));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cordon_policy::credential::Destination;

    const REAL: &str = "s3cr3t/Value-0123456789";

    fn cred(apply: Apply) -> Credential {
        let d = Destination::parse("api.example.com", &[], &[]).unwrap();
        Credential::new("t", REAL.into(), apply, vec![d], None).unwrap()
    }

    #[test]
    fn compressed_bodies_are_recognised_by_their_magic_bytes() {
        assert!(compressed(&[0x1f, 0x8b, 8, 0, 0]));
        assert!(compressed(&[0x28, 0xb5, 0x2f, 0xfd, 0x20]));
        assert!(compressed(&[0x78, 0x9c, 0xcb, 0x48, 0xcd]));
        assert!(compressed(&[0x78, 0x01, 0xff, 0xfe]));
        assert!(compressed(&[0x78, 0xda, 0xf3]));
        for text in [&b"x^2 + y^2"[..], b"HK", b"{\"a\":1}", b"", b"\x1f"] {
            assert!(!compressed(text), "{}", String::from_utf8_lossy(text));
        }
    }

    #[test]
    fn base64_round_trips() {
        for s in ["", "f", "fo", "foo", "foob", "fooba", "foobar", "ci:s3cr3t"] {
            assert_eq!(
                unbase64(&base64(s.as_bytes())).unwrap(),
                s.as_bytes(),
                "{s}"
            );
        }
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert!(unbase64("a").is_none());
        assert!(unbase64("Zm9v!").is_none());
    }

    #[test]
    fn each_application_puts_the_value_in_its_place_only() {
        let c = cred(Apply::Bearer);
        let mut h = HeaderMap::new();
        let (t, added) = add(&c, &mut h, "/x");
        assert!(added && t == "/x");
        assert_eq!(h[AUTHORIZATION], format!("Bearer {REAL}").as_str());

        let c = cred(Apply::Basic { user: "ci".into() });
        let mut h = HeaderMap::new();
        assert!(add(&c, &mut h, "/x").1);
        assert_eq!(
            unbase64(&h[AUTHORIZATION].to_str().unwrap()[6..]).unwrap(),
            format!("ci:{REAL}").as_bytes()
        );
        // The client's own basic pair with the placeholder keeps its user.
        let mut h = HeaderMap::new();
        let theirs = format!(
            "Basic {}",
            base64(format!("me:{}", c.placeholder()).as_bytes())
        );
        h.insert(AUTHORIZATION, theirs.parse().unwrap());
        assert!(add(&c, &mut h, "/x").1);
        assert_eq!(
            unbase64(&h[AUTHORIZATION].to_str().unwrap()[6..]).unwrap(),
            format!("me:{REAL}").as_bytes()
        );

        let c = cred(Apply::Header("X-Api-Key".into()));
        let mut h = HeaderMap::new();
        h.insert("x-echo", c.placeholder().parse().unwrap());
        assert!(add(&c, &mut h, "/x").1);
        assert_eq!(h["x-api-key"], REAL);
        assert_eq!(h["x-echo"], c.placeholder(), "another header got the value");
        assert!(!h.contains_key(AUTHORIZATION));
        // A client's own key (not the placeholder) is left alone, and nothing is added.
        let mut h = HeaderMap::new();
        h.insert("x-api-key", "their-own-key".parse().unwrap());
        assert!(!add(&c, &mut h, "/x").1);
        assert_eq!(h["x-api-key"], "their-own-key");

        let c = cred(Apply::Query("key".into()));
        let mut h = HeaderMap::new();
        let enc = percent(REAL);
        assert_eq!(add(&c, &mut h, "/x").0, format!("/x?key={enc}"));
        assert_eq!(add(&c, &mut h, "/x?a=1").0, format!("/x?a=1&key={enc}"));
        let with = format!("/x?key={}&b=2", percent(c.placeholder()));
        assert_eq!(add(&c, &mut h, &with).0, format!("/x?key={enc}&b=2"));
        assert!(!h.contains_key(AUTHORIZATION));
    }

    #[test]
    fn every_spelling_of_the_value_is_redacted() {
        let c = cred(Apply::Basic { user: "ci".into() });
        let body = format!(
            "raw={REAL} json={} pct={} basic={}",
            REAL.replace('/', "\\/"),
            percent(REAL),
            base64(format!("ci:{REAL}").as_bytes())
        );
        let out = String::from_utf8(crate::echo::redact(&c, body.as_bytes()).unwrap()).unwrap();
        assert!(
            !out.contains(REAL) && !out.contains(&percent(REAL)),
            "{out}"
        );
        assert!(
            !out.contains(&base64(format!("ci:{REAL}").as_bytes())),
            "{out}"
        );
        assert!(out.contains(c.placeholder()), "{out}");
    }
}
