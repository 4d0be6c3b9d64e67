//! netcode-renet's integration tests, one binary: each file of this
//! directory is a module, `common` holds the workspace's fixtures, the
//! renet pair and its checked exchange, and `common::net` the transports
//! on the in-memory network.
//!
//! Every real socket binds port 0. Servers start with `start_nowait` (the
//! netcode server built first, then handed to
//! `NetcodeServerTransport::from_server`: `NetcodeServerTransport::new`
//! starts with the wait, and the README's example covers it) and the tests
//! issue their tokens as of the second it returns.

mod common;

mod lossy;
mod reordering;
mod sim;
mod udp;
