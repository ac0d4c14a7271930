//! Redaction stays linear on inputs built to make a scan restart at every occurrence of a
//! keyword, a token prefix or a quote (audit records and labelled text are attacker
//! controlled), and shaped tokens are found whatever word character touches them.

use super::*;
use std::time::{Duration, Instant};

/// About `size` bytes of `unit` repeated.
fn repeat(unit: &str, size: usize) -> String {
    unit.repeat(size / unit.len() + 1)
}

/// The adversarial shapes: repeated header names, assignments, token prefixes, quotes,
/// program names of the command-line reader.
fn shapes() -> Vec<(&'static str, &'static str)> {
    vec![
        ("bearer headers", "Authorization: Bearer "),
        ("header names", "Authorization: "),
        ("header names, no blank", "Authorization:"),
        ("api key headers", "X-Api-Key: "),
        ("cookies", "Cookie: "),
        ("passwords", "password="),
        ("passwords, blank", "password = "),
        ("env assignments", "DB_PASSWORD="),
        ("json names", "\"token\": "),
        ("flags", "--token "),
        ("github prefixes", "ghp_"),
        (
            "github tokens glued",
            "ghp_aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYz123",
        ),
        ("aws keys glued", "AKIAIOSFODNN7EXAMPLE"),
        ("aws prefixes", "AKIA"),
        ("slack prefixes", "xoxb-"),
        ("openai prefixes", "sk-"),
        ("jwt prefixes", "eyJ"),
        ("url userinfo", "a://b:c"),
        ("base64 run", "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYz+/"),
        ("pem begins", "-----BEGIN RSA PRIVATE KEY-----"),
        ("single quotes", "'"),
        ("double quotes", "\" "),
        ("curl words", "curl -k "),
        ("docker words", "docker login -p "),
        ("htpasswd words", "htpasswd -b "),
        ("nested commands", "sh -c 'curl -u a:b x; "),
    ]
}

/// Every shape, 1 MiB of it (26 MiB in all), redacted well within a bound a quadratic scan blows by
/// orders of magnitude (the first of these took 10.7 s for 176 KB before, so about six
/// minutes for 1 MiB). The bound is loose (debug builds, a shared machine under other
/// builds once took more than 10 s for a linear shape): it guards against a return of
/// the quadratic loops, not against a slowdown.
#[test]
fn adversarial_inputs_redact_in_linear_time() {
    let size: usize = std::env::var("CORDON_REDACT_ADVERSARIAL_BYTES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1 << 20);
    let mut total = Duration::ZERO;
    for (name, unit) in shapes() {
        let text = repeat(unit, size);
        let t = Instant::now();
        let out = redact(&text);
        let took = t.elapsed();
        total += took;
        eprintln!("{name}: {} bytes in {took:?}", text.len());
        assert!(out.len() <= text.len() * 12, "{name}");
        assert!(
            took < Duration::from_secs(60),
            "{name}: {} bytes took {took:?}",
            text.len()
        );
    }
    eprintln!("total {total:?}");
}

const GH: &str = "ghp_aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYz123";

/// What `redact` leaves of each input: the token must be gone, whatever word character
/// touches it on either side, and a second token glued onto the first goes too.
#[test]
fn glued_tokens_are_redacted() {
    let aws = "AKIAIOSFODNN7EXAMPLE";
    let cases: Vec<(String, &str)> = vec![
        (format!("x_{GH}"), "x_[REDACTED]"),
        (format!("MY_{GH}"), "MY_[REDACTED]"),
        (format!("{GH}_abc"), "[REDACTED]_abc"),
        (format!("{GH}_"), "[REDACTED]_"),
        (format!("{GH}-x"), "[REDACTED]-x"),
        (format!("{GH}{GH}"), "[REDACTED]"),
        (format!("x{GH}{GH}_y"), "x[REDACTED]_y"),
        (format!("{GH}xyz"), "[REDACTED]"),
        (format!("{aws}_x"), "[REDACTED]_x"),
        (format!("x{aws}"), "x[REDACTED]"),
        (format!("KEY{aws}"), "KEY[REDACTED]"),
        (format!("{aws}{aws}"), "[REDACTED][REDACTED]"),
        (
            "npm_aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYz123npm_aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYz123"
                .to_string(),
            "[REDACTED][REDACTED]",
        ),
        (
            "x_github_pat_11ABCDEFG0aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYz".to_string(),
            "x_[REDACTED]",
        ),
        ("Xglpat-aB3dE5fG7hJ9kL1mN2pQ4r_".to_string(), "X[REDACTED]"),
        (
            "ENVxoxb-123456789012-abcdefghijklmn_x".to_string(),
            "ENV[REDACTED]_x",
        ),
        (
            "MY_sk-aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYz_end".to_string(),
            "MY_[REDACTED]_end",
        ),
        (
            "OPENAI_sk-proj-aB3dE5fG7hJ9kL1mN2pQ4rS6t".to_string(),
            "OPENAI_[REDACTED]",
        ),
        (
            "k_hf_aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYz12_".to_string(),
            "k_[REDACTED]_",
        ),
    ];
    for (input, want) in cases {
        assert_eq!(redact(&input), want, "{input:?}");
    }
}

/// The prefixes of the shorter shapes still end words that are not tokens.
#[test]
fn word_endings_that_look_like_prefixes_are_kept() {
    for input in [
        "task-aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYz12",
        "desk_live_dashboard1",
        "work_test_environment",
        "tohf_aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYzaa",
        "AKIAIOSFODNN7EXAMPLEX",
    ] {
        assert_eq!(redact(input), input, "{input:?}");
    }
}
