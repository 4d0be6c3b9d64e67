//! The golden vectors' keys and protocol id (`vectors/data/manifest.json`),
//! for the wire-level targets: their corpus seeds are the vectors' packets
//! and tokens, which open only under these keys. The session targets use
//! the core's scenario fixtures (`netcode_proto::sim::fixtures`) instead.

/// The protocol id of every golden vector.
pub const PROTOCOL_ID: u64 = 0x1122_3344_5566_7788;

/// `byte[i] = (mul * i + add) mod 256`: how the manifest's named keys are made.
const fn pattern_key(mul: usize, add: usize) -> [u8; 32] {
    let mut key = [0u8; 32];
    let mut i = 0;
    while i < 32 {
        key[i] = ((mul * i + add) % 256) as u8;
        i += 1;
    }
    key
}

/// The vectors' `private_key`: seals every private connect token.
pub const PRIVATE_KEY: [u8; 32] = pattern_key(11, 3);
/// The vectors' `packet_key`: encrypts every packet of types 1 to 6.
pub const PACKET_KEY: [u8; 32] = pattern_key(7, 1);
/// The vectors' `challenge_key`: seals every challenge token.
pub const CHALLENGE_KEY: [u8; 32] = pattern_key(13, 5);
