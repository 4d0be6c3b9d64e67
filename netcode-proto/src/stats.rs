//! Counters an operator reads to see what a client or server is doing, and
//! tests read to prove a packet was dropped for the right reason.
//!
//! STANDARD.md: none (every "ignore the packet" of the standard is counted
//! here).

pub use crate::dropped::{DropReason, DroppedDatagram};
use crate::io::Output;
use crate::packet::PacketType;

/// Counters of one client or server since it was created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stats {
    /// Valid packets sent, by type.
    pub sent: [u64; PacketType::COUNT],
    /// Valid packets received and processed, by type.
    pub received: [u64; PacketType::COUNT],
    /// Datagrams or handshake steps dropped, by [`DropReason::index`].
    pub dropped: [u64; DropReason::COUNT],
}

impl Default for Stats {
    fn default() -> Self {
        Self::new()
    }
}

impl Stats {
    /// All counters at zero.
    pub const fn new() -> Self {
        Self {
            sent: [0; PacketType::COUNT],
            received: [0; PacketType::COUNT],
            dropped: [0; DropReason::COUNT],
        }
    }

    /// Packets of `packet_type` sent.
    pub fn sent(&self, packet_type: PacketType) -> u64 {
        self.sent[packet_type as usize]
    }

    /// Packets of `packet_type` received and processed.
    pub fn received(&self, packet_type: PacketType) -> u64 {
        self.received[packet_type as usize]
    }

    /// Datagrams dropped for `reason`.
    pub fn dropped(&self, reason: DropReason) -> u64 {
        self.dropped[reason.index()]
    }

    /// Datagrams dropped for any reason.
    pub fn dropped_total(&self) -> u64 {
        self.dropped.iter().sum()
    }

    /// Every non-zero drop counter with its reason.
    pub fn drops(&self) -> impl Iterator<Item = (DropReason, u64)> + '_ {
        self.dropped
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .filter_map(|(i, n)| DropReason::from_index(i).map(|r| (r, *n)))
    }

    pub(crate) fn count_sent(&mut self, packet_type: PacketType) {
        self.sent[packet_type as usize] += 1;
    }

    pub(crate) fn count_received(&mut self, packet_type: PacketType) {
        self.received[packet_type as usize] += 1;
    }

    /// Counts a dropped datagram and reports it to the output.
    pub(crate) fn report_drop<E>(&mut self, out: &mut impl Output<E>, dropped: DroppedDatagram) {
        self.dropped[dropped.reason.index()] += 1;
        out.dropped(dropped);
    }
}
