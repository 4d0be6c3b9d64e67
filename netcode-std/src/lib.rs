//! # netcode-std
//!
//! netcode 1.02 on the standard library: [`Server`] and [`Client`] over
//! `std::net` UDP sockets with the API of the C library, connect token
//! generation for web backends, and the reference's address syntax.
//!
//! All protocol logic lives in the sans-IO core, [`netcode_proto`]
//! (re-exported as [`proto`]); this crate is the host around it, written
//! once for every transport: it moves datagrams between the core and the
//! sockets in batches, keeps the time, queues payloads and events, and logs.
//!
//! * **Batches**: on Linux one `recvmmsg` / `sendmmsg` per 32 datagrams. A
//!   datagram leaves before the call that produced it returns, or when the
//!   [`Batch`] scope that held it ends ([`Server::batch`]).
//! * **Time**: the caller's clock in seconds; no value can break it (see
//!   [`MAX_TIME_STEP`] for the rule).
//! * **Logging**: through the [`log`](https://docs.rs/log) facade, target
//!   `netcode`: lifecycle at `info`, refused connection attempts with the
//!   reason at `info` (once per sender per second), failed connects at
//!   `warn`, other dropped datagrams at `debug` (rate-limited per reason).
//!
//! ## Features
//!
//! * `ring` (default): netcode-proto's `ring` AEAD backend, several times
//!   faster per packet; needs a C compiler for the target. Without default
//!   features the crate is pure Rust.
//! * `sim`: `transport::memory`, an in-memory transport on netcode-proto's
//!   seeded network simulator (latency, jitter, loss, duplicates), for
//!   tests of games and adapters built on this crate.
//!
//! ## A server and a client
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::{Duration, Instant};
//! use netcode_std::{Client, ConnectTokenBuilder, Server, ServerConfig, proto::Key};
//! use netcode_std::proto::client::ClientState;
//!
//! const PROTOCOL_ID: u64 = 0x1122_3344_5566_7788;
//! let key = Key::from_bytes([0x42; 32]);
//!
//! let mut server = Server::new("127.0.0.1:40000", ServerConfig::new(PROTOCOL_ID, key.clone()))?;
//! server.start(16)?;
//!
//! // The web backend's job: a token listing the server, for client id 1.
//! let token = ConnectTokenBuilder::new(PROTOCOL_ID, &key, 1)
//!     .server_addresses(["127.0.0.1:40000"])
//!     .generate()?;
//! let mut client = Client::new("0.0.0.0")?;
//! client.connect(&token)?;
//!
//! let epoch = Instant::now();
//! while client.state() != ClientState::Connected {
//!     let now = epoch.elapsed().as_secs_f64();
//!     client.update(now);
//!     server.update(now);
//!     std::thread::sleep(Duration::from_millis(1));
//! }
//! client.send_packet(b"hello")?;
//! # Ok(()) }
//! ```
//!
//! ## Also here
//!
//! * [`parse_address`]: address strings with the C library's rules.
//! * [`ConnectTokenBuilder`]: tokens stamped with the system clock (or a
//!   second of issue of the caller's), keys and nonces from the operating
//!   system.
//! * [`transfer_loopback`]: a listen server's own, in-process client.
//! * [`os_random`], [`generate_key`], [`random_client_id`], [`unix_time`]:
//!   the OS services the core
//!   takes as arguments.
//! * [`transport`]: everything about sockets in one place: the socket seam
//!   through which other transports (`netcode-mio`, `netcode-tokio`) run
//!   this crate's server and client on their own sockets, the UDP sockets
//!   the host creates and sets up as the C reference does, and the host's
//!   batched datagram I/O, written once for every socket.
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod address;
mod batch;
mod client;
mod clock;
pub mod common;
mod error;
mod events;
pub mod history_store;
mod link;
mod logging;
mod loopback;
mod packet;
mod random;
mod server;
mod stats;
mod time;
mod token;
pub mod transport;

pub use common::*;

pub use batch::{Batch, Batching};
pub use client::{Backoff, Client, ReconnectEvent, Reconnecting, backoff_delay};
pub use events::EVENT_QUEUE_SIZE;
pub use loopback::transfer_loopback;
pub use packet::PACKET_QUEUE_SIZE;
pub use random::{OsRandom, os_random, random_bytes};
pub use server::{MAX_RESTORED_TOKENS, SERVER_LOOPBACK_QUEUE_SIZE, Server};
pub use transport::udp::{
    DEFAULT_SOCKET_BUFFER_BYTES, DSCP_EF_TOS, MIN_SOCKET_BUFFER_BYTES, PACKET_TAGGING_TOS,
};

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
