//! How a server identifies itself and checks tokens, and the caller
//! mistakes it refuses (STANDARD.md: *Processing Connection Requests*, the
//! server's address check, and *Nonce Reuse and Server Restarts*, the
//! maximum connect token lifetime of the restart rule).

use core::net::SocketAddr;

use crate::crypto::Key;
use crate::timing::DEFAULT_MAX_CONNECT_TOKEN_LIFETIME;

/// How a server identifies itself and checks tokens.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Identifies the game or application.
    pub protocol_id: u64,
    /// The key shared with the web backend that issues connect tokens.
    pub private_key: Key,
    /// The address clients reach this server at; it must be among a
    /// token's server addresses for the token to be accepted here.
    pub public_address: SocketAddr,
    /// A second public address (a dual-stack server's other family), also
    /// accepted in tokens.
    pub secondary_address: Option<SocketAddr>,
    /// The longest lifetime, in seconds, of the tokens the backend issues.
    /// A token whose expiry is no later than the start second plus this may
    /// have been issued in or before that second, and is refused (the
    /// restart rule, which keeps a restarted server from reusing nonces
    /// under an old token's keys; one second stricter than STANDARD.md, see
    /// [`Server::tokens_admitted_from`](super::Server::tokens_admitted_from)).
    /// 0 means the default, 30 s: the rule is mandatory.
    pub max_connect_token_lifetime: u64,
}

impl ServerConfig {
    /// The lifetime the restart rule uses: the configured one, or the
    /// default when it is 0 (as the reference treats values <= 0), so the
    /// rule cannot be switched off by a zeroed config.
    pub fn effective_max_connect_token_lifetime(&self) -> u64 {
        match self.max_connect_token_lifetime {
            0 => DEFAULT_MAX_CONNECT_TOKEN_LIFETIME,
            seconds => seconds,
        }
    }

    /// A configuration with the reference's default token lifetime.
    pub fn new(protocol_id: u64, private_key: Key, public_address: SocketAddr) -> Self {
        Self {
            protocol_id,
            private_key,
            public_address,
            secondary_address: None,
            max_connect_token_lifetime: DEFAULT_MAX_CONNECT_TOKEN_LIFETIME,
        }
    }

    /// Whether `address` is one of this server's public addresses, as a
    /// token's server list must name it.
    pub(crate) fn is_public_address(&self, address: &SocketAddr) -> bool {
        crate::address::same_endpoint(address, &self.public_address)
            || self
                .secondary_address
                .is_some_and(|s| crate::address::same_endpoint(address, &s))
    }
}

/// Why a server could not be made or started. These are caller mistakes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ServerError {
    /// The storage has no slots, or tables out of proportion with its slots.
    BadStorage,
    /// `max_clients` is 0 or larger than the storage's slots.
    InvalidMaxClients,
    /// The server is not running.
    NotRunning,
    /// The client index is not a slot of this server.
    InvalidClientIndex,
    /// The slot is taken.
    SlotTaken,
    /// The slot does not hold a loopback client.
    NotLoopback,
    /// A client with this client id is already connected.
    ClientIdInUse,
    /// A restored token history holds more unexpired tokens than this
    /// server's history has entries.
    HistoryTooLarge,
}

impl core::fmt::Display for ServerError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Self::BadStorage => "server storage is empty or its tables are out of proportion",
            Self::InvalidMaxClients => "max clients must be between 1 and the storage's slot count",
            Self::NotRunning => "server is not running",
            Self::InvalidClientIndex => "no such client slot",
            Self::SlotTaken => "client slot is taken",
            Self::NotLoopback => "client slot does not hold a loopback client",
            Self::ClientIdInUse => "a client with this id is already connected",
            Self::HistoryTooLarge => "the restored token history does not fit in the server's",
        })
    }
}

impl core::error::Error for ServerError {}
