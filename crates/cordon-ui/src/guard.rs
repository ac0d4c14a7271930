//! Who may talk to the console, and from where.
//!
//! Owns the launch token, the browser sessions it is exchanged for, the per-session CSRF
//! tokens, the `Host`/`Origin`/`Sec-Fetch-Site` checks and the headers every response
//! carries. It must never let a request through on a missing or malformed header: every
//! check here fails closed.

use std::net::SocketAddr;
use std::sync::Mutex;

use hyper::HeaderMap;
use hyper::header::{HOST, HeaderValue, ORIGIN};

/// Name of the cookie that carries a browser session.
pub const COOKIE: &str = "cordon_ui";
/// Header a state-changing request must carry, with the session's CSRF token.
pub const CSRF_HEADER: &str = "x-cordon-csrf";
/// The Content-Security-Policy of every response: the page loads only its own script and
/// style, talks only to its own origin, and cannot be framed.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";
/// How many browser sessions one console keeps; the oldest is dropped past this.
const MAX_SESSIONS: usize = 64;

/// A secret of 256 random bits, as 64 lower-case hex digits.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// A fresh secret from the operating system's random source.
    pub fn random() -> Result<Secret, getrandom::Error> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes)?;
        Ok(Secret(bytes.iter().map(|b| format!("{b:02x}")).collect()))
    }

    /// The secret's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `candidate` is this secret, in time that does not depend on where they
    /// differ.
    pub fn matches(&self, candidate: &str) -> bool {
        constant_time_eq(self.0.as_bytes(), candidate.as_bytes())
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(…)")
    }
}

/// Compare two byte strings without an early exit. The length is not secret (every
/// secret here is 64 hex digits), so unequal lengths return at once.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The launch token and the browser sessions made from it.
#[derive(Debug)]
pub struct Guard {
    token: Secret,
    /// Session cookie → that session's CSRF token, oldest first.
    sessions: Mutex<Vec<(Secret, Secret)>>,
    hosts: Vec<String>,
}

/// Why a request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// `Host` is not the console's own address.
    Host,
    /// No valid session cookie (and no valid token).
    Token,
    /// A state change without a same-origin `Origin` or with a cross-site fetch.
    Origin,
    /// A state change without the session's CSRF token.
    Csrf,
}

impl Refused {
    /// The HTTP status and one sentence for the response body.
    pub fn explain(self) -> (u16, &'static str) {
        match self {
            Refused::Host => (
                421,
                "this console answers only to its own address (the Host header did not match); open the URL `cordon ui` printed",
            ),
            Refused::Token => (
                401,
                "no valid console token: open the URL `cordon ui` printed, which carries it",
            ),
            Refused::Origin => (
                403,
                "cross-origin request refused: changes are accepted only from the console's own page",
            ),
            Refused::Csrf => (
                403,
                "missing or wrong CSRF token: reload the console page and try again",
            ),
        }
    }
}

impl Guard {
    /// A guard for a console listening on `listen`, with a fresh token.
    pub fn new(listen: SocketAddr) -> Result<Guard, getrandom::Error> {
        let port = listen.port();
        let mut hosts = vec![listen.to_string()];
        if listen.ip().is_loopback() {
            // Names a rebinding attacker cannot point at: only the machine's own.
            for h in [
                format!("127.0.0.1:{port}"),
                format!("localhost:{port}"),
                format!("[::1]:{port}"),
            ] {
                if !hosts.contains(&h) {
                    hosts.push(h);
                }
            }
        }
        Ok(Guard {
            token: Secret::random()?,
            sessions: Mutex::new(Vec::new()),
            hosts,
        })
    }

    /// The launch token.
    pub fn token(&self) -> &Secret {
        &self.token
    }

    /// Check `Host` against the console's own addresses (DNS rebinding).
    pub fn check_host(&self, headers: &HeaderMap) -> Result<(), Refused> {
        let host = headers
            .get(HOST)
            .and_then(|h| h.to_str().ok())
            .ok_or(Refused::Host)?;
        if self.hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
            Ok(())
        } else {
            Err(Refused::Host)
        }
    }

    /// Exchange the launch token for a new browser session: its cookie value.
    pub fn login(&self, token: &str) -> Result<Secret, Refused> {
        if !self.token.matches(token) {
            return Err(Refused::Token);
        }
        let cookie = Secret::random().map_err(|_| Refused::Token)?;
        let csrf = Secret::random().map_err(|_| Refused::Token)?;
        let mut sessions = self.sessions.lock().map_err(|_| Refused::Token)?;
        if sessions.len() >= MAX_SESSIONS {
            sessions.remove(0);
        }
        sessions.push((cookie.clone(), csrf));
        Ok(cookie)
    }

    /// The CSRF token of the session whose cookie the request carries.
    pub fn session(&self, headers: &HeaderMap) -> Result<Secret, Refused> {
        let cookie = session_cookie(headers).ok_or(Refused::Token)?;
        let sessions = self.sessions.lock().map_err(|_| Refused::Token)?;
        // Every entry is compared, so the time taken does not say which one matched.
        let mut found = None;
        for (c, csrf) in sessions.iter() {
            if c.matches(cookie) {
                found = Some(csrf.clone());
            }
        }
        found.ok_or(Refused::Token)
    }

    /// Check a state-changing request: same origin, and the session's CSRF token.
    pub fn check_change(&self, headers: &HeaderMap, csrf: &Secret) -> Result<(), Refused> {
        let origin = headers
            .get(ORIGIN)
            .and_then(|o| o.to_str().ok())
            .ok_or(Refused::Origin)?;
        let same = origin
            .strip_prefix("http://")
            .is_some_and(|h| self.hosts.iter().any(|x| x.eq_ignore_ascii_case(h)));
        if !same {
            return Err(Refused::Origin);
        }
        if let Some(site) = headers.get("sec-fetch-site")
            && site.as_bytes() != b"same-origin"
        {
            return Err(Refused::Origin);
        }
        let given = headers
            .get(CSRF_HEADER)
            .and_then(|v| v.to_str().ok())
            .ok_or(Refused::Csrf)?;
        if csrf.matches(given) {
            Ok(())
        } else {
            Err(Refused::Csrf)
        }
    }
}

/// The value of the console's cookie in a request's `Cookie` headers.
fn session_cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(hyper::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|pair| {
            let (name, value) = pair.trim().split_once('=')?;
            (name == COOKIE).then_some(value)
        })
}

/// The `Set-Cookie` value for a new session: script cannot read it, and the browser
/// sends it only on requests that start from the console's own pages.
pub fn set_cookie(session: &Secret) -> String {
    format!(
        "{COOKIE}={}; HttpOnly; SameSite=Strict; Path=/",
        session.as_str()
    )
}

/// Add the headers every response carries.
pub fn harden(headers: &mut HeaderMap) {
    let fixed: [(&str, &'static str); 6] = [
        ("content-security-policy", CSP),
        ("x-content-type-options", "nosniff"),
        ("referrer-policy", "no-referrer"),
        ("x-frame-options", "DENY"),
        ("cache-control", "no-store"),
        ("cross-origin-opener-policy", "same-origin"),
    ];
    for (name, value) in fixed {
        headers.insert(name, HeaderValue::from_static(value));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn secrets_are_256_bits_and_differ() {
        let a = Secret::random().unwrap();
        let b = Secret::random().unwrap();
        assert_eq!(a.as_str().len(), 64);
        assert!(a != b);
        assert!(a.matches(a.as_str()));
        assert!(!a.matches(b.as_str()));
        assert!(!a.matches(""));
    }

    #[test]
    fn host_must_be_the_console_itself() {
        let g = Guard::new("127.0.0.1:8123".parse().unwrap()).unwrap();
        assert!(
            g.check_host(&headers(&[("host", "127.0.0.1:8123")]))
                .is_ok()
        );
        assert!(
            g.check_host(&headers(&[("host", "localhost:8123")]))
                .is_ok()
        );
        for bad in ["evil.example:8123", "127.0.0.1:80", "127.0.0.1", ""] {
            assert_eq!(
                g.check_host(&headers(&[("host", bad)])),
                Err(Refused::Host),
                "{bad}"
            );
        }
        assert_eq!(g.check_host(&HeaderMap::new()), Err(Refused::Host));
    }

    #[test]
    fn a_session_needs_the_token_and_a_change_needs_origin_and_csrf() {
        let g = Guard::new("127.0.0.1:8123".parse().unwrap()).unwrap();
        assert_eq!(g.login("0".repeat(64).as_str()), Err(Refused::Token));
        let cookie = g.login(g.token().as_str()).unwrap();
        let c = format!("other=1; {COOKIE}={}", cookie.as_str());
        let csrf = g.session(&headers(&[("cookie", &c)])).unwrap();
        assert_eq!(
            g.session(&headers(&[("cookie", "cordon_ui=nope")])),
            Err(Refused::Token)
        );
        let ok = headers(&[
            ("origin", "http://127.0.0.1:8123"),
            ("sec-fetch-site", "same-origin"),
            (CSRF_HEADER, csrf.as_str()),
        ]);
        assert!(g.check_change(&ok, &csrf).is_ok());
        let cross = headers(&[
            ("origin", "http://evil.example"),
            (CSRF_HEADER, csrf.as_str()),
        ]);
        assert_eq!(g.check_change(&cross, &csrf), Err(Refused::Origin));
        let site = headers(&[
            ("origin", "http://127.0.0.1:8123"),
            ("sec-fetch-site", "cross-site"),
            (CSRF_HEADER, csrf.as_str()),
        ]);
        assert_eq!(g.check_change(&site, &csrf), Err(Refused::Origin));
        let no_origin = headers(&[(CSRF_HEADER, csrf.as_str())]);
        assert_eq!(g.check_change(&no_origin, &csrf), Err(Refused::Origin));
        let no_csrf = headers(&[("origin", "http://127.0.0.1:8123")]);
        assert_eq!(g.check_change(&no_csrf, &csrf), Err(Refused::Csrf));
    }
}
