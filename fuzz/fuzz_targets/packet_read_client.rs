//! Fuzz target `packet_read_client`: the body is `netcode_fuzz::targets::packet_read_client`
//! (`src/targets/packet_read_client.rs`, which describes the input).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| netcode_fuzz::targets::packet_read_client(data));
