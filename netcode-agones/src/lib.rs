//! # netcode-agones
//!
//! Dedicated netcode servers on [Agones](https://agones.dev): a netcode
//! server whose life follows its `GameServer`, through the official Agones
//! Rust SDK (the `agones` crate).
//!
//! * **Start** ([`DedicatedServer::start`]): connect to the SDK sidecar
//!   within a time limit ([`connect`]); read the public address from the
//!   GameServer status, `status.address` (or the address of a chosen type,
//!   a DNS name resolved) and the port named `netcode` ([`public_address`]):
//!   what the token service lists in connect tokens;
//!   bind the socket at the container port while the server calls itself
//!   by that address ([`bind_server`]); start the netcode server; publish
//!   the protocol id label and address annotation ([`Announcement`]);
//!   open the health stream; and only then report `Ready`.
//! * **Run** ([`DedicatedServer::update`], each frame of the game loop):
//!   health pings from the loop itself, at a period measured by the loop
//!   ([`Link::tick`]), so a stalled loop stops them; each client's id
//!   added to and removed from the GameServer's `players` list (beta
//!   Counters and Lists); the `Allocated` state seen on the GameServer
//!   watch; the match rules judged ([`MatchRules`]: empty after allocation,
//!   a time limit since allocation).
//! * **End** ([`DedicatedServer::finish`]): stop the server (every client
//!   gets disconnect packets) and call `Shutdown`.
//!
//! The SDK is async: its calls run on a tokio runtime, in tasks that never
//! hold up the game loop, which runs on a thread of its own with
//! netcode-std's blocking server. A sidecar that goes away mid-match does
//! not end the match: calls fail and are retried, the health stream is
//! re-opened once the sidecar answers, and [`LinkStats`] counts it all.
#![forbid(unsafe_code)]
#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod address;
mod announce;
mod browsers;
mod dedicated;
mod error;
mod link;
mod policy;
mod sidecar;
mod socket;

pub use address::{
    ADDRESS_TYPE_VARIABLE, StatusAddress, pick_resolved, public_address, resolve,
    wait_for_public_address,
};
pub use announce::{
    ADDRESS_ANNOTATION, Announcement, CERT_HASH_ANNOTATION, PROTOCOL_ID_LABEL, check_key,
};
pub use browsers::{BrowserOptions, WEBTRANSPORT_LABEL, WEBTRANSPORT_URL_ANNOTATION};
pub use dedicated::{DedicatedOptions, DedicatedServer};
pub use error::{AddressError, MetadataError, StartError, describe};
pub use link::{Link, LinkOptions, LinkStats, ShutdownError};
pub use policy::{MatchEnd, MatchRules, MatchTracker};
pub use sidecar::{DEFAULT_SDK_PORT, connect, sdk_port};
pub use socket::bind_server;

/// The SDK this crate drives, for its types (`Sdk`, `GameServer`).
pub use agones;
/// The netcode host the server runs on.
pub use netcode_std;

/// The `log` target of this crate's messages.
pub const TARGET: &str = "netcode_agones";
