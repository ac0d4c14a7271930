//! cordon-sandbox: Linux containment (placeholder until the containment issue lands).

/// argv\[1\] that makes the `cordon` binary act as the sandbox helper.
pub const HELPER_ARG: &str = "__cordon-sandbox-helper";

/// Entry point of the re-executed sandbox helper.
pub fn helper_main() -> ! {
    eprintln!("cordon: the sandbox helper is not available in this build");
    std::process::exit(125)
}
