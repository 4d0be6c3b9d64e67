//! Shared pieces of the real-UDP tests: keys, tokens, payload patterns and
//! a loop that always ends.
#![allow(dead_code, unreachable_pub)]

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use netcode_std::proto::Key;
use netcode_std::{Client, ClientState, ConnectTokenBuilder, Server, ServerConfig};

pub const PROTOCOL_ID: u64 = 0x1122_3344_5566_7788;
pub const PRIVATE_KEY: [u8; 32] = [
    0x60, 0x6a, 0xbe, 0x6e, 0xc9, 0x19, 0x10, 0xea, 0x9a, 0x65, 0x62, 0xf6, 0x6f, 0x2b, 0x30, 0xe4,
    0x43, 0x71, 0xd6, 0x2c, 0xd1, 0x99, 0x27, 0x26, 0x6b, 0x3c, 0x60, 0xf4, 0xb7, 0x15, 0xab, 0xa1,
];
/// Every loop in these tests gives up after this long.
pub const DEADLINE: Duration = Duration::from_secs(10);

pub fn key() -> Key {
    Key::from_bytes(PRIVATE_KEY)
}

pub fn config() -> ServerConfig {
    ServerConfig::new(PROTOCOL_ID, key())
}

/// A token for `client_id` listing `servers`, 30 s expiry, 5 s timeout.
pub fn token(client_id: u64, servers: &[SocketAddr]) -> [u8; 2048] {
    ConnectTokenBuilder::new(PROTOCOL_ID, &key(), client_id)
        .server_addresses(servers)
        .user_data(&user_data(client_id))
        .generate()
        .expect("token")
}

pub fn user_data(client_id: u64) -> [u8; 256] {
    core::array::from_fn(|i| (client_id as usize).wrapping_mul(7).wrapping_add(i) as u8)
}

/// A payload of `len` bytes whose byte i is `(i + salt) % 256`.
pub fn pattern(len: usize, salt: u64) -> Vec<u8> {
    (0..len)
        .map(|i| ((i as u64).wrapping_add(salt) % 256) as u8)
        .collect()
}

/// Whether this machine has an IPv6 loopback.
pub fn ipv6_available() -> bool {
    let ok = UdpSocket::bind("[::1]:0").is_ok();
    if !ok {
        eprintln!("no IPv6 loopback on this machine: test skipped");
    }
    ok
}

/// Real time in seconds since `epoch`, the clock every test passes to
/// `update`.
pub fn seconds(epoch: Instant) -> f64 {
    epoch.elapsed().as_secs_f64()
}

/// Calls `step` with the current time about every millisecond until it
/// returns true; panics with `what` once [`DEADLINE`] has passed.
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
