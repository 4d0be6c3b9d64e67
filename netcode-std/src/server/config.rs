//! What a std server is told when it is made.

use netcode_proto::Key;
use netcode_proto::server::DEFAULT_MAX_CONNECT_TOKEN_LIFETIME;

use crate::socket::DEFAULT_SOCKET_BUFFER_BYTES;

/// How a [`Server`](crate::Server) identifies itself, checks tokens and sets
/// up its sockets.
///
/// ```
/// use netcode_std::{ServerConfig, proto::Key};
///
/// let mut config = ServerConfig::new(0x1122_3344_5566_7788, Key::from_bytes([7; 32]));
/// config.packet_tagging = true;
/// assert_eq!(config.max_connect_token_lifetime, 30);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerConfig {
    /// Identifies the game or application; tokens for another protocol id
    /// are refused.
    pub protocol_id: u64,
    /// The key shared with the web backend that issues connect tokens.
    pub private_key: Key,
    /// The longest lifetime, in seconds, of the tokens the backend issues
    /// (default 30, as in the reference). Tokens that may have been issued
    /// before this server started are refused, so a restarted server never
    /// reuses packet nonces under an old token's keys.
    pub max_connect_token_lifetime: u64,
    /// Size asked for each socket's send and receive buffer (default 4 MiB,
    /// as in the reference; halved on rejection down to 256 KiB).
    pub socket_buffer_bytes: usize,
    /// Marks every datagram sent as low latency by writing 46 to `IP_TOS` /
    /// `IPV6_TCLASS`, exactly as the reference's packet tagging does (see
    /// [`PACKET_TAGGING_TOS`](crate::PACKET_TAGGING_TOS) for what that
    /// byte means). Off by default; a no-op where the platform has no such
    /// option (Windows).
    pub packet_tagging: bool,
}

impl ServerConfig {
    /// A configuration with the reference's defaults for everything but the
    /// protocol id and key.
    pub fn new(protocol_id: u64, private_key: Key) -> Self {
        Self {
            protocol_id,
            private_key,
            max_connect_token_lifetime: DEFAULT_MAX_CONNECT_TOKEN_LIFETIME,
            socket_buffer_bytes: DEFAULT_SOCKET_BUFFER_BYTES,
            packet_tagging: false,
        }
    }
}
