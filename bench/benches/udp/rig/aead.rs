//! The AEAD part of one echo (`netcode_bench::seal_open`: one open and one
//! seal of a 100-byte payload packet body, timed as this thread's CPU),
//! through netcode-proto's crypto functions on the backend the build
//! compiled in, and through the RustCrypto crate the peers are built on,
//! beside it for reference.

use chacha20poly1305::aead::AeadInOut;
use chacha20poly1305::{ChaCha20Poly1305, KeyInit};
use netcode_bench::fixtures::PACKET_KEY;
use netcode_bench::seal_open::{associated_data, micros_per_pair, ours_micros_per_pair};
use netcode_proto::crypto::{self, sequence_nonce};

use super::kinds::PAYLOAD_BYTES;

/// Pairs untimed before the timed ones.
const WARM_UP_ITERATIONS: u64 = 10_000;

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
    let ad = associated_data();
    let rustcrypto = |sequence: u64, buffer: &mut [u8]| {
        let nonce = sequence_nonce(sequence);
        let cipher = ChaCha20Poly1305::new(&PACKET_KEY.into());
        let tag = cipher
            .encrypt_inout_detached(&nonce.into(), &ad, buffer.into())
            .unwrap_or_else(|_| unreachable!("100 bytes seal"));
        let cipher = ChaCha20Poly1305::new(&PACKET_KEY.into());
        cipher
            .decrypt_inout_detached(
                &nonce.into(),
                &ad,
                buffer.into(),
                std::hint::black_box(&tag),
            )
            .unwrap_or_else(|_| unreachable!("a sealed buffer opens"));
    };
    Some(AeadCost {
        ours_us: ours_micros_per_pair(WARM_UP_ITERATIONS, iterations, PAYLOAD_BYTES)?,
        rustcrypto_us: micros_per_pair(WARM_UP_ITERATIONS, iterations, PAYLOAD_BYTES, rustcrypto)?,
    })
}
