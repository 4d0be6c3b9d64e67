//! What every server and every client set of the UDP run does and counts:
//! a server echoes every payload to its sender and counts what it moved
//! ([`EchoServer`], [`Counters`]); N clients keep a window of payloads in
//! flight each ([`EchoClients`], [`Flow`]) and count the echoes
//! ([`Tally`]).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use netcode_bench::fixtures::{PRIVATE_KEY, PROTOCOL_ID};
use netcode_mio::ServerConfig;
use netcode_mio::netcode_std::TransportStats;
use netcode_mio::proto::stats::Stats;
use netcode_mio::proto::{Key, PacketType};

use super::clock::Clock;
use super::kinds::PAYLOAD_BYTES;

/// How often the client loops sweep every client (update, lost windows)
/// and the renetcode loops run their timers.
pub(super) const SWEEP_SECONDS: f64 = 0.005;

/// A payload not echoed for this long is counted lost and leaves its
/// client's window.
const LOSS_SECONDS: f64 = 0.5;

/// Bytes at the start of every payload that carry its id.
const ID_BYTES: usize = 8;

/// How long the clients have to connect.
pub(super) const CONNECT_SECONDS: f64 = 30.0;

/// What the clients counted over the whole run.
#[derive(Default)]
pub(super) struct Tally {
    pub(super) echoes: u64,
    pub(super) lost: u64,
    pub(super) wrong: u64,
}

/// One client's window: the payloads it has in flight, by id (the first
/// bytes of each payload, which the echo brings back), with their send
/// times.
#[derive(Default, Clone)]
pub(super) struct Flow {
    next_id: u64,
    in_flight: Vec<(u64, f64)>,
}

impl Flow {
    /// Writes the id of the payload `ahead` after the next one into the
    /// start of `payload`.
    pub(super) fn stamp(&self, ahead: u64, payload: &mut [u8]) {
        payload[..ID_BYTES].copy_from_slice(&(self.next_id + ahead).to_le_bytes());
    }

    /// The next stamped payload left.
    pub(super) fn sent(&mut self, now: f64) {
        self.in_flight.push((self.next_id, now));
        self.next_id += 1;
    }

    /// An echo arrived: `payload` is what it carried. An echo of the wrong
    /// length is counted wrong; one of a payload already counted lost
    /// changes nothing but the echo count.
    pub(super) fn echo(&mut self, payload: &[u8], tally: &mut Tally) {
        tally.echoes += 1;
        if payload.len() != PAYLOAD_BYTES {
            tally.wrong += 1;
            return;
        }
        let mut id = [0; ID_BYTES];
        id.copy_from_slice(&payload[..ID_BYTES]);
        let id = u64::from_le_bytes(id);
        if let Some(i) = self.in_flight.iter().position(|(sent, _)| *sent == id) {
            self.in_flight.swap_remove(i);
        }
    }

    /// How many payloads may be sent now, after counting those in flight
    /// too long as lost.
    pub(super) fn room(&mut self, now: f64, window: usize, tally: &mut Tally) -> usize {
        let before = self.in_flight.len();
        self.in_flight
            .retain(|(_, sent)| now - sent <= LOSS_SECONDS);
        tally.lost += (before - self.in_flight.len()) as u64;
        window.saturating_sub(self.in_flight.len())
    }
}

/// N clients of one implementation, all driven from this thread.
pub(super) trait EchoClients {
    /// Clients connected.
    fn connected(&self) -> usize;
    /// Waits briefly for datagrams (where the implementation can wait),
    /// handles them, counts echoes and tops every connected client's window
    /// up to `window` payloads in flight (0: send nothing).
    fn turn(&mut self, clock: Clock, window: usize, tally: &mut Tally);
}

/// What a server's thread counts, read by the clients' thread.
#[derive(Default)]
pub(super) struct Counters {
    /// Payloads received and echoed so far.
    payloads: AtomicU64,
    /// Datagrams received and sent, where the server counts them.
    datagrams: AtomicU64,
    /// Calls to the socket's batch methods, where the server counts them.
    calls: AtomicU64,
    /// Keep-alive packets sent and received, where the server counts them.
    keep_alives: AtomicU64,
}

/// The counters at one moment.
pub(super) struct Counts {
    pub(super) payloads: u64,
    pub(super) datagrams: u64,
    pub(super) calls: u64,
    pub(super) keep_alives: u64,
}

/// A server's running totals of what it moved.
#[derive(Default)]
pub(super) struct Totals {
    /// Datagrams received and sent.
    pub(super) datagrams: u64,
    /// Calls to the socket's batch methods.
    pub(super) calls: u64,
    /// Keep-alive packets sent and received.
    pub(super) keep_alives: u64,
}

impl Totals {
    /// What one of our servers moved, from its socket counters and its
    /// protocol counters.
    pub(super) fn ours(transport: TransportStats, protocol: &Stats) -> Self {
        Self {
            datagrams: transport.datagrams_received + transport.datagrams_sent,
            calls: transport.receive_calls + transport.send_calls,
            keep_alives: protocol.sent(PacketType::KeepAlive)
                + protocol.received(PacketType::KeepAlive),
        }
    }
}

impl Counters {
    /// Adds `payloads` echoed.
    pub(super) fn echoed(&self, payloads: u64) {
        if payloads > 0 {
            self.payloads.fetch_add(payloads, Relaxed);
        }
    }

    /// Sets the server's running totals.
    pub(super) fn totals(&self, totals: &Totals) {
        self.datagrams.store(totals.datagrams, Relaxed);
        self.calls.store(totals.calls, Relaxed);
        self.keep_alives.store(totals.keep_alives, Relaxed);
    }

    /// The counters now.
    pub(super) fn read(&self) -> Counts {
        Counts {
            payloads: self.payloads.load(Relaxed),
            datagrams: self.datagrams.load(Relaxed),
            calls: self.calls.load(Relaxed),
            keep_alives: self.keep_alives.load(Relaxed),
        }
    }
}

/// A server that echoes every payload to its sender.
pub(super) trait EchoServer {
    /// The address tokens list.
    fn address(&self) -> SocketAddr;
    /// Connected clients, or `None` for a server without connections.
    fn connected(&self) -> Option<usize>;
    /// Waits for datagrams (at most `wait`, where the implementation can
    /// wait at all), handles them, sends what is due and echoes every
    /// payload, counting them in `counters`.
    fn turn(&mut self, clock: Clock, wait: Duration, counters: &Counters) -> Result<(), String>;
}

/// The configuration of every server of ours.
pub(super) fn config() -> ServerConfig {
    ServerConfig::new(PROTOCOL_ID, Key::from_bytes(PRIVATE_KEY))
}
