//! # netcode-mio
//!
//! netcode 1.02 for [mio] event loops: a [`Server`] and a [`Client`] whose
//! UDP sockets register with the caller's [`mio::Registry`] under the
//! caller's [`mio::Token`]s. They have no thread and never block; the
//! caller's [`mio::Poll`] does all the waiting:
//!
//! 1. sleep in `poll.poll(&mut events, timeout)`, with `timeout` the
//!    minimum of the servers' and clients' `poll_timeout` (and whatever
//!    else the loop waits for): the time until the protocol next has a
//!    keep-alive to send or a timeout to apply, or `None` when only a
//!    datagram can make work;
//! 2. hand each readable event to [`Registered::handle_readable`], which
//!    reads the socket of that token until it has no more, handling every
//!    datagram at once;
//! 3. call `update` to send what is due, then drain `poll_event`,
//!    `receive_packet` and send as the C library's API does.
//!
//! Time is the caller's clock in seconds as `f64` (any monotonic epoch;
//! only differences matter), as in `netcode-std`.
//!
//! [`Server`] and [`Client`] *are* `netcode-std`'s server and client, on
//! mio sockets: the same protocol core, socket setup, batched datagram
//! I/O, queues, events, clock, logging and counters, and the same C-style
//! API, documented on [`netcode_std::Server`] and [`netcode_std::Client`].
//! This crate adds what mio needs and nothing else: the [`Registered`]
//! trait (constructors on a [`mio::Registry`], readable events,
//! deregistration) and the socket type, [`RegisteredSocket`].
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Instant;
//! use mio::{Events, Poll, Token};
//! use netcode_mio::{Client, ClientConfig, ClientState, Registered, Server, ServerConfig};
//! use netcode_mio::{ConnectTokenBuilder, proto::Key};
//!
//! const PROTOCOL_ID: u64 = 0x1122_3344_5566_7788;
//! let key = Key::from_bytes([0x42; 32]);
//! let mut poll = Poll::new()?;
//! let mut events = Events::with_capacity(256);
//!
//! let mut server = Server::new("127.0.0.1:40000", ServerConfig::new(PROTOCOL_ID, key.clone()),
//!                              poll.registry(), Token(0))?;
//! server.start(16)?;
//! let token = ConnectTokenBuilder::new(PROTOCOL_ID, &key, 1)
//!     .server_addresses(["127.0.0.1:40000"])
//!     .generate()?;
//! let mut client = Client::new("0.0.0.0", ClientConfig::default(), poll.registry(), Token(1))?;
//! client.connect(&token)?;
//!
//! let epoch = Instant::now();
//! while client.state() != ClientState::Connected {
//!     let now = epoch.elapsed().as_secs_f64();
//!     let timeout = [server.poll_timeout(now), client.poll_timeout(now)]
//!         .into_iter()
//!         .flatten()
//!         .min();
//!     poll.poll(&mut events, timeout)?;
//!     let now = epoch.elapsed().as_secs_f64();
//!     for event in events.iter() {
//!         let _ = server.handle_readable(event.token(), now)
//!             || client.handle_readable(event.token(), now);
//!     }
//!     server.update(now);
//!     client.update(now);
//! }
//! client.send_packet(b"hello")?;
//! # Ok(()) }
//! ```
//!
//! [mio]: https://docs.rs/mio
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod registered;
mod socket;

pub use registered::Registered;
pub use socket::RegisteredSocket;

/// A netcode dedicated server in a mio event loop: [`netcode_std::Server`]
/// on [`RegisteredSocket`]s, made with [`Registered::new`] or
/// [`Registered::new_dual`].
pub type Server = netcode_std::Server<RegisteredSocket>;

/// A netcode client in a mio event loop: [`netcode_std::Client`] on
/// [`RegisteredSocket`]s, made with [`Registered::new`] or
/// [`Registered::new_dual`].
pub type Client = netcode_std::Client<RegisteredSocket>;

pub use mio;
/// The host this crate runs on.
pub use netcode_std;
pub use netcode_std::common::*;

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
