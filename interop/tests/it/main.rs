//! The live interoperability tests, one binary: our std and mio hosts
//! against the official Rust port (`netcode-official`) over 127.0.0.1 UDP,
//! `official` for the std transport, `official_mio` for the mio one, with
//! the scenarios of both directions in `common`.
//!
//! Every socket binds port 0. Our servers here start with `start`, which
//! waits until the restart rule's second is over: the tokens they are
//! given are made by the official port, stamped with its own clock.

mod common;

mod official;
mod official_mio;
