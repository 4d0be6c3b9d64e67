//! A long simulated run: 256 clients connecting, exchanging, disconnecting
//! and reconnecting for minutes of simulated time over a lossy, jittery,
//! duplicating network. Every payload that arrives is intact, every datagram
//! is accounted for, and afterwards the server's tables are as good as new.

use std::time::Duration;

use netcode_proto::client::ClientState;
use netcode_proto::sim::SimConfig;
use netcode_proto::sim::World;
use netcode_proto::sim::fixtures::*;

/// A payload that checks itself: byte i is `first + i`.
fn payload(len: usize, first: u8) -> Vec<u8> {
    (0..len).map(|i| first.wrapping_add(i as u8)).collect()
}

fn intact(data: &[u8]) -> bool {
    !data.is_empty()
        && data.len() <= 1200
        && data
            .iter()
            .enumerate()
            .all(|(i, b)| *b == data[0].wrapping_add(i as u8))
}

struct Xorshift(u64);

impl Xorshift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn chance(&mut self, one_in: u64) -> bool {
        self.next().is_multiple_of(one_in)
    }
}

#[test]
fn soak_256_clients_for_three_simulated_minutes() {
    const CLIENTS: usize = 256;
    let network = SimConfig {
        latency: Duration::from_millis(50),
        jitter: Duration::from_millis(30),
        loss_percent: 5.0,
        duplicate_percent: 5.0,
        ..SimConfig::default()
    };
    let mut w = World::new(network, 50, CLIENTS, CLIENTS);
    let mut dice = Xorshift(0x5eed_5eed_5eed_5eed);
    for i in 0..CLIENTS {
        w.add_client(&format!("10.9.{}.{}:3000", i / 250, i % 250 + 1));
    }
    let mut next_id = 1u64;
    let (mut connects, mut payloads_checked) = (0u64, 0usize);
    let (mut checked_server, mut checked_client) = (0usize, vec![0usize; CLIENTS]);
    let frames = 3 * 60 * 10;
    for frame in 0..frames {
        for c in 0..CLIENTS {
            match w.state(c) {
                ClientState::Connected => {
                    if dice.chance(300) {
                        w.client_disconnect(c);
                    } else if dice.chance(2) {
                        let len = 1 + (dice.next() % 1200) as usize;
                        w.client_send(c, &payload(len, dice.next() as u8));
                    }
                }
                s if !s.is_active() && dice.chance(20) => {
                    let token = w.token(next_id);
                    next_id += 1;
                    w.connect(c, &token);
                }
                _ => {}
            }
        }
        for index in 0..CLIENTS {
            if w.server(0).client_connected(index) && dice.chance(3) {
                let len = 1 + (dice.next() % 1200) as usize;
                w.server_send(0, index, &payload(len, dice.next() as u8));
            }
        }
        if frame % 600 == 0 && frame > 0 {
            // Now and then the server kicks someone.
            let index = (dice.next() % CLIENTS as u64) as usize;
            w.server_disconnect(0, index);
        }
        w.step(FRAME);
        connects += w.servers[0]
            .events
            .iter()
            .filter(|e| {
                matches!(
                    e,
                    netcode_proto::server::ServerEvent::ClientConnected { .. }
                )
            })
            .count() as u64;
        w.servers[0].events.clear();
        for (_, _, data) in &w.servers[0].received[checked_server..] {
            assert!(intact(data), "corrupt payload at the server");
        }
        payloads_checked += w.servers[0].received.len() - checked_server;
        checked_server = w.servers[0].received.len();
        for (c, p) in w.clients.iter().enumerate() {
            for (_, data) in &p.received[checked_client[c]..] {
                assert!(intact(data), "corrupt payload at a client");
            }
            payloads_checked += p.received.len() - checked_client[c];
            checked_client[c] = p.received.len();
        }
    }
    println!("soak: {frames} frames, {connects} connections, {payloads_checked} payloads checked");
    assert!(connects > 1000, "{connects} connections");
    assert!(payloads_checked > 100_000, "{payloads_checked} payloads");

    // Every datagram is accounted for: sent (plus network duplicates) =
    // lost + still in flight + delivered, and every delivery was either
    // processed or dropped with a reason by its receiver.
    let sim = w.sim.stats();
    let sent: u64 = w.server(0).stats().sent.iter().sum::<u64>()
        + w.clients
            .iter()
            .map(|p| p.client.stats().sent.iter().sum::<u64>())
            .sum::<u64>();
    assert_eq!(
        sent, sim.sent,
        "every datagram the endpoints sent entered the network"
    );
    assert_eq!(
        sim.sent + sim.duplicated,
        sim.lost + sim.dropped_full + sim.delivered + sim.discarded + w.sim.in_flight() as u64
    );
    let handled: u64 = w.server(0).stats().received.iter().sum::<u64>()
        + w.server(0).stats().dropped_total()
        + w.clients
            .iter()
            .map(|p| {
                p.client.stats().received.iter().sum::<u64>() + p.client.stats().dropped_total()
            })
            .sum::<u64>();
    assert_eq!(
        handled, sim.delivered,
        "every delivered datagram processed or dropped with a reason"
    );

    // Nothing leaked: once everyone has left and every token has expired,
    // a full house of new clients connects.
    for c in 0..CLIENTS {
        w.client_disconnect(c);
    }
    for _ in 0..400 {
        w.step(FRAME);
    }
    assert_eq!(w.server(0).num_connected_clients(), 0);
    w.sim.set_config(SimConfig::default());
    for c in 0..CLIENTS {
        let token = w.token(next_id);
        next_id += 1;
        w.connect(c, &token);
    }
    assert!(w.run_until(30, |w| w.server(0).num_connected_clients() == CLIENTS));
}
