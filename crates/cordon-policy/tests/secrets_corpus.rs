//! Precision and recall of secret detection, with thresholds:
//! - every generated credential of every shape is found and redacted (recall 100%);
//! - a deterministic sample of ordinary source code (the Rust toolchain's sources and the
//!   cargo registry) yields at most [`MAX_FINDINGS_PER_MB`] findings per MB.
//!
//! The corpus is the machine's own; without one the test says so and passes, except
//! under `CI=true`, where the cargo registry must exist (CI builds cordon, so it has one).
//! `examples/secrets_corpus.rs` prints the full tables and the findings themselves.
// Test code: a failed setup step should stop the test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support {
    pub mod secret_corpus;
}
use support::secret_corpus;

use cordon_policy::secrets::{find, redact};

/// Findings allowed per MB of ordinary source (every one counts, whatever it is).
const MAX_FINDINGS_PER_MB: f64 = 2.0;
/// How much source to scan: enough for a stable rate, small enough for a debug build.
const BUDGET: usize = 3 << 20;

#[test]
fn every_generated_credential_is_found_and_redacted() {
    for seed in [1, 0x5eed, 0xC0FFEE] {
        let cases = secret_corpus::generated(seed, 10);
        assert!(cases.len() > 400);
        for c in &cases {
            let at = c.text.find(&c.secret).unwrap();
            let found = find(&c.text);
            assert!(
                found
                    .iter()
                    .any(|f| f.range.start <= at && at + c.secret.len() <= f.range.end),
                "{}: {:?} not found in {:?} ({found:?})",
                c.kind,
                c.secret,
                c.text
            );
            assert!(
                !redact(&c.text).contains(&c.secret),
                "{}: {:?}",
                c.kind,
                c.text
            );
        }
    }
}

#[test]
fn ordinary_source_code_yields_few_findings() {
    let roots = secret_corpus::corpus_roots();
    if roots.is_empty() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but neither ~/.rustup/toolchains/*/lib/rustlib/src nor ~/.cargo/registry/src exists"
        );
        eprintln!(
            "skipped: no source corpus on this machine (no rustup sources, no cargo registry)"
        );
        return;
    }
    let files = secret_corpus::sample(&roots, BUDGET);
    let bytes: usize = files.iter().map(|(_, t)| t.len()).sum();
    assert!(bytes > 256 << 10, "the corpus sample is only {bytes} bytes");
    let mut findings = Vec::new();
    for (path, text) in &files {
        for f in find(text) {
            findings.push(format!("{path}: {} {:?}", f.kind, &text[f.range.clone()]));
        }
    }
    let per_mb = findings.len() as f64 / (bytes as f64 / (1 << 20) as f64);
    assert!(
        per_mb <= MAX_FINDINGS_PER_MB,
        "{per_mb:.2} findings per MB in {bytes} bytes of source:\n{}",
        findings.join("\n")
    );
}
