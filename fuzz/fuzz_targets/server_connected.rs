//! Fuzz target `server_connected`: the body is `netcode_fuzz::targets::server_connected`
//! (`src/targets/server_connected.rs`, which describes the input).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| netcode_fuzz::targets::server_connected(data));
