//! Fuzz target `config`: the property is cordon_fuzz_props::config::check.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| cordon_fuzz_props::config::check(data));
