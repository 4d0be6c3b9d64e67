//! The AEAD part of one echo, measured in-process: one seal and one open
//! of a payload packet body with IETF ChaCha20-Poly1305 under the payload
//! packet's associated data and sequence nonce (STANDARD.md, "Encrypted
//! packets"), as a server does for every payload it echoes (it opens the
//! client's packet and seals its own). Timed as the calling thread's time
//! on a CPU (`schedstat`) over many pairs after untimed ones.
//!
//! Ours goes through netcode-proto's own `crypto::encrypt` / `decrypt`, on
//! the backend the build compiled in (`crypto::BACKEND`); [`micros_per_pair`]
//! times any other implementation the same way (the UDP bench's RustCrypto
//! row). The UDP bench (`benches/udp/rig/aead.rs`) and `wt-bench aead` both
//! report this figure.

use std::hint::black_box;

use netcode_proto::PacketType;
use netcode_proto::crypto::{self, Key, sequence_nonce};
use netcode_proto::packet::{packet_associated_data, sequence_bytes};

use crate::fixtures::{PACKET_KEY, PROTOCOL_ID, payload};
use crate::machine::ThreadCpu;

/// The first sequence of the measured packets: two sequence bytes, as most
/// packets of a run have.
pub const FIRST_SEQUENCE: u64 = 1000;

/// The associated data of a payload packet at [`FIRST_SEQUENCE`].
pub fn associated_data() -> [u8; 22] {
    let prefix = (sequence_bytes(FIRST_SEQUENCE) as u8) << 4 | PacketType::Payload as u8;
    packet_associated_data(PROTOCOL_ID, prefix)
}

/// Microseconds of this thread's CPU per seal and open of `bytes` through
/// netcode-proto's crypto functions; `None` where the OS gives no thread
/// CPU time.
pub fn ours_micros_per_pair(warm_up: u64, iterations: u64, bytes: usize) -> Option<f64> {
    let key = Key::from_bytes(PACKET_KEY);
    let ad = associated_data();
    micros_per_pair(warm_up, iterations, bytes, |sequence, buffer| {
        let nonce = sequence_nonce(sequence);
        let tag = crypto::encrypt(&key, &nonce, &ad, buffer);
        crypto::decrypt(&key, &nonce, &ad, buffer, black_box(&tag))
            .unwrap_or_else(|_| unreachable!("a sealed buffer opens"));
    })
}

/// Microseconds of this thread's CPU per call of `pair` (given the
/// sequence and a buffer of `bytes` of payload), over `iterations` calls
/// after `warm_up` untimed ones; `None` where the OS gives no thread CPU
/// time.
pub fn micros_per_pair(
    warm_up: u64,
    iterations: u64,
    bytes: usize,
    pair: impl Fn(u64, &mut [u8]),
) -> Option<f64> {
    let cpu = ThreadCpu::this_thread()?;
    let mut buffer = payload(bytes);
    for i in 0..warm_up {
        pair(FIRST_SEQUENCE + i, black_box(&mut buffer));
    }
    let start = cpu.read()?;
    for i in 0..iterations {
        pair(FIRST_SEQUENCE + i, black_box(&mut buffer));
    }
    let stop = cpu.read()?;
    Some((stop.seconds - start.seconds) * 1e6 / iterations.max(1) as f64)
}
