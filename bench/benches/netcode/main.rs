//! netcode-proto against the raw AEADs (the floor) and the peers, in one run.
//!
//! `cargo bench -p netcode-bench` (fast `ring` backend for netcode-proto), or
//! `cargo bench -p netcode-bench --no-default-features` (portable backend).
//! Groups, each with one id per implementation:
//!
//! * `aead_seal` / `aead_open` (`floor.rs`): raw ChaCha20-Poly1305 at 100
//!   and 1200 bytes, for every backend, and through netcode-proto's crypto
//!   seam;
//! * `payload_write` / `payload_read` (`packets.rs`): one payload packet,
//!   100 and 1200 bytes;
//! * `token_generate`, `request_to_challenge`, `garbage_request`,
//!   `forged_request`, `handshake` (`connections.rs`): a connect token to
//!   its 2048 bytes; a valid connection request handled by a server; a
//!   1078-byte datagram of random bytes after a request prefix; a request
//!   with a valid header and a random private token (it costs a
//!   decryption); token to connected, both sides, in memory;
//! * `server_tick` (`tick.rs`): N connected clients each send one 100-byte
//!   payload; the server handles every datagram, then updates (keep-alives,
//!   timeouts).
//!
//! Setup (connected servers and clients) runs on `netcode_proto::sim::World`
//! (`netcode_bench::fixtures::connected`); the timed loops hand datagrams
//! straight from one side to the other, since the world's network allocates
//! and copies each datagram (see `netcode_bench::fixtures`).

mod connections;
mod floor;
mod packets;
mod tick;

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = floor::aead, packets::payload_write, packets::payload_read,
        connections::token_generate, connections::request_to_challenge,
        connections::garbage_request, tick::server_tick, connections::handshake_bench
}
criterion_main!(benches);
