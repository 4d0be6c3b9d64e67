//! Fuzz target `connect_token_read`: the body is `netcode_fuzz::targets::connect_token_read`
//! (`src/targets/connect_token_read.rs`, which describes the input).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| netcode_fuzz::targets::connect_token_read(data));
