//! Connection requests against a server whose tables are full, and payload
//! receive against the raw AEAD open underneath it.
//!
//! Two ways to run it:
//!
//! * `cargo bench -p netcode-bench --bench tables`: criterion, groups
//!   `full_history` (a new valid token when the connect token history is
//!   full of unexpired entries: refused) and `full_mappings` (a pending
//!   token's retry when every encryption mapping belongs to a live
//!   handshake: refused), each at two table sizes, so a cost that grows with
//!   the table shows;
//! * `cargo bench -p netcode-bench --bench tables -- --instructions CASE N`
//!   (and `--setup-only CASE N`): runs CASE's setup, then N times its
//!   per-iteration preparation and operation (with `--setup-only`, only the
//!   preparation), and prints nothing. Under
//!   `valgrind --tool=callgrind`, (instructions of `--instructions` minus
//!   those of `--setup-only`) / N is the operation's instruction count,
//!   free of the setup and of the harness. CASE is one of
//!   `full-history-2048`, `full-history-16384`, `full-mappings-1024`,
//!   `full-mappings-8192`, `receive-100` (`Server::handle` of a 100-byte
//!   payload from a connected client) and `ring-open-100` (ring's
//!   ChaCha20-Poly1305 open of the same 100 bytes with a prepared key: the
//!   floor).

use netcode_proto::Instant;
use std::hint::black_box;
use std::net::SocketAddr;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion};
use netcode_bench::{
    Discard, Last, PACKET_KEY, client_address, connected, payload, request_bytes, server,
    token_bytes,
};
use netcode_proto::constants::MAX_PACKET_BYTES;
use netcode_proto::crypto::sequence_nonce;
use netcode_proto::seeded::SeededRng;
use netcode_proto::server::{HeapStorage, Server};
use netcode_proto::stats::DropReason;

/// A request the server refuses, against tables filled for it.
struct Refused {
    server: Server<HeapStorage>,
    from: SocketAddr,
    request: [u8; MAX_PACKET_BYTES],
    len: usize,
    reason: DropReason,
}

impl Refused {
    /// Handles the request once (a fresh copy: reading decrypts in place).
    fn handle(&mut self, buffer: &mut [u8; MAX_PACKET_BYTES]) {
        buffer[..self.len].copy_from_slice(&self.request[..self.len]);
        let read = self.server.handle(
            Instant::ZERO,
            self.from,
            &mut buffer[..self.len],
            &mut Discard::default(),
        );
        black_box(read.is_none());
    }

    /// `self`, after checking that the request is refused for its reason.
    fn checked(mut self) -> Self {
        let dropped = self.server.stats().dropped(self.reason);
        self.handle(&mut [0; MAX_PACKET_BYTES]);
        assert_eq!(self.server.stats().dropped(self.reason), dropped + 1);
        self
    }
}

/// A server of `slots` slots whose token history (8 entries per slot) is
/// full of unexpired entries: the first `slots * 4` got mappings and
/// challenges, the rest were refused a mapping but stay in the history.
/// The request to refuse carries one more new token.
fn full_history(slots: usize) -> Refused {
    let mut rng = SeededRng::new(11);
    let mut server = server(slots, &mut rng);
    let entries = 8 * slots;
    for i in 0..entries {
        let (mut request, n) = request_bytes(&token_bytes(i as u64 + 1, &mut rng));
        let from = client_address(i);
        server.handle(
            Instant::ZERO,
            from,
            &mut request[..n],
            &mut Discard::default(),
        );
    }
    assert_eq!(server.stats().dropped(DropReason::TokenHistoryFull), 0);
    let (request, len) = request_bytes(&token_bytes(entries as u64 + 1, &mut rng));
    Refused {
        server,
        from: client_address(entries),
        request,
        len,
        reason: DropReason::TokenHistoryFull,
    }
    .checked()
}

/// A server of `slots` slots with a history of 16 entries per slot, whose
/// mappings (4 per slot) all belong to live handshakes. The request to
/// refuse is the retry of a token that was admitted to the history but got
/// no mapping: admitted again (its own address), then refused a mapping.
fn full_mappings(slots: usize) -> Refused {
    let mut rng = SeededRng::new(12);
    let mappings = 4 * slots;
    let storage = HeapStorage::with_tables(slots, mappings, 16 * slots);
    let config = netcode_proto::server::ServerConfig::new(
        netcode_bench::PROTOCOL_ID,
        netcode_proto::Key::from_bytes(netcode_bench::PRIVATE_KEY),
        netcode_bench::SERVER,
    );
    let mut server = Server::new(config, storage).expect("proportional storage");
    server
        .start(
            Instant::ZERO,
            netcode_bench::UNIX_STARTED,
            slots,
            &mut rng,
            &mut Discard::default(),
        )
        .expect("valid slot count");
    for i in 0..mappings {
        let (mut request, n) = request_bytes(&token_bytes(i as u64 + 1, &mut rng));
        server.handle(
            Instant::ZERO,
            client_address(i),
            &mut request[..n],
            &mut Discard::default(),
        );
    }
    let (request, len) = request_bytes(&token_bytes(mappings as u64 + 1, &mut rng));
    let from = client_address(mappings);
    let mut first = request;
    server.handle(
        Instant::ZERO,
        from,
        &mut first[..len],
        &mut Discard::default(),
    );
    assert_eq!(server.stats().dropped(DropReason::MappingTableFull), 1);
    Refused {
        server,
        from,
        request,
        len,
        reason: DropReason::MappingTableFull,
    }
    .checked()
}

fn criterion_benches(c: &mut Criterion) {
    let mut buffer = [0u8; MAX_PACKET_BYTES];
    let mut group = c.benchmark_group("full_history");
    for slots in [256, 2048] {
        let mut refused = full_history(slots);
        group.bench_function(BenchmarkId::new("new token refused", 8 * slots), |b| {
            b.iter(|| refused.handle(&mut buffer))
        });
    }
    group.finish();
    let mut group = c.benchmark_group("full_mappings");
    for slots in [256, 2048] {
        let mut refused = full_mappings(slots);
        group.bench_function(BenchmarkId::new("pending retry refused", 4 * slots), |b| {
            b.iter(|| refused.handle(&mut buffer))
        });
    }
    group.finish();
}

/// Runs `case` for callgrind: setup, then `count` preparations and (unless
/// `setup_only`) operations.
fn instructions(case: &str, count: usize, setup_only: bool) {
    let mut buffer = [0u8; MAX_PACKET_BYTES];
    let refused = match case {
        "full-history-2048" => Some(full_history(256)),
        "full-history-16384" => Some(full_history(2048)),
        "full-mappings-1024" => Some(full_mappings(256)),
        "full-mappings-8192" => Some(full_mappings(2048)),
        _ => None,
    };
    if let Some(mut refused) = refused {
        for _ in 0..count {
            if setup_only {
                buffer[..refused.len].copy_from_slice(&refused.request[..refused.len]);
                black_box(&mut buffer);
            } else {
                refused.handle(&mut buffer);
            }
        }
        return;
    }
    let data = payload(100);
    match case {
        "receive-100" => {
            let mut pair = connected(1, 2);
            let now = pair.now;
            let (server, client) = (&mut pair.server, &mut pair.clients[0]);
            let mut out = Discard::default();
            for _ in 0..count {
                let mut sent = Last::default();
                let _ = client.send_payload(now, &data, &mut sent);
                let (mut packet, n) = sent.take();
                if !setup_only {
                    let read = server.handle(now, client_address(0), &mut packet[..n], &mut out);
                    assert!(read.is_some());
                }
                black_box(&mut packet);
            }
        }
        "ring-open-100" => {
            use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, Nonce, UnboundKey};
            let key = LessSafeKey::new(UnboundKey::new(&CHACHA20_POLY1305, &PACKET_KEY).unwrap());
            let ad = [7u8; 22];
            for sequence in 0..count as u64 {
                let mut text = [0u8; 100];
                text.copy_from_slice(&data);
                let nonce = || Nonce::assume_unique_for_key(sequence_nonce(sequence));
                let tag = key
                    .seal_in_place_separate_tag(nonce(), Aad::from(&ad), &mut text)
                    .unwrap();
                if !setup_only {
                    key.open_in_place_separate_tag(nonce(), Aad::from(&ad), tag, &mut text, 0..)
                        .unwrap();
                }
                black_box(&mut text);
            }
        }
        _ => panic!("unknown case {case}"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(i) = args
        .iter()
        .position(|a| a == "--instructions" || a == "--setup-only")
    {
        let case = args.get(i + 1).expect("a case");
        let count = args
            .get(i + 2)
            .and_then(|n| n.parse().ok())
            .expect("a count");
        instructions(case, count, args[i] == "--setup-only");
        return;
    }
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    criterion_benches(&mut c);
    c.final_summary();
}
