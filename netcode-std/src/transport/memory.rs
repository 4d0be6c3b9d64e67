//! An in-memory network behind the [`Socket`] seam, for tests of games and
//! adapters built on this crate: the real host (clock, queues, batches,
//! logging) over netcode-proto's seeded network simulator
//! ([`NetworkSimulator`]), with nothing left to the operating system's
//! timing. Feature `sim`.
//!
//! The network keeps its own simulated time, [`MemoryNetwork::now`], which
//! the test moves on alongside the time it gives the host
//! ([`advance`](MemoryNetwork::advance), [`set_now`](MemoryNetwork::set_now)):
//! a datagram sent at `now` can be read once the network's time reaches
//! its delivery time. What happens on the way (latency, jitter, which
//! reorders, loss, duplication) is a [`SimConfig`]; the default, a perfect
//! network with no latency, delivers every datagram on the next read, in
//! order, without the time ever moving.
//!
//! The sockets are still created and bound by the host as usual, so each
//! keeps the unique address the OS gave it; a server made with
//! [`BindMode::Exact`](crate::BindMode::Exact) has its public address as its
//! socket's address, which is where clients send.
//!
//! ```
//! use std::time::Duration;
//! use netcode_std::transport::memory::{MemoryNetwork, SimConfig};
//! use netcode_std::{BindMode, Client, ClientConfig, ClientState, ConnectTokenBuilder, Key,
//!                   Server, ServerConfig};
//!
//! // 30 ms one way, give or take 10 ms.
//! let sim = SimConfig {
//!     latency: Duration::from_millis(30),
//!     jitter: Duration::from_millis(10),
//!     ..SimConfig::default()
//! };
//! let net = MemoryNetwork::with_config(sim, 1);
//! let key = Key::from_bytes([1; 32]);
//! let mut config = ServerConfig::new(7, key.clone());
//! config.bind_mode = BindMode::Exact;
//! let mut server = Server::bind_with("127.0.0.1:0", None::<&str>, config, net.adopt())?;
//! server.start(4)?;
//! let mut client =
//!     Client::bind_with("127.0.0.1:0", None::<&str>, ClientConfig::default(), net.adopt())?;
//! let token = ConnectTokenBuilder::new(7, &key, 1)
//!     .server_addresses([server.public_address()])
//!     .generate()?;
//! client.connect(&token)?;
//! let mut time = 0.0;
//! while client.state() != ClientState::Connected && time < 5.0 {
//!     time += 0.05;
//!     net.advance(Duration::from_millis(50));
//!     client.update(time);
//!     server.update(time);
//! }
//! assert_eq!(client.state(), ClientState::Connected);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::{HashMap, HashSet, VecDeque};
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use netcode_proto::Instant;
use netcode_proto::sim::NetworkSimulator;
pub use netcode_proto::sim::{SimConfig, SimStats};

use super::Socket;
use crate::error::Family;

/// Datagrams waiting at one address, with their senders.
type Queue = VecDeque<(SocketAddr, Vec<u8>)>;

/// Counters of a [`MemoryNetwork`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct MemoryStats {
    /// The simulator's counters: every datagram sent through a
    /// [`MemorySocket`] whose sender is not muted. A datagram taken off the
    /// simulator to keep its place ahead of an injected one counts as
    /// delivered, though its socket reads it later.
    pub network: SimStats,
    /// Datagrams lost because their sender was [muted](MemoryNetwork::mute).
    pub muted: u64,
    /// Datagrams [injected](MemoryNetwork::inject).
    pub injected: u64,
    /// The longest datagram a socket sent (muted or not), in bytes.
    pub largest: usize,
}

#[derive(Debug)]
struct State {
    sim: NetworkSimulator,
    /// The network's simulated time.
    now: Instant,
    /// Datagrams due at an address taken off the simulator ahead of an
    /// injected one, and the injected ones; read before the simulator's.
    arrived: HashMap<SocketAddr, Queue>,
    muted: HashSet<SocketAddr>,
    stats: MemoryStats,
}

impl State {
    /// Moves every datagram for `to` that is due now into its `arrived`
    /// queue, so that what is queued there next comes after them.
    fn settle(&mut self, to: SocketAddr) {
        let queue = self.arrived.entry(to).or_default();
        while let Some(datagram) = self.sim.receive(self.now, to) {
            queue.push_back((datagram.from, datagram.bytes));
        }
    }

    /// The next datagram readable at `to`, if any.
    fn take(&mut self, to: SocketAddr) -> Option<(SocketAddr, Vec<u8>)> {
        if let Some(datagram) = self.arrived.get_mut(&to).and_then(VecDeque::pop_front) {
            return Some(datagram);
        }
        let datagram = self.sim.receive(self.now, to)?;
        Some((datagram.from, datagram.bytes))
    }
}

/// The datagrams in flight between [`MemorySocket`]s, on a
/// [`NetworkSimulator`], and the network's simulated time. Clones share one
/// network; it can be handed across threads.
#[derive(Debug, Clone)]
pub struct MemoryNetwork {
    state: Arc<Mutex<State>>,
}

impl Default for MemoryNetwork {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryNetwork {
    /// A perfect network: no latency, no loss, nothing duplicated; every
    /// datagram can be read as soon as it is sent, in order.
    pub fn new() -> Self {
        Self::with_config(SimConfig::default(), 0)
    }

    /// A network that treats datagrams as `config` says, its random draws
    /// (loss, jitter, duplicates) made from `seed`: the same seed, traffic
    /// and times give the same deliveries. Its time starts at
    /// [`Instant::ZERO`].
    pub fn with_config(config: SimConfig, seed: u64) -> Self {
        let state = State {
            sim: NetworkSimulator::new(config, seed),
            now: Instant::ZERO,
            arrived: HashMap::new(),
            muted: HashSet::new(),
            stats: MemoryStats::default(),
        };
        Self {
            state: Arc::new(Mutex::new(state)),
        }
    }

    /// A network without latency that loses each datagram with
    /// probability `loss` (0 to 1), drawn from `seed`: the same seed and
    /// traffic lose the same datagrams.
    pub fn lossy(loss: f64, seed: u64) -> Self {
        let config = SimConfig {
            loss_percent: (loss * 100.0) as f32,
            ..SimConfig::default()
        };
        Self::with_config(config, seed)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere while holding the lock leaves plain data.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The `adopt` function for `Server::bind_with` / `Client::bind_with`
    /// that puts each bound socket's address on this network.
    pub fn adopt(&self) -> impl FnMut(Family, UdpSocket) -> io::Result<MemorySocket> + use<> {
        let net = self.clone();
        move |_, socket| {
            Ok(MemorySocket {
                local: socket.local_addr()?,
                net: net.clone(),
                _bound: Some(socket),
            })
        }
    }

    /// How the network treats datagrams.
    pub fn config(&self) -> SimConfig {
        *self.lock().sim.config()
    }

    /// Changes how the network treats datagrams sent from now on (those in
    /// flight keep their delivery times).
    pub fn set_config(&self, config: SimConfig) {
        self.lock().sim.set_config(config);
    }

    /// The network's simulated time.
    pub fn now(&self) -> Instant {
        self.lock().now
    }

    /// Moves the network's time on by `dt`: datagrams due by then can be
    /// read. Move it with the time given to the host.
    pub fn advance(&self, dt: Duration) {
        let mut state = self.lock();
        state.now = state.now.saturating_add(dt);
    }

    /// Sets the network's time. Setting it back is allowed: datagrams sent
    /// then are due earlier than those already in flight, as with jitter.
    pub fn set_now(&self, now: Instant) {
        self.lock().now = now;
    }

    /// When the earliest datagram in flight is due (the network's time if
    /// one is readable now); `None` when the network is empty. A test can
    /// jump its time there.
    pub fn next_delivery_time(&self) -> Option<Instant> {
        let state = self.lock();
        if state.arrived.values().any(|queue| !queue.is_empty()) {
            return Some(state.now);
        }
        state.sim.next_delivery_time()
    }

    /// Datagrams sent and not read yet.
    pub fn in_flight(&self) -> usize {
        let state = self.lock();
        state.sim.in_flight() + state.arrived.values().map(VecDeque::len).sum::<usize>()
    }

    /// Loses everything `address` sends from now on: a peer gone silent.
    pub fn mute(&self, address: SocketAddr) {
        self.lock().muted.insert(address);
    }

    /// Delivers a datagram to `to` as if from `from` (spoofed or garbage
    /// traffic, say): never lost, delayed or duplicated, and read after
    /// every datagram already due at `to`.
    pub fn inject(&self, from: SocketAddr, to: SocketAddr, datagram: &[u8]) {
        let mut state = self.lock();
        state.stats.injected += 1;
        state.settle(to);
        state
            .arrived
            .entry(to)
            .or_default()
            .push_back((from, datagram.to_vec()));
    }

    /// What the network did with the datagrams sent through it.
    pub fn stats(&self) -> MemoryStats {
        let state = self.lock();
        MemoryStats {
            network: state.sim.stats(),
            ..state.stats
        }
    }
}

/// A socket on a [`MemoryNetwork`].
#[derive(Debug)]
pub struct MemorySocket {
    local: SocketAddr,
    net: MemoryNetwork,
    /// The bound socket, kept so that its address stays this socket's
    /// alone: a port given back to the OS could be bound again on the same
    /// network.
    _bound: Option<UdpSocket>,
}

impl MemorySocket {
    /// The address the socket was bound to, which the network knows it by.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }
}

impl Socket for MemorySocket {
    fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<usize> {
        let mut state = self.net.lock();
        state.stats.largest = state.stats.largest.max(datagram.len());
        if state.muted.contains(&self.local) {
            state.stats.muted += 1;
        } else {
            let now = state.now;
            state.sim.send(now, self.local, to, datagram);
        }
        Ok(datagram.len())
    }

    fn recv_from(&self, buffer: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        let (from, datagram) = self
            .net
            .lock()
            .take(self.local)
            .ok_or(io::ErrorKind::WouldBlock)?;
        let n = datagram.len().min(buffer.len());
        buffer[..n].copy_from_slice(&datagram[..n]);
        Ok((n, from))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "127.0.0.1:1";
    const B: &str = "127.0.0.1:2";

    fn socket(net: &MemoryNetwork, address: &str) -> MemorySocket {
        MemorySocket {
            local: address.parse().unwrap(),
            net: net.clone(),
            _bound: None,
        }
    }

    /// Every datagram `socket` can read now, as its first byte.
    fn read_all(socket: &MemorySocket) -> Vec<u8> {
        let mut buffer = [0u8; 16];
        let mut read = Vec::new();
        while let Ok((n, _)) = socket.recv_from(&mut buffer) {
            assert_eq!(n, 1);
            read.push(buffer[0]);
        }
        read
    }

    #[test]
    fn loss_is_seeded_and_near_its_rate() {
        let run = |seed| {
            let net = MemoryNetwork::lossy(0.1, seed);
            let a = socket(&net, A);
            for _ in 0..10_000 {
                a.send_to(b"x", B.parse().unwrap()).unwrap();
            }
            net.stats().network
        };
        let stats = run(5);
        assert_eq!(stats.sent, 10_000);
        assert!((800..1200).contains(&stats.lost), "{stats:?}");
        assert_eq!(run(5), stats, "the same seed loses the same");
        assert_eq!(MemoryNetwork::new().stats(), MemoryStats::default());
    }

    #[test]
    fn a_perfect_network_delivers_in_order_at_once() {
        let net = MemoryNetwork::new();
        let (a, b) = (socket(&net, A), socket(&net, B));
        for i in 0..5 {
            a.send_to(&[i], b.local_addr()).unwrap();
        }
        net.inject("10.0.0.1:9".parse().unwrap(), b.local_addr(), &[9]);
        a.send_to(&[5], b.local_addr()).unwrap();
        assert_eq!(read_all(&b), [0, 1, 2, 3, 4, 9, 5]);
        assert_eq!(read_all(&a), [] as [u8; 0]);
        assert_eq!(net.in_flight(), 0);
        assert_eq!(net.now(), Instant::ZERO, "time never had to move");
    }

    #[test]
    fn latency_holds_datagrams_until_the_time_comes() {
        let config = SimConfig {
            latency: Duration::from_millis(20),
            ..SimConfig::default()
        };
        let net = MemoryNetwork::with_config(config, 1);
        let (a, b) = (socket(&net, A), socket(&net, B));
        a.send_to(&[1], b.local_addr()).unwrap();
        assert_eq!(read_all(&b), [] as [u8; 0]);
        assert_eq!(net.next_delivery_time(), Some(Instant::from_millis(20)));
        net.advance(Duration::from_millis(19));
        assert_eq!(read_all(&b), [] as [u8; 0]);
        net.advance(Duration::from_millis(1));
        assert_eq!(read_all(&b), [1]);
        assert_eq!(net.next_delivery_time(), None);
    }

    #[test]
    fn jitter_reorders_and_duplicates_arrive_twice() {
        let config = SimConfig {
            latency: Duration::from_millis(10),
            jitter: Duration::from_millis(20),
            duplicate_percent: 50.0,
            duplicate_max_delay: Duration::from_millis(30),
            ..SimConfig::default()
        };
        let net = MemoryNetwork::with_config(config, 3);
        let (a, b) = (socket(&net, A), socket(&net, B));
        let mut read = Vec::new();
        for i in 0..100 {
            a.send_to(&[i], b.local_addr()).unwrap();
            net.advance(Duration::from_millis(1));
            read.extend(read_all(&b));
        }
        net.advance(Duration::from_secs(1));
        read.extend(read_all(&b));
        let stats = net.stats().network;
        assert!(stats.duplicated > 20, "{stats:?}");
        assert_eq!(read.len() as u64, 100 + stats.duplicated);
        assert!(read.windows(2).any(|w| w[0] > w[1]), "reordered");
        let mut distinct = read.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct, (0..100).collect::<Vec<u8>>());
    }

    #[test]
    fn a_muted_sender_is_lost_and_injected_datagrams_are_not() {
        let net = MemoryNetwork::lossy(1.0, 2);
        let (a, b) = (socket(&net, A), socket(&net, B));
        net.mute(a.local_addr());
        a.send_to(&[1, 2, 3], b.local_addr()).unwrap();
        b.send_to(&[4], a.local_addr()).unwrap();
        net.inject(b.local_addr(), a.local_addr(), &[5]);
        assert_eq!(read_all(&a), [5]);
        assert_eq!(read_all(&b), [] as [u8; 0]);
        let stats = net.stats();
        assert_eq!((stats.muted, stats.injected, stats.largest), (1, 1, 3));
        assert_eq!((stats.network.sent, stats.network.lost), (1, 1));
    }
}
