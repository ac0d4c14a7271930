//! The grammar's deadline, in a process of its own (workers left behind are counted per
//! process): text the parser would read for minutes is refused at the deadline, and
//! while two such workers still run, every parse is refused at once.

use std::time::{Duration, Instant};

/// 32 parentheses around `a;`: brush-parser 0.4.0 reads the inside about 2^32 times
/// (about a minute in a release build, far longer in a debug one).
fn costly() -> String {
    format!("{}a;{}", "(".repeat(32), ")".repeat(32))
}

#[test]
fn a_parse_past_its_deadline_is_refused_and_a_third_waits_for_none() {
    for _ in 0..2 {
        let t = Instant::now();
        let e = cordon_shell::parse_past_the_estimate(&costly()).expect_err("refused");
        assert!(e.contains("had not finished after 5 s"), "{e}");
        assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
    }
    // Two workers left behind still run: refused at once, even for trivial text.
    let t = Instant::now();
    let long = "echo the text is longer than what is parsed on the calling thread";
    let e = cordon_shell::parse_past_the_estimate(long).expect_err("refused");
    assert!(e.contains("busy"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    // The analysis says the same: a parse error, never an allow.
    assert!(cordon_shell::analyze(long).parse_error.is_some());
    // Short text with nesting is not parsed on the calling thread: refused at once too.
    let short = "a[${a[${a[${a[${a[${a[${a}}}}}}}";
    let e = cordon_shell::parse_past_the_estimate(short).expect_err("refused");
    assert!(e.contains("busy"), "{e}");
}
