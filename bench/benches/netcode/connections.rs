//! Connect tokens, connection requests (valid, garbage, forged) and whole
//! handshakes, against the peers (STANDARD.md "Connect token",
//! "Connection request packet", "Server-side connection process").

use std::hint::black_box;
use std::time::Instant;

use criterion::Criterion;
use netcode_bench::count::in_batches;
use netcode_bench::fixtures::{
    Discard, Last, PRIVATE_KEY, client_address, garbage_request as garbage_bytes, handshake,
    rand_fill, request_bytes, restart, server, token_bytes, token_params,
};
use netcode_bench::labels::{NETCODE_OFFICIAL, RENETCODE, ours};
use netcode_bench::peers::{
    official_token, renet_connect, renet_request, renet_server, renet_token,
};
use netcode_proto::Key;
use netcode_proto::client::Client;
use netcode_proto::constants::CONNECTION_REQUEST_BYTES;
use netcode_proto::seeded::SeededRng;
use netcode_proto::token::generate_connect_token;
use renetcode::ServerResult;

pub(crate) fn token_generate(c: &mut Criterion) {
    let mut group = c.benchmark_group("token_generate");
    let key = Key::from_bytes(PRIVATE_KEY);
    let params = token_params(&key, 42);
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
    group.bench_function(RENETCODE, |b| {
        b.iter(|| {
            let token = renet_token(42);
            let mut bytes = [0u8; 2048];
            token.write(&mut bytes.as_mut_slice()).unwrap();
            black_box(bytes)
        })
    });
    group.bench_function(NETCODE_OFFICIAL, |b| {
        b.iter(|| black_box(official_token(42)))
    });
    group.finish();
}

/// Requests per server start: well under the mapping table (4 per slot) and
/// token history (8 per slot) of a 256-slot server.
const CHUNK: usize = 500;

pub(crate) fn request_to_challenge(c: &mut Criterion) {
    let mut group = c.benchmark_group("request_to_challenge");
    group.bench_function(ours(), |b| {
        let mut rng = SeededRng::new(4);
        let mut server = server(256, &mut rng);
        let tokens: Vec<_> = (0..CHUNK as u64)
            .map(|i| token_bytes(i + 1, &mut rng))
            .collect();
        let requests: Vec<_> = tokens.iter().map(request_bytes).collect();
        b.iter_custom(|iters| {
            in_batches(iters as usize, CHUNK, |k| {
                restart(&mut server, 256, &mut rng);
                let mut batch = requests[..k].to_vec();
                let mut out = Discard::default();
                let start = Instant::now();
                for (i, (request, n)) in batch.iter_mut().enumerate() {
                    server.handle(
                        netcode_proto::Instant::ZERO,
                        client_address(i),
                        &mut request[..*n],
                        &mut out,
                    );
                }
                let elapsed = start.elapsed();
                assert_eq!(out.sent, k, "one challenge per request");
                elapsed
            })
        })
    });
    group.bench_function(RENETCODE, |b| {
        let requests: Vec<_> = (0..CHUNK as u64)
            .map(|i| renet_request(renet_token(i + 1)))
            .collect();
        b.iter_custom(|iters| {
            in_batches(iters as usize, CHUNK, |k| {
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
                let elapsed = start.elapsed();
                assert_eq!(challenges, k, "one challenge per request");
                elapsed
            })
        })
    });
    group.finish();
}

pub(crate) fn garbage_request(c: &mut Criterion) {
    // A request-sized datagram of random bytes behind a request prefix.
    let garbage = garbage_bytes();
    let mut rng = SeededRng::new(15);
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
        ("garbage_request", garbage.clone(), garbage),
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
                let result = server.handle(
                    netcode_proto::Instant::ZERO,
                    address,
                    &mut datagram,
                    &mut out,
                );
                black_box(result.is_some())
            });
            assert_eq!(out.sent, 0);
        });
        group.bench_function(RENETCODE, |b| {
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

pub(crate) fn handshake_bench(c: &mut Criterion) {
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
            in_batches(iters as usize, SLOTS, |k| {
                restart(&mut server, SLOTS, &mut rng);
                let mut clients: Vec<Client> = (0..k).map(|_| Client::new()).collect();
                let start = Instant::now();
                for (i, client) in clients.iter_mut().enumerate() {
                    let now = netcode_proto::Instant::from_millis(101 * i as u64);
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
                let elapsed = start.elapsed();
                assert_eq!(server.num_connected_clients(), k);
                elapsed
            })
        })
    });
    group.bench_function(RENETCODE, |b| {
        let tokens: Vec<_> = (0..SLOTS as u64).map(|i| renet_token(i + 1)).collect();
        b.iter_custom(|iters| {
            in_batches(iters as usize, SLOTS, |k| {
                let mut server = renet_server(SLOTS);
                let batch = tokens[..k].to_vec();
                let start = Instant::now();
                for (i, token) in batch.into_iter().enumerate() {
                    black_box(renet_connect(&mut server, token, client_address(i)));
                }
                let elapsed = start.elapsed();
                assert_eq!(server.connected_clients(), k);
                elapsed
            })
        })
    });
    group.finish();
}
