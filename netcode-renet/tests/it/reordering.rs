//! renet over the adapter over a simulated network that delays datagrams
//! by 20 ms give or take 30 ms (so they overtake each other), duplicates
//! 10% of them and loses 2% (seeded, so each run is the same): every
//! reliable-ordered message arrives intact and in order both ways, no
//! unreliable message arrives twice, and some arrive out of order.

use std::time::Duration;

use crate::common::net::{self, Net, SimConfig};
use crate::common::{Pair, Traffic, exchange};
use netcode_renet::netcode_std::constants::MAX_ENCRYPTED_PACKET_BYTES;
use renet::{ConnectionConfig, RenetClient, RenetServer};

/// A 60 Hz tick in simulated time.
const TICK: Duration = Duration::from_micros(16_667);

fn rough() -> SimConfig {
    SimConfig {
        latency: Duration::from_millis(20),
        jitter: Duration::from_millis(30),
        duplicate_percent: 10.0,
        duplicate_max_delay: Duration::from_millis(50),
        loss_percent: 2.0,
        ..SimConfig::default()
    }
}

fn rough_run(seed: u64) {
    let net = Net::with_config(rough(), seed);
    let (server_transport, target) = net::server_transport(&net, 4);
    let mut pair = Pair {
        server: RenetServer::new(ConnectionConfig::default()),
        server_transport,
        client: RenetClient::new(ConnectionConfig::default()),
        client_transport: net::client_transport(&net, seed, target),
        client_id: seed,
    };
    // The network's time moves with renet's.
    let tick = || {
        net.advance(TICK);
        TICK
    };
    pair.connect(600, tick);
    let traffic = Traffic {
        count: 240,
        burst: 4,
        reordering: true,
    };
    // Three simulated minutes at most.
    let (up, down, unreliable_sent) = exchange(&mut pair, &traffic, 3 * 60 * 60, tick);

    let stats = net.stats();
    eprintln!(
        "seed {seed}: {:?}, largest {} bytes; unreliable up {} and down {} of {unreliable_sent}; client {:?}; server {:?}",
        stats.network,
        stats.largest,
        up.unreliable.len(),
        down.unreliable.len(),
        pair.client_transport.stats(),
        pair.server_transport.stats()
    );
    assert!(stats.network.duplicated > 0 && stats.network.lost > 0);
    assert!(
        stats.largest <= MAX_ENCRYPTED_PACKET_BYTES,
        "no payload over 1200 bytes"
    );
    for stats in [pair.client_transport.stats(), pair.server_transport.stats()] {
        assert!(stats.packets_reassembled > 0, "{stats:?}");
        // Halves are joined although they arrive out of order: few wait in
        // vain (with room for 4 pending pairs, ten times as many did as
        // were joined).
        assert!(
            stats.parts_incomplete * 10 < stats.packets_reassembled,
            "{stats:?}"
        );
        assert_eq!(stats.payloads_malformed, 0, "{stats:?}");
        assert_eq!(stats.packets_not_sent, 0, "{stats:?}");
    }
}

#[test]
fn reordered_duplicated_and_lossy_seed_1() {
    rough_run(1);
}

#[test]
fn reordered_duplicated_and_lossy_seed_2() {
    rough_run(2);
}
