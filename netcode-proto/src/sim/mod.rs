//! A deterministic network simulator for tests of games built on netcode
//! (STANDARD.md has no simulator; the C reference's test network is
//! described in BEHAVIOR.md section 6).
//!
//! [`NetworkSimulator`] stands in for the network between any number of
//! clients and servers. Datagrams go in with [`send`](NetworkSimulator::send)
//! (or through a [`SimOutput`], which implements [`Output`](crate::io::Output) so the protocol
//! core can write straight into the simulator) and come out with
//! [`receive`](NetworkSimulator::receive) (for one destination address) or
//! [`receive_any`](NetworkSimulator::receive_any) (for whichever destination
//! is due first), once their delivery time has come.
//!
//! On the way, each datagram may be lost, delayed by a fixed latency plus a
//! uniform jitter (which reorders datagrams), or duplicated, as set by a
//! [`SimConfig`]. The simulator never reads a clock: every call takes the
//! simulated time `now`, an [`Instant`](crate::Instant) since an arbitrary epoch, and
//! [`next_delivery_time`](NetworkSimulator::next_delivery_time) tells a test
//! loop how far it may jump. All randomness comes from a small generator
//! seeded by the caller, so the same seed and the same calls give the same
//! deliveries, on every platform.
//!
//! [`World`] puts this crate's servers and clients on such a network, on
//! simulated time that steps by frames or jumps to the next deadline: the
//! scenario tests of this crate run on it, and so can a game's.
//! [`fixtures`] holds the reference tests' key, protocol id and networks.
//!
//! # Example
//!
//! ```
//! use core::net::SocketAddr;
//! use core::time::Duration;
//! use netcode_proto::Instant;
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
//! let mut now = Instant::ZERO;
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
//! assert!(now >= Instant::from_millis(80) && now <= Instant::from_millis(120));
//! let stats = sim.stats();
//! assert_eq!(stats.sent, 2);
//! assert_eq!(stats.delivered, 2);
//! ```

mod config;
pub mod fixtures;
mod network;
mod output;
mod queue;
mod rng;
mod store;
#[cfg(test)]
mod tests;
mod world;

pub use config::{DEFAULT_DUPLICATE_MAX_DELAY, DEFAULT_MAX_IN_FLIGHT, SimConfig, SimStats};
pub use network::{Delivered, NetworkSimulator};
pub use output::SimOutput;
pub use store::{ServerOutput, SimStore};
pub use world::{ClientNode, Filter, ServerNode, World};
