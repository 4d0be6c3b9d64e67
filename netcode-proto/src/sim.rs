//! A deterministic network simulator for tests of games built on netcode.
//!
//! [`NetworkSimulator`] stands in for the network between any number of
//! clients and servers. Datagrams go in with [`send`](NetworkSimulator::send)
//! (or through a [`SimOutput`], which implements [`Output`] so the protocol
//! core can write straight into the simulator) and come out with
//! [`receive`](NetworkSimulator::receive) (for one destination address) or
//! [`receive_any`](NetworkSimulator::receive_any) (for whichever destination
//! is due first), once their delivery time has come.
//!
//! On the way, each datagram may be lost, delayed by a fixed latency plus a
//! uniform jitter (which reorders datagrams), or duplicated, as set by a
//! [`SimConfig`]. The simulator never reads a clock: every call takes the
//! simulated time `now`, a [`Duration`] since an arbitrary epoch, and
//! [`next_delivery_time`](NetworkSimulator::next_delivery_time) tells a test
//! loop how far it may jump. All randomness comes from a small generator
//! seeded by the caller, so the same seed and the same calls give the same
//! deliveries, on every platform.
//!
//! # Example
//!
//! ```
//! use core::net::SocketAddr;
//! use core::time::Duration;
//! use netcode_proto::io::Output;
//! use netcode_proto::sim::{NetworkSimulator, SimConfig};
//!
//! let client: SocketAddr = "10.0.0.1:40000".parse().unwrap();
//! let server: SocketAddr = "10.0.0.2:40000".parse().unwrap();
//!
//! let config = SimConfig {
//!     latency: Duration::from_millis(50),
//!     jitter: Duration::from_millis(10),
//!     ..SimConfig::default()
//! };
//! let mut sim = NetworkSimulator::new(config, 1234);
//! let mut now = Duration::ZERO;
//!
//! // The client sends; in a real test, the protocol core would call `send`
//! // on the `SimOutput` itself.
//! let mut events: Vec<()> = Vec::new();
//! sim.output(now, client, &mut events).send(server, b"ping");
//!
//! // The test loop: jump to the next delivery, hand every due datagram to
//! // the endpoint at its destination, repeat.
//! let mut received_by_client = Vec::new();
//! while let Some(at) = sim.next_delivery_time() {
//!     now = at;
//!     while let Some(mut datagram) = sim.receive_any(now) {
//!         if datagram.to == server {
//!             // The "server" answers with the bytes reversed.
//!             datagram.bytes.reverse();
//!             sim.send(now, server, datagram.from, &datagram.bytes);
//!         } else {
//!             received_by_client.push(datagram.bytes);
//!         }
//!     }
//! }
//!
//! assert_eq!(received_by_client, [b"gnip".to_vec()]);
//! assert!(now >= Duration::from_millis(80) && now <= Duration::from_millis(120));
//! let stats = sim.stats();
//! assert_eq!(stats.sent, 2);
//! assert_eq!(stats.delivered, 2);
//! ```

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;
use core::net::SocketAddr;
use core::time::Duration;

use crate::io::Output;

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
/// [`NetworkSimulator`].
///
/// Every copy that enters the network (each sent datagram, plus each
/// duplicate) ends up counted exactly once as lost, dropped because the
/// network was full, delivered, discarded by a reset, or is still in flight:
///
/// `sent + duplicated == lost + dropped_full + delivered + discarded + in_flight`
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct SimStats {
    /// Datagrams given to [`NetworkSimulator::send`].
    pub sent: u64,
    /// Datagrams lost on purpose (by [`SimConfig::loss_percent`]).
    pub lost: u64,
    /// Extra copies made by duplication (by [`SimConfig::duplicate_percent`]).
    pub duplicated: u64,
    /// Copies dropped because [`SimConfig::max_in_flight`] datagrams were
    /// already in flight.
    pub dropped_full: u64,
    /// Copies handed out by [`NetworkSimulator::receive`] or
    /// [`NetworkSimulator::receive_any`].
    pub delivered: u64,
    /// Copies in flight when [`NetworkSimulator::reset`] was called.
    pub discarded: u64,
}

/// A datagram that reached its destination.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Delivered {
    /// The address it was sent from.
    pub from: SocketAddr,
    /// The address it was sent to.
    pub to: SocketAddr,
    /// The simulated time it became due (never later than the `now` of the
    /// call that returned it).
    pub at: Duration,
    /// The datagram itself, owned, so the receiver can decrypt it in place.
    pub bytes: Vec<u8>,
}

/// Orders datagrams in flight: by delivery time, then by the order in which
/// they were queued.
type Key = (Duration, u64);

#[derive(Debug, Clone)]
struct InFlight {
    from: SocketAddr,
    to: SocketAddr,
    bytes: Vec<u8>,
}

/// A simulated network: see the [module documentation](self).
#[derive(Debug, Clone)]
pub struct NetworkSimulator {
    config: SimConfig,
    rng: Rng,
    /// Next tie-breaking number, so equal delivery times keep send order.
    next_seq: u64,
    /// Every datagram in flight, earliest first.
    queue: BTreeMap<Key, InFlight>,
    /// The keys of `queue`, per destination; never holds an empty set.
    by_destination: BTreeMap<SocketAddr, BTreeSet<Key>>,
    stats: SimStats,
}

impl NetworkSimulator {
    /// A simulator with an empty network, drawing its randomness from
    /// `seed` (any value, `0` included).
    pub fn new(config: SimConfig, seed: u64) -> Self {
        Self {
            config,
            rng: Rng::new(seed),
            next_seq: 0,
            queue: BTreeMap::new(),
            by_destination: BTreeMap::new(),
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
    pub fn send(&mut self, now: Duration, from: SocketAddr, to: SocketAddr, datagram: &[u8]) {
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
    pub fn receive(&mut self, now: Duration, to: SocketAddr) -> Option<Delivered> {
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
        Some(self.delivered(key, datagram))
    }

    /// Takes the earliest datagram for any destination that is due at
    /// `now`, if any, for tests that route datagrams by their address.
    ///
    /// Datagrams come out in order of delivery time, and those due at the
    /// same time in the order they were sent.
    pub fn receive_any(&mut self, now: Duration) -> Option<Delivered> {
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
        Some(self.delivered(key, datagram))
    }

    /// When the earliest datagram in flight is due, for any destination;
    /// `None` when nothing is in flight. A test loop can jump its simulated
    /// time straight there.
    pub fn next_delivery_time(&self) -> Option<Duration> {
        self.queue.first_key_value().map(|(key, _)| key.0)
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
        self.by_destination.clear();
    }

    /// An [`Output`] through which an endpoint at `from` sends into this
    /// simulator at time `now`, collecting its events into `events`.
    pub fn output<'a, E>(
        &'a mut self,
        now: Duration,
        from: SocketAddr,
        events: &'a mut Vec<E>,
    ) -> SimOutput<'a, E> {
        SimOutput {
            sim: self,
            from,
            now,
            events,
        }
    }

    /// `now + latency + uniform(-jitter..=jitter)`, clamped to `now..`.
    fn delivery_time(&mut self, now: Duration) -> Duration {
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

    fn enqueue(&mut self, at: Duration, from: SocketAddr, to: SocketAddr, datagram: &[u8]) {
        if self.queue.len() >= self.config.max_in_flight {
            self.stats.dropped_full += 1;
            return;
        }
        let key = (at, self.next_seq);
        self.next_seq = self.next_seq.wrapping_add(1);
        self.queue.insert(
            key,
            InFlight {
                from,
                to,
                bytes: datagram.to_vec(),
            },
        );
        self.by_destination.entry(to).or_default().insert(key);
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

/// An [`Output`] for an endpoint at address `from` that sends into a
/// [`NetworkSimulator`] at time `now` and collects its events into a `Vec`.
///
/// Build it with [`NetworkSimulator::output`] or directly from its fields.
#[derive(Debug)]
pub struct SimOutput<'a, E> {
    /// The network the datagrams go into.
    pub sim: &'a mut NetworkSimulator,
    /// The address the datagrams are sent from.
    pub from: SocketAddr,
    /// The simulated time they are sent at.
    pub now: Duration,
    /// Where the events go.
    pub events: &'a mut Vec<E>,
}

impl<E> Output<E> for SimOutput<'_, E> {
    fn send(&mut self, to: SocketAddr, datagram: &[u8]) {
        self.sim.send(self.now, self.from, to, datagram);
    }

    fn event(&mut self, event: E) {
        self.events.push(event);
    }
}

/// A duration in whole nanoseconds, saturating at `u64::MAX` (584 years).
fn duration_nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

/// xorshift64*: small, fast, good enough for a simulator, and identical on
/// every platform.
#[derive(Debug, Clone)]
struct Rng {
    state: u64,
}

impl Rng {
    /// Any state but zero works; zero would stay zero forever.
    const FALLBACK_STATE: u64 = 0x9E37_79B9_7F4A_7C15;

    /// Seeds by one round of the SplitMix64 mixer, so that nearby seeds
    /// (0, 1, 2, ...) still start far apart.
    fn new(seed: u64) -> Self {
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        Self::from_state(z)
    }

    fn from_state(state: u64) -> Self {
        Self {
            state: if state == 0 {
                Self::FALLBACK_STATE
            } else {
                state
            },
        }
    }

    fn next_u64(&mut self) -> u64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A uniform integer in `0..n` (`0` when `n` is `0`), by the high half
    /// of a 64x64-bit product: no division, and a bias below 2^-64 · n.
    fn below_u64(&mut self, n: u64) -> u64 {
        let product = u128::from(self.next_u64()) * u128::from(n);
        (product >> 64) as u64
    }

    /// A uniform duration in `0..max`, in whole nanoseconds (zero when
    /// `max` is zero).
    fn below(&mut self, max: Duration) -> Duration {
        Duration::from_nanos(self.below_u64(duration_nanos(max)))
    }

    /// True with chance `percent` / 100, clamped to `0..=100` (NaN is 0).
    /// Always draws exactly one number.
    fn chance(&mut self, percent: f32) -> bool {
        const ONE: u32 = 1 << 24;
        let draw = (self.next_u64() >> 40) as u32; // uniform in 0..2^24
        let threshold = if percent.is_nan() || percent <= 0.0 {
            0
        } else if percent >= 100.0 {
            ONE
        } else {
            // In 0.0..2^24; `as` saturates anyway.
            (percent / 100.0 * ONE as f32) as u32
        };
        draw < threshold
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn addr(port: u16) -> SocketAddr {
        SocketAddr::from(([10, 0, 0, 1], port))
    }

    fn ms(millis: u64) -> Duration {
        Duration::from_millis(millis)
    }

    /// Sends `count` numbered datagrams from port 1 to port 2, one per
    /// millisecond, then drains the network.
    fn run(config: SimConfig, seed: u64, count: u32) -> (Vec<Delivered>, NetworkSimulator) {
        let mut sim = NetworkSimulator::new(config, seed);
        for i in 0..count {
            sim.send(ms(u64::from(i)), addr(1), addr(2), &i.to_le_bytes());
        }
        let delivered = drain(&mut sim);
        (delivered, sim)
    }

    /// Jumps from delivery to delivery until the network is empty.
    fn drain(sim: &mut NetworkSimulator) -> Vec<Delivered> {
        let mut out = Vec::new();
        while let Some(at) = sim.next_delivery_time() {
            while let Some(d) = sim.receive_any(at) {
                assert!(d.at <= at);
                out.push(d);
            }
        }
        out
    }

    fn number(d: &Delivered) -> u32 {
        u32::from_le_bytes(d.bytes[..4].try_into().unwrap())
    }

    fn check_invariant(sim: &NetworkSimulator) {
        let s = sim.stats();
        assert_eq!(
            s.sent + s.duplicated,
            s.lost + s.dropped_full + s.delivered + s.discarded + sim.in_flight() as u64,
            "{s:?}"
        );
    }

    fn lossy() -> SimConfig {
        SimConfig {
            latency: ms(100),
            jitter: ms(30),
            loss_percent: 20.0,
            duplicate_percent: 10.0,
            ..SimConfig::default()
        }
    }

    #[test]
    fn xorshift64_star_step() {
        let mut rng = Rng::from_state(1);
        // 1 ^ (1 >> 12) = 1; 1 ^ (1 << 25) = 0x200_0001; >> 27 adds nothing.
        assert_eq!(
            rng.next_u64(),
            0x200_0001u64.wrapping_mul(0x2545_F491_4F6C_DD1D)
        );
        assert_eq!(rng.state, 0x200_0001);
    }

    #[test]
    fn seed_zero_is_not_degenerate() {
        let mut rng = Rng::new(0);
        let draws: Vec<u64> = (0..8).map(|_| rng.next_u64()).collect();
        assert!(draws.iter().all(|&d| d != 0));
        assert_ne!(draws[0], draws[1]);
        // The seed that the mixer sends to zero works too.
        let mut rng = Rng::from_state(0);
        assert_ne!(rng.next_u64(), 0);

        let (delivered, _) = run(lossy(), 0, 1000);
        assert!(delivered.len() > 500);
    }

    #[test]
    fn same_seed_same_deliveries_different_seed_different_deliveries() {
        let (a, sim_a) = run(lossy(), 42, 2000);
        let (b, sim_b) = run(lossy(), 42, 2000);
        assert_eq!(a, b);
        assert_eq!(sim_a.stats(), sim_b.stats());

        let (c, _) = run(lossy(), 43, 2000);
        assert_ne!(a, c);
    }

    #[test]
    fn perfect_network_delivers_everything_at_latency_in_send_order() {
        let config = SimConfig {
            latency: ms(50),
            ..SimConfig::default()
        };
        let mut sim = NetworkSimulator::new(config, 7);
        // Several datagrams at the same instant, to check the tie-break.
        for i in 0..100u32 {
            sim.send(ms(u64::from(i / 4)), addr(1), addr(2), &i.to_le_bytes());
        }
        let delivered = drain(&mut sim);
        assert_eq!(delivered.len(), 100);
        for (i, d) in delivered.iter().enumerate() {
            let i = i as u32;
            assert_eq!(number(d), i);
            assert_eq!(d.at, ms(u64::from(i / 4)) + ms(50));
            assert_eq!((d.from, d.to), (addr(1), addr(2)));
        }
        let s = sim.stats();
        assert_eq!(
            (s.sent, s.delivered, s.lost, s.duplicated),
            (100, 100, 0, 0)
        );
        check_invariant(&sim);
    }

    #[test]
    fn default_config_delivers_immediately() {
        let mut sim = NetworkSimulator::new(SimConfig::default(), 1);
        sim.send(ms(5), addr(1), addr(2), b"now");
        assert_eq!(sim.next_delivery_time(), Some(ms(5)));
        let d = sim.receive(ms(5), addr(2)).unwrap();
        assert_eq!(d.bytes, b"now");
        assert_eq!(d.at, ms(5));
    }

    #[test]
    fn nothing_is_delivered_early() {
        let config = SimConfig {
            latency: ms(10),
            ..SimConfig::default()
        };
        let mut sim = NetworkSimulator::new(config, 1);
        sim.send(ms(0), addr(1), addr(2), b"x");
        assert_eq!(sim.next_delivery_time(), Some(ms(10)));
        assert_eq!(sim.receive(ms(9), addr(2)), None);
        assert_eq!(sim.receive_any(ms(9)), None);
        assert_eq!(sim.in_flight(), 1);
        assert!(sim.receive(ms(11), addr(2)).is_some());
        assert_eq!(sim.next_delivery_time(), None);
        assert_eq!(sim.receive_any(ms(1000)), None);
    }

    #[test]
    fn full_loss_delivers_nothing_and_counts() {
        let config = SimConfig {
            loss_percent: 100.0,
            duplicate_percent: 100.0,
            ..SimConfig::default()
        };
        let (delivered, sim) = run(config, 3, 1000);
        assert!(delivered.is_empty());
        let s = sim.stats();
        assert_eq!(
            (s.sent, s.lost, s.delivered, s.duplicated),
            (1000, 1000, 0, 0)
        );
        check_invariant(&sim);
    }

    #[test]
    fn quarter_loss_is_within_statistical_band() {
        let config = SimConfig {
            loss_percent: 25.0,
            ..SimConfig::default()
        };
        for seed in [0, 1, 2, 0xDEAD_BEEF, u64::MAX] {
            let (delivered, sim) = run(config, seed, 10_000);
            let s = sim.stats();
            // Mean 2500, standard deviation about 43: ±300 is 7 sigma.
            assert!((2200..=2800).contains(&s.lost), "seed {seed}: {s:?}");
            assert_eq!(delivered.len() as u64, s.delivered);
            assert_eq!(s.sent, s.lost + s.delivered);
            check_invariant(&sim);
        }
    }

    #[test]
    fn duplicates_appear_at_configured_rate_after_the_original() {
        let config = SimConfig {
            latency: ms(20),
            duplicate_percent: 10.0,
            ..SimConfig::default()
        };
        let (delivered, sim) = run(config, 99, 10_000);
        let s = sim.stats();
        // Mean 1000, standard deviation 30.
        assert!((800..=1200).contains(&s.duplicated), "{s:?}");
        assert_eq!(s.delivered, s.sent + s.duplicated);
        check_invariant(&sim);

        // Each datagram arrives once or twice; a duplicate arrives after its
        // original and less than a second later.
        let mut seen: BTreeMap<u32, Vec<Duration>> = BTreeMap::new();
        for d in &delivered {
            seen.entry(number(d)).or_default().push(d.at);
        }
        assert_eq!(seen.len(), 10_000);
        let mut twice = 0;
        for (i, times) in &seen {
            let sent_at = ms(u64::from(*i));
            assert_eq!(times[0], sent_at + ms(20));
            match times.len() {
                1 => {}
                2 => {
                    twice += 1;
                    assert!(times[1] >= times[0] && times[1] < times[0] + ms(1000));
                }
                n => panic!("datagram {i} delivered {n} times"),
            }
        }
        assert_eq!(twice, s.duplicated);
    }

    #[test]
    fn duplicate_delay_is_configurable() {
        let config = SimConfig {
            duplicate_percent: 100.0,
            duplicate_max_delay: Duration::ZERO,
            ..SimConfig::default()
        };
        let (delivered, sim) = run(config, 5, 100);
        assert_eq!(sim.stats().duplicated, 100);
        assert_eq!(delivered.len(), 200);
        for pair in delivered.chunks(2) {
            assert_eq!(pair[0], pair[1]);
        }
    }

    #[test]
    fn jitter_reorders_but_never_delivers_before_send_time() {
        // Jitter larger than latency, so some delays get clamped to zero.
        let config = SimConfig {
            latency: ms(5),
            jitter: ms(20),
            ..SimConfig::default()
        };
        let mut sim = NetworkSimulator::new(config, 11);
        let mut sent_at = BTreeMap::new();
        for i in 0..2000u32 {
            let now = Duration::from_micros(u64::from(i) * 500);
            sent_at.insert(i, now);
            sim.send(now, addr(1), addr(2), &i.to_le_bytes());
        }
        let delivered = drain(&mut sim);
        assert_eq!(delivered.len(), 2000);

        let mut reordered = 0;
        let mut clamped = 0;
        let mut spread = (Duration::MAX, Duration::ZERO);
        for pair in delivered.windows(2) {
            assert!(pair[0].at <= pair[1].at);
            if number(&pair[1]) < number(&pair[0]) {
                reordered += 1;
            }
        }
        for d in &delivered {
            let sent = sent_at[&number(d)];
            assert!(d.at >= sent);
            assert!(d.at <= sent + ms(25));
            let delay = d.at - sent;
            if delay == Duration::ZERO {
                clamped += 1;
            }
            spread = (spread.0.min(delay), spread.1.max(delay));
        }
        assert!(reordered > 100, "{reordered}");
        assert!(clamped > 100, "{clamped}");
        assert_eq!(spread.0, Duration::ZERO);
        assert!(spread.1 > ms(24), "{spread:?}");
    }

    #[test]
    fn full_network_drops_and_counts_without_clobbering() {
        let config = SimConfig {
            latency: ms(1),
            max_in_flight: 10,
            ..SimConfig::default()
        };
        let mut sim = NetworkSimulator::new(config, 0);
        for i in 0..15u32 {
            sim.send(ms(0), addr(1), addr(2), &i.to_le_bytes());
        }
        assert_eq!(sim.in_flight(), 10);
        assert_eq!(sim.stats().dropped_full, 5);
        check_invariant(&sim);
        let numbers: Vec<u32> = drain(&mut sim).iter().map(number).collect();
        assert_eq!(numbers, (0..10).collect::<Vec<_>>());

        // Room again once delivered.
        sim.send(ms(2), addr(1), addr(2), b"again");
        assert_eq!(sim.in_flight(), 1);

        // A zero bound drops everything.
        sim.set_config(SimConfig {
            max_in_flight: 0,
            ..config
        });
        sim.send(ms(2), addr(1), addr(2), b"dropped");
        assert_eq!(sim.in_flight(), 1);
        assert_eq!(sim.stats().dropped_full, 6);
        check_invariant(&sim);
    }

    #[test]
    fn receive_returns_only_that_destination() {
        let config = SimConfig {
            latency: ms(10),
            jitter: ms(5),
            ..SimConfig::default()
        };
        let mut sim = NetworkSimulator::new(config, 21);
        for i in 0..300u32 {
            let to = addr(100 + (i % 3) as u16);
            sim.send(ms(u64::from(i)), addr(1), to, &i.to_le_bytes());
        }
        let end = ms(10_000);
        let mut for_101 = Vec::new();
        while let Some(d) = sim.receive(end, addr(101)) {
            assert_eq!(d.to, addr(101));
            for_101.push(d);
        }
        assert_eq!(for_101.len(), 100);
        assert!(for_101.windows(2).all(|w| w[0].at <= w[1].at));
        assert!(for_101.iter().all(|d| number(d) % 3 == 1));
        assert_eq!(sim.receive(end, addr(101)), None);
        assert_eq!(sim.receive(end, addr(999)), None);

        // The others are untouched.
        assert_eq!(sim.in_flight(), 200);
        let rest = drain(&mut sim);
        assert_eq!(rest.len(), 200);
        assert!(rest.iter().all(|d| d.to != addr(101)));
        check_invariant(&sim);
    }

    #[test]
    fn per_destination_and_any_destination_interleave() {
        let mut sim = NetworkSimulator::new(lossy(), 8);
        for i in 0..500u32 {
            let to = addr(200 + (i % 4) as u16);
            sim.send(ms(u64::from(i)), addr(1), to, &i.to_le_bytes());
        }
        let mut count = 0;
        let mut now = Duration::ZERO;
        while let Some(at) = sim.next_delivery_time() {
            now = now.max(at);
            if count % 2 == 0 {
                let to = addr(200 + (count / 2 % 4) as u16);
                while sim.receive(now, to).is_some() {
                    count += 1;
                }
            }
            if sim.receive_any(now).is_some() {
                count += 1;
            }
        }
        assert_eq!(count, sim.stats().delivered);
        assert_eq!(sim.in_flight(), 0);
        check_invariant(&sim);
    }

    #[test]
    fn set_config_cuts_and_restores_the_network() {
        let mut sim = NetworkSimulator::new(SimConfig::default(), 4);
        sim.send(ms(0), addr(1), addr(2), b"before");
        let mut config = *sim.config();
        config.loss_percent = 100.0;
        sim.set_config(config);
        sim.send(ms(1), addr(1), addr(2), b"cut");
        config.loss_percent = 0.0;
        sim.set_config(config);
        sim.send(ms(2), addr(1), addr(2), b"after");
        let bytes: Vec<Vec<u8>> = drain(&mut sim).into_iter().map(|d| d.bytes).collect();
        assert_eq!(bytes, [b"before".to_vec(), b"after".to_vec()]);
        assert_eq!(sim.stats().lost, 1);
    }

    #[test]
    fn reset_discards_in_flight() {
        let (_, mut sim) = run(SimConfig::default(), 1, 0);
        sim.set_config(SimConfig {
            latency: ms(10),
            ..SimConfig::default()
        });
        for port in 2..7 {
            sim.send(ms(0), addr(1), addr(port), b"x");
        }
        sim.reset();
        assert_eq!(sim.in_flight(), 0);
        assert_eq!(sim.next_delivery_time(), None);
        assert_eq!(sim.receive(ms(100), addr(2)), None);
        assert_eq!(sim.stats().discarded, 5);
        check_invariant(&sim);

        // Still usable afterwards.
        sim.send(ms(0), addr(1), addr(2), b"y");
        assert_eq!(sim.receive(ms(10), addr(2)).unwrap().bytes, b"y");

        sim.reset_stats();
        assert_eq!(sim.stats(), SimStats::default());
    }

    #[test]
    fn absurd_configs_do_not_panic() {
        let configs = [
            SimConfig {
                loss_percent: f32::NAN,
                duplicate_percent: f32::NAN,
                ..SimConfig::default()
            },
            SimConfig {
                loss_percent: -50.0,
                duplicate_percent: f32::NEG_INFINITY,
                ..SimConfig::default()
            },
            SimConfig {
                loss_percent: 1e30,
                ..SimConfig::default()
            },
            SimConfig {
                duplicate_percent: f32::INFINITY,
                latency: Duration::MAX,
                jitter: Duration::MAX,
                duplicate_max_delay: Duration::MAX,
                ..SimConfig::default()
            },
            SimConfig {
                jitter: Duration::MAX,
                max_in_flight: usize::MAX,
                ..SimConfig::default()
            },
        ];
        let expect_lost = [0, 0, 100, 0, 0];
        let expect_duplicated = [0, 0, 0, 100, 0];
        for (i, config) in configs.into_iter().enumerate() {
            let mut sim = NetworkSimulator::new(config, i as u64);
            for j in 0..100u64 {
                sim.send(Duration::MAX - ms(j), addr(1), addr(2), &[]);
                sim.send(ms(j), addr(1), addr(2), b"");
            }
            let s = sim.stats();
            assert_eq!(s.lost, 2 * expect_lost[i], "config {i}");
            assert_eq!(s.duplicated, 2 * expect_duplicated[i], "config {i}");
            let delivered = drain(&mut sim);
            assert!(delivered.iter().all(|d| d.bytes.is_empty()));
            check_invariant(&sim);
        }
    }

    #[test]
    fn sim_output_sends_from_its_address_and_collects_events() {
        let config = SimConfig {
            latency: ms(3),
            ..SimConfig::default()
        };
        let mut sim = NetworkSimulator::new(config, 6);
        let mut events = Vec::new();
        {
            let mut out = sim.output(ms(10), addr(1), &mut events);
            out.send(addr(2), b"hello");
            out.event("connected");
            out.send(addr(3), b"world");
        }
        assert_eq!(events, ["connected"]);

        // Generic use, as the protocol core would do.
        fn emit(out: &mut impl Output<u8>) {
            out.send(SocketAddr::from(([10, 0, 0, 1], 2)), b"generic");
            out.event(7);
        }
        let mut numbers = vec![];
        emit(&mut SimOutput {
            sim: &mut sim,
            from: addr(4),
            now: ms(11),
            events: &mut numbers,
        });
        assert_eq!(numbers, [7]);

        let got: Vec<(SocketAddr, SocketAddr, Duration, Vec<u8>)> = drain(&mut sim)
            .into_iter()
            .map(|d| (d.from, d.to, d.at, d.bytes))
            .collect();
        assert_eq!(
            got,
            [
                (addr(1), addr(2), ms(13), b"hello".to_vec()),
                (addr(1), addr(3), ms(13), b"world".to_vec()),
                (addr(4), addr(2), ms(14), b"generic".to_vec()),
            ]
        );
    }

    #[test]
    fn delivered_bytes_are_mutable_and_independent() {
        let config = SimConfig {
            duplicate_percent: 100.0,
            duplicate_max_delay: Duration::ZERO,
            ..SimConfig::default()
        };
        let mut sim = NetworkSimulator::new(config, 2);
        sim.send(ms(0), addr(1), addr(2), b"abc");
        let mut first = sim.receive(ms(0), addr(2)).unwrap();
        first.bytes[0] = b'x';
        let second = sim.receive(ms(0), addr(2)).unwrap();
        assert_eq!(first.bytes, b"xbc");
        assert_eq!(second.bytes, b"abc");
    }
}
