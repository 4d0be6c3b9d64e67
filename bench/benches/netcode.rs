//! netcode-proto against the raw AEADs (the floor) and the peers, in one run.
//!
//! `cargo bench -p netcode-bench` (fast `ring` backend for netcode-proto), or
//! `cargo bench -p netcode-bench --no-default-features` (portable backend).
//! Groups, each with one id per implementation:
//!
//! * `aead_seal` / `aead_open`: raw ChaCha20-Poly1305 at 100 and 1200 bytes,
//!   for every backend, and through netcode-proto's crypto seam;
//! * `payload_write` / `payload_read`: one payload packet, 100 and 1200 bytes;
//! * `token_generate`: a connect token with one address, to its 2048 bytes;
//! * `request_to_challenge`: a valid connection request handled by a server;
//! * `garbage_request`: a 1078-byte datagram of random bytes after a request
//!   prefix; `forged_request`: a request with a valid header and a random
//!   private token (it costs a decryption);
//! * `server_tick`: N connected clients each send one 100-byte payload; the
//!   server handles every datagram, then updates (keep-alives, timeouts);
//! * `handshake`: token to connected, both sides, in memory.

#[path = "peers.rs"]
mod peers;

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use netcode_bench::{
    Discard, EXPIRE_SECONDS, Last, PACKET_KEY, PRIVATE_KEY, PROTOCOL_ID, SERVER, TIMEOUT_SECONDS,
    UNIX_NOW, USER_DATA, client_address, connected, handshake, payload, request_bytes, server,
    token_bytes,
};
use netcode_proto::client::Client;
use netcode_proto::constants::{CONNECTION_REQUEST_BYTES, MAX_PACKET_BYTES};
use netcode_proto::crypto::{self, sequence_nonce};
use netcode_proto::packet::{Packet, PacketTypes, ReadContext, read_packet, write_packet};
use netcode_proto::seeded::SeededRng;
use netcode_proto::token::{ConnectTokenParams, generate_connect_token};
use netcode_proto::{Key, ReplayProtection};
use peers::{
    RENET_MAX_CLIENTS, official_token, renet_connect, renet_connected, renet_request, renet_server,
    renet_token,
};
use renetcode::ServerResult;

const SIZES: [usize; 2] = [100, 1200];
const OURS: &str = "netcode-rs";
const RENET: &str = "renetcode";
const OFFICIAL: &str = "netcode-official";
/// The associated data of a payload packet: 22 bytes, as on the wire.
const AD: [u8; 22] = [7; 22];

fn ours() -> String {
    format!("{OURS} ({})", crypto::BACKEND)
}

fn aead(c: &mut Criterion) {
    use chacha20poly1305::aead::AeadInOut;
    use chacha20poly1305::{ChaCha20Poly1305, KeyInit};
    use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, Nonce, UnboundKey};

    let ring_key = || LessSafeKey::new(UnboundKey::new(&CHACHA20_POLY1305, &PACKET_KEY).unwrap());
    let nonce = sequence_nonce(1000);
    for (group_name, open) in [("aead_seal", false), ("aead_open", true)] {
        let mut group = c.benchmark_group(group_name);
        for size in SIZES {
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

fn payload_write(c: &mut Criterion) {
    let mut group = c.benchmark_group("payload_write");
    let key = Key::from_bytes(PACKET_KEY);
    for size in SIZES {
        group.throughput(Throughput::Bytes(size as u64));
        let data = payload(size);
        group.bench_function(
            BenchmarkId::new(format!("{} write_packet", ours()), size),
            |b| {
                let mut out = [0u8; MAX_PACKET_BYTES];
                let mut sequence = 1000u64;
                b.iter(|| {
                    sequence += 1;
                    black_box(
                        write_packet(
                            &Packet::Payload(&data),
                            sequence,
                            &key,
                            PROTOCOL_ID,
                            &mut out,
                        )
                        .unwrap(),
                    )
                })
            },
        );
        group.bench_function(
            BenchmarkId::new(format!("{} Client::send_payload", ours()), size),
            |b| {
                let mut pair = connected(1, 1);
                let mut out = Last::default();
                let now = pair.now;
                let client = &mut pair.clients[0];
                b.iter(|| black_box(client.send_payload(now, &data, &mut out).unwrap()))
            },
        );
        group.bench_function(
            BenchmarkId::new(
                format!("{RENET} NetcodeClient::generate_payload_packet"),
                size,
            ),
            |b| {
                let (_server, mut clients) = renet_connected(1);
                let client = &mut clients[0];
                b.iter(|| black_box(client.generate_payload_packet(&data).unwrap().1.len()))
            },
        );
    }
    group.finish();
}

fn payload_read(c: &mut Criterion) {
    let mut group = c.benchmark_group("payload_read");
    let key = Key::from_bytes(PACKET_KEY);
    for size in SIZES {
        group.throughput(Throughput::Bytes(size as u64));
        let data = payload(size);
        group.bench_function(
            BenchmarkId::new(format!("{} read_packet", ours()), size),
            |b| {
                let context = ReadContext {
                    protocol_id: PROTOCOL_ID,
                    current_timestamp: UNIX_NOW,
                    min_expire_timestamp: 0,
                    private_key: None,
                    read_key: Some(&key),
                    accepted: PacketTypes::SERVER,
                };
                let mut replay = ReplayProtection::new();
                let mut sequence = 1000u64;
                b.iter_batched_ref(
                    || {
                        sequence += 1;
                        let mut packet = [0u8; MAX_PACKET_BYTES];
                        let n = write_packet(
                            &Packet::Payload(&data),
                            sequence,
                            &key,
                            PROTOCOL_ID,
                            &mut packet,
                        )
                        .unwrap();
                        (packet, n)
                    },
                    |(packet, n)| {
                        let read =
                            read_packet(&context, &mut packet[..*n], Some(&mut replay)).unwrap();
                        black_box(read.sequence);
                    },
                    BatchSize::SmallInput,
                )
            },
        );
        group.bench_function(
            BenchmarkId::new(format!("{} Server::handle", ours()), size),
            |b| {
                let mut pair = connected(1, 2);
                let now = pair.now;
                let address = client_address(0);
                let mut out = Discard::default();
                let (server, client) = (&mut pair.server, &mut pair.clients[0]);
                b.iter_batched_ref(
                    || {
                        let mut sent = Last::default();
                        let _ = client.send_payload(now, &data, &mut sent);
                        sent.take()
                    },
                    |(packet, n)| {
                        let received = server.handle(now, address, &mut packet[..*n], &mut out);
                        assert!(received.is_some());
                    },
                    BatchSize::SmallInput,
                )
            },
        );
        group.bench_function(
            BenchmarkId::new(format!("{RENET} NetcodeServer::process_packet"), size),
            |b| {
                let (mut server, mut clients) = renet_connected(1);
                let client = &mut clients[0];
                let address = client_address(0);
                b.iter_batched_ref(
                    || client.generate_payload_packet(&data).unwrap().1.to_vec(),
                    |packet| match server.process_packet(address, packet) {
                        ServerResult::Payload { payload, .. } => {
                            black_box(payload.len());
                        }
                        _ => panic!("renetcode did not read the payload"),
                    },
                    BatchSize::SmallInput,
                )
            },
        );
    }
    group.finish();
}

fn token_generate(c: &mut Criterion) {
    let mut group = c.benchmark_group("token_generate");
    let key = Key::from_bytes(PRIVATE_KEY);
    let params = ConnectTokenParams {
        protocol_id: PROTOCOL_ID,
        private_key: &key,
        client_id: 42,
        public_addresses: &[SERVER],
        internal_addresses: None,
        create_timestamp: UNIX_NOW,
        expire_seconds: EXPIRE_SECONDS as i64,
        timeout_seconds: TIMEOUT_SECONDS,
        user_data: &USER_DATA,
    };
    // The peers draw their randomness from the OS, so ours does too here.
    group.bench_function(format!("{} (OS randomness)", ours()), |b| {
        let mut rng = getrandom::rand_core::UnwrapErr(getrandom::SysRng);
        b.iter(|| {
            black_box(
                generate_connect_token(&params, &mut rng)
                    .unwrap()
                    .write()
                    .unwrap(),
            )
        })
    });
    group.bench_function(format!("{} (seeded ChaCha20 randomness)", ours()), |b| {
        let mut rng = SeededRng::new(3);
        b.iter(|| {
            black_box(
                generate_connect_token(&params, &mut rng)
                    .unwrap()
                    .write()
                    .unwrap(),
            )
        })
    });
    group.bench_function(RENET, |b| {
        b.iter(|| {
            let token = renet_token(42);
            let mut bytes = [0u8; 2048];
            token.write(&mut bytes.as_mut_slice()).unwrap();
            black_box(bytes)
        })
    });
    group.bench_function(OFFICIAL, |b| b.iter(|| black_box(official_token(42))));
    group.finish();
}

/// Requests per server start: well under the mapping table (4 per slot) and
/// token history (8 per slot) of a 256-slot server.
const CHUNK: usize = 500;

fn request_to_challenge(c: &mut Criterion) {
    let mut group = c.benchmark_group("request_to_challenge");
    group.bench_function(ours(), |b| {
        let mut rng = SeededRng::new(4);
        let mut server = server(256, &mut rng);
        let tokens: Vec<_> = (0..CHUNK as u64)
            .map(|i| token_bytes(i + 1, &mut rng))
            .collect();
        let requests: Vec<_> = tokens.iter().map(request_bytes).collect();
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            let mut left = iters as usize;
            while left > 0 {
                let k = left.min(CHUNK);
                left -= k;
                server
                    .start(
                        Duration::ZERO,
                        UNIX_NOW,
                        256,
                        &mut rng,
                        &mut Discard::default(),
                    )
                    .unwrap();
                let mut batch = requests[..k].to_vec();
                let mut out = Discard::default();
                let start = Instant::now();
                for (i, (request, n)) in batch.iter_mut().enumerate() {
                    server.handle(
                        Duration::ZERO,
                        client_address(i),
                        &mut request[..*n],
                        &mut out,
                    );
                }
                total += start.elapsed();
                assert_eq!(out.sent, k, "one challenge per request");
            }
            total
        })
    });
    group.bench_function(RENET, |b| {
        let requests: Vec<_> = (0..CHUNK as u64)
            .map(|i| renet_request(renet_token(i + 1)))
            .collect();
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            let mut left = iters as usize;
            while left > 0 {
                let k = left.min(CHUNK);
                left -= k;
                let mut server = renet_server(256);
                let mut batch = requests[..k].to_vec();
                let mut challenges = 0;
                let start = Instant::now();
                for (i, request) in batch.iter_mut().enumerate() {
                    if let ServerResult::PacketToSend { payload, .. } =
                        server.process_packet(client_address(i), request)
                    {
                        black_box(payload);
                        challenges += 1;
                    }
                }
                total += start.elapsed();
                assert_eq!(challenges, k, "one challenge per request");
            }
            total
        })
    });
    group.finish();
}

fn garbage_request(c: &mut Criterion) {
    // A request-sized datagram of random bytes behind a request prefix.
    let mut rng = SeededRng::new(5);
    let mut garbage = [0u8; CONNECTION_REQUEST_BYTES];
    rand_fill(&mut rng, &mut garbage);
    garbage[0] = 0;
    // A real request whose sealed private token is replaced by random bytes.
    let (mut forged, n) = request_bytes(&token_bytes(9, &mut rng));
    assert_eq!(n, CONNECTION_REQUEST_BYTES);
    rand_fill(&mut rng, &mut forged[CONNECTION_REQUEST_BYTES - 1024..n]);
    let mut renet_forged = renet_request(renet_token(9));
    rand_fill(
        &mut rng,
        &mut renet_forged[CONNECTION_REQUEST_BYTES - 1024..],
    );

    for (name, ours_bytes, renet_bytes) in [
        ("garbage_request", garbage.to_vec(), garbage.to_vec()),
        ("forged_request", forged[..n].to_vec(), renet_forged),
    ] {
        let mut group = c.benchmark_group(name);
        group.bench_function(ours(), |b| {
            let mut server = server(256, &mut SeededRng::new(6));
            let mut out = Discard::default();
            let address = client_address(1);
            // A rejected request leaves the buffer as it was: no copy needed.
            let mut datagram = ours_bytes.clone();
            b.iter(|| {
                let result = server.handle(Duration::ZERO, address, &mut datagram, &mut out);
                black_box(result.is_some())
            });
            assert_eq!(out.sent, 0);
        });
        group.bench_function(RENET, |b| {
            let mut server = renet_server(256);
            let address = client_address(1);
            let mut datagram = renet_bytes.clone();
            b.iter(|| {
                if let ServerResult::PacketToSend { .. } =
                    server.process_packet(address, &mut datagram)
                {
                    panic!("renetcode answered garbage");
                }
            });
        });
        group.finish();
    }
}

fn rand_fill(rng: &mut SeededRng, bytes: &mut [u8]) {
    getrandom::rand_core::Rng::fill_bytes(rng, bytes);
}

const TICK_SIZES: [usize; 5] = [16, 64, 256, 1024, 4096];
const TICK: Duration = Duration::from_micros(16_667);

fn server_tick(c: &mut Criterion) {
    let mut group = c.benchmark_group("server_tick");
    group.sample_size(20);
    let data = payload(100);
    for n in TICK_SIZES {
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(BenchmarkId::new(ours(), n), |b| {
            let mut pair = connected(n, 7);
            let mut now = pair.now;
            let mut datagrams = vec![([0u8; 160], 0usize); n];
            let mut out = Discard::default();
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    now += TICK;
                    for (client, (bytes, len)) in pair.clients.iter_mut().zip(&mut datagrams) {
                        let mut sent = Last::default();
                        let _ = client.send_payload(now, &data, &mut sent);
                        bytes[..sent.len].copy_from_slice(&sent.bytes[..sent.len]);
                        *len = sent.len;
                    }
                    let mut received = 0;
                    let start = Instant::now();
                    for (i, (bytes, len)) in datagrams.iter_mut().enumerate() {
                        if pair
                            .server
                            .handle(now, client_address(i), &mut bytes[..*len], &mut out)
                            .is_some()
                        {
                            received += 1;
                        }
                    }
                    pair.server.update(now, UNIX_NOW, &mut out);
                    total += start.elapsed();
                    assert_eq!(received, n);
                }
                total
            })
        });
        if n > RENET_MAX_CLIENTS {
            continue;
        }
        group.bench_function(BenchmarkId::new(RENET, n), |b| {
            let (mut server, mut clients) = renet_connected(n);
            let ids: Vec<u64> = (1..=n as u64).collect();
            let mut datagrams = vec![([0u8; 160], 0usize); n];
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    // Clients are not updated (as ours are not): a payload needs
                    // no update, and their clocks stay inside the timeout.
                    for (client, (bytes, len)) in clients.iter_mut().zip(&mut datagrams) {
                        let (_, packet) = client.generate_payload_packet(&data).unwrap();
                        bytes[..packet.len()].copy_from_slice(packet);
                        *len = packet.len();
                    }
                    let mut received = 0;
                    let start = Instant::now();
                    for (i, (bytes, len)) in datagrams.iter_mut().enumerate() {
                        if let ServerResult::Payload { .. } =
                            server.process_packet(client_address(i), &mut bytes[..*len])
                        {
                            received += 1;
                        }
                    }
                    server.update(TICK);
                    for &id in &ids {
                        if let ServerResult::PacketToSend { payload, .. } = server.update_client(id)
                        {
                            black_box(payload);
                        }
                    }
                    total += start.elapsed();
                    assert_eq!(received, n);
                }
                total
            })
        });
    }
    group.finish();
}

fn handshake_bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("handshake");
    const SLOTS: usize = 256;
    group.bench_function(ours(), |b| {
        let mut rng = SeededRng::new(8);
        let mut server = server(SLOTS, &mut rng);
        let tokens: Vec<_> = (0..SLOTS as u64)
            .map(|i| token_bytes(i + 1, &mut rng))
            .collect();
        let (mut to_server, mut to_client) = (Last::default(), Last::default());
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            let mut left = iters as usize;
            while left > 0 {
                let k = left.min(SLOTS);
                left -= k;
                server
                    .start(
                        Duration::ZERO,
                        UNIX_NOW,
                        SLOTS,
                        &mut rng,
                        &mut Discard::default(),
                    )
                    .unwrap();
                let mut clients: Vec<Client> = (0..k).map(|_| Client::new()).collect();
                let start = Instant::now();
                for (i, client) in clients.iter_mut().enumerate() {
                    let now = Duration::from_millis(101 * i as u64);
                    handshake(
                        &mut server,
                        client,
                        client_address(i),
                        &tokens[i],
                        now,
                        &mut to_server,
                        &mut to_client,
                    );
                }
                total += start.elapsed();
                assert_eq!(server.num_connected_clients(), k);
            }
            total
        })
    });
    group.bench_function(RENET, |b| {
        let tokens: Vec<_> = (0..SLOTS as u64).map(|i| renet_token(i + 1)).collect();
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            let mut left = iters as usize;
            while left > 0 {
                let k = left.min(SLOTS);
                left -= k;
                let mut server = renet_server(SLOTS);
                let batch = tokens[..k].to_vec();
                let start = Instant::now();
                for (i, token) in batch.into_iter().enumerate() {
                    black_box(renet_connect(&mut server, token, client_address(i)));
                }
                total += start.elapsed();
                assert_eq!(server.connected_clients(), k);
            }
            total
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = aead, payload_write, payload_read, token_generate, request_to_challenge,
        garbage_request, server_tick, handshake_bench
}
criterion_main!(benches);
