//! # netcode-c
//!
//! netcode 1.02 behind the C reference library's API and ABI: this crate
//! builds `libnetcode.a` and `libnetcode.so` (`.dylib`, `netcode.dll`),
//! exporting every function of the reference's `netcode.h` (1.4.x) with
//! the same names, types, values and struct layouts, over this project's
//! [`netcode_std`] host. A C or C++ program links it in place of
//! `netcode.c` and compiles unchanged against `include/netcode.h`.
//!
//! What changes for that program is what C cannot check: every pointer and
//! length it passes is checked where garbage can be detected (NULL,
//! negative or oversized lengths, a packet freed twice or by the wrong
//! object, a destroyed object or one of the other kind), logged at error
//! level and refused; no panic crosses into C (modules `boundary` and
//! `objects`, the registry of live objects every call consults first).
//!
//! * [`abi`]: the header's constants and `#[repr(C)]` types.
//! * `global`: init and term, logging hooks, random bytes, time, tagging.
//! * `address`, `token`: addresses and connect tokens.
//! * `client`, `server`: the two objects.
//! * `packets`, `socket`: payload memory handed to C, and override mode's
//!   callback socket.
//!
//! `unsafe` lives in this crate alone in the workspace; each block says
//! why it is sound.
#![deny(unsafe_op_in_unsafe_fn)]
#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod abi;
mod address;
mod allocator;
mod boundary;
mod client;
mod global;
mod logging;
mod objects;
mod packets;
mod server;
mod socket;
mod token;

pub use abi::*;
pub use address::{netcode_address_equal, netcode_address_to_string, netcode_parse_address};
pub use client::*;
pub use global::*;
pub use server::*;
pub use token::netcode_generate_connect_token;

/// Hooks for this crate's Rust tests (feature `test-hooks`, never in the
/// libraries C links): the log lines a thread produced.
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub use logging::capture as test_log;
