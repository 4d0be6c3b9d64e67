//! # netcode-renet
//!
//! A transport for [renet](https://docs.rs/renet) 2.x over netcode 1.02,
//! in the shape renet users know from renet_netcode:
//! [`NetcodeServerTransport`] and [`NetcodeClientTransport`], each with
//! `update(duration, &mut renet)` and `send_packets(&mut renet)`, over
//! `netcode_std`'s [`Server`](netcode_std::Server) and
//! [`Client`](netcode_std::Client) (any socket type through their
//! `transport` seam).
//!
//! ## Packet size
//!
//! netcode 1.02 payloads hold at most 1200 bytes; renet 2.x cuts large
//! messages into slices of 1200 bytes and packs small messages up to 1200
//! bytes, each packet with its own header on top, so its packets run past
//! 1200 bytes (by 8 to 16 for full slices and packings; its acks can reach
//! 1400). The adapter sends a renet packet of up to 1200 bytes as one
//! payload, unchanged, and a longer one as two, joined again on arrival
//! ([`framing`] has the format). A split packet is
//! lost when either half is; halves waiting for their partner take at most
//! [`PENDING_PAIRS`] buffers per connection, each for at most
//! [`PART_TIMEOUT`], and every drop is counted in [`FramingStats`].
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::{Duration, Instant};
//! use netcode_renet::{ConnectTokenBuilder, NetcodeClientTransport, NetcodeServerTransport};
//! use netcode_renet::{ServerConfig, generate_key};
//! use renet::{ConnectionConfig, DefaultChannel, RenetClient, RenetServer};
//!
//! const PROTOCOL_ID: u64 = 7;
//! let key = generate_key()?;
//! let mut server = RenetServer::new(ConnectionConfig::default());
//! let mut server_transport =
//!     NetcodeServerTransport::new("127.0.0.1:5000", ServerConfig::new(PROTOCOL_ID, key.clone()), 64)?;
//!
//! let token = ConnectTokenBuilder::new(PROTOCOL_ID, &key, 42)
//!     .server_addresses(["127.0.0.1:5000"])
//!     .generate()?;
//! let mut client = RenetClient::new(ConnectionConfig::default());
//! let mut client_transport = NetcodeClientTransport::new("0.0.0.0:0", &token)?;
//!
//! let mut last = Instant::now();
//! loop {
//!     let delta = last.elapsed();
//!     last = Instant::now();
//!     client.update(delta);
//!     client_transport.update(delta, &mut client)?;
//!     server.update(delta);
//!     server_transport.update(delta, &mut server)?;
//!     if client.is_connected() {
//!         client.send_message(DefaultChannel::ReliableOrdered, vec![7; 5000]);
//!     }
//!     client_transport.send_packets(&mut client)?;
//!     server_transport.send_packets(&mut server);
//!     std::thread::sleep(Duration::from_millis(16));
//! }
//! # }
//! ```
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod client;
mod error;
pub mod framing;
mod reassembly;
#[cfg(test)]
mod renet_packets;
mod server;
mod stats;

pub use client::NetcodeClientTransport;
pub use error::{NetcodeTransportError, SetupError};
pub use framing::MAX_PACKET_BYTES;
pub use reassembly::{PART_TIMEOUT, PENDING_PAIRS};
pub use server::NetcodeServerTransport;
pub use stats::FramingStats;

/// The netcode host the transports run on.
pub use netcode_std;
pub use netcode_std::common::*;

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
