//! Shared pieces of the transport tests: keys and tokens (from the
//! workspace's `support/test-fixtures`), self-checking
//! messages, a renet client and server on the adapter, and an exchange of
//! reliable and unreliable traffic both ways that checks what arrives.
#![allow(dead_code, unreachable_pub, unused_imports)]

pub mod net;

use std::net::SocketAddr;
use std::time::Duration;

use netcode_renet::netcode_std::transport::Socket;
use netcode_renet::{NetcodeClientTransport, NetcodeServerTransport};
use renet::{ClientId, DefaultChannel, RenetClient, RenetServer};

pub use test_fixtures::{AdmittedFrom, PROTOCOL_ID, key, start_nowait, user_data};

/// A token for `client_id` listing `server`, with its user data, issued as
/// of `admitted`.
pub fn token(admitted: AdmittedFrom, client_id: u64, server: SocketAddr) -> [u8; 2048] {
    admitted.token(client_id, &[server])
}

/// Message `index` of `len` bytes (at least 8): its index and length, then
/// bytes that depend on both and on their position.
pub fn message(index: u32, len: usize) -> Vec<u8> {
    assert!(len >= 8);
    let mut m = Vec::with_capacity(len);
    m.extend_from_slice(&index.to_le_bytes());
    m.extend_from_slice(&(len as u32).to_le_bytes());
    m.extend((8..len).map(|i| (i as u32).wrapping_mul(7).wrapping_add(index) as u8));
    m
}

/// The index of an intact message; panics on a damaged one.
pub fn check(m: &[u8]) -> u32 {
    assert!(m.len() >= 8, "a message of {} bytes", m.len());
    let index = u32::from_le_bytes(m[..4].try_into().unwrap());
    assert_eq!(m, message(index, m.len()), "message {index} damaged");
    index
}

/// Reliable message sizes: renet's small, largest-small (1200), packed,
/// two-slice and many-slice cases.
pub const RELIABLE_SIZES: [usize; 12] = [
    8, 94, 300, 1199, 1200, 1201, 2400, 2401, 64, 5000, 94, 20_000,
];
/// Unreliable message sizes, small and sliced.
pub const UNRELIABLE_SIZES: [usize; 5] = [8, 500, 1200, 1201, 3000];

/// A renet server and client on the adapter.
pub struct Pair<S: Socket> {
    pub server: RenetServer,
    pub server_transport: NetcodeServerTransport<S>,
    pub client: RenetClient,
    pub client_transport: NetcodeClientTransport<S>,
    pub client_id: ClientId,
}

impl<S: Socket> Pair<S> {
    /// One tick of `dt`: updates (client first), the game's part, sends.
    pub fn tick(&mut self, dt: Duration, game: &mut impl FnMut(&mut Self)) {
        self.client.update(dt);
        self.client_transport
            .update(dt, &mut self.client)
            .expect("client update");
        self.server.update(dt);
        self.server_transport
            .update(dt, &mut self.server)
            .expect("server update");
        game(self);
        self.client_transport
            .send_packets(&mut self.client)
            .expect("client send");
        self.server_transport.send_packets(&mut self.server);
    }

    /// Ticks until renet's client is connected; panics after `max` ticks.
    pub fn connect(&mut self, max: usize, mut next_dt: impl FnMut() -> Duration) {
        for _ in 0..max {
            self.tick(next_dt(), &mut |_| {});
            if self.client.is_connected() && self.server.is_connected(self.client_id) {
                return;
            }
        }
        panic!("not connected after {max} ticks");
    }
}

/// What one direction delivered.
#[derive(Debug, Default)]
pub struct Received {
    pub reliable: Vec<u32>,
    pub unreliable: Vec<u32>,
}

/// The messages of one direction: `count` reliable-ordered ones cycling
/// through [`RELIABLE_SIZES`], and one unreliable one per tick cycling
/// through [`UNRELIABLE_SIZES`].
#[derive(Debug)]
pub struct Traffic {
    pub count: u32,
    /// Reliable messages sent per tick.
    pub burst: u32,
    /// Whether the network reorders datagrams: unreliable messages then
    /// arrive at most once but in any order (and some out of order).
    pub reordering: bool,
}

impl Traffic {
    fn reliable(&self, index: u32) -> Vec<u8> {
        message(index, RELIABLE_SIZES[index as usize % RELIABLE_SIZES.len()])
    }

    fn unreliable(&self, index: u32) -> Vec<u8> {
        message(
            index,
            UNRELIABLE_SIZES[index as usize % UNRELIABLE_SIZES.len()],
        )
    }
}

/// The state of an exchange: what was sent and what arrived each way.
#[derive(Debug, Default)]
struct Exchange {
    up: Received,
    down: Received,
    reliable_sent: u32,
    unreliable_sent: u32,
}

impl Exchange {
    /// The game's part of a tick: send this tick's messages both ways,
    /// then read and check everything that arrived.
    fn step<S: Socket>(&mut self, p: &mut Pair<S>, traffic: &Traffic) {
        let id = p.client_id;
        let reliable = u8::from(DefaultChannel::ReliableOrdered);
        let unreliable = u8::from(DefaultChannel::Unreliable);
        for _ in 0..traffic.burst {
            if self.reliable_sent < traffic.count {
                let m = traffic.reliable(self.reliable_sent);
                p.client.send_message(reliable, m.clone());
                p.server.send_message(id, reliable, m);
                self.reliable_sent += 1;
            }
        }
        if self.reliable_sent < traffic.count {
            let m = traffic.unreliable(self.unreliable_sent);
            p.client.send_message(unreliable, m.clone());
            p.server.send_message(id, unreliable, m);
            self.unreliable_sent += 1;
        }
        while let Some(m) = p.server.receive_message(id, reliable) {
            self.up.reliable.push(check(&m));
        }
        while let Some(m) = p.server.receive_message(id, unreliable) {
            self.up.unreliable.push(check(&m));
        }
        while let Some(m) = p.client.receive_message(reliable) {
            self.down.reliable.push(check(&m));
        }
        while let Some(m) = p.client.receive_message(unreliable) {
            self.down.unreliable.push(check(&m));
        }
    }
}

/// Sends `traffic` both ways until every reliable message has arrived
/// each way (panics after `max` ticks), checking each message as it
/// arrives: every reliable message intact and in order, every unreliable
/// one intact, at most once and in order (out of order somewhere when
/// `traffic.reordering`). Returns what arrived client to
/// server, then server to client, and how many unreliable messages each
/// side sent.
pub fn exchange<S: Socket>(
    pair: &mut Pair<S>,
    traffic: &Traffic,
    max: usize,
    mut next_dt: impl FnMut() -> Duration,
) -> (Received, Received, u32) {
    let mut ex = Exchange::default();
    let complete = |r: &Received| r.reliable.len() == traffic.count as usize;
    for _ in 0..max {
        pair.tick(next_dt(), &mut |p| ex.step(p, traffic));
        if complete(&ex.up) && complete(&ex.down) {
            let in_order: Vec<u32> = (0..traffic.count).collect();
            assert_eq!(
                ex.up.reliable, in_order,
                "client to server, reliable ordered"
            );
            assert_eq!(
                ex.down.reliable, in_order,
                "server to client, reliable ordered"
            );
            let mut in_order = true;
            for r in [&ex.up, &ex.down] {
                let mut distinct = r.unreliable.clone();
                distinct.sort_unstable();
                distinct.dedup();
                assert_eq!(
                    distinct.len(),
                    r.unreliable.len(),
                    "no unreliable message twice"
                );
                in_order &= r.unreliable.windows(2).all(|w| w[0] < w[1]);
            }
            if traffic.reordering {
                assert!(!in_order, "the network reordered unreliable messages");
            } else {
                assert!(in_order, "no unreliable message out of order");
            }
            return (ex.up, ex.down, ex.unreliable_sent);
        }
    }
    panic!(
        "after {max} ticks: {} of {} reliable messages up, {} down",
        ex.up.reliable.len(),
        traffic.count,
        ex.down.reliable.len()
    );
}
