//! # netcode-tokio
//!
//! netcode 1.02 on [tokio]: a [`Server`] and a [`Client`] on
//! [`tokio::net::UdpSocket`]s, with async construction and async methods
//! that drive them: each sleeps until a socket is readable or the
//! protocol's next deadline (a keep-alive to send, a timeout to apply,
//! through [`tokio::time::sleep_until`]), handles what arrived, and
//! returns the next payload or event.
//!
//! | | server | client |
//! | --- | --- | --- |
//! | construction | [`Server::new`], [`Server::new_dual`] | [`Client::new`], [`Client::new_dual`], [`Client::with_config`] |
//! | payloads | [`Server::recv`] | [`Client::recv`] |
//! | events | [`Server::next_event`], [`Server::next`] (both) | [`Client::next_event`], [`Client::connected`] |
//! | one driver turn | [`Server::turn`], [`Server::poll_turn`] | [`Client::turn`], [`Client::poll_turn`] |
//!
//! Every async method is cancellation-safe (see [`Server`]), so they go in
//! `tokio::select!` beside a game's tick timer or a shutdown signal. The
//! server and client are `Send`: spawn them.
//!
//! Inside are `netcode-std`'s server and client: the same protocol core,
//! socket setup, batched datagram I/O (one `recvmmsg` / `sendmmsg` per 32
//! datagrams on Linux, made inside tokio's `try_io` so the reactor's
//! readiness stays right), queues, logging and counters. What this crate
//! adds is the socket type ([`TokioSocket`]: readiness, nothing else), the
//! drivers, and the host's methods that make sense under tokio, on
//! [`Server`] and [`Client`] themselves: no method takes a time (tokio's
//! clock is read and handed to the host as instants) and none blocks.
//! [`Server::get_ref`] reaches the rest.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use netcode_tokio::{ConnectTokenBuilder, Incoming, Server, ServerConfig, generate_key};
//!
//! const PROTOCOL_ID: u64 = 0x1122_3344_5566_7788;
//! let key = generate_key()?;
//! let mut server = Server::new("127.0.0.1:40000", ServerConfig::new(PROTOCOL_ID, key)).await?;
//! server.start(64).await?;
//! loop {
//!     match server.next().await {
//!         Incoming::Event(event) => println!("{event:?}"),
//!         Incoming::Payload { client_index, packet } => {
//!             let _ = server.send_packet(client_index, packet.data()); // echo
//!             server.free_packet(packet);
//!         }
//!     }
//! }
//! # }
//! ```
//!
//! [tokio]: https://docs.rs/tokio
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod client;
mod driver;
mod server;
mod socket;

pub use client::{Client, Reconnecting};
/// netcode-std's backoff and events, which [`Reconnecting`] reports.
pub use netcode_std::{Backoff, ReconnectEvent};
pub use server::{Incoming, Server};
pub use socket::TokioSocket;

/// The host this crate runs on.
pub use netcode_std;
pub use netcode_std::common::*;
pub use tokio;

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
