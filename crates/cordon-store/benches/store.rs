//! Store and audit benchmarks (filled in below).
fn main() {}
