//! Fuzz target `host`: the body is `netcode_fuzz::targets::host`
//! (`src/targets/host.rs`, which describes the input).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| netcode_fuzz::targets::host(data));
