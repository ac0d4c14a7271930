//! Link flags for the static release build.
//!
//! A static PIE (`-C target-feature=+crt-static`, what `CORDON_PIE=1
//! scripts/build-release.sh` builds) relocates itself at every start: about 30,000
//! pointers. Packed relative relocations
//! (`DT_RELR`, glibc 2.36 and binutils 2.38 or later) shrink the table that start-up
//! reads from about 700 KiB to a few KiB; the pointers and the protection of the
//! relocated pages stay the same. Dynamically linked builds are left alone, so that they
//! keep running on an older glibc's loader. The default release build is not position
//! independent and has nothing to relocate; the flag is harmless there.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let features = std::env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" && features.split(',').any(|f| f == "crt-static") {
        println!("cargo::rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
