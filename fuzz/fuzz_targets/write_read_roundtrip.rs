//! Fuzz target `write_read_roundtrip`: the body is `netcode_fuzz::targets::write_read_roundtrip`
//! (`src/targets/write_read_roundtrip.rs`, which describes the input).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| netcode_fuzz::targets::write_read_roundtrip(data));
