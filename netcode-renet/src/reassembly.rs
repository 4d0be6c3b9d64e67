//! Joining split renet packets again: the parts of one connection that
//! wait for their other half, in bounded memory, each for a bounded time
//! (see [`framing`](crate::framing) for the format).

use std::time::Duration;

use crate::framing::{self, MAX_PACKET_BYTES, PART_BYTES, Part};
use crate::stats::FramingStats;

/// Split packets a connection holds half of at most. The two halves of a
/// pair leave back to back, but a network that reorders (jitter) delivers
/// them among the halves of the other pairs in flight: at 60 Hz with a few
/// split packets a tick and tens of milliseconds of jitter, a dozen or
/// more pairs wait at once (4 joined about one pair in eight on such a
/// network, 32 about 19 in 20; `tests/it/reordering.rs`). When a further pair
/// starts, the oldest waiting half is dropped (and counted). Each pair
/// holds a buffer of `MAX_PACKET_BYTES`, made when first needed, so a
/// connection keeps at most 77 KB, and only as many buffers as pairs ever
/// waited at once.
pub const PENDING_PAIRS: usize = 32;

/// How long a half waits for its partner before it is dropped (and
/// counted). renet resends reliable data every 300 ms by default, so a
/// half older than this is of no use.
pub const PART_TIMEOUT: Duration = Duration::from_secs(1);

/// One pair being joined.
#[derive(Debug)]
struct Pending {
    /// The first part's netcode sequence, which names the pair.
    key: u64,
    /// When its first half arrived.
    since: Duration,
    /// Whether it waits for anything (a free entry keeps its buffer).
    in_use: bool,
    has_first: bool,
    /// Bytes of the second part, 0 until it arrives.
    second_len: usize,
    /// The packet: the first part at 0, the second at [`PART_BYTES`].
    buffer: Vec<u8>,
}

/// The receiving side of one connection's framing.
#[derive(Debug, Default)]
pub(crate) struct Inbound {
    pending: Vec<Pending>,
}

impl Inbound {
    /// The renet packet that `payload`, received with netcode sequence
    /// `sequence` at `now`, holds or completes, if any. Counts in `stats`.
    pub(crate) fn accept<'a>(
        &'a mut self,
        payload: &'a [u8],
        sequence: u64,
        now: Duration,
        stats: &mut FramingStats,
    ) -> Option<&'a [u8]> {
        let part = framing::parse(payload);
        let key = match part {
            Some(Part::Whole(packet)) => {
                stats.packets_received += 1;
                return Some(packet);
            }
            Some(Part::First(_)) => Some(sequence),
            Some(Part::Second { gap, .. }) => sequence.checked_sub(gap),
            None => None,
        };
        match (key, part) {
            (Some(key), Some(part)) => self.join(key, part, now, stats),
            _ => {
                stats.payloads_malformed += 1;
                None
            }
        }
    }

    /// Puts a part of pair `key` in place; the packet when that completes
    /// it.
    fn join(
        &mut self,
        key: u64,
        part: Part<'_>,
        now: Duration,
        stats: &mut FramingStats,
    ) -> Option<&[u8]> {
        let index = match self.pending.iter().position(|p| p.in_use && p.key == key) {
            Some(index) => index,
            None => self.start(key, now, stats),
        };
        let pending = &mut self.pending[index];
        match part {
            Part::First(data) if !pending.has_first => {
                pending.buffer[..PART_BYTES].copy_from_slice(data);
                pending.has_first = true;
            }
            Part::Second { data, .. } if pending.second_len == 0 => {
                pending.buffer[PART_BYTES..PART_BYTES + data.len()].copy_from_slice(data);
                pending.second_len = data.len();
            }
            _ => {
                // A part seen twice: netcode's replay protection makes that
                // impossible from a real sender.
                stats.payloads_malformed += 1;
                return None;
            }
        }
        if !(pending.has_first && pending.second_len > 0) {
            return None;
        }
        pending.in_use = false;
        stats.packets_received += 1;
        stats.packets_reassembled += 1;
        Some(&pending.buffer[..PART_BYTES + pending.second_len])
    }

    /// An entry for a new pair `key`: a free one, a new one while fewer
    /// than [`PENDING_PAIRS`] exist, or else the oldest, whose half is
    /// dropped.
    fn start(&mut self, key: u64, now: Duration, stats: &mut FramingStats) -> usize {
        let index = if let Some(free) = self.pending.iter().position(|p| !p.in_use) {
            free
        } else if self.pending.len() < PENDING_PAIRS {
            self.pending.push(Pending {
                key,
                since: now,
                in_use: false,
                has_first: false,
                second_len: 0,
                buffer: vec![0; MAX_PACKET_BYTES],
            });
            self.pending.len() - 1
        } else {
            stats.parts_incomplete += 1;
            let oldest = self.pending.iter().enumerate().min_by_key(|(_, p)| p.since);
            oldest.map_or(0, |(i, _)| i)
        };
        let pending = &mut self.pending[index];
        pending.key = key;
        pending.since = now;
        pending.in_use = true;
        pending.has_first = false;
        pending.second_len = 0;
        index
    }

    /// Drops the halves that have waited [`PART_TIMEOUT`] by `now`.
    pub(crate) fn expire(&mut self, now: Duration, stats: &mut FramingStats) {
        for pending in &mut self.pending {
            if pending.in_use && now.saturating_sub(pending.since) >= PART_TIMEOUT {
                pending.in_use = false;
                stats.parts_incomplete += 1;
            }
        }
    }

    /// Halves waiting for their partner.
    #[cfg(test)]
    fn waiting(&self) -> usize {
        self.pending.iter().filter(|p| p.in_use).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: Duration = Duration::from_secs(5);

    /// [`Inbound::accept`], the packet copied out.
    fn take(
        inbound: &mut Inbound,
        payload: &[u8],
        sequence: u64,
        now: Duration,
        stats: &mut FramingStats,
    ) -> Option<Vec<u8>> {
        inbound
            .accept(payload, sequence, now, stats)
            .map(<[u8]>::to_vec)
    }

    fn first(fill: u8) -> Vec<u8> {
        let mut payload = vec![fill; 1 + PART_BYTES];
        payload[0] = 0xFD;
        payload
    }

    fn second(fill: u8, len: usize, gap: u64) -> Vec<u8> {
        let mut payload = vec![fill; 1 + len];
        payload[0] = if gap == 1 { 0xFF } else { 0xFE };
        payload
    }

    fn joined(fill_first: u8, fill_second: u8, len: usize) -> Vec<u8> {
        let mut packet = vec![fill_first; PART_BYTES];
        packet.extend(std::iter::repeat_n(fill_second, len));
        packet
    }

    #[test]
    fn joins_in_either_order_at_either_gap() {
        for gap in [1, 2] {
            let mut inbound = Inbound::default();
            let mut stats = FramingStats::default();
            assert_eq!(take(&mut inbound, &first(1), 10, T0, &mut stats), None);
            let packet = take(&mut inbound, &second(2, 201, gap), 10 + gap, T0, &mut stats);
            assert_eq!(packet, Some(joined(1, 2, 201)));
            // Second part first.
            assert_eq!(
                take(&mut inbound, &second(4, 5, gap), 30 + gap, T0, &mut stats),
                None
            );
            let packet = take(&mut inbound, &first(3), 30, T0, &mut stats);
            assert_eq!(packet, Some(joined(3, 4, 5)));
            assert_eq!((stats.packets_received, stats.packets_reassembled), (2, 2));
            assert_eq!(inbound.waiting(), 0);
        }
    }

    #[test]
    fn halves_of_other_pairs_never_join() {
        let mut inbound = Inbound::default();
        let mut stats = FramingStats::default();
        assert_eq!(take(&mut inbound, &first(1), 10, T0, &mut stats), None);
        // The second part of the pair at 12, and one naming 9: neither is 10's.
        assert_eq!(
            take(&mut inbound, &second(2, 9, 1), 13, T0, &mut stats),
            None
        );
        assert_eq!(
            take(&mut inbound, &second(2, 9, 2), 11, T0, &mut stats),
            None
        );
        assert_eq!(inbound.waiting(), 3);
        assert_eq!(stats.packets_received, 0);
    }

    #[test]
    fn waiting_halves_are_bounded_and_expire() {
        let mut inbound = Inbound::default();
        let mut stats = FramingStats::default();
        for i in 0..PENDING_PAIRS as u64 + 3 {
            let now = T0 + Duration::from_millis(i);
            assert_eq!(
                take(&mut inbound, &first(1), 100 + 10 * i, now, &mut stats),
                None
            );
        }
        assert_eq!(inbound.pending.len(), PENDING_PAIRS, "memory stays bounded");
        assert_eq!(stats.parts_incomplete, 3, "the oldest were dropped");
        // The newest still joins.
        let last = 100 + 10 * (PENDING_PAIRS as u64 + 2);
        let packet = take(&mut inbound, &second(7, 1, 1), last + 1, T0, &mut stats);
        assert_eq!(packet, Some(joined(1, 7, 1)));
        inbound.expire(T0 + PART_TIMEOUT, &mut stats);
        assert_eq!(inbound.waiting(), PENDING_PAIRS - 1, "too young to expire");
        let newest = Duration::from_millis(PENDING_PAIRS as u64 + 3);
        inbound.expire(T0 + PART_TIMEOUT + newest, &mut stats);
        assert_eq!(inbound.waiting(), 0);
        assert_eq!(stats.parts_incomplete, 3 + PENDING_PAIRS as u64 - 1);
    }

    #[test]
    fn garbage_is_counted_and_dropped() {
        let mut inbound = Inbound::default();
        let mut stats = FramingStats::default();
        assert_eq!(take(&mut inbound, &[], 1, T0, &mut stats), None);
        assert_eq!(take(&mut inbound, &[0xFD, 1, 2], 2, T0, &mut stats), None);
        // A second part naming a sequence before 0.
        assert_eq!(
            take(&mut inbound, &second(1, 3, 2), 1, T0, &mut stats),
            None
        );
        assert_eq!(take(&mut inbound, &first(1), 8, T0, &mut stats), None);
        assert_eq!(
            take(&mut inbound, &first(1), 8, T0, &mut stats),
            None,
            "twice"
        );
        assert_eq!(stats.payloads_malformed, 4);
        assert_eq!(stats.packets_received, 0);
    }
}
