//! # netcode-proto
//!
//! A sans-IO implementation of the [netcode 1.02] protocol: the secure
//! client/server layer over UDP that multiplayer games use. A web backend
//! hands a client a connect token; the client connects to a dedicated server
//! with it; both then exchange encrypted, signed, unreliable packets.
//!
//! This crate holds the protocol and nothing else. It is `#![no_std]`, needs
//! no allocator, has no `unsafe`, never reads a clock, never touches a socket
//! and never draws randomness on its own: time, datagrams and a random number
//! generator come in as arguments.
//!
//! ## Behaviour
//!
//! * [`client`]: the client state machine ([`client::Client`]).
//! * [`server`]: the server state machine ([`server::Server`]) over
//!   caller-sized storage, with hash lookups for every per-packet step.
//! * [`io`]: the [`io::Output`] trait both push datagrams and events into.
//! * [`stats`]: counters per packet type and per drop reason;
//!   [`traffic`]: what each connection carried ([`ConnectionStats`]).
//! * [`time`]: [`Instant`], a point on the caller's monotonic clock, apart
//!   from the spans (`Duration`) between points.
//! * [`timing`]: the send interval and every other timing rule, once.
//! * `sim` (feature `sim`): a deterministic network simulator for tests.
//!
//! ## The wire layer
//!
//! * [`token`]: connect tokens (public and private) and challenge tokens,
//!   including [`generate_connect_token`] for web backends.
//! * [`packet`]: the seven packet types, [`write_packet`] and the checked,
//!   in-place [`read_packet`].
//! * [`replay`]: the per-connection replay window.
//! * [`crypto`]: the two AEADs, behind one small seam: the portable
//!   pure-Rust backend by default, `ring`'s assembly with feature `ring`
//!   (which links `alloc`, though it never allocates).
//! * [`address`], [`bytes`], [`constants`]: the building blocks.
//!
//! ## Features and targets
//!
//! * default: the wire layer, tokens, crypto, and the client and server
//!   over caller-sized [`server::ArrayStorage`]: `no_std`, no allocator,
//!   pure Rust; builds for `wasm32-unknown-unknown` and other targets with
//!   no C compiler.
//! * `alloc`: `server::HeapStorage`, the server's tables on the heap.
//! * `sim`: the deterministic network simulator and `seeded::SeededRng`,
//!   for tests (implies `alloc`).
//! * `ring`: `ring`'s assembly AEAD instead of the portable one; needs a C
//!   compiler, links `alloc` (it never allocates).
//!
//! On x86-64 without `ring`, build with
//! `RUSTFLAGS='--cfg poly1305_backend="soft"'`: the portable backend's
//! `poly1305` crate picks an AVX2 path that is slow on short messages, and
//! its soft path seals a 100-byte packet 3.3× faster, with the same bytes.
//!
//! Every byte this crate writes is identical to what the C reference
//! implementation writes for the same inputs; the `vectors` crate of this
//! workspace holds it to that.
//!
//! [netcode 1.02]: https://github.com/mas-bandwidth/netcode/blob/main/STANDARD.md
#![no_std]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

#[cfg(feature = "alloc")]
extern crate alloc;

pub mod address;
pub mod backoff;
pub mod bytes;
pub mod client;
pub mod constants;
pub mod crypto;
mod dropped;
mod durable;
pub mod io;
pub mod packet;
pub mod replay;
#[cfg(feature = "sim")]
pub mod seeded;
pub mod server;
pub mod session;
#[cfg(feature = "sim")]
pub mod sim;
pub mod stats;
pub mod time;
pub mod timing;
pub mod token;
pub mod traffic;

pub use crypto::Key;
pub use packet::{Packet, PacketError, PacketType, read_packet, write_packet};
/// The RNG traits of the version this crate takes (`CryptoRng` arguments).
pub use rand_core;
pub use replay::ReplayProtection;
pub use time::Instant;
pub use token::{ConnectToken, PrivateConnectToken, generate_connect_token};
pub use traffic::ConnectionStats;

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
