//! How the simulated network treats datagrams, and the counters of what it
//! did with them.

use core::time::Duration;

/// The default bound on datagrams in flight ([`SimConfig::max_in_flight`]).
pub const DEFAULT_MAX_IN_FLIGHT: usize = 65_536;

/// The default upper bound (exclusive) of the extra delay of a duplicate
/// ([`SimConfig::duplicate_max_delay`]): one second.
pub const DEFAULT_DUPLICATE_MAX_DELAY: Duration = Duration::from_secs(1);

/// How the simulated network treats datagrams.
///
/// [`Default`] is a perfect network: no latency, no jitter, no loss, no
/// duplicates. Percentages outside `0.0..=100.0` are clamped, and NaN counts
/// as `0.0`; no value of any field makes the simulator panic.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimConfig {
    /// Fixed one-way delay of every datagram.
    pub latency: Duration,
    /// Each datagram's delay is `latency` plus a uniform random offset in
    /// `-jitter..=+jitter`, never less than zero. Jitter reorders datagrams.
    pub jitter: Duration,
    /// Chance, in percent, that a datagram is lost.
    pub loss_percent: f32,
    /// Chance, in percent, that a datagram that was not lost arrives twice.
    pub duplicate_percent: f32,
    /// A duplicate arrives after the original, later by a uniform random
    /// delay in `0..duplicate_max_delay` (zero when this is zero).
    pub duplicate_max_delay: Duration,
    /// At most this many datagrams are in flight at once; a datagram sent
    /// while the network is full is dropped and counted in
    /// [`SimStats::dropped_full`]. Lowering it does not drop datagrams
    /// already in flight.
    pub max_in_flight: usize,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            latency: Duration::ZERO,
            jitter: Duration::ZERO,
            loss_percent: 0.0,
            duplicate_percent: 0.0,
            duplicate_max_delay: DEFAULT_DUPLICATE_MAX_DELAY,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
        }
    }
}

/// Counters of what happened to the datagrams given to a
/// [`NetworkSimulator`](super::NetworkSimulator).
///
/// Every copy that enters the network (each sent datagram, plus each
/// duplicate) ends up counted exactly once as lost, dropped because the
/// network was full, delivered, discarded by a reset, or is still in flight:
///
/// `sent + duplicated == lost + dropped_full + delivered + discarded + in_flight`
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct SimStats {
    /// Datagrams given to [`NetworkSimulator::send`](super::NetworkSimulator::send).
    pub sent: u64,
    /// Datagrams lost on purpose (by [`SimConfig::loss_percent`]).
    pub lost: u64,
    /// Extra copies made by duplication (by [`SimConfig::duplicate_percent`]).
    pub duplicated: u64,
    /// Copies dropped because [`SimConfig::max_in_flight`] datagrams were
    /// already in flight.
    pub dropped_full: u64,
    /// Copies handed out by [`NetworkSimulator::receive`](super::NetworkSimulator::receive) or
    /// [`NetworkSimulator::receive_any`](super::NetworkSimulator::receive_any).
    pub delivered: u64,
    /// Copies in flight when [`NetworkSimulator::reset`](super::NetworkSimulator::reset) was called.
    pub discarded: u64,
}
