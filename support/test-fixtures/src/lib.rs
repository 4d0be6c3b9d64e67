//! What the real-UDP tests of netcode-std, netcode-mio, netcode-tokio,
//! netcode-renet and interop share: the reference tests' key, protocol id,
//! user data and payload pattern (written once, in
//! `netcode_proto::sim::fixtures`), connect tokens made by netcode-std,
//! loops that always end, and a check that connected frames allocate
//! nothing. Test support only (`publish = false`).
//!
//! A test's own mistake (a loop that never finishes, a token that cannot
//! be made) panics with a message saying which, as a failed assertion
//! would.
#![allow(clippy::panic)]

pub mod admitted;
pub mod memory;

pub use admitted::{AdmittedFrom, start_nowait};

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use netcode_proto::constants::{CONNECT_TOKEN_BYTES, USER_DATA_BYTES};
use netcode_std::proto::Key;
use netcode_std::{Client, ClientState, ConnectTokenBuilder, Server, ServerConfig};

pub use netcode_proto::sim::fixtures::{PRIVATE_KEY, PROTOCOL_ID};

#[cfg(unix)]
pub mod browser;

/// Every loop in these tests gives up after this long.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// [`PRIVATE_KEY`] as a key.
pub fn key() -> Key {
    Key::from_bytes(PRIVATE_KEY)
}

/// A server configuration with [`PROTOCOL_ID`] and [`key`].
pub fn config() -> ServerConfig {
    ServerConfig::new(PROTOCOL_ID, key())
}

/// The user data in the tokens of `client_id`: recognisable per client.
pub fn user_data(client_id: u64) -> [u8; USER_DATA_BYTES] {
    netcode_proto::sim::fixtures::user_data_for(client_id)
}

/// A token for `client_id` listing `servers`, with its [`user_data`],
/// 30 s expiry and 5 s timeout.
pub fn token(client_id: u64, servers: &[SocketAddr]) -> [u8; CONNECT_TOKEN_BYTES] {
    token_timing_out(client_id, servers, 5)
}

/// [`token`] with a timeout of `timeout_seconds`.
pub fn token_timing_out(
    client_id: u64,
    servers: &[SocketAddr],
    timeout_seconds: i32,
) -> [u8; CONNECT_TOKEN_BYTES] {
    ConnectTokenBuilder::new(PROTOCOL_ID, &key(), client_id)
        .server_addresses(servers)
        .user_data(&user_data(client_id))
        .timeout_seconds(timeout_seconds)
        .generate()
        .unwrap_or_else(|e| panic!("token for client {client_id}: {e}"))
}

/// A payload of `len` bytes whose byte i is `(i + salt) % 256`.
pub fn pattern(len: usize, salt: u64) -> Vec<u8> {
    netcode_proto::sim::fixtures::pattern(len, (salt % 256) as usize)
}

/// Whether this machine has an IPv6 loopback; says on stderr which test
/// is skipped when not.
pub fn ipv6_available(test: &str) -> bool {
    if UdpSocket::bind("[::1]:0").is_ok() {
        return true;
    }
    eprintln!("SKIPPED {test}: this machine has no IPv6 loopback (::1)");
    false
}

/// Real time in seconds since `epoch`, the clock every test passes to
/// `update`.
pub fn seconds(epoch: Instant) -> f64 {
    epoch.elapsed().as_secs_f64()
}

/// Calls `step` with the time since `epoch` about every millisecond until
/// it returns true; panics with `what` once [`DEADLINE`] has passed.
pub fn run_until(what: &str, epoch: Instant, mut step: impl FnMut(f64) -> bool) {
    let start = Instant::now();
    loop {
        if step(seconds(epoch)) {
            return;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "gave up after {DEADLINE:?} waiting for: {what}"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Calls `step` with the time since `epoch` about every millisecond for
/// `duration`, for checks that something never happens.
pub fn run_for(duration: Duration, epoch: Instant, mut step: impl FnMut(f64)) {
    let start = Instant::now();
    while start.elapsed() < duration {
        step(seconds(epoch));
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Runs `server` and `clients` until every client is connected.
pub fn connect_all(epoch: Instant, server: &mut Server, clients: &mut [&mut Client]) {
    run_until("every client connected", epoch, |now| {
        for client in clients.iter_mut() {
            client.update(now);
        }
        server.update(now);
        clients.iter().all(|c| c.state() == ClientState::Connected)
    });
}

/// Runs `frame` 50 times so the pools and queues reach their working size,
/// then 300 times counting the allocations this thread makes (the test
/// binary must install `counting_alloc::Counting` as its global
/// allocator); asserts there were none.
pub fn assert_frames_allocate_nothing(mut frame: impl FnMut()) {
    for _ in 0..50 {
        frame();
    }
    let (allocations, ()) = counting_alloc::count(|| {
        for _ in 0..300 {
            frame();
        }
    });
    assert_eq!(allocations, 0, "a connected frame allocated");
}
