//! Our mio server and mio client against the official Rust port
//! (`netcode-official`) over 127.0.0.1 UDP, each in a poll of its own: the
//! same scenarios as `official.rs` runs for the std transport.

use crate::common::*;

#[test]
fn their_client_connects_to_our_mio_server() {
    their_client_talks_to_our_server_then_leaves(&mut Polled::server());
}

#[test]
fn our_mio_client_connects_to_their_server() {
    our_client_talks_to_their_server_then_is_kicked(&mut Polled::client());
}
