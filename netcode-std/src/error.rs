//! Why a client or server could not be created.

use std::io;
use std::net::SocketAddr;

use netcode_proto::token::TokenError;

use crate::address::AddressParseError;
use crate::history_store::held_by;

/// An IP address family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// IPv4.
    V4,
    /// IPv6.
    V6,
}

impl Family {
    /// The family of `address`.
    pub fn of(address: &SocketAddr) -> Self {
        match address {
            SocketAddr::V4(_) => Self::V4,
            SocketAddr::V6(_) => Self::V6,
        }
    }
}

impl core::fmt::Display for Family {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Self::V4 => "IPv4",
            Self::V6 => "IPv6",
        })
    }
}

/// Why [`Server::new`](crate::Server::new) or
/// [`Client::new`](crate::Client::new) (or their dual-stack forms) failed.
///
/// The variants follow the C library's create error codes: parse address
/// failed (first or second address), create socket failed, bind failed;
/// a bind to a port already in use is its own variant, [`AddrInUse`](Self::AddrInUse).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CreateError {
    /// The first address is not an address (C: `PARSE_ADDRESS_FAILED`).
    #[error("first address: {0}")]
    ParseAddress(#[source] AddressParseError),
    /// The second address is not an address (C: `PARSE_ADDRESS2_FAILED`).
    #[error("second address: {0}")]
    ParseAddress2(#[source] AddressParseError),
    /// A server's public address is the unspecified address (`0.0.0.0` or
    /// `::`): no client can be sent there, and no connect token can list
    /// it, so every client would be refused. Pass the address clients
    /// reach the server at (`127.0.0.1:40000` on one machine, the LAN or
    /// public address otherwise); the socket still binds the unspecified
    /// address at that port, as [`BindMode::Unspecified`](crate::BindMode)
    /// (the default) does.
    #[error(
        "{address} is not an address clients can reach: pass the server's public address (the one connect tokens list, for example 127.0.0.1:{port} on one machine); the socket binds {unspecified}:{port} by default (BindMode::Unspecified)",
        port = .address.port(),
        unspecified = unspecified_form(.address),
    )]
    UnspecifiedPublicAddress {
        /// The address given.
        address: SocketAddr,
    },
    /// Both addresses of a dual-stack client or server are of one family;
    /// dual stack takes one IPv4 and one IPv6 address.
    #[error("dual stack needs one IPv4 and one IPv6 address, both are {0}")]
    SameFamily(Family),
    /// The socket could not be created or configured: buffer sizes,
    /// IPv6-only, non-blocking mode or packet tagging (C:
    /// `CREATE_SOCKET_IPV4_FAILED` / `CREATE_SOCKET_IPV6_FAILED`).
    #[error("could not create the {family} socket: {source}")]
    CreateSocket {
        /// The socket's family.
        family: Family,
        /// What the operating system said.
        source: io::Error,
    },
    /// Another socket is bound to this address and port.
    #[error("address {address} is already in use")]
    AddrInUse {
        /// The address the bind was for.
        address: SocketAddr,
    },
    /// The bind failed for another reason, for example an address that is
    /// not local (C: `BIND_SOCKET_IPV4_FAILED` / `BIND_SOCKET_IPV6_FAILED`).
    #[error("could not bind {address}: {source}")]
    Bind {
        /// The address the bind was for.
        address: SocketAddr,
        /// What the operating system said.
        source: io::Error,
    },
    /// The server's tables could not be set up (C: `ALLOCATE_SERVER_FAILED`).
    #[error("could not set up the server's tables")]
    AllocateServer,
    /// The token history file (`ServerConfig::token_history_file`) could not
    /// be read or written. (A damaged file is not this error: the server
    /// logs why and starts a new one.)
    #[error("token history file {}: {source}", .path.display())]
    TokenHistory {
        /// The file.
        path: std::path::PathBuf,
        /// What the operating system said.
        source: io::Error,
    },
    /// Another server (or another `Server` in this process) holds the token
    /// history file's lock: one server per file. Give each server a file of
    /// its own.
    #[error(
        "token history file {} is in use by another server ({} is locked{}): one server per file",
        .path.display(),
        .lock_file.display(),
        held_by(.holder),
    )]
    TokenHistoryLocked {
        /// The history file.
        path: std::path::PathBuf,
        /// The lock file beside it.
        lock_file: std::path::PathBuf,
        /// The process id of the holder, if it could be read.
        holder: Option<u32>,
    },
    /// The token history file holds more unexpired tokens than a server
    /// restores ([`MAX_RESTORED_TOKENS`](crate::MAX_RESTORED_TOKENS)). It
    /// was not written by this crate's servers: wait until its tokens
    /// expire (`last_expiry`), or move it away, and the server starts
    /// behind the restart rule with a new file.
    #[error(
        "token history file {} holds {unexpired} unexpired tokens, more than the {limit} a server restores: wait until they expire (unix {last_expiry}) or move the file away (the server then starts behind the restart rule)",
        .path.display(),
    )]
    TokenHistoryTooLarge {
        /// The history file.
        path: std::path::PathBuf,
        /// Unexpired tokens in it.
        unexpired: usize,
        /// The most a server restores.
        limit: usize,
        /// Unix second at which its last token expires.
        last_expiry: u64,
    },
    /// A transport built on [`transport`](crate::transport) could not take
    /// the new socket over: for `netcode-mio`, registering it with the
    /// caller's `mio::Registry` failed.
    #[error("could not register the {family} socket: {source}")]
    Register {
        /// The socket's family.
        family: Family,
        /// What the operating system (or the transport) said.
        source: io::Error,
    },
}

/// Why [`Client::connect`](crate::Client::connect) refused a connect token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// The token could not be read; the client is now in
    /// `InvalidConnectToken`, as in the C library.
    #[error("invalid connect token: {0}")]
    Token(#[from] TokenError),
    /// Every server address in the token is of a family this client has no
    /// socket for (an IPv4-only client given a token of IPv6 addresses, or
    /// the reverse); nothing changed. A client made with `new_dual` can
    /// reach both families.
    #[error(
        "the connect token lists no {client} server address, and this client has only an {client} socket"
    )]
    Unreachable {
        /// The family of the client's only socket.
        client: Family,
    },
}

/// How the unspecified address of `address`'s family is written in an
/// address with a port.
fn unspecified_form(address: &SocketAddr) -> &'static str {
    match address {
        SocketAddr::V4(_) => "0.0.0.0",
        SocketAddr::V6(_) => "[::]",
    }
}
