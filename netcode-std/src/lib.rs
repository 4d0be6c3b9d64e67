//! # netcode-std
//!
//! netcode 1.02 on the standard library: [`Server`] and [`Client`] over
//! `std::net` UDP sockets with the API of the C library, connect token
//! generation for web backends, and the reference's address syntax.
//!
//! All protocol logic lives in the sans-IO core, [`netcode_proto`]
//! (re-exported as [`proto`]); this crate moves datagrams between it and
//! the sockets, keeps the time, and queues payloads and events.
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
//! * [`generate_connect_token`] and [`ConnectTokenBuilder`]: tokens stamped
//!   with the system clock, keys and nonces from the operating system.
//! * [`transfer_loopback`]: a listen server's own, in-process client.
//! * [`os_random`], [`random_key`], [`unix_time`]: the OS services the core
//!   takes as arguments.
//! * [`transport`]: the socket seam through which other transports
//!   (`netcode-mio`) reuse this crate's server and client on their own
//!   sockets.
#![forbid(unsafe_code)]
#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod address;
mod client;
mod clock;
mod error;
mod events;
pub mod history_store;
mod loopback;
mod packet;
mod random;
mod server;
mod socket;
mod stats;
mod time;
mod token;
pub mod transport;

pub use address::{AddressParseError, ToAddress, parse_address};
pub use client::{Client, ClientConfig};
pub use error::{CreateError, Family};
pub use events::EVENT_QUEUE_SIZE;
pub use loopback::{LoopbackPacket, transfer_loopback};
pub use netcode_proto as proto;
pub use netcode_proto::client::{ClientEvent, ClientState, LoopbackError};
pub use netcode_proto::server::{DisconnectReason, ServerError, ServerEvent};
pub use netcode_proto::session::SendError;
pub use packet::{PACKET_QUEUE_SIZE, ReceivedPacket};
pub use random::{OsRandom, RandomError, os_random, random_bytes, random_key};
pub use server::{MAX_CLIENTS, SERVER_LOOPBACK_QUEUE_SIZE, Server, ServerConfig};
pub use socket::{DEFAULT_SOCKET_BUFFER_BYTES, MIN_SOCKET_BUFFER_BYTES, PACKET_TAGGING_TOS};
pub use stats::TransportStats;
pub use time::unix_time;
pub use token::{ConnectTokenBuilder, TokenBuildError, TokenRequest, generate_connect_token};
