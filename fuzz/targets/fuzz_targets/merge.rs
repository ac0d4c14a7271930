//! Fuzz target `merge`: the property is cordon_fuzz_props::merge::check.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| cordon_fuzz_props::merge::check(data));
