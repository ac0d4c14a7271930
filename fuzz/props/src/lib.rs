//! The properties cordon's fuzz targets check, one module per target.
//!
//! Each `check(data)` takes the fuzzer's bytes and panics when a property fails: that is
//! how libFuzzer (`fuzz/targets`, built by `scripts/fuzz.sh`) sees a finding. The same
//! functions run in the ordinary `cargo test` over every committed corpus file and crash
//! reproducer (`fuzz/corpus/TARGET`, `fuzz/regressions/TARGET`: see `tests/replay.rs`),
//! so a finding stays fixed.
// A property that fails must stop the run loudly: panicking is this crate's job.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

pub mod config;
pub mod egress;
pub mod hook;
pub mod mcp;
pub mod merge;
pub mod origin;
pub mod scratch;
pub mod serve;
pub mod shell;
pub mod skill;

/// Every target, by the name `scripts/fuzz.sh` and the corpus folders use.
pub const TARGETS: [&str; 9] = [
    "shell", "hook", "serve", "mcp", "config", "origin", "egress", "skill", "merge",
];

/// Run the property of target `name` on `data`; false for an unknown name.
pub fn run(name: &str, data: &[u8]) -> bool {
    match name {
        "shell" => shell::check(data),
        "hook" => hook::check(data),
        "serve" => serve::check(data),
        "mcp" => mcp::check(data),
        "config" => config::check(data),
        "origin" => origin::check(data),
        "egress" => egress::check(data),
        "skill" => skill::check(data),
        "merge" => merge::check(data),
        _ => return false,
    }
    true
}

/// Restore the default panic hook once. libFuzzer's wrapper installs one that aborts on
/// every panic, caught or not; cordon catches some panics on purpose (the shell
/// parser's, reported as a parse error), and an uncaught panic still aborts the fuzzer
/// because the wrapper checks for it.
pub fn quiet_caught_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = std::panic::take_hook();
    });
}

/// The bytes as text, lossily (targets that take text).
pub fn text(data: &[u8]) -> String {
    String::from_utf8_lossy(data).into_owned()
}
