//! Per-connection statistics, on both ends (`Server::client_stats`,
//! `Client::connection_stats`): packets and bytes each way, duplicates
//! dropped, losses by the gaps in the peer's sequences, the handshake's
//! round trip, the time since the last packet (STANDARD.md: the sequences
//! of *Encrypted Packets*).

use std::time::Duration;

use netcode_proto::client::ClientState;
use netcode_proto::sim::fixtures::*;
use netcode_proto::sim::{SimConfig, World};

#[test]
fn a_perfect_network_loses_nothing_and_the_handshake_takes_two_latencies() {
    let latency = Duration::from_millis(40);
    let config = SimConfig {
        latency,
        ..SimConfig::default()
    };
    let mut w = World::new(config, 41, 4, 4);
    let c = w.add_client("10.0.0.1:5000");
    let token = w.token(1);
    w.connect(c, &token);
    assert!(w.run_until(50, |w| w.state(c) == ClientState::Connected));
    for i in 0..50 {
        w.client_send(c, &pattern(100, i));
        w.server_send(0, 0, &pattern(60, i));
        w.step(FRAME);
    }
    w.run_until(10, |_| false);
    let server = w.server(0).client_stats(0).expect("slot 0 is connected");
    let client = w.clients[c].client.connection_stats(w.now);
    // The server's challenge went at some step, the response came back a
    // round trip later at the earliest, and the steps are 100 ms apart.
    let rtt = server.handshake_rtt.expect("measured");
    assert!(
        rtt >= 2 * latency && rtt <= 2 * latency + 2 * FRAME,
        "{rtt:?}"
    );
    assert!(client.handshake_rtt.is_some());
    assert_eq!(server.packets_lost, 0);
    assert_eq!(client.packets_lost, 0);
    assert_eq!(server.duplicates_dropped, 0);
    // Every packet one end sent arrived at the other (none in flight by
    // now but the last step's, which `run_until` let arrive).
    assert!(server.packets_received >= 50, "{server:?}");
    assert!(client.packets_received >= 50, "{client:?}");
    assert!(server.bytes_received > server.packets_received * 100);
    assert!(server.since_last_receive <= FRAME + latency);
    // A free slot has no statistics.
    assert_eq!(w.server(0).client_stats(1), None);
}

#[test]
fn losses_and_duplicates_are_counted_on_both_ends() {
    let config = SimConfig {
        latency: Duration::from_millis(20),
        loss_percent: 20.0,
        duplicate_percent: 20.0,
        duplicate_max_delay: Duration::from_millis(50),
        ..SimConfig::default()
    };
    let mut w = World::new(config, 42, 4, 4);
    let c = w.add_client("10.0.0.1:5000");
    let token = w.token(1);
    w.connect(c, &token);
    assert!(w.run_until(200, |w| w.state(c) == ClientState::Connected));
    for i in 0..400 {
        w.client_send(c, &pattern(100, i));
        w.server_send(0, 0, &pattern(100, i));
        w.step(FRAME);
    }
    w.run_until(10, |_| false);
    let server = w.server(0).client_stats(0).unwrap();
    let client = w.clients[c].client.connection_stats(w.now);
    for (end, stats, peer_sent) in [
        ("server", server, client.packets_sent),
        ("client", client, server.packets_sent),
    ] {
        // About a fifth lost, and what was not lost was received once.
        let lost = stats.packets_lost as f64 / peer_sent as f64;
        assert!(
            (0.12..0.28).contains(&lost),
            "{end}: {lost} lost: {stats:?}"
        );
        assert!(
            stats.packets_received + stats.packets_lost <= peer_sent,
            "{end}: {stats:?}"
        );
        assert!(stats.duplicates_dropped > 20, "{end}: {stats:?}");
    }
}
