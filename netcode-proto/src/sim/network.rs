//! The simulated network: what happens to each datagram on the way (loss,
//! latency and jitter, duplication, a bound on datagrams in flight), drawn
//! from a seeded generator so every run is reproducible.

use crate::time::Instant;
use alloc::vec::Vec;
use core::net::SocketAddr;
use core::time::Duration;

use super::config::{SimConfig, SimStats};
use super::queue::{DeliveryQueue, InFlight, Key};
use super::rng::{Rng, duration_nanos};

/// A datagram that reached its destination.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Delivered {
    /// The address it was sent from.
    pub from: SocketAddr,
    /// The address it was sent to.
    pub to: SocketAddr,
    /// The simulated time it became due (never later than the `now` of the
    /// call that returned it).
    pub at: Instant,
    /// The datagram itself, owned, so the receiver can decrypt it in place.
    pub bytes: Vec<u8>,
}

/// A simulated network: see the [module documentation](super).
#[derive(Debug, Clone)]
pub struct NetworkSimulator {
    config: SimConfig,
    rng: Rng,
    queue: DeliveryQueue,
    stats: SimStats,
}

impl NetworkSimulator {
    /// A simulator with an empty network, drawing its randomness from
    /// `seed` (any value, `0` included).
    pub fn new(config: SimConfig, seed: u64) -> Self {
        Self {
            config,
            rng: Rng::new(seed),
            queue: DeliveryQueue::default(),
            stats: SimStats::default(),
        }
    }

    /// The current configuration.
    pub fn config(&self) -> &SimConfig {
        &self.config
    }

    /// Replaces the configuration, e.g. to cut the network with a 100% loss
    /// in the middle of a test. It applies to datagrams sent from now on;
    /// datagrams already in flight keep their delivery times.
    pub fn set_config(&mut self, config: SimConfig) {
        self.config = config;
    }

    /// Sends `datagram` from `from` to `to` at simulated time `now`.
    ///
    /// The datagram is lost with chance [`SimConfig::loss_percent`];
    /// otherwise it is due at `now + latency ± jitter` (never before `now`),
    /// and with chance [`SimConfig::duplicate_percent`] a second copy is due
    /// up to [`SimConfig::duplicate_max_delay`] later. A copy that finds
    /// [`SimConfig::max_in_flight`] datagrams in flight is dropped.
    ///
    /// The random draws depend only on the seed and the sequence of calls,
    /// not on how full the network is.
    pub fn send(&mut self, now: Instant, from: SocketAddr, to: SocketAddr, datagram: &[u8]) {
        self.stats.sent += 1;

        if self.rng.chance(self.config.loss_percent) {
            self.stats.lost += 1;
            return;
        }

        let at = self.delivery_time(now);
        let duplicate_at = if self.rng.chance(self.config.duplicate_percent) {
            let extra = self.rng.below(self.config.duplicate_max_delay);
            Some(at.saturating_add(extra))
        } else {
            None
        };

        self.enqueue(at, from, to, datagram);
        if let Some(duplicate_at) = duplicate_at {
            self.stats.duplicated += 1;
            self.enqueue(duplicate_at, from, to, datagram);
        }
    }

    /// Takes the earliest datagram for `to` that is due at `now`, if any.
    ///
    /// Datagrams for one destination come out in order of delivery time,
    /// and those due at the same time in the order they were sent.
    pub fn receive(&mut self, now: Instant, to: SocketAddr) -> Option<Delivered> {
        let (key, datagram) = self.queue.pop_for(now, to)?;
        Some(self.delivered(key, datagram))
    }

    /// Takes the earliest datagram for any destination that is due at
    /// `now`, if any, for tests that route datagrams by their address.
    ///
    /// Datagrams come out in order of delivery time, and those due at the
    /// same time in the order they were sent.
    pub fn receive_any(&mut self, now: Instant) -> Option<Delivered> {
        let (key, datagram) = self.queue.pop_any(now)?;
        Some(self.delivered(key, datagram))
    }

    /// When the earliest datagram in flight is due, for any destination;
    /// `None` when nothing is in flight. A test loop can jump its simulated
    /// time straight there.
    pub fn next_delivery_time(&self) -> Option<Instant> {
        self.queue.next_time()
    }

    /// How many datagrams are in flight.
    pub fn in_flight(&self) -> usize {
        self.queue.len()
    }

    /// What happened so far to the datagrams given to this simulator.
    pub fn stats(&self) -> SimStats {
        self.stats
    }

    /// Sets every counter of [`stats`](Self::stats) back to zero. Datagrams
    /// in flight stay in flight.
    pub fn reset_stats(&mut self) {
        self.stats = SimStats::default();
    }

    /// Discards every datagram in flight (counted in
    /// [`SimStats::discarded`]). The configuration, the random generator and
    /// the other counters are kept.
    pub fn reset(&mut self) {
        self.stats.discarded += self.queue.len() as u64;
        self.queue.clear();
    }

    /// `now + latency + uniform(-jitter..=jitter)`, clamped to `now..`.
    fn delivery_time(&mut self, now: Instant) -> Instant {
        let base = now.saturating_add(self.config.latency);
        // Offsets are drawn in whole nanoseconds; jitter is capped so that
        // `2 * jitter + 1` fits in a u64 (about 292 years of jitter).
        let jitter = duration_nanos(self.config.jitter).min(u64::MAX / 2);
        let offset = self.rng.below_u64(2 * jitter + 1);
        let at = if offset >= jitter {
            base.saturating_add(Duration::from_nanos(offset - jitter))
        } else {
            base.saturating_sub(Duration::from_nanos(jitter - offset))
        };
        at.max(now)
    }

    fn enqueue(&mut self, at: Instant, from: SocketAddr, to: SocketAddr, datagram: &[u8]) {
        if self.queue.len() >= self.config.max_in_flight {
            self.stats.dropped_full += 1;
            return;
        }
        let bytes = datagram.to_vec();
        self.queue.push(at, InFlight { from, to, bytes });
    }

    fn delivered(&mut self, key: Key, datagram: InFlight) -> Delivered {
        self.stats.delivered += 1;
        Delivered {
            from: datagram.from,
            to: datagram.to,
            at: key.0,
            bytes: datagram.bytes,
        }
    }
}
