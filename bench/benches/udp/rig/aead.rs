//! The AEAD part of one echo, measured in-process: one open and one seal of
//! a 100-byte payload packet body with IETF ChaCha20-Poly1305 under the
//! packet's associated data and sequence nonce (STANDARD.md, "Encrypted
//! packets"), as a server does for every payload it echoes. Timed as the
//! calling thread's time on a CPU (`schedstat`) over many iterations.
//!
//! Ours goes through netcode-proto's own `crypto::encrypt` / `decrypt`, on
//! the backend the build compiled in (`crypto::BACKEND`); the RustCrypto
//! crate the peers are built on is measured beside it for reference.

use std::hint::black_box;

use chacha20poly1305::aead::AeadInOut;
use chacha20poly1305::{ChaCha20Poly1305, KeyInit};
use netcode_bench::{PACKET_KEY, PROTOCOL_ID, payload};
use netcode_proto::PacketType;
use netcode_proto::crypto::{self, Key, sequence_nonce};
use netcode_proto::packet::{packet_associated_data, sequence_bytes};

use super::PAYLOAD_BYTES;
use super::cpu::ThreadCpu;

/// Iterations untimed before the timed ones.
const WARM_UP_ITERATIONS: u64 = 10_000;

/// The first sequence of the measured packets: two sequence bytes, as most
/// packets of a run have.
const FIRST_SEQUENCE: u64 = 1000;

/// The CPU time of one open and one seal of a 100-byte payload.
#[derive(Clone, Copy, Debug)]
pub struct AeadCost {
    /// Ours, through netcode-proto's crypto functions, in microseconds.
    pub ours_us: f64,
    /// The RustCrypto `chacha20poly1305` crate, in microseconds.
    pub rustcrypto_us: f64,
}

impl AeadCost {
    /// The backend netcode-proto was built with: `ring` or `rustcrypto`.
    pub fn backend() -> &'static str {
        crypto::BACKEND
    }
}

/// Measures both over `iterations` pairs each, on this thread; `None` where
/// the OS gives no thread CPU time.
pub fn aead_cost(iterations: u64) -> Option<AeadCost> {
    let cpu = ThreadCpu::this_thread()?;
    let prefix = (sequence_bytes(FIRST_SEQUENCE) as u8) << 4 | PacketType::Payload as u8;
    let ad = packet_associated_data(PROTOCOL_ID, prefix);
    let mut buffer = payload(PAYLOAD_BYTES);
    let key = Key::from_bytes(PACKET_KEY);
    let ours = |sequence: u64, buffer: &mut [u8]| {
        let nonce = sequence_nonce(sequence);
        let tag = crypto::encrypt(&key, &nonce, &ad, buffer);
        crypto::decrypt(&key, &nonce, &ad, buffer, black_box(&tag))
            .unwrap_or_else(|_| unreachable!("a sealed buffer opens"));
    };
    let rustcrypto = |sequence: u64, buffer: &mut [u8]| {
        let nonce = sequence_nonce(sequence);
        let cipher = ChaCha20Poly1305::new(&PACKET_KEY.into());
        let tag = cipher
            .encrypt_inout_detached(&nonce.into(), &ad, buffer.into())
            .unwrap_or_else(|_| unreachable!("100 bytes seal"));
        let cipher = ChaCha20Poly1305::new(&PACKET_KEY.into());
        cipher
            .decrypt_inout_detached(&nonce.into(), &ad, buffer.into(), black_box(&tag))
            .unwrap_or_else(|_| unreachable!("a sealed buffer opens"));
    };
    Some(AeadCost {
        ours_us: time_pairs(&cpu, iterations, &mut buffer, ours)?,
        rustcrypto_us: time_pairs(&cpu, iterations, &mut buffer, rustcrypto)?,
    })
}

/// Microseconds of CPU per call of `pair`, over `iterations` calls after a
/// warm-up.
fn time_pairs(
    cpu: &ThreadCpu,
    iterations: u64,
    buffer: &mut [u8],
    pair: impl Fn(u64, &mut [u8]),
) -> Option<f64> {
    for i in 0..WARM_UP_ITERATIONS {
        pair(FIRST_SEQUENCE + i, black_box(&mut *buffer));
    }
    let start = cpu.read()?;
    for i in 0..iterations {
        pair(FIRST_SEQUENCE + i, black_box(&mut *buffer));
    }
    let stop = cpu.read()?;
    Some((stop.seconds - start.seconds) * 1e6 / iterations.max(1) as f64)
}
