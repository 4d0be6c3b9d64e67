//! An in-memory network behind the [`Socket`] seam, for tests of games and
//! adapters built on this crate: the real host (clock, queues, batches,
//! logging) on virtual time, with instant delivery, optional seeded loss,
//! and nothing left to the operating system's timing.
//!
//! The sockets are still created and bound by the host as usual, so each
//! keeps the unique address the OS gave it; a server made with
//! [`BindMode::Exact`](crate::BindMode::Exact) has its public address as its
//! socket's address, which is where clients send.
//!
//! ```
//! use netcode_std::transport::memory::MemoryNetwork;
//! use netcode_std::{BindMode, Client, ClientConfig, ClientState, ConnectTokenBuilder, Key,
//!                   Server, ServerConfig};
//!
//! let net = MemoryNetwork::new();
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

use super::Socket;
use crate::error::Family;

/// Datagrams waiting at one address, with their senders.
type Queue = VecDeque<(SocketAddr, Vec<u8>)>;

#[derive(Debug, Default)]
struct State {
    queues: HashMap<SocketAddr, Queue>,
    muted: HashSet<SocketAddr>,
    /// Chance in 2^32 that a datagram is lost, and the loss generator.
    loss: u32,
    rng: u64,
    sent: u64,
    lost: u64,
}

impl State {
    /// Whether the next datagram is lost (xorshift64*, seeded).
    fn lose(&mut self) -> bool {
        if self.loss == 0 {
            return false;
        }
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        let draw = (self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32;
        draw < self.loss
    }
}

/// The datagrams in flight between [`MemorySocket`]s. Clones share one
/// network; it can be handed across threads.
#[derive(Debug, Clone, Default)]
pub struct MemoryNetwork {
    state: Arc<Mutex<State>>,
}

impl MemoryNetwork {
    /// A lossless network.
    pub fn new() -> Self {
        Self::default()
    }

    /// A network that loses each datagram with probability `loss` (0 to 1),
    /// drawn from a generator seeded with `seed`: the same seed and traffic
    /// lose the same datagrams.
    pub fn lossy(loss: f64, seed: u64) -> Self {
        let net = Self::new();
        {
            let mut state = net.lock();
            state.loss = (loss.clamp(0.0, 1.0) * f64::from(u32::MAX)) as u32;
            state.rng = seed | 1;
        }
        net
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
            })
        }
    }

    /// Loses everything `address` sends from now on: a peer gone silent.
    pub fn mute(&self, address: SocketAddr) {
        self.lock().muted.insert(address);
    }

    /// Delivers a datagram to `to` as if from `from` (spoofed or garbage
    /// traffic, say), never lost.
    pub fn inject(&self, from: SocketAddr, to: SocketAddr, datagram: &[u8]) {
        self.lock()
            .queues
            .entry(to)
            .or_default()
            .push_back((from, datagram.to_vec()));
    }

    /// Datagrams sent through the network so far, and how many of them
    /// were lost.
    pub fn counts(&self) -> (u64, u64) {
        let state = self.lock();
        (state.sent, state.lost)
    }
}

/// A socket on a [`MemoryNetwork`].
#[derive(Debug)]
pub struct MemorySocket {
    local: SocketAddr,
    net: MemoryNetwork,
}

impl Socket for MemorySocket {
    fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<usize> {
        let mut state = self.net.lock();
        state.sent += 1;
        if state.muted.contains(&self.local) || state.lose() {
            state.lost += 1;
        } else {
            let queue = state.queues.entry(to).or_default();
            queue.push_back((self.local, datagram.to_vec()));
        }
        Ok(datagram.len())
    }

    fn recv_from(&self, buffer: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        let mut state = self.net.lock();
        let (from, datagram) = state
            .queues
            .get_mut(&self.local)
            .and_then(VecDeque::pop_front)
            .ok_or(io::ErrorKind::WouldBlock)?;
        let n = datagram.len().min(buffer.len());
        buffer[..n].copy_from_slice(&datagram[..n]);
        Ok((n, from))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loss_is_seeded_and_near_its_rate() {
        let run = |seed| {
            let net = MemoryNetwork::lossy(0.1, seed);
            let socket = MemorySocket {
                local: "127.0.0.1:1".parse().unwrap(),
                net: net.clone(),
            };
            for _ in 0..10_000 {
                socket
                    .send_to(b"x", "127.0.0.1:2".parse().unwrap())
                    .unwrap();
            }
            net.counts()
        };
        let (sent, lost) = run(5);
        assert_eq!(sent, 10_000);
        assert!((800..1200).contains(&lost), "{lost}");
        assert_eq!(run(5), (sent, lost), "the same seed loses the same");
        assert_eq!(MemoryNetwork::new().counts(), (0, 0));
    }
}
