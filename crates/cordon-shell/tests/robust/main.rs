//! The analyzer never panics, never overflows the stack and never hangs, whatever the
//! input: arbitrary text, generated shell-ish token soups, and pathological nesting.
//! These run on the default 2 MiB test thread stack on purpose.

use std::time::{Duration, Instant};

use cordon_shell::{Class, analyze};
use proptest::prelude::*;

/// Generous bound for one analysis in an unoptimized build on a loaded machine.
const LIMIT: Duration = Duration::from_secs(20);

fn timed(text: &str) -> cordon_shell::Analysis {
    let start = Instant::now();
    let a = analyze(text);
    let took = start.elapsed();
    assert!(
        took < LIMIT,
        "analysis of {} bytes took {took:?}",
        text.len()
    );
    a
}

/// Anything that failed to parse must not look fully visible to the policy.
fn fails_closed(a: &cordon_shell::Analysis) {
    if a.parse_error.is_some() {
        assert!(a.has_opaque_parts());
    }
}

mod evaluation;
mod generated;
mod nesting;
