//! The floor: raw ChaCha20-Poly1305 (IETF) from every backend, and
//! netcode-proto's crypto seam over it (STANDARD.md "Packet encryption").

use std::hint::black_box;

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput};
use netcode_bench::fixtures::{PACKET_KEY, PAYLOAD_SIZES, payload};
use netcode_proto::Key;
use netcode_proto::crypto::{self, sequence_nonce};

/// The associated data of a payload packet: 22 bytes, as on the wire.
const AD: [u8; 22] = [7; 22];

pub(crate) fn aead(c: &mut Criterion) {
    use chacha20poly1305::aead::AeadInOut;
    use chacha20poly1305::{ChaCha20Poly1305, KeyInit};
    use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, Nonce, UnboundKey};

    let ring_key = || LessSafeKey::new(UnboundKey::new(&CHACHA20_POLY1305, &PACKET_KEY).unwrap());
    let nonce = sequence_nonce(1000);
    for (group_name, open) in [("aead_seal", false), ("aead_open", true)] {
        let mut group = c.benchmark_group(group_name);
        for size in PAYLOAD_SIZES {
            group.throughput(Throughput::Bytes(size as u64));
            // A valid ciphertext and tag to open, and the plaintext to seal.
            let plain = payload(size);
            let mut sealed = plain.clone();
            let tag = crypto::encrypt(&Key::from_bytes(PACKET_KEY), &nonce, &AD, &mut sealed);
            let input = if open { &sealed } else { &plain };

            group.bench_function(
                BenchmarkId::new("chacha20poly1305 (RustCrypto)", size),
                |b| {
                    b.iter_batched_ref(
                        || input.clone(),
                        |buffer| {
                            let cipher = ChaCha20Poly1305::new(&PACKET_KEY.into());
                            if open {
                                cipher
                                    .decrypt_inout_detached(
                                        &nonce.into(),
                                        &AD,
                                        buffer.as_mut_slice().into(),
                                        &tag.into(),
                                    )
                                    .unwrap();
                            } else {
                                black_box(
                                    cipher
                                        .encrypt_inout_detached(
                                            &nonce.into(),
                                            &AD,
                                            buffer.as_mut_slice().into(),
                                        )
                                        .unwrap(),
                                );
                            }
                        },
                        BatchSize::SmallInput,
                    )
                },
            );
            let prepared = ring_key();
            group.bench_function(BenchmarkId::new("ring (prepared key)", size), |b| {
                run(b, open, input, |buffer| {
                    let nonce = Nonce::assume_unique_for_key(nonce);
                    if open {
                        prepared
                            .open_in_place_separate_tag(
                                nonce,
                                Aad::from(&AD),
                                tag.into(),
                                buffer,
                                0..,
                            )
                            .unwrap();
                    } else {
                        let tag = prepared
                            .seal_in_place_separate_tag(nonce, Aad::from(&AD), buffer)
                            .unwrap();
                        black_box(tag.as_ref()[0]);
                    }
                })
            });
            group.bench_function(BenchmarkId::new("ring (key per call)", size), |b| {
                run(b, open, input, |buffer| {
                    let key = ring_key();
                    let nonce = Nonce::assume_unique_for_key(nonce);
                    if open {
                        key.open_in_place_separate_tag(
                            nonce,
                            Aad::from(&AD),
                            tag.into(),
                            buffer,
                            0..,
                        )
                        .unwrap();
                    } else {
                        let tag = key
                            .seal_in_place_separate_tag(nonce, Aad::from(&AD), buffer)
                            .unwrap();
                        black_box(tag.as_ref()[0]);
                    }
                })
            });
            let key = Key::from_bytes(PACKET_KEY);
            let seam = format!("netcode-rs crypto seam ({})", crypto::BACKEND);
            group.bench_function(BenchmarkId::new(seam, size), |b| {
                run(b, open, input, |buffer| {
                    if open {
                        crypto::decrypt(&key, &nonce, &AD, buffer, &tag).unwrap();
                    } else {
                        black_box(crypto::encrypt(&key, &nonce, &AD, buffer));
                    }
                })
            });
        }
        group.finish();
    }
}

/// Runs `f` on a buffer holding `input`: a fresh copy every time when
/// opening (a ciphertext opens once), one buffer over and over when sealing
/// (the cost does not depend on the bytes).
fn run(b: &mut criterion::Bencher<'_>, open: bool, input: &[u8], mut f: impl FnMut(&mut Vec<u8>)) {
    if open {
        b.iter_batched_ref(|| input.to_vec(), &mut f, BatchSize::SmallInput)
    } else {
        let mut buffer = input.to_vec();
        b.iter(|| f(&mut buffer))
    }
}
