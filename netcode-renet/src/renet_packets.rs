//! Tests: renet 2.x's largest packets of each kind, made by renet itself
//! (a client and a server joined in process, no network), measured, and
//! carried through the framing within netcode's 1200-byte payloads.
//!
//! `cargo test -p netcode-renet --lib renet_packets -- --nocapture` prints
//! the sizes.

use std::time::Duration;

use netcode_std::SendError;
use netcode_std::constants::MAX_PAYLOAD_BYTES;
use renet::{ConnectionConfig, DefaultChannel, RenetClient, RenetServer};

use crate::framing::{self, PayloadSink};
use crate::reassembly::Inbound;
use crate::stats::FramingStats;

const CLIENT: u64 = 1;

/// A renet server and its in-process client.
struct Pair {
    server: RenetServer,
    client: RenetClient,
}

impl Pair {
    fn new() -> Self {
        let mut server = RenetServer::new(ConnectionConfig::default());
        let client = server.new_local_client(CLIENT);
        Self { server, client }
    }

    /// The client's packets, delivered to the server, and the server's
    /// answers (acks) delivered back.
    fn exchange(&mut self) -> Vec<Vec<u8>> {
        let packets = self.client.get_packets_to_send();
        for packet in &packets {
            self.server.process_packet_from(packet, CLIENT).unwrap();
        }
        for packet in self.server.get_packets_to_send(CLIENT).unwrap() {
            self.client.process_packet(&packet);
        }
        packets
    }

    /// Runs until the client's packet sequence and every channel's message
    /// ids are past 16383, where renet's varints take 4 bytes (the next
    /// step, 8 bytes, takes 2^30 packets: years of traffic).
    fn age(&mut self) {
        for _ in 0..16_400 {
            self.client
                .send_message(DefaultChannel::ReliableOrdered, vec![1]);
            self.client
                .send_message(DefaultChannel::ReliableUnordered, vec![2]);
            self.client
                .send_message(DefaultChannel::Unreliable, vec![3; 1201]);
            self.exchange();
        }
        assert!(self.client.is_connected());
    }
}

/// The largest packet the client sends after `send` queues messages.
fn largest(pair: &mut Pair, send: impl FnOnce(&mut RenetClient)) -> Vec<u8> {
    send(&mut pair.client);
    let packets = pair.exchange();
    assert!(pair.client.is_connected() && pair.server.is_connected(CLIENT));
    packets.into_iter().max_by_key(Vec::len).unwrap()
}

/// A connection that records its payloads.
#[derive(Default)]
struct Recorder {
    sent: Vec<(u64, Vec<u8>)>,
}

impl PayloadSink for Recorder {
    fn next_sequence(&self) -> u64 {
        self.sent.len() as u64
    }

    fn send(&mut self, payload: &[u8]) -> Result<(), SendError> {
        assert!((1..=MAX_PAYLOAD_BYTES).contains(&payload.len()));
        self.sent.push((self.sent.len() as u64, payload.to_vec()));
        Ok(())
    }
}

/// Sends `packet` through the framing and receives it back.
fn carry(packet: &[u8]) -> (Vec<u8>, usize) {
    let mut sink = Recorder::default();
    let mut stats = FramingStats::default();
    framing::send_packet(packet, &mut sink, &mut [0; MAX_PAYLOAD_BYTES], &mut stats).unwrap();
    let mut inbound = Inbound::default();
    let mut received = Vec::new();
    for (sequence, payload) in &sink.sent {
        if let Some(p) = inbound.accept(payload, *sequence, Duration::ZERO, &mut stats) {
            received.push(p.to_vec());
        }
    }
    assert_eq!(received.len(), 1);
    (received.remove(0), sink.sent.len())
}

#[test]
fn renets_largest_packets_travel_in_conformant_payloads() {
    let mut pair = Pair::new();
    pair.age();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "reliable slice (1200 bytes of a 100-slice message)",
            largest(&mut pair, |c| {
                c.send_message(DefaultChannel::ReliableOrdered, vec![4; 1200 * 100]);
            }),
        ),
        (
            "unreliable slice (1200 bytes of a 100-slice message)",
            largest(&mut pair, |c| {
                c.send_message(DefaultChannel::Unreliable, vec![5; 1200 * 100]);
            }),
        ),
        (
            "one reliable message of 1200 bytes",
            largest(&mut pair, |c| {
                c.send_message(DefaultChannel::ReliableOrdered, vec![6; 1200]);
            }),
        ),
        (
            "one unreliable message of 1200 bytes",
            largest(&mut pair, |c| {
                c.send_message(DefaultChannel::Unreliable, vec![7; 1200]);
            }),
        ),
        (
            // 94 bytes + a 2-byte length + a 4-byte id: 100 bytes each,
            // 12 of them exactly renet's 1200-byte packing limit.
            "12 reliable messages of 94 bytes, packed",
            largest(&mut pair, |c| {
                for _ in 0..12 {
                    c.send_message(DefaultChannel::ReliableOrdered, vec![8; 94]);
                }
            }),
        ),
        (
            "12 unreliable messages of 98 bytes, packed",
            largest(&mut pair, |c| {
                for _ in 0..12 {
                    c.send_message(DefaultChannel::Unreliable, vec![9; 98]);
                }
            }),
        ),
    ];
    for (what, packet) in &cases {
        let (received, payloads) = carry(packet);
        assert_eq!(&received, packet, "{what}");
        println!("{what}: {} bytes, {payloads} payload(s)", packet.len());
        assert!(packet.len() > MAX_PAYLOAD_BYTES, "{what} runs past 1200");
        assert_eq!(payloads, 2, "{what}");
    }
    let largest = cases.iter().map(|(_, p)| p.len()).max().unwrap();
    println!("largest data packet: {largest} bytes");
}

/// The server's largest packet (its ack) after it has received the
/// client's packets of sequences `delivered`, in that order; `None` when
/// renet could not serialize it and dropped the connection.
fn ack_after(delivered: impl Iterator<Item = u64>) -> Option<Vec<u8>> {
    let mut pair = Pair::new();
    let mut sent = Vec::new();
    let needed: Vec<u64> = delivered.collect();
    let highest = needed.iter().copied().max().unwrap_or(0);
    while (sent.len() as u64) <= highest {
        pair.client
            .send_message(DefaultChannel::Unreliable, vec![1]);
        sent.extend(pair.client.get_packets_to_send());
    }
    for sequence in needed {
        pair.server
            .process_packet_from(&sent[sequence as usize], CLIENT)
            .unwrap();
    }
    let acks = pair.server.get_packets_to_send(CLIENT).unwrap();
    let largest = acks.into_iter().max_by_key(Vec::len);
    assert_eq!(largest.is_some(), pair.server.is_connected(CLIENT));
    largest
}

#[test]
fn renets_ack_packets_grow_past_1300_bytes_under_reordering_and_still_travel() {
    // Every third packet lost: renet keeps at most 64 ranges when they
    // arrive in order.
    let in_order = ack_after((0..600).step_by(3)).unwrap();
    // Arriving newest first, each range goes in front and the 64-range
    // limit never applies: the ack grows until renet's 1400-byte
    // serialization buffer ends it. Sequences 100 apart make each range 3
    // bytes (a 2-byte gap, a 1-byte length).
    let newest_first = |ranges: u64| ack_after((0..ranges).rev().map(|i| 16_400 + 100 * i));
    let mut sizes = Vec::new();
    for ranges in [64, 300, 440, 464] {
        let packet = newest_first(ranges).unwrap();
        let (received, payloads) = carry(&packet);
        assert_eq!(received, packet);
        sizes.push((ranges, packet.len(), payloads));
    }
    println!(
        "ack of 64 ranges received in order: {} bytes",
        in_order.len()
    );
    for (ranges, len, payloads) in &sizes {
        println!(
            "ack of {ranges} ranges received newest first: {len} bytes, {payloads} payload(s)"
        );
    }
    assert!(in_order.len() < 300);
    assert!(
        sizes.iter().any(|&(_, len, _)| len > 1300),
        "past renetcode's payload limit"
    );
    assert_eq!(sizes.last().map(|s| s.1), Some(1398), "renet's largest ack");
    // One range more would take 1401 bytes: renet itself gives up.
    assert_eq!(newest_first(465), None, "renet disconnects past 1400 bytes");
}
