//! # netcode-mio
//!
//! netcode 1.02 for [mio] event loops.
//!
//! **Status:** the mio-registered `Server` and `Client` are not written yet;
//! this crate only re-exports the protocol core ([`proto`]) and the
//! standard-library helpers ([`std_support`]) it will build on, so that
//! depending on it today gives nothing that pretends to work.
//!
//! [mio]: https://docs.rs/mio
#![forbid(unsafe_code)]

pub use netcode_proto as proto;
pub use netcode_std as std_support;
