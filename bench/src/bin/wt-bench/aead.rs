//! `wt-bench aead`: the AEAD part of one echo, in this process: one seal
//! and one open of a 100-byte payload packet body with IETF
//! ChaCha20-Poly1305 under the packet's associated data and sequence nonce
//! (STANDARD.md, "Encrypted packets"), through netcode-proto's own
//! `crypto::encrypt` / `crypto::decrypt` on the backend the build compiled
//! in (`crypto::BACKEND`: ring by default), as the server does for every
//! payload it echoes (it opens the client's packet and seals its own).
//! Timed as this thread's time on a CPU (`schedstat`) over `--iterations`
//! pairs after a warm-up: the same way as the UDP bench's AEAD row
//! (`benches/udp/rig/aead.rs`).

use std::hint::black_box;

use netcode_bench::cli::Options;
use netcode_bench::{PACKET_KEY, PROTOCOL_ID, payload};
use netcode_proto::PacketType;
use netcode_proto::crypto::{self, Key, sequence_nonce};
use netcode_proto::packet::{packet_associated_data, sequence_bytes};

use crate::cpu;
use crate::options::{ResultLine, load1};

/// Pairs run untimed first.
const WARM_UP: u64 = 20_000;
/// The first sequence: two sequence bytes, as most packets of a run have.
const FIRST_SEQUENCE: u64 = 1000;

pub(crate) fn run(mut options: Options) -> Result<(), String> {
    let round: u32 = options.get("round", 1)?;
    let iterations: u64 = options.get("iterations", 2_000_000)?;
    let bytes: usize = options.get("payload", 100)?;
    options.finish()?;
    let load_before = load1();
    let prefix = (sequence_bytes(FIRST_SEQUENCE) as u8) << 4 | PacketType::Payload as u8;
    let ad = packet_associated_data(PROTOCOL_ID, prefix);
    let key = Key::from_bytes(PACKET_KEY);
    let mut buffer = payload(bytes);
    let pair = |sequence: u64, buffer: &mut [u8]| {
        let nonce = sequence_nonce(sequence);
        let tag = crypto::encrypt(&key, &nonce, &ad, buffer);
        crypto::decrypt(&key, &nonce, &ad, buffer, black_box(&tag))
            .unwrap_or_else(|_| unreachable!("a sealed buffer opens"));
    };
    for i in 0..WARM_UP {
        pair(FIRST_SEQUENCE + i, black_box(&mut buffer));
    }
    let start = cpu::this_thread()?;
    for i in 0..iterations {
        pair(FIRST_SEQUENCE + i, black_box(&mut buffer));
    }
    let seconds = cpu::this_thread()? - start;
    ResultLine::new(round, "aead", 0)
        .field("backend", crypto::BACKEND)
        .field("bytes", bytes)
        .field("iterations", iterations)
        .float("us", seconds * 1e6 / iterations.max(1) as f64, 4)
        .field("load_before", load_before)
        .field("load_after", load1())
        .print();
    Ok(())
}
