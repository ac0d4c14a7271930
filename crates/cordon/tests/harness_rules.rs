#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code
#![allow(clippy::disallowed_methods)] // fixtures are read with std::fs
//! Rules of the test harness itself. CI runs every integration test of this crate a
//! second time against the shipped static build (`CORDON_TEST_BIN`), so a test that
//! names cargo's debug binary directly would silently test the wrong program there: the
//! binary under test is found in one place, `common::bin()`.

use std::path::Path;

#[test]
fn every_test_runs_the_binary_under_test_through_common_bin() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let needle = concat!("CARGO_BIN_", "EXE_cordon");
    let mut offenders = Vec::new();
    let mut seen = 0;
    for entry in walk(&dir) {
        if entry.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        seen += 1;
        let text = std::fs::read_to_string(&entry).unwrap();
        let allowed = entry.ends_with("common/mod.rs");
        if text.contains(needle) && !allowed {
            offenders.push(entry.display().to_string());
        }
    }
    assert!(
        seen > 20,
        "the test directory was not found: {}",
        dir.display()
    );
    assert!(
        offenders.is_empty(),
        "these test files name cargo's binary instead of `common::bin()`, so CI's run \
         against the release build would not test it: {offenders:?}"
    );
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
