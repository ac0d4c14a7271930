//! Redaction measured: recall on `tests/corpus/redaction/positives.tsv` (secrets in the
//! shapes public secret scanners test for, one case a line) and false positives on
//! `tests/corpus/redaction/negatives/` (ordinary agent output collected on a development
//! machine: cargo build and test logs, `git log -p` of this repository, npm logs and
//! registry JSON, `cargo metadata`). `sh bench/redaction.sh` prints the table; this test
//! fails when recall falls below [`RECALL_FLOOR`] or false positives rise above
//! [`FP_PER_MIB_CEILING`]. `CORDON_REDACTION_SHOW=1` prints every miss and every false
//! positive.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code
#![allow(clippy::disallowed_methods)] // fixtures are read with std::fs

use cordon_store::redact_text;
use std::collections::BTreeMap;
use std::path::Path;

/// The least share of positive cases redacted.
const RECALL_FLOOR: f64 = 0.96;
/// The most findings per MiB of the negatives.
const FP_PER_MIB_CEILING: f64 = 1.0;

fn corpus() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/corpus/redaction"
    ))
}

#[test]
fn redaction_recall_and_false_positives_stay_within_bounds() {
    let show = std::env::var_os("CORDON_REDACTION_SHOW").is_some();
    let text = std::fs::read_to_string(corpus().join("positives.tsv")).unwrap();
    let mut classes: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let (mut hit, mut total) = (0, 0);
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let mut f = line.splitn(3, '\t');
        let (class, secret, case) = (f.next().unwrap(), f.next().unwrap(), f.next().unwrap());
        let case = case.replace("\\n", "\n");
        assert!(case.contains(secret), "a case must hold its secret: {line}");
        let out = redact_text(&case);
        let recalled = !out.contains(secret);
        let e = classes.entry(class).or_default();
        e.1 += 1;
        total += 1;
        if recalled {
            e.0 += 1;
            hit += 1;
        } else if show {
            println!("miss [{class}] {case}");
        }
    }
    let recall = hit as f64 / total as f64;
    for (class, (h, t)) in &classes {
        println!(
            "recall {class:<14} {h:>3}/{t:<3} {:5.1}%",
            100.0 * *h as f64 / *t as f64
        );
    }
    println!(
        "recall {:<14} {hit:>3}/{total:<3} {:5.1}%",
        "all",
        100.0 * recall
    );

    let mut bytes = 0usize;
    let mut findings = 0usize;
    let mut files: Vec<_> = std::fs::read_dir(corpus().join("negatives"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for path in files {
        let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        let found = cordon_policy::secrets::find(&text);
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        println!(
            "false-positives {name:<22} {:>3} in {:>8} bytes",
            found.len(),
            text.len()
        );
        if show {
            for f in &found {
                let lo = text.floor_char_boundary(f.range.start.saturating_sub(40));
                let hi = text.ceil_char_boundary((f.range.end + 20).min(text.len()));
                println!("  fp [{}] {:?}", f.kind, &text[lo..hi]);
            }
        }
        bytes += text.len();
        findings += found.len();
    }
    let mib = bytes as f64 / (1024.0 * 1024.0);
    let per_mib = findings as f64 / mib;
    println!("false-positives all {findings} in {mib:.2} MiB: {per_mib:.2} per MiB");
    assert!(
        recall >= RECALL_FLOOR,
        "recall {recall:.3} fell below {RECALL_FLOOR}"
    );
    assert!(
        per_mib <= FP_PER_MIB_CEILING,
        "{per_mib:.2} false positives per MiB, above {FP_PER_MIB_CEILING}"
    );
}
