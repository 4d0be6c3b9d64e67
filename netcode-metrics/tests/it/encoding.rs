//! Snapshots made by hand, encoded as a scrape encodes them: every series
//! with its value, per-client series only for the clients of the latest
//! snapshot, event counts, and labels of the caller's registry.

use std::time::Duration;

use netcode_metrics::prometheus_client::registry::Registry;
use netcode_metrics::{
    ClientSnapshot, ServerMetrics, ServerSnapshot, TokenHistorySnapshot,
    TokenHistoryWriterSnapshot, encode_text,
};
use netcode_std::proto::PacketType;
use netcode_std::proto::stats::{DropReason, Stats};
use netcode_std::{ConnectionStats, DisconnectReason, ServerEvent, TransportStats};

use crate::common::{sample, samples, series_named};

/// A connection whose every figure is derived from `seed`, so that two
/// clients' figures differ everywhere.
fn connection(seed: u64, handshake_rtt: Option<Duration>) -> ConnectionStats {
    ConnectionStats {
        packets_sent: seed,
        bytes_sent: seed * 100,
        packets_received: seed + 1,
        bytes_received: seed * 100 + 50,
        duplicates_dropped: seed + 2,
        packets_lost: seed + 3,
        handshake_rtt,
        since_last_receive: Duration::from_millis(seed * 10),
    }
}

/// A server snapshot of 16 slots with the given clients, every counter
/// set to a value of its own.
fn snapshot(clients: &[ClientSnapshot]) -> ServerSnapshot {
    let mut stats = Stats::new();
    for (i, packet_type) in PacketType::ALL.iter().enumerate() {
        stats.sent[*packet_type as usize] = 100 + i as u64;
        stats.received[*packet_type as usize] = 200 + i as u64;
    }
    stats.dropped[DropReason::TokenAlreadyUsed.index()] = 7;
    stats.dropped[DropReason::Packet(netcode_std::proto::PacketError::TokenExpired).index()] = 9;
    let mut transport = TransportStats::default();
    transport.datagrams_received = 1;
    transport.datagrams_sent = 2;
    transport.receive_calls = 3;
    transport.send_calls = 4;
    transport.send_errors = 5;
    transport.send_no_socket = 6;
    transport.receive_errors = 7;
    transport.queue_full = 8;
    transport.events_dropped = 9;
    transport.times_not_finite = 10;
    transport.times_backward = 11;
    transport.time_jumps = 12;
    let mut snapshot = ServerSnapshot::new(stats, transport, 16);
    snapshot.clients.extend_from_slice(clients);
    snapshot.token_history = Some(TokenHistorySnapshot {
        capacity: 2048,
        in_use: 3,
        records_pending: 1,
        writer: Some(TokenHistoryWriterSnapshot {
            records_durable: 21,
            syncs: 22,
            records_failed: 23,
            requests_refused: 24,
            compactions: 25,
            compactions_failed: 26,
        }),
    });
    snapshot
}

fn scrape(metrics: &ServerMetrics) -> String {
    encode_text(&metrics.registry()).unwrap()
}

#[test]
fn a_snapshot_encodes_every_figure_with_its_value() {
    let alice = ClientSnapshot::new(3, 42, connection(5, Some(Duration::from_millis(25))));
    let bob = ClientSnapshot::new(9, u64::MAX, connection(8, None));
    let mut metrics = ServerMetrics::new();
    metrics.publish(snapshot(&[alice, bob]));
    let text = scrape(&metrics);

    assert_eq!(sample(&text, "netcode_max_clients"), 16.0);
    assert_eq!(sample(&text, "netcode_clients_connected"), 2.0);
    for (i, name) in [
        "request",
        "denied",
        "challenge",
        "response",
        "keep_alive",
        "payload",
        "disconnect",
    ]
    .iter()
    .enumerate()
    {
        let sent = format!("netcode_packets_sent_total{{packet_type=\"{name}\"}}");
        let received = format!("netcode_packets_received_total{{packet_type=\"{name}\"}}");
        assert_eq!(sample(&text, &sent), 100.0 + i as f64);
        assert_eq!(sample(&text, &received), 200.0 + i as f64);
    }
    // Every reason has its series, at zero until something is dropped.
    let dropped = series_named(&text, "netcode_datagrams_dropped_total");
    assert_eq!(dropped.len(), DropReason::COUNT, "{dropped:?}");
    let drop = |reason: &str| {
        sample(
            &text,
            &format!("netcode_datagrams_dropped_total{{reason=\"{reason}\"}}"),
        )
    };
    assert_eq!(drop("token_already_used"), 7.0);
    assert_eq!(drop("token_expired"), 9.0);
    assert_eq!(drop("address_already_connected"), 0.0);

    for (value, name) in [
        "netcode_datagrams_received_total",
        "netcode_datagrams_sent_total",
        "netcode_receive_calls_total",
        "netcode_send_calls_total",
        "netcode_send_errors_total",
        "netcode_send_no_socket_total",
        "netcode_receive_errors_total",
        "netcode_payloads_dropped_queue_full_total",
        "netcode_events_dropped_total",
        "netcode_clock_times_not_finite_total",
        "netcode_clock_times_backward_total",
        "netcode_clock_time_jumps_total",
    ]
    .iter()
    .enumerate()
    {
        assert_eq!(sample(&text, name), value as f64 + 1.0, "{name}");
    }

    assert_eq!(sample(&text, "netcode_token_history_capacity"), 2048.0);
    assert_eq!(sample(&text, "netcode_token_history_in_use"), 3.0);
    assert_eq!(sample(&text, "netcode_token_records_pending"), 1.0);
    for (value, name) in [
        "netcode_token_history_records_durable_total",
        "netcode_token_history_syncs_total",
        "netcode_token_history_records_failed_total",
        "netcode_token_history_requests_refused_total",
        "netcode_token_history_compactions_total",
        "netcode_token_history_compactions_failed_total",
    ]
    .iter()
    .enumerate()
    {
        assert_eq!(sample(&text, name), value as f64 + 21.0, "{name}");
    }

    let alice_labels = "{client_index=\"3\",client_id=\"42\"}";
    let bob_labels = format!("{{client_index=\"9\",client_id=\"{}\"}}", u64::MAX);
    for (name, alice_value, bob_value) in [
        ("netcode_client_packets_sent", 5.0, 8.0),
        ("netcode_client_sent_bytes", 500.0, 800.0),
        ("netcode_client_packets_received", 6.0, 9.0),
        ("netcode_client_received_bytes", 550.0, 850.0),
        ("netcode_client_duplicates_dropped", 7.0, 10.0),
        ("netcode_client_packets_lost", 8.0, 11.0),
        ("netcode_client_since_last_receive_seconds", 0.05, 0.08),
    ] {
        assert_eq!(sample(&text, &format!("{name}{alice_labels}")), alice_value);
        assert_eq!(sample(&text, &format!("{name}{bob_labels}")), bob_value);
    }
    // Only a client whose handshake round trip is known has that series.
    assert_eq!(
        series_named(&text, "netcode_client_handshake_rtt_seconds"),
        [format!(
            "netcode_client_handshake_rtt_seconds{alice_labels}"
        )]
    );
    assert_eq!(
        sample(
            &text,
            &format!("netcode_client_handshake_rtt_seconds{alice_labels}")
        ),
        0.025
    );

    // Types as declared, in the 0.0.4 text format's spelling.
    for line in [
        "# TYPE netcode_packets_sent_total counter",
        "# TYPE netcode_datagrams_dropped_total counter",
        "# TYPE netcode_max_clients gauge",
        "# TYPE netcode_client_sent_bytes gauge",
        "# TYPE netcode_connections_accepted_total counter",
    ] {
        assert!(text.lines().any(|l| l == line), "no {line:?} in:\n{text}");
    }
}

#[test]
fn a_clients_series_go_when_the_latest_snapshot_lacks_it() {
    let alice = ClientSnapshot::new(0, 1, connection(1, Some(Duration::from_millis(5))));
    let bob = ClientSnapshot::new(1, 2, connection(2, Some(Duration::from_millis(6))));
    let mut metrics = ServerMetrics::new();
    metrics.publish(snapshot(&[alice, bob]));
    let before = scrape(&metrics);
    assert_eq!(series_named(&before, "netcode_client_sent_bytes").len(), 2);

    // Alice left: the next recording lists Bob only.
    metrics.record_with(|s| {
        s.max_clients = 16;
        s.clients.push(bob);
    });
    let after = scrape(&metrics);
    assert_eq!(sample(&after, "netcode_clients_connected"), 1.0);
    let alice_series: Vec<String> = samples(&after)
        .into_keys()
        .filter(|series| series.contains("client_id=\"1\""))
        .collect();
    assert!(alice_series.is_empty(), "left behind: {alice_series:?}");
    assert_eq!(
        sample(
            &after,
            "netcode_client_sent_bytes{client_index=\"1\",client_id=\"2\"}"
        ),
        200.0
    );

    // Nobody left: no per-client metric at all, not even its description.
    metrics.record_with(|s| s.max_clients = 16);
    let empty = scrape(&metrics);
    assert_eq!(sample(&empty, "netcode_clients_connected"), 0.0);
    assert!(!empty.contains("netcode_client_sent_bytes"), "{empty}");
    assert!(!empty.contains("client_index"), "{empty}");
}

#[test]
fn per_client_series_can_be_turned_off() {
    let mut metrics = ServerMetrics::new();
    metrics.publish(snapshot(&[ClientSnapshot::new(2, 5, connection(1, None))]));
    metrics.set_client_series(false);
    let hidden = scrape(&metrics);
    assert!(!hidden.contains("client_index"), "{hidden}");
    assert_eq!(sample(&hidden, "netcode_clients_connected"), 1.0);
    metrics.set_client_series(true);
    let shown = scrape(&metrics);
    assert_eq!(
        sample(
            &shown,
            "netcode_client_packets_sent{client_index=\"2\",client_id=\"5\"}"
        ),
        1.0
    );
}

#[test]
fn record_with_starts_from_zero() {
    let mut metrics = ServerMetrics::new();
    metrics.publish(snapshot(&[ClientSnapshot::new(0, 1, connection(1, None))]));
    metrics.record_with(|s| s.max_clients = 4);
    let text = scrape(&metrics);
    assert_eq!(sample(&text, "netcode_max_clients"), 4.0);
    assert_eq!(sample(&text, "netcode_datagrams_received_total"), 0.0);
    assert_eq!(
        sample(&text, "netcode_packets_sent_total{packet_type=\"denied\"}"),
        0.0
    );
    // No token history figures were given this time.
    assert!(!text.contains("netcode_token_history"), "{text}");
    assert_eq!(metrics.latest().map(|s| s.clients.len()), Some(0));
}

#[test]
fn events_are_counted_before_any_recording() {
    let metrics = ServerMetrics::new();
    let address = Some("127.0.0.1:5000".parse().unwrap());
    for client_id in [1, 2, 3] {
        metrics.count_event(&ServerEvent::ClientConnected {
            client_index: 0,
            client_id,
            address,
        });
    }
    for reason in [
        DisconnectReason::TimedOut,
        DisconnectReason::ClientDisconnect,
        DisconnectReason::TimedOut,
    ] {
        metrics.count_event(&ServerEvent::ClientDisconnected {
            client_index: 0,
            client_id: 1,
            address,
            reason,
        });
    }
    let text = scrape(&metrics);
    assert_eq!(sample(&text, "netcode_connections_accepted_total"), 3.0);
    let left = |reason: &str| {
        sample(
            &text,
            &format!("netcode_connections_closed_total{{reason=\"{reason}\"}}"),
        )
    };
    assert_eq!(left("timed_out"), 2.0);
    assert_eq!(left("client_disconnect"), 1.0);
    assert_eq!(left("server_disconnect"), 0.0);
    assert_eq!(
        series_named(&text, "netcode_connections_closed_total").len(),
        3,
        "one series per reason a disconnect can have"
    );
    // Nothing recorded yet: no server figures.
    assert!(!text.contains("netcode_max_clients"), "{text}");
    assert!(metrics.latest().is_none());
}

#[test]
fn a_registry_of_the_callers_adds_its_labels() {
    let mut first = ServerMetrics::new();
    let mut second = ServerMetrics::new();
    first.record_with(|s| s.max_clients = 8);
    second.record_with(|s| s.max_clients = 32);
    let mut registry = Registry::default();
    for (name, metrics) in [("first", &first), ("second", &second)] {
        registry
            .sub_registry_with_label(("server".into(), name.into()))
            .register_collector(Box::new(metrics.collector()));
    }
    let text = encode_text(&registry).unwrap();
    assert_eq!(sample(&text, "netcode_max_clients{server=\"first\"}"), 8.0);
    assert_eq!(
        sample(&text, "netcode_max_clients{server=\"second\"}"),
        32.0
    );
}
