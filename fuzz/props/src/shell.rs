//! Shell text → analysis → verdict.
//!
//! - No panic, and bounded work (libFuzzer's `-timeout` and `-rss_limit_mb` hold the
//!   analysis to its budgets: `scripts/fuzz.sh` passes both).
//! - Differential: `true; C`, and `C` followed by a line `true` when `C` parses, run the
//!   same commands as `C` plus a no-op (the space keeps `;` from joining what `C` starts
//!   with into another operator: `true;&>f cmd` is bash's `;&`, a syntax error, where
//!   `&>f cmd` runs `cmd`), so their analysis must be no weaker than the analysis of `C`
//!   (opaque stays opaque; every write, delete, network target and hazard stays), and
//!   the default policy's verdict on them no more permissive.

use cordon_policy::{Decision, FakeFs, LoadOptions, Policy, Request};
use cordon_shell::{Analysis, analyze};
use std::collections::BTreeSet;
use std::sync::OnceLock;

/// Longest text tried (the policy's request cap is larger; longer text only slows
/// the fuzzer down).
const MAX: usize = 4096;

fn policy() -> &'static (Policy, FakeFs) {
    static P: OnceLock<(Policy, FakeFs)> = OnceLock::new();
    P.get_or_init(|| {
        let fs = FakeFs::new()
            .dir("/w/proj/src")
            .file("/w/proj/src/main.rs")
            .dir("/home/u/.ssh")
            .file("/home/u/.ssh/id_rsa");
        let opts = LoadOptions {
            workspace: "/w/proj".into(),
            home: "/home/u".into(),
            skip_default_files: true,
            ..Default::default()
        };
        let p = Policy::load(&opts, &fs).expect("the default policy loads");
        (p, fs)
    })
}

fn rank(d: Decision) -> u8 {
    match d {
        Decision::Allow => 0,
        Decision::Ask => 1,
        _ => 2,
    }
}

/// What an analysis says the text may do, as comparable strings.
fn reach(a: &Analysis) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for c in &a.commands {
        let e = &c.effects;
        out.extend(e.writes.iter().map(|w| format!("w:{}", w.value)));
        out.extend(e.deletes.iter().map(|w| format!("d:{}", w.value)));
        out.extend(e.network.iter().map(|n| format!("n:{}", n.target)));
        for r in &c.redirects {
            if r.kind.writes_file() {
                out.insert(format!("w:{}", r.target.value));
            }
        }
    }
    out.extend(a.hazards.iter().map(|h| format!("h:{:?}", h.kind)));
    out
}

fn verdict(text: &str) -> Decision {
    let (p, fs) = policy();
    p.decide(&Request::shell(text, Some("/w/proj".into())), fs)
        .decision
}

/// The property.
pub fn check(data: &[u8]) {
    crate::quiet_caught_panics();
    if data.len() > MAX {
        return;
    }
    let c = crate::text(data);
    // Empty text is refused as no command at all; `true;` is a command.
    if c.trim().is_empty() {
        return;
    }
    let a = analyze(&c);
    // The parser's deadline is the bound behind its estimate: text that reaches it got
    // past the estimate, a finding (the estimate must refuse it first, quickly).
    assert!(
        !a.parse_error
            .as_deref()
            .is_some_and(|e| e.contains("the bash parser gave up")),
        "{c:?} passed the parse estimate and ran into the parser's deadline"
    );
    let base = verdict(&c);
    let mut variants = vec![format!("true; {c}")];
    // A trailing backslash joins the next line; a heredoc would take `true` as its body.
    // Text that does not parse may be completed by the next line (`a &&`).
    if a.parse_error.is_none() && !c.ends_with('\\') && !c.contains("<<") {
        variants.push(format!("{c}\ntrue"));
    }
    for v in variants {
        let b = analyze(&v);
        if b.parse_error.is_none() && a.parse_error.is_none() {
            if a.has_opaque_parts() {
                assert!(
                    b.has_opaque_parts(),
                    "{c:?} is opaque but {v:?} is not:\n{a:#?}\n{b:#?}"
                );
            }
            if !b.has_opaque_parts() {
                let (ra, rb) = (reach(&a), reach(&b));
                let lost: Vec<_> = ra.difference(&rb).collect();
                assert!(lost.is_empty(), "{v:?} lost {lost:?} that {c:?} has");
            }
        }
        let vb = verdict(&v);
        assert!(
            rank(vb) >= rank(base),
            "{v:?} gets {vb:?}, weaker than {base:?} for {c:?}"
        );
    }
}
