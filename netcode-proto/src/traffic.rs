//! What one connection carried, counted by its end: a server's slot, or
//! the client (STANDARD.md: none; the sequences it reads are those of
//! *Encrypted Packets* and the handshake of *Client State Machine* and
//! *Server-Side Connection Process*).
//!
//! The counters are a few additions per packet; everything derived (the
//! packets the peer sent that never came, the time since the last packet)
//! is worked out only when [`ConnectionStats`] are read.

use core::time::Duration;

/// What one connection has carried so far: a server's
/// [`client_stats`](crate::server::Server::client_stats) for one slot, or
/// the client's [`connection_stats`](crate::client::Client::connection_stats).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ConnectionStats {
    /// Packets sent to the peer.
    pub packets_sent: u64,
    /// Their bytes on the wire (headers and tags included).
    pub bytes_sent: u64,
    /// Packets from the peer accepted: decrypted, within the replay window
    /// and not seen before.
    pub packets_received: u64,
    /// Their bytes on the wire.
    pub bytes_received: u64,
    /// Packets from the peer dropped as duplicates or replays.
    pub duplicates_dropped: u64,
    /// Packets of the peer's that never arrived, as estimated from gaps in
    /// its sequence numbers: the span from the lowest to the highest
    /// sequence received, less the packets received. Late packets that
    /// still arrive are not counted; ones that arrive after the replay
    /// window has moved past them are.
    pub packets_lost: u64,
    /// The handshake's round trip: on a server, from the last challenge
    /// sent to the response that connected the client; on a client, from
    /// the last response sent to the keep-alive that connected it.
    pub handshake_rtt: Option<Duration>,
    /// Time since the last packet from the peer, as of the time last
    /// handed to the server or client.
    pub since_last_receive: Duration,
}

/// The counters behind [`ConnectionStats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Traffic {
    packets_sent: u64,
    bytes_sent: u64,
    packets_received: u64,
    bytes_received: u64,
    duplicates: u64,
    /// The lowest and highest sequences of the peer's accepted packets.
    sequences: Option<(u64, u64)>,
    handshake_rtt: Option<Duration>,
}

impl Traffic {
    /// Nothing carried yet.
    pub(crate) const EMPTY: Self = Self {
        packets_sent: 0,
        bytes_sent: 0,
        packets_received: 0,
        bytes_received: 0,
        duplicates: 0,
        sequences: None,
        handshake_rtt: None,
    };

    /// Counters of a connection whose handshake took `handshake_rtt`.
    pub(crate) fn new(handshake_rtt: Option<Duration>) -> Self {
        Self {
            handshake_rtt,
            ..Self::default()
        }
    }

    /// A packet of `bytes` went to the peer.
    pub(crate) fn sent(&mut self, bytes: usize) {
        self.packets_sent += 1;
        self.bytes_sent += bytes as u64;
    }

    /// A packet of `bytes` with the peer's `sequence` was accepted.
    pub(crate) fn received(&mut self, sequence: u64, bytes: usize) {
        self.packets_received += 1;
        self.bytes_received += bytes as u64;
        self.sequences = Some(match self.sequences {
            Some((low, high)) => (low.min(sequence), high.max(sequence)),
            None => (sequence, sequence),
        });
    }

    /// A packet from the peer was dropped as a duplicate or replay.
    pub(crate) fn duplicate(&mut self) {
        self.duplicates += 1;
    }

    /// Records the handshake's round trip.
    pub(crate) fn set_handshake_rtt(&mut self, rtt: Duration) {
        self.handshake_rtt = Some(rtt);
    }

    /// What they say, `since_last_receive` after the last packet.
    pub(crate) fn report(&self, since_last_receive: Duration) -> ConnectionStats {
        let span = self
            .sequences
            .map_or(0, |(low, high)| (high - low).saturating_add(1));
        ConnectionStats {
            packets_sent: self.packets_sent,
            bytes_sent: self.bytes_sent,
            packets_received: self.packets_received,
            bytes_received: self.bytes_received,
            duplicates_dropped: self.duplicates,
            packets_lost: span.saturating_sub(self.packets_received),
            handshake_rtt: self.handshake_rtt,
            since_last_receive,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn losses_are_the_gaps_between_the_lowest_and_highest_sequence() {
        let mut t = Traffic::new(Some(Duration::from_millis(30)));
        for sequence in [5, 6, 8, 7, 11] {
            t.received(sequence, 100);
        }
        t.duplicate();
        t.sent(40);
        let s = t.report(Duration::from_millis(3));
        assert_eq!((s.packets_received, s.bytes_received), (5, 500));
        assert_eq!(s.packets_lost, 2, "9 and 10");
        assert_eq!(
            (s.packets_sent, s.bytes_sent, s.duplicates_dropped),
            (1, 40, 1)
        );
        assert_eq!(s.handshake_rtt, Some(Duration::from_millis(30)));
        assert_eq!(Traffic::default().report(Duration::ZERO).packets_lost, 0);
    }
}
