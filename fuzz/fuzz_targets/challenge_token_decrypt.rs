//! Fuzz target `challenge_token_decrypt`: the body is `netcode_fuzz::targets::challenge_token_decrypt`
//! (`src/targets/challenge_token_decrypt.rs`, which describes the input).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| netcode_fuzz::targets::challenge_token_decrypt(data));
