//! What a std server is told when it is made.

use netcode_proto::Key;
use netcode_proto::server::DEFAULT_MAX_CONNECT_TOKEN_LIFETIME;

use crate::socket::{DEFAULT_SOCKET_BUFFER_BYTES, PacketTagging};

/// How a [`Server`](crate::Server) identifies itself, checks tokens and sets
/// up its sockets.
///
/// ```
/// use netcode_std::{ServerConfig, proto::Key};
///
/// use netcode_std::{BindMode, PacketTagging};
///
/// let mut config = ServerConfig::new(0x1122_3344_5566_7788, Key::from_bytes([7; 32]));
/// config.packet_tagging = PacketTagging::ExpeditedForwarding;
/// config.bind_mode = BindMode::Exact;
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
    /// Whether every datagram sent is marked for low latency in `IP_TOS` /
    /// `IPV6_TCLASS`: off by default; [`PacketTagging::Reference`] writes
    /// the reference's byte, [`PacketTagging::ExpeditedForwarding`] real
    /// DSCP EF. A no-op where the platform has no such option (Windows).
    pub packet_tagging: PacketTagging,
    /// Which address the sockets bind: by default the unspecified address
    /// of each public address's family at its port, as the reference does;
    /// [`BindMode::Exact`] binds the public addresses themselves.
    pub bind_mode: BindMode,
    /// A file that keeps the history of used connect tokens across
    /// restarts (`None`, the default: no file). See [`history_store`](crate::history_store).
    ///
    /// Without it a started server refuses every token that may have been
    /// issued before its start (the restart rule) for
    /// `max_connect_token_lifetime` seconds, as the reference does: a
    /// restarted server cannot tell which tokens it already used, and one
    /// used again would repeat packet nonces under the same keys. With it,
    /// each used token is written and synced before the first packet under
    /// its keys leaves, restored on start and refused until it expires, so
    /// tokens issued before a restart are accepted at once (those issued
    /// after the file began; the restart rule still covers the lifetime
    /// before it). Choose it where restarts are routine
    /// (rolling deploys, crash recovery) and players must not wait out the
    /// window; it costs one `fsync` per new connection. A damaged file is
    /// never trusted: the server logs why and starts a new one, behind the
    /// restart rule.
    pub token_history_file: Option<std::path::PathBuf>,
}

/// Which local address a server's sockets bind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BindMode {
    /// `0.0.0.0` or `::` at the public address's port, as the C library
    /// does: datagrams to any local address of the machine reach the
    /// server, which answers from the address the system picks.
    #[default]
    Unspecified,
    /// Exactly the public address given (`127.0.0.1:40000` binds only the
    /// loopback interface): for a machine with several addresses where the
    /// server must answer from one, or to keep it off other interfaces.
    Exact,
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
            packet_tagging: PacketTagging::Off,
            bind_mode: BindMode::Unspecified,
            token_history_file: None,
        }
    }
}
