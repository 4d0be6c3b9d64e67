//! A real netcode-std server on loopback, recorded each update: a client
//! connects and exchanges payloads, and its series show what it carried;
//! once it disconnects they are gone and the disconnect is counted.

use std::time::{Duration, Instant};

use netcode_metrics::{ServerMetrics, encode_text};
use netcode_std::proto::Key;
use netcode_std::{Client, ClientState, Server, ServerConfig};

use crate::common::{sample, series_named, start_with_token};

const PROTOCOL_ID: u64 = 0x6d65_7472_6963_7321;
const CLIENT_ID: u64 = 0x1234_5678;

/// Each step waits this long at most.
const STEP_DEADLINE: Duration = Duration::from_secs(10);

/// Runs `step` with the seconds since `epoch` every millisecond until it
/// says it is done; panics past the deadline.
fn run_until(what: &str, epoch: Instant, mut step: impl FnMut(f64) -> bool) {
    let start = Instant::now();
    while !step(epoch.elapsed().as_secs_f64()) {
        assert!(
            start.elapsed() < STEP_DEADLINE,
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn a_connected_clients_series_follow_it_and_go_when_it_leaves() {
    let key = Key::from_bytes([0x5a; 32]);
    let mut server =
        Server::new("127.0.0.1:0", ServerConfig::new(PROTOCOL_ID, key.clone())).unwrap();
    let token = start_with_token(&mut server, 4, PROTOCOL_ID, &key, CLIENT_ID);
    let mut client = Client::new("127.0.0.1:0").unwrap();
    client.connect(&token).unwrap();

    let mut metrics = ServerMetrics::new();
    let registry = metrics.registry();
    let epoch = Instant::now();
    let payload = [7u8; 100];
    let (mut server_got, mut client_got) = (0, 0);
    run_until("a connection and five payloads each way", epoch, |now| {
        client.update(now);
        server.update(now);
        while let Some(event) = server.poll_event() {
            metrics.count_event(&event);
        }
        if client.state() == ClientState::Connected {
            client.send_packet(&payload).unwrap();
        }
        if server.client_connected(0) {
            server.send_packet(0, &payload).unwrap();
        }
        while let Some(packet) = server.receive_packet(0) {
            assert_eq!(packet.data(), payload);
            server_got += 1;
        }
        while let Some(packet) = client.receive_packet() {
            assert_eq!(packet.data(), payload);
            client_got += 1;
        }
        metrics.record(&server);
        server_got >= 5 && client_got >= 5
    });

    let text = encode_text(&registry).unwrap();
    let labels = format!("{{client_index=\"0\",client_id=\"{CLIENT_ID}\"}}");
    let figure = |name: &str| sample(&text, &format!("{name}{labels}"));
    assert_eq!(sample(&text, "netcode_clients_connected"), 1.0);
    assert_eq!(sample(&text, "netcode_max_clients"), 4.0);
    assert_eq!(sample(&text, "netcode_connections_accepted_total"), 1.0);
    // At least the payloads that were read, each more than 100 bytes on
    // the wire (prefix, sequence and tag).
    assert!(figure("netcode_client_packets_received") >= 5.0, "{text}");
    assert!(figure("netcode_client_received_bytes") > 500.0, "{text}");
    assert!(figure("netcode_client_packets_sent") >= 5.0, "{text}");
    assert!(figure("netcode_client_sent_bytes") > 500.0, "{text}");
    assert!(
        figure("netcode_client_handshake_rtt_seconds") >= 0.0,
        "{text}"
    );
    let payloads_in = sample(
        &text,
        "netcode_packets_received_total{packet_type=\"payload\"}",
    );
    assert!(payloads_in >= 5.0, "{text}");
    for handshake in [
        "netcode_packets_received_total{packet_type=\"request\"}",
        "netcode_packets_sent_total{packet_type=\"challenge\"}",
        "netcode_packets_received_total{packet_type=\"response\"}",
    ] {
        assert!(sample(&text, handshake) >= 1.0, "{handshake}: {text}");
    }
    assert!(
        sample(&text, "netcode_datagrams_received_total") >= 7.0,
        "{text}"
    );
    assert!(
        sample(&text, "netcode_datagrams_sent_total") >= 7.0,
        "{text}"
    );
    assert_eq!(
        sample(&text, "netcode_token_history_capacity"),
        server.token_history_capacity() as f64
    );

    // The client says goodbye; the server sees it go.
    client.disconnect();
    let mut left = false;
    run_until("the server to see the client leave", epoch, |now| {
        server.update(now);
        while let Some(event) = server.poll_event() {
            metrics.count_event(&event);
            left = true;
        }
        metrics.record(&server);
        left
    });
    let text = encode_text(&registry).unwrap();
    assert_eq!(sample(&text, "netcode_clients_connected"), 0.0);
    assert!(
        series_named(&text, "netcode_client_sent_bytes").is_empty(),
        "{text}"
    );
    assert!(!text.contains(&CLIENT_ID.to_string()), "{text}");
    assert_eq!(
        sample(
            &text,
            "netcode_connections_closed_total{reason=\"client_disconnect\"}"
        ),
        1.0
    );
    assert!(
        sample(
            &text,
            "netcode_packets_received_total{packet_type=\"disconnect\"}"
        ) >= 1.0,
        "{text}"
    );
}
