//! Every committed corpus file and crash reproducer (`fuzz/corpus/TARGET/*`,
//! `fuzz/regressions/TARGET/*`) run through its target's property, in the ordinary
//! `cargo test`: a finding the fuzzer made stays fixed, and the properties stay true on
//! the inputs that reach the most code.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code
#![allow(clippy::disallowed_methods)] // fixtures are read with std::fs

use std::path::Path;

fn replay(kind: &str, target: &str) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(kind)
        .join(target);
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return 0;
    };
    let mut files: Vec<_> = rd.map(|e| e.unwrap().path()).collect();
    files.sort();
    for f in &files {
        let data = std::fs::read(f).unwrap();
        let ok = std::panic::catch_unwind(|| cordon_fuzz_props::run(target, &data));
        assert!(
            matches!(ok, Ok(true)),
            "{target}: {} fails its property",
            f.display()
        );
    }
    files.len()
}

macro_rules! target_tests {
    ($($name:ident),*) => {$(
        #[test]
        fn $name() {
            let name = stringify!($name);
            let n = replay("regressions", name) + replay("corpus", name);
            eprintln!("{name}: {n} inputs");
        }
    )*};
}

target_tests!(
    shell, hook, serve, mcp, config, origin, egress, skill, merge
);

#[test]
fn every_target_has_a_corpus() {
    for t in cordon_fuzz_props::TARGETS {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../corpus")
            .join(t);
        let n = std::fs::read_dir(&dir).map(|d| d.count()).unwrap_or(0);
        assert!(n > 0, "{t} has no committed corpus in {}", dir.display());
    }
}
