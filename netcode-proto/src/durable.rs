//! What a server started with a restored token history asks its host to make
//! durable before it answers a new connect token, and what the host answers
//! (STANDARD.md: *Nonce Reuse and Server Restarts*, the second mitigation,
//! "Persist the connect token history").
//!
//! The server hands a [`PersistRequest`] to
//! [`Output::persist_used_token`](crate::io::Output::persist_used_token) and
//! takes it back with a [`PersistOutcome`] through
//! [`Server::token_persisted`](crate::server::Server::token_persisted); the
//! rest of that protocol (starting restored, exporting the history) is in
//! the server's `persist.rs`. The types live here, below both the output
//! seam and the server, so that the seam does not depend on the server.

use core::net::SocketAddr;

use crate::constants::{MAC_BYTES, USER_DATA_BYTES};
use crate::crypto::Key;

/// A used connect token, as the history keeps it and durable storage
/// records it: what the standard's second restart mitigation persists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UsedToken {
    /// The sealed private token's tag, which identifies the token.
    pub mac: [u8; MAC_BYTES],
    /// The address of the request that first used it.
    pub address: SocketAddr,
    /// The token's expire timestamp (unix seconds): after it, nothing needs
    /// remembering.
    pub expire_timestamp: u64,
}

/// A connection request held until its token's record is durable: what a
/// server started restored hands to
/// [`Output::persist_used_token`](crate::io::Output::persist_used_token) for
/// a new token, to be handed back through
/// [`Server::token_persisted`](crate::server::Server::token_persisted) once
/// [`token`](Self::token) is written, or could not be.
///
/// It carries what the server needs to answer the request then (the
/// token's keys, client id, timeout and user data), so the server keeps
/// nothing per held request. It belongs to the run of the server that made
/// it: handed back after a restart, it is ignored.
#[derive(Clone)]
pub struct PersistRequest {
    pub(crate) token: UsedToken,
    /// The run of the server that made it (see `Server::run`).
    pub(crate) run: u32,
    pub(crate) client_id: u64,
    pub(crate) timeout_seconds: i32,
    pub(crate) client_to_server_key: Key,
    pub(crate) server_to_client_key: Key,
    pub(crate) user_data: [u8; USER_DATA_BYTES],
}

impl PersistRequest {
    /// What to write to durable storage.
    pub fn token(&self) -> &UsedToken {
        &self.token
    }
}

/// Shows the token only: the keys and user data stay out of logs.
impl core::fmt::Debug for PersistRequest {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PersistRequest")
            .field("token", &self.token)
            .finish_non_exhaustive()
    }
}

/// What the host's storage made of a [`PersistRequest`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PersistOutcome {
    /// The record is written and synced: it survives a crash.
    Durable,
    /// The record could not be written (or the host would not queue it):
    /// the token's next request asks again.
    Failed,
}
