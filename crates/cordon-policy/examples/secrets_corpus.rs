//! Measures cordon's secret detection: recall on generated credentials of every shape,
//! findings (false positives) per MB on a sample of ordinary source code, and redaction
//! and labelling throughput. The README quotes its output.
//!
//! `cargo run --release -p cordon-policy --example secrets_corpus [-- BUDGET_MB [SEED]]`
// An example prints and stops on a broken set-up.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../tests/support/secret_corpus.rs"]
mod secret_corpus;

use cordon_policy::label::{SourceName, label};
use cordon_policy::secrets::{find, redact};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

fn main() {
    let mut args = std::env::args().skip(1);
    let budget_mb: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(16);
    let seed: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(0x5eed);

    // Recall.
    let cases = secret_corpus::generated(seed, 50);
    let mut per_kind: BTreeMap<&str, (usize, usize, usize)> = BTreeMap::new();
    for c in &cases {
        let found = find(&c.text);
        let at = c.text.find(&c.secret).unwrap();
        let covering = found
            .iter()
            .find(|f| f.range.start <= at && at + c.secret.len() <= f.range.end);
        let e = per_kind.entry(c.kind).or_default();
        e.0 += 1;
        if covering.is_some() && !redact(&c.text).contains(&c.secret) {
            e.1 += 1;
        } else {
            println!("MISSED {}: {:?}", c.kind, c.text);
        }
        if covering.is_some_and(|f| f.kind.as_str() == c.kind) {
            e.2 += 1;
        }
    }
    println!(
        "recall on generated credentials (seed {seed}, {} cases)",
        cases.len()
    );
    println!(
        "{:<24} {:>6} {:>8} {:>10}",
        "kind", "cases", "redacted", "kind right"
    );
    for (kind, (n, hit, right)) in &per_kind {
        println!("{kind:<24} {n:>6} {hit:>8} {right:>10}");
    }
    let total: usize = per_kind.values().map(|v| v.0).sum();
    let hit: usize = per_kind.values().map(|v| v.1).sum();
    println!(
        "total {hit}/{total} = {:.2}%\n",
        100.0 * hit as f64 / total as f64
    );

    // False positives.
    let roots = secret_corpus::corpus_roots();
    if roots.is_empty() {
        println!("no source corpus on this machine (no rustup sources, no cargo registry)");
        return;
    }
    let files = secret_corpus::sample(&roots, budget_mb << 20);
    let bytes: usize = files.iter().map(|(_, t)| t.len()).sum();
    let mut fps: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (path, text) in &files {
        for f in find(text) {
            let s = &text[f.range.clone()];
            let line_start = text[..f.range.start].rfind('\n').map_or(0, |i| i + 1);
            let line_end = text[f.range.end..]
                .find('\n')
                .map_or(text.len(), |i| f.range.end + i);
            let line: String = text[line_start..line_end].chars().take(110).collect();
            fps.entry(f.kind.as_str()).or_default().push(format!(
                "{path}: {line}  <<{}>>",
                s.chars().take(40).collect::<String>()
            ));
        }
    }
    let mb = bytes as f64 / (1 << 20) as f64;
    let n: usize = fps.values().map(Vec::len).sum();
    println!(
        "findings in ordinary source: {} files, {mb:.1} MB from {roots:?}",
        files.len()
    );
    println!("{:<24} {:>6} {:>8}", "kind", "count", "per MB");
    for (kind, list) in &fps {
        println!(
            "{kind:<24} {:>6} {:>8.3}",
            list.len(),
            list.len() as f64 / mb
        );
    }
    println!("total {n} = {:.3} per MB\n", n as f64 / mb);
    for (kind, list) in &fps {
        for l in list.iter().take(8) {
            println!("  [{kind}] {l}");
        }
    }

    // Throughput.
    let corpus: Vec<&str> = files.iter().map(|(_, t)| t.as_str()).collect();
    let time = |f: &dyn Fn(&str)| {
        let start = Instant::now();
        let mut rounds = 0;
        while start.elapsed() < Duration::from_secs(2) || rounds == 0 {
            for t in &corpus {
                f(t);
            }
            rounds += 1;
        }
        (bytes * rounds) as f64 / (1 << 20) as f64 / start.elapsed().as_secs_f64()
    };
    let source = SourceName::new("bench").unwrap();
    println!("\nthroughput on the sample (machine loaded: other builds were running)");
    println!(
        "secrets::redact         {:>8.1} MB/s",
        time(&|t| drop(redact(t)))
    );
    println!(
        "label::label            {:>8.1} MB/s",
        time(&|t| drop(label(&source, t)))
    );
    println!(
        "redact + label          {:>8.1} MB/s",
        time(&|t| drop(label(&source, &redact(t))))
    );
}
