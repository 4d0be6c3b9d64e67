//! # netcode-browser
//!
//! A [netcode 1.02](https://github.com/mas-bandwidth/netcode/blob/main/STANDARD.md)
//! client for games compiled to `wasm32-unknown-unknown`: `netcode-proto`'s
//! sans-IO [`Client`](netcode_proto::client::Client) driven by the browser's
//! [WebTransport](https://www.w3.org/TR/webtransport/) datagrams.
//!
//! A netcode server that accepts WebTransport sessions (the workspace's
//! `netcode-webtransport`) carries one standard netcode packet per
//! datagram, byte for byte what UDP would carry. The client connects with
//! the ordinary 2048-byte connect token; the server addresses in it are
//! the server's UDP addresses, which the browser does not route by: it
//! sends everything on its one session and hands every datagram it
//! receives to the core as coming from the address the core is talking to.
//!
//! * `BrowserClient` (wasm32 only) is the Rust API: `connect(url,
//!   certificate_hashes, token).await`, then each frame `update()`,
//!   `send(payload)`, `receive()`, and `disconnect()` at the end.
//! * `NetcodeClient` (wasm32 only, module `js`) is the same for a plain web
//!   page, exported by wasm-bindgen (`build-web.sh` makes the package).
//! * [`Driver`] is the platform-independent part both stand on: the core
//!   client, bounded queues, the session's payload limit and the rules for
//!   a session that closes. It builds natively too (with netcode-proto as
//!   its only dependency there): `netcode-webtransport`'s native
//!   `WebTransportClient` is the same client on a wtransport session, the
//!   native tests check it, and another transport (a WebSocket relay, a
//!   worker) could drive it.
//! * [`ConnectError`] and [`SendError`] are the errors of every client on
//!   the driver, browser and native alike, each with a readable message
//!   (what the JavaScript binding throws).
//!
//! ## The payload limit
//!
//! A WebTransport session carries datagrams of at most its
//! `maxDatagramSize`, and a browser silently drops larger ones. Chromium
//! 156 has reported 1211 against a minimal wtransport server, Chromium 148
//! 1024 against `netcode-webtransport` on loopback: the client reads it
//! from its session. A netcode payload packet is its payload plus up to
//! [`PAYLOAD_PACKET_OVERHEAD`] bytes, so a browser client sends payloads of
//! at most [`payload_limit`]`(maxDatagramSize)` bytes (1186 for 1211),
//! never more than netcode's 1200. Larger sends fail with
//! [`SendError::TooLarge`] instead of vanishing.

mod driver;
mod error;
mod hash;
mod queue;
mod time;

#[cfg(target_arch = "wasm32")]
mod client;
#[cfg(target_arch = "wasm32")]
pub mod js;
#[cfg(target_arch = "wasm32")]
mod reconnect;
#[cfg(target_arch = "wasm32")]
mod socket;
#[cfg(target_arch = "wasm32")]
mod web;

#[cfg(target_arch = "wasm32")]
pub use client::{BrowserClient, DEFAULT_FALLBACK_AFTER_MS, Endpoints, Transport};
pub use driver::{
    DISCONNECT_LINGER, DatagramSink, Driver, EVENT_QUEUE_CAPACITY, RECEIVE_QUEUE_CAPACITY,
};
pub use error::{ConnectError, SendError};
pub use hash::parse_certificate_hash;
/// The waits between a reconnecting client's attempts (netcode-proto's).
pub use netcode_proto::backoff::Backoff;
/// Bytes a netcode payload packet adds to its payload: the prefix byte, up
/// to 8 sequence bytes, and the 16-byte Poly1305 tag (25 in all; netcode-proto's
/// constant, derived there from the packet layout).
pub use netcode_proto::constants::PAYLOAD_PACKET_OVERHEAD;
pub use queue::{BoundedQueue, INBOX_CAPACITY, Inbox};
#[cfg(target_arch = "wasm32")]
pub use reconnect::{ReconnectEvent, ReconnectingClient, Ticket, TicketFuture};
pub use time::{Clock, instant_from_millis};

/// The largest payload a client can send on a session whose datagrams carry
/// at most `max_datagram_size` bytes: `max_datagram_size - 25`
/// ([`PAYLOAD_PACKET_OVERHEAD`]), at most netcode's 1200, and 0 when a
/// datagram cannot even hold the overhead (netcode-proto's
/// [`max_payload_within`](netcode_proto::constants::max_payload_within)).
///
/// Chromium 156 reports a `maxDatagramSize` of 1211: payloads of up to
/// 1186 bytes.
pub const fn payload_limit(max_datagram_size: usize) -> usize {
    netcode_proto::constants::max_payload_within(max_datagram_size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_overhead_is_25_bytes() {
        assert_eq!(PAYLOAD_PACKET_OVERHEAD, 25);
    }

    #[test]
    fn chromium_156_sessions_carry_1186_byte_payloads() {
        assert_eq!(payload_limit(1211), 1186);
    }

    #[test]
    fn the_limit_never_exceeds_netcode_s_maximum() {
        assert_eq!(payload_limit(1225), 1200);
        assert_eq!(payload_limit(1224), 1199);
        assert_eq!(payload_limit(1500), 1200);
        assert_eq!(payload_limit(usize::MAX), 1200);
    }

    #[test]
    fn tiny_datagrams_leave_no_room() {
        assert_eq!(payload_limit(0), 0);
        assert_eq!(payload_limit(25), 0);
        assert_eq!(payload_limit(26), 1);
    }
}
