//! Servers started without waiting out the restart rule's second, and
//! tokens issued as of the second such a server admits them from.
//!
//! `Server::start` returns once the wall clock has left the second the
//! restart rule counts from (up to a second), so that any token issued
//! after it returns is admitted (netcode-std's
//! `ServerConfig::max_connect_token_lifetime` says why). A test need not
//! wait: it starts the server with `start_nowait`, which returns the first
//! unix second whose tokens the rule admits, and issues its tokens as of
//! that second (`ConnectTokenBuilder::issued_at`). The server then sees the
//! expiry a token issued just after `start` would carry, so the rule checks
//! what it checks after a real wait.
//!
//! Tests whose subject is the wait or the rule itself keep `start`, and
//! tokens made by other implementations (stamped with their own clock)
//! still need it.

use std::net::SocketAddr;

use netcode_proto::constants::{CONNECT_TOKEN_BYTES, USER_DATA_BYTES};
use netcode_std::proto::Key;
use netcode_std::transport::Socket;
use netcode_std::{ConnectTokenBuilder, Server};

use crate::{PROTOCOL_ID, key, user_data};

/// The first unix second whose tokens a started server admits, as its
/// `start_nowait` returned it: the second the tokens of a test are issued
/// at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdmittedFrom(u64);

impl AdmittedFrom {
    /// The second `Server::start_nowait` (or a wrapper's equivalent)
    /// returned.
    pub fn new(unix_second: u64) -> Self {
        Self(unix_second)
    }

    /// A builder for a token of `client_id` sealed with `key` for
    /// [`PROTOCOL_ID`], issued at this second, with the builder's defaults
    /// otherwise (30 s expiry, 5 s timeout, zero user data).
    pub fn builder(self, key: &Key, client_id: u64) -> ConnectTokenBuilder<'_> {
        ConnectTokenBuilder::new(PROTOCOL_ID, key, client_id).issued_at(self.0)
    }

    /// [`token`](crate::token) issued at this second: a token for
    /// `client_id` listing `servers`, with its [`user_data`], 30 s expiry
    /// and 5 s timeout.
    pub fn token(self, client_id: u64, servers: &[SocketAddr]) -> [u8; CONNECT_TOKEN_BYTES] {
        self.token_timing_out(client_id, servers, 5)
    }

    /// [`token`](Self::token) with a timeout of `timeout_seconds`.
    pub fn token_timing_out(
        self,
        client_id: u64,
        servers: &[SocketAddr],
        timeout_seconds: i32,
    ) -> [u8; CONNECT_TOKEN_BYTES] {
        let data: [u8; USER_DATA_BYTES] = user_data(client_id);
        self.builder(&key(), client_id)
            .server_addresses(servers)
            .user_data(&data)
            .timeout_seconds(timeout_seconds)
            .generate()
            .unwrap_or_else(|e| panic!("token for client {client_id}: {e}"))
    }
}

/// Starts `server` with `max_clients` slots without waiting for the wall
/// clock (`Server::start_nowait`), and returns the second its tokens are to
/// be issued at; panics if it cannot start.
pub fn start_nowait<S: Socket>(server: &mut Server<S>, max_clients: usize) -> AdmittedFrom {
    let second = server
        .start_nowait(max_clients)
        .unwrap_or_else(|e| panic!("start a server with {max_clients} slots: {e}"));
    AdmittedFrom(second)
}
