//! renet over the adapter over a simulated network that loses 10% of all
//! datagrams (seeded, so each run is the same): every reliable-ordered
//! message arrives intact and in order both ways, sliced ones included,
//! while split packets lose a half now and then; no datagram is ever over
//! netcode's limit.

use std::time::Duration;

use crate::common::net::{self, Net};
use crate::common::{Pair, Traffic, exchange};
use netcode_renet::netcode_std::constants::MAX_ENCRYPTED_PACKET_BYTES;
use renet::{ConnectionConfig, RenetClient, RenetServer};

/// A 60 Hz tick in simulated time.
const TICK: Duration = Duration::from_micros(16_667);

fn lossy_run(seed: u64) {
    let net = Net::lossy(0.10, seed);
    let (server_transport, target) = net::server_transport(&net, 4);
    let mut pair = Pair {
        server: RenetServer::new(ConnectionConfig::default()),
        server_transport,
        client: RenetClient::new(ConnectionConfig::default()),
        client_transport: net::client_transport(&net, seed, target),
        client_id: seed,
    };
    pair.connect(600, || TICK);
    let traffic = Traffic {
        count: 240,
        burst: 4,
        reordering: false,
    };
    // Three simulated minutes at most.
    let (up, down, unreliable_sent) = exchange(&mut pair, &traffic, 3 * 60 * 60, || TICK);

    let stats = net.stats();
    let (datagrams, lost) = (stats.network.sent, stats.network.lost);
    eprintln!(
        "seed {seed}: {datagrams} datagrams, {lost} lost, largest {} bytes; up {} unreliable of {unreliable_sent}; client {:?}; server {:?}",
        stats.largest,
        up.unreliable.len(),
        pair.client_transport.stats(),
        pair.server_transport.stats()
    );
    assert!(lost > datagrams / 20, "the network lost about 10%");
    assert!(
        stats.largest <= MAX_ENCRYPTED_PACKET_BYTES,
        "no payload over 1200 bytes"
    );
    for received in [&up, &down] {
        let arrived = received.unreliable.len() as u32;
        assert!(
            arrived < unreliable_sent,
            "some unreliable messages were lost"
        );
        assert!(
            arrived > unreliable_sent / 2,
            "most unreliable messages arrived"
        );
    }
    for stats in [pair.client_transport.stats(), pair.server_transport.stats()] {
        assert!(stats.packets_reassembled > 0, "{stats:?}");
        assert!(
            stats.parts_incomplete > 0,
            "halves whose partner was lost: {stats:?}"
        );
        assert_eq!(stats.payloads_malformed, 0, "{stats:?}");
        assert_eq!(stats.packets_not_sent, 0, "{stats:?}");
    }
}

#[test]
fn ten_percent_loss_seed_1() {
    lossy_run(1);
}

#[test]
fn ten_percent_loss_seed_2() {
    lossy_run(2);
}

#[test]
fn ten_percent_loss_seed_3() {
    lossy_run(3);
}
