//! The scrape's side: [`SnapshotCollector`] encodes the latest snapshot
//! and the event counts as Prometheus metrics each time it is asked.
//!
//! Counter names are written here without their `_total` suffix, which
//! the encoder adds; the README lists every metric as exposed.

use std::fmt;
use std::sync::Arc;

use netcode_std::DisconnectReason;
use netcode_std::proto::PacketType;
use netcode_std::proto::stats::DropReason;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeGaugeValue, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

use crate::shared::{DISCONNECT_REASONS, ScrapeView, Shared};
use crate::snapshot::{ClientSnapshot, ServerSnapshot, TokenHistorySnapshot};

/// Encodes a [`ServerMetrics`](crate::ServerMetrics)'s latest snapshot at
/// each scrape; register it with a `prometheus_client` registry.
#[derive(Debug, Clone)]
pub struct SnapshotCollector {
    shared: Arc<Shared>,
}

impl SnapshotCollector {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        Self { shared }
    }
}

impl Collector for SnapshotCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), fmt::Error> {
        let view = self.shared.view();
        encode_view(&mut encoder, &view)
    }
}

/// The label value of a packet type: its name in snake_case.
pub(crate) fn packet_type_label(packet_type: PacketType) -> &'static str {
    match packet_type {
        PacketType::Request => "request",
        PacketType::Denied => "denied",
        PacketType::Challenge => "challenge",
        PacketType::Response => "response",
        PacketType::KeepAlive => "keep_alive",
        PacketType::Payload => "payload",
        PacketType::Disconnect => "disconnect",
    }
}

/// The label value of a disconnect reason.
pub(crate) fn disconnect_reason_label(reason: DisconnectReason) -> &'static str {
    match reason {
        DisconnectReason::None => "none",
        DisconnectReason::TimedOut => "timed_out",
        DisconnectReason::ClientDisconnect => "client_disconnect",
        DisconnectReason::ServerDisconnect => "server_disconnect",
    }
}

/// Everything a scrape shows.
fn encode_view(encoder: &mut DescriptorEncoder, view: &ScrapeView) -> fmt::Result {
    counter(
        encoder,
        "netcode_connections_accepted",
        "Clients that took a slot, counted from the server's connect events.",
        view.connects,
    )?;
    labelled_counters(
        encoder,
        "netcode_connections_closed",
        "Clients that left their slot, by reason, counted from the server's disconnect events.",
        "reason",
        DISCONNECT_REASONS
            .iter()
            .zip(view.disconnects)
            .map(|(reason, count)| (disconnect_reason_label(*reason), count)),
    )?;
    let Some(snapshot) = &view.snapshot else {
        return Ok(());
    };
    encode_protocol(encoder, snapshot)?;
    encode_transport(encoder, snapshot)?;
    if let Some(history) = &snapshot.token_history {
        encode_token_history(encoder, history)?;
    }
    if !view.client_series {
        return Ok(());
    }
    encode_clients(encoder, &snapshot.clients)
}

/// Slots, and the core's counters: packets by type, drops by reason.
fn encode_protocol(encoder: &mut DescriptorEncoder, snapshot: &ServerSnapshot) -> fmt::Result {
    gauge(
        encoder,
        "netcode_max_clients",
        "Open client slots (0 while the server is stopped).",
        snapshot.max_clients as u64,
    )?;
    gauge(
        encoder,
        "netcode_clients_connected",
        "Occupied client slots.",
        snapshot.clients_connected() as u64,
    )?;
    let stats = &snapshot.stats;
    labelled_counters(
        encoder,
        "netcode_packets_sent",
        "Valid packets sent, by packet type (denied: connection requests refused because every slot was taken).",
        "packet_type",
        PacketType::ALL
            .iter()
            .map(|t| (packet_type_label(*t), stats.sent(*t))),
    )?;
    labelled_counters(
        encoder,
        "netcode_packets_received",
        "Valid packets received and processed, by packet type.",
        "packet_type",
        PacketType::ALL
            .iter()
            .map(|t| (packet_type_label(*t), stats.received(*t))),
    )?;
    labelled_counters(
        encoder,
        "netcode_datagrams_dropped",
        "Datagrams or handshake steps ignored, by reason (refused connection attempts among them).",
        "reason",
        (0..DropReason::COUNT).filter_map(|index| {
            DropReason::from_index(index).map(|reason| (reason.name(), stats.dropped(reason)))
        }),
    )
}

/// The host's socket, queue and clock counters.
fn encode_transport(encoder: &mut DescriptorEncoder, snapshot: &ServerSnapshot) -> fmt::Result {
    let transport = &snapshot.transport;
    let counters: [(&str, &str, u64); 12] = [
        (
            "netcode_datagrams_received",
            "Datagrams read from the server's sockets.",
            transport.datagrams_received,
        ),
        (
            "netcode_datagrams_sent",
            "Datagrams handed to the operating system.",
            transport.datagrams_sent,
        ),
        (
            "netcode_receive_calls",
            "Batched socket reads.",
            transport.receive_calls,
        ),
        (
            "netcode_send_calls",
            "Batched socket sends.",
            transport.send_calls,
        ),
        (
            "netcode_send_errors",
            "Sends the operating system refused.",
            transport.send_errors,
        ),
        (
            "netcode_send_no_socket",
            "Sends to an address family the server has no socket for.",
            transport.send_no_socket,
        ),
        (
            "netcode_receive_errors",
            "Socket receive errors skipped.",
            transport.receive_errors,
        ),
        (
            "netcode_payloads_dropped_queue_full",
            "Payloads dropped because their client's receive queue was full.",
            transport.queue_full,
        ),
        (
            "netcode_events_dropped",
            "Connect and disconnect events dropped because nobody drained the event queue.",
            transport.events_dropped,
        ),
        (
            "netcode_clock_times_not_finite",
            "Times handed to the server that were not finite and were ignored.",
            transport.times_not_finite,
        ),
        (
            "netcode_clock_times_backward",
            "Times handed to the server that were earlier than the one before.",
            transport.times_backward,
        ),
        (
            "netcode_clock_time_jumps",
            "Forward time steps longer than the host's maximum, counted as that maximum.",
            transport.time_jumps,
        ),
    ];
    for (name, help, value) in counters {
        counter(encoder, name, help, value)?;
    }
    Ok(())
}

/// The connect token history: how full it is, and its file writer.
fn encode_token_history(
    encoder: &mut DescriptorEncoder,
    history: &TokenHistorySnapshot,
) -> fmt::Result {
    gauge(
        encoder,
        "netcode_token_history_capacity",
        "Connect token history entries the server holds at once.",
        history.capacity as u64,
    )?;
    gauge(
        encoder,
        "netcode_token_history_in_use",
        "Connect token history entries holding an unexpired token.",
        history.in_use as u64,
    )?;
    gauge(
        encoder,
        "netcode_token_records_pending",
        "Records of new connect tokens not yet durable in the token history file.",
        history.records_pending as u64,
    )?;
    let Some(writer) = history.writer else {
        return Ok(());
    };
    let counters: [(&str, &str, u64); 6] = [
        (
            "netcode_token_history_records_durable",
            "Token history records made durable.",
            writer.records_durable,
        ),
        (
            "netcode_token_history_syncs",
            "Token history groups written and synced.",
            writer.syncs,
        ),
        (
            "netcode_token_history_records_failed",
            "Token history records whose group failed to be written or synced.",
            writer.records_failed,
        ),
        (
            "netcode_token_history_requests_refused",
            "Token history requests refused because the writer was full.",
            writer.requests_refused,
        ),
        (
            "netcode_token_history_compactions",
            "Token history file compactions done.",
            writer.compactions,
        ),
        (
            "netcode_token_history_compactions_failed",
            "Token history file compactions that failed.",
            writer.compactions_failed,
        ),
    ];
    for (name, help, value) in counters {
        counter(encoder, name, help, value)?;
    }
    Ok(())
}

/// One gauge per connected client and figure, labelled by slot and id.
fn encode_clients(encoder: &mut DescriptorEncoder, clients: &[ClientSnapshot]) -> fmt::Result {
    type Count = fn(&ClientSnapshot) -> u64;
    let counts: [(&str, &str, Count); 6] = [
        (
            "netcode_client_packets_sent",
            "Packets the server sent this client on its current connection.",
            |c| c.connection.packets_sent,
        ),
        (
            "netcode_client_sent_bytes",
            "Bytes on the wire of the packets the server sent this client.",
            |c| c.connection.bytes_sent,
        ),
        (
            "netcode_client_packets_received",
            "Packets from this client accepted on its current connection.",
            |c| c.connection.packets_received,
        ),
        (
            "netcode_client_received_bytes",
            "Bytes on the wire of the packets accepted from this client.",
            |c| c.connection.bytes_received,
        ),
        (
            "netcode_client_duplicates_dropped",
            "Packets from this client dropped as duplicates or replays.",
            |c| c.connection.duplicates_dropped,
        ),
        (
            "netcode_client_packets_lost",
            "Packets of this client's that never arrived, from gaps in its sequence numbers.",
            |c| c.connection.packets_lost,
        ),
    ];
    for (name, help, count) in counts {
        client_gauges(encoder, name, help, clients, |c| Some(count(c)))?;
    }
    client_gauges(
        encoder,
        "netcode_client_handshake_rtt_seconds",
        "Round trip of this client's handshake, from the server's last challenge to the response that connected it.",
        clients,
        |c| c.connection.handshake_rtt.map(|rtt| rtt.as_secs_f64()),
    )?;
    client_gauges(
        encoder,
        "netcode_client_since_last_receive_seconds",
        "Time since this client's last packet, as of the server's last update.",
        clients,
        |c| Some(c.connection.since_last_receive.as_secs_f64()),
    )
}

/// A gauge with one sample per client that has a value for it (none at
/// all, descriptor included, when no client has).
fn client_gauges<V: EncodeGaugeValue>(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    clients: &[ClientSnapshot],
    figure: impl Fn(&ClientSnapshot) -> Option<V>,
) -> fmt::Result {
    let mut samples = clients
        .iter()
        .filter_map(|client| figure(client).map(|value| (client, value)))
        .peekable();
    if samples.peek().is_none() {
        return Ok(());
    }
    let mut metric = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
    for (client, value) in samples {
        let labels = [
            ("client_index", client.client_index as u64),
            ("client_id", client.client_id),
        ];
        ConstGauge::new(value).encode(metric.encode_family(&labels)?)?;
    }
    Ok(())
}

/// A counter with no labels.
fn counter(encoder: &mut DescriptorEncoder, name: &str, help: &str, value: u64) -> fmt::Result {
    let metric = ConstCounter::new(value);
    metric.encode(encoder.encode_descriptor(name, help, None, MetricType::Counter)?)
}

/// A gauge with no labels.
fn gauge(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    value: impl EncodeGaugeValue,
) -> fmt::Result {
    let metric = ConstGauge::new(value);
    metric.encode(encoder.encode_descriptor(name, help, None, MetricType::Gauge)?)
}

/// A counter with one sample per value of `label`.
fn labelled_counters<'v>(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    label: &str,
    samples: impl Iterator<Item = (&'v str, u64)>,
) -> fmt::Result {
    let mut metric = encoder.encode_descriptor(name, help, None, MetricType::Counter)?;
    for (value_label, value) in samples {
        let labels = [(label, value_label)];
        ConstCounter::new(value).encode(metric.encode_family(&labels)?)?;
    }
    Ok(())
}
