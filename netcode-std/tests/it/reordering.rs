//! A whole session of the host (`Server` and `Client` as every transport
//! runs them) through a network that reorders and duplicates datagrams:
//! the client connects, every payload reaches the application exactly
//! once and intact, though out of order, and the duplicates are dropped by
//! the replay protection and counted.

use std::time::Duration;

use crate::common::{config, pattern};
use crate::memory::*;
use netcode_std::proto::PacketError;
use netcode_std::proto::stats::DropReason;
use netcode_std::{Client, ClientState, Server};

/// One step of the test's clock, given to the network and the host alike.
const TICK: Duration = Duration::from_millis(10);

/// Payloads sent each way, one per tick.
const PAYLOADS: u32 = 300;

/// 20 ms one way, give or take 40 ms (so datagrams sent within 80 ms of
/// each other can swap), and a quarter of them twice, the copy up to 60 ms
/// after the original. Nothing is lost.
fn rough() -> SimConfig {
    SimConfig {
        latency: Duration::from_millis(20),
        jitter: Duration::from_millis(40),
        duplicate_percent: 25.0,
        duplicate_max_delay: Duration::from_millis(60),
        ..SimConfig::default()
    }
}

/// Payload `index`: the index, then a pattern whose length and bytes
/// depend on it.
fn payload(index: u32) -> Vec<u8> {
    let mut p = index.to_le_bytes().to_vec();
    p.extend(pattern(20 + index as usize % 200, u64::from(index)));
    p
}

/// The index of an intact payload; panics on a damaged one.
fn index_of(p: &[u8]) -> u32 {
    let index = u32::from_le_bytes(p[..4].try_into().unwrap());
    assert_eq!(p, payload(index), "payload {index} damaged");
    index
}

/// The server, its client and the network, on one clock.
struct Session {
    net: Net,
    server: Server<MemorySocket>,
    client: Client<MemorySocket>,
    time: f64,
}

impl Session {
    /// Moves the network and the host on by one tick.
    fn tick(&mut self) {
        self.net.advance(TICK);
        self.time += TICK.as_secs_f64();
        self.client.update(self.time);
        self.server.update(self.time);
    }
}

/// Checks that `arrived` (payload indices, in the order they reached the
/// application) holds each payload exactly once, and not all in order.
fn reached_each_payload_once(arrived: &[u32], way: &str) {
    let mut sorted = arrived.to_vec();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        (0..PAYLOADS).collect::<Vec<_>>(),
        "{way}: each payload exactly once"
    );
    assert!(
        arrived.windows(2).any(|w| w[0] > w[1]),
        "{way}: the network reordered payloads"
    );
}

fn session(seed: u64) {
    let net = Net::with_config(rough(), seed);
    let (server, admitted) = server(&net, config(), 4);
    let mut client = client(&net);
    client
        .connect(&admitted.token(seed, &[server.public_address()]))
        .unwrap();
    let mut s = Session {
        net,
        server,
        client,
        time: 100.0,
    };
    for _ in 0..500 {
        s.tick();
        if s.client.state() == ClientState::Connected && s.server.client_connected(0) {
            break;
        }
    }
    assert_eq!(s.client.state(), ClientState::Connected, "seed {seed}");
    let slot = s.client.client_index();

    let (mut up, mut down) = (Vec::new(), Vec::new());
    // A second more than the sending takes, for the last datagrams to land.
    for i in 0..PAYLOADS + 100 {
        if i < PAYLOADS {
            s.client.send_packet(&payload(i)).unwrap();
            s.server.send_packet(slot, &payload(i)).unwrap();
        }
        s.tick();
        while let Some(p) = s.server.receive_packet(slot) {
            up.push(index_of(p.data()));
        }
        while let Some(p) = s.client.receive_packet() {
            down.push(index_of(p.data()));
        }
    }
    reached_each_payload_once(&up, "client to server");
    reached_each_payload_once(&down, "server to client");
    assert_eq!(s.client.state(), ClientState::Connected);
    assert!(s.server.client_connected(slot));

    let network = s.net.stats().network;
    let replayed = DropReason::Packet(PacketError::Replayed);
    let (server_replays, client_replays) = (
        s.server.stats().dropped(replayed),
        s.client.stats().dropped(replayed),
    );
    eprintln!(
        "seed {seed}: {network:?}; replays dropped: server {server_replays}, client {client_replays}"
    );
    assert_eq!(network.lost + network.dropped_full, 0, "{network:?}");
    assert!(network.duplicated > u64::from(PAYLOADS) / 4, "{network:?}");
    // Each side saw about a quarter of the other's packets twice, and
    // dropped each second copy as a replay, counted for the connection too;
    // duplicated handshake packets are dropped for other reasons, never
    // passed on.
    let connection_duplicates = (
        s.server.client_stats(slot).unwrap().duplicates_dropped,
        s.client.connection_stats().duplicates_dropped,
    );
    assert_eq!(connection_duplicates, (server_replays, client_replays));
    for (replays, way) in [
        (server_replays, "at the server"),
        (client_replays, "at the client"),
    ] {
        assert!(
            replays > u64::from(PAYLOADS) / 8,
            "{way}: {replays} replays dropped"
        );
    }
    assert!(
        server_replays + client_replays <= network.duplicated,
        "no more replays than duplicates: {network:?}"
    );
}

#[test]
fn a_session_through_reordering_and_duplication_stays_correct_seed_1() {
    session(1);
}

#[test]
fn a_session_through_reordering_and_duplication_stays_correct_seed_2() {
    session(2);
}

#[test]
fn a_session_through_reordering_and_duplication_stays_correct_seed_3() {
    session(3);
}
