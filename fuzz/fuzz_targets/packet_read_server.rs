//! Fuzz target `packet_read_server`: the body is `netcode_fuzz::targets::packet_read_server`
//! (`src/targets/packet_read_server.rs`, which describes the input).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| netcode_fuzz::targets::packet_read_server(data));
