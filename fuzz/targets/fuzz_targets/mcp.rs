//! Fuzz target `mcp`: the property is cordon_fuzz_props::mcp::check.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| cordon_fuzz_props::mcp::check(data));
