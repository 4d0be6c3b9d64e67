//! Fixtures for scenario tests: the C reference's test private key and
//! protocol id, the unix time a [`World`](super::World) starts at, one frame
//! of the reference's test loops, its lossy network, and the user data and
//! payloads tests recognise.

use alloc::vec::Vec;
use core::time::Duration;

use super::SimConfig;
use crate::constants::USER_DATA_BYTES;

/// The protocol id of the reference's tests.
pub const PROTOCOL_ID: u64 = 0x1122_3344_5566_7788;

/// The private key of the reference's tests, shared by the "web backend"
/// that makes tokens and the servers.
pub const PRIVATE_KEY: [u8; 32] = [
    0x60, 0x6a, 0xbe, 0x6e, 0xc9, 0x19, 0x10, 0xea, 0x9a, 0x65, 0x62, 0xf6, 0x6f, 0x2b, 0x30, 0xe4,
    0x43, 0x71, 0xd6, 0x2c, 0xd1, 0x99, 0x27, 0x26, 0x6b, 0x3c, 0x60, 0xf4, 0xb7, 0x15, 0xab, 0xa1,
];

/// Unix time at the start of every world.
pub const UNIX_START: u64 = 1_800_000_000;

/// One frame of the reference's tests: 100 ms.
pub const FRAME: Duration = Duration::from_millis(100);

/// The user data in the tokens of `client_id`: recognisable per client.
pub fn user_data_for(client_id: u64) -> [u8; USER_DATA_BYTES] {
    core::array::from_fn(|i| (client_id as usize).wrapping_mul(31).wrapping_add(i) as u8)
}

/// A payload of `len` bytes whose byte `i` is `(i + salt) % 256`.
pub fn pattern(len: usize, salt: usize) -> Vec<u8> {
    (0..len).map(|i| ((i + salt) % 256) as u8).collect()
}

/// The reference tests' lossy network: 250 ms latency, 250 ms jitter, 5 %
/// loss, 10 % duplicates.
pub fn lossy() -> SimConfig {
    SimConfig {
        latency: Duration::from_millis(250),
        jitter: Duration::from_millis(250),
        loss_percent: 5.0,
        duplicate_percent: 10.0,
        ..SimConfig::default()
    }
}

/// A perfect network: no latency, loss or duplicates.
pub fn perfect() -> SimConfig {
    SimConfig::default()
}
