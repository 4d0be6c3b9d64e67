//! # netcode-webtransport
//!
//! Browser clients in the same netcode 1.02 server as native UDP clients:
//! a WebTransport endpoint whose sessions carry standard netcode packets
//! as datagrams, one packet per datagram, byte for byte what UDP carries.
//! Each session becomes a peer of the server with a virtual address of its
//! own (in `100::/64`, see `netcode_std::transport`), so the server admits
//! it with the same connect tokens, key and protocol id, in the same slots,
//! and answers it through the same code as its UDP clients.
//!
//! ```text
//!  UDP clients ──────────── UDP socket ─┐
//!                                       ├── netcode_tokio::Server (one key, one set of slots)
//!  browsers ── WebTransport sessions ───┘
//!              (QUIC + HTTP/3, wtransport)
//! ```
//!
//! The server side is [`WebTransport`]: bind it, [`attach`](WebTransport::attach)
//! it to a `netcode_tokio::Server`, and hand each browser, with its token,
//! the endpoint's [`url`](WebTransport::url) and (for the self-signed
//! certificate it makes by default) its
//! [`certificate_hash`](WebTransport::certificate_hash).
//!
//! The client side is one client for both targets: `netcode-browser`'s
//! target-independent [`Driver`](netcode_browser::Driver) (the core
//! client, its bounded queues, the session's payload limit and the rules
//! for a session that closes), under the browser's WebTransport in a page
//! (`netcode-browser`, wasm32) and under a wtransport session natively
//! ([`WebTransportClient`], here, for tests, benchmarks and native
//! programs). Both fail with the same [`ConnectError`] and [`SendError`].
//!
//! ## Limits and refusals
//!
//! netcode uses datagrams only. A session's streams are refused, datagrams
//! longer than a netcode packet can be are dropped, a session that sends
//! no datagram for [`WebTransportConfig::silence_timeout`] is closed,
//! requests for another path are answered 404, sessions beyond
//! [`WebTransportConfig::max_sessions`] are answered 429, and connection
//! attempts beyond [`WebTransportConfig::max_handshakes`] are refused
//! before any cryptography; each is counted in [`WebTransportStats`]. A
//! session that closes frees its netcode slot only the protocol's way
//! (its client's disconnect packets or its timeout), never early.
//!
//! Browsers send datagrams of at most their session's
//! `maxDatagramSize` (1211 bytes in Chromium 156, 1024 in Chromium 148):
//! the browser client derives its payload limit from it; the server sends netcode packets of any size
//! up to the 1300 bytes the protocol allows, which QUIC carries (after its
//! path MTU discovery) or refuses and counts
//! ([`WebTransportStats::datagrams_not_sent`]).
//!
//! ## Certificates
//!
//! By default ([`Certificate::SelfSigned`]) the endpoint makes an ECDSA
//! P-256 certificate valid for 14 days (the most browsers accept for a
//! certificate pinned by hash), and replaces it every 7 days; sessions
//! open at a rotation go on, new ones get the new certificate, so hand out
//! the current hash with each token. With an operator's certificate
//! ([`Certificate::Identity`]) browsers check it against their trust store
//! and no hash is needed; renew it with [`WebTransport::set_identity`].

#![cfg_attr(docsrs, feature(doc_cfg))]

mod client;
mod config;
mod endpoint;
mod relay;
mod websocket;

pub use client::WebTransportClient;
pub use config::{
    CLOCK_SKEW_ALLOWANCE, Certificate, InvalidName, MAX_PINNED_VALIDITY_DAYS, WebTransportConfig,
    self_signed_identity,
};
pub use endpoint::{CLOSE_SILENT, STREAM_REFUSED, WebTransport};
/// The client's target-independent part, for [`netcode_browser::Driver`]
/// ([`WebTransportClient::driver`]) and its types.
pub use netcode_browser;
/// The client's errors and its disconnect linger, netcode-browser's: the
/// native [`WebTransportClient`] and the browser's client stand on the same
/// driver and fail in the same words.
pub use netcode_browser::{ConnectError, DISCONNECT_LINGER, SendError};
pub use relay::{BrowserTransport, INBOUND_LIMIT, Relay, WebTransportStats};
pub use websocket::{
    DEFAULT_MAX_MESSAGES_PER_SECOND, MAX_MESSAGE_BYTES, WEBSOCKET_CLOSE_SILENT, WebSocket,
    WebSocketClient, WebSocketConfig, WebSocketStats,
};
/// The WebTransport crate underneath, for its certificate types
/// ([`wtransport::Identity`]) and native test clients.
pub use wtransport;

/// The README's example, compiled and run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
