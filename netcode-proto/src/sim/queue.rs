//! The datagrams in flight, ordered by delivery time (ties in send order),
//! with a per-destination index so one endpoint's datagrams come out
//! without a scan.

use crate::time::Instant;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;
use core::net::SocketAddr;

/// Orders datagrams in flight: by delivery time, then by the order in which
/// they were queued.
pub(super) type Key = (Instant, u64);

/// One datagram in flight.
#[derive(Debug, Clone)]
pub(super) struct InFlight {
    pub(super) from: SocketAddr,
    pub(super) to: SocketAddr,
    pub(super) bytes: Vec<u8>,
}

/// Every datagram in flight, earliest first.
#[derive(Debug, Clone, Default)]
pub(super) struct DeliveryQueue {
    /// Next tie-breaking number, so equal delivery times keep send order.
    next_seq: u64,
    queue: BTreeMap<Key, InFlight>,
    /// The keys of `queue`, per destination; never holds an empty set.
    by_destination: BTreeMap<SocketAddr, BTreeSet<Key>>,
}

impl DeliveryQueue {
    /// How many datagrams are in flight.
    pub(super) fn len(&self) -> usize {
        self.queue.len()
    }

    /// When the earliest datagram is due.
    pub(super) fn next_time(&self) -> Option<Instant> {
        self.queue.first_key_value().map(|(key, _)| key.0)
    }

    /// Queues a datagram due at `at`, after every one already due then.
    pub(super) fn push(&mut self, at: Instant, datagram: InFlight) {
        let key = (at, self.next_seq);
        self.next_seq = self.next_seq.wrapping_add(1);
        self.by_destination
            .entry(datagram.to)
            .or_default()
            .insert(key);
        self.queue.insert(key, datagram);
    }

    /// Takes the earliest datagram for `to` that is due at `now`.
    pub(super) fn pop_for(&mut self, now: Instant, to: SocketAddr) -> Option<(Key, InFlight)> {
        let keys = self.by_destination.get_mut(&to)?;
        let key = *keys.first()?;
        if key.0 > now {
            return None;
        }
        keys.remove(&key);
        if keys.is_empty() {
            self.by_destination.remove(&to);
        }
        let datagram = self.queue.remove(&key)?;
        Some((key, datagram))
    }

    /// Takes the earliest datagram for any destination that is due at `now`.
    pub(super) fn pop_any(&mut self, now: Instant) -> Option<(Key, InFlight)> {
        let entry = self.queue.first_entry()?;
        if entry.key().0 > now {
            return None;
        }
        let (key, datagram) = entry.remove_entry();
        if let Some(keys) = self.by_destination.get_mut(&datagram.to) {
            keys.remove(&key);
            if keys.is_empty() {
                self.by_destination.remove(&datagram.to);
            }
        }
        Some((key, datagram))
    }

    /// Drops every datagram in flight.
    pub(super) fn clear(&mut self) {
        self.queue.clear();
        self.by_destination.clear();
    }
}
