//! What a std server is told when it is made, and the most slots it opens.

use netcode_proto::Key;
use netcode_proto::server::DEFAULT_MAX_CONNECT_TOKEN_LIFETIME;

use crate::transport::udp::{DEFAULT_SOCKET_BUFFER_BYTES, PacketTagging};

/// The most slots [`Server::start`](crate::Server::start) opens. The C
/// library stops at 256; the core's per-packet cost does not depend on the
/// slot count.
pub const MAX_CLIENTS: usize = 4096;

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
    /// (default 30, as in the reference): what the restart rule assumes.
    ///
    /// **The restart rule.** A server started without a history of the
    /// tokens it used (no [`token_history_file`](Self::token_history_file),
    /// or a file begun in its start second) refuses every token that may
    /// have been issued in or before that second: one whose expiry is no
    /// later than the start second plus this lifetime. A token used before
    /// a restart can therefore never start a second session after it, which
    /// would repeat packet nonces under its keys. This is one second
    /// stricter than the standard and the reference, which admit a token
    /// issued in the start second itself: a server killed and restarted
    /// within one second would admit a token its predecessor used in that
    /// second. The costs: [`start`](crate::Server::start) returns only once
    /// that second is over (up to a second), so every token issued after it
    /// returns is admitted; a token issued before, or in that second, is
    /// refused until it expires, and its client must fetch a new one from
    /// the backend (it times out as for an unreachable server); a token
    /// issued with a shorter lifetime than this waits until this lifetime
    /// has passed since the start.
    ///
    /// The rule assumes the backend's clock is not ahead of the server's,
    /// and, without a history file, that the wall clock did not step back
    /// across the restart (a clock that reads `d` seconds earlier than the
    /// previous run saw reopens the window by `d`). A value above the
    /// backend's real lifetime adds that much margin for both.
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
    /// restarts (`None`, the default: no file). See
    /// [`history_store`](crate::history_store).
    ///
    /// Without it a started server refuses every token that may have been
    /// issued in or before its start second (the restart rule, see
    /// [`max_connect_token_lifetime`](Self::max_connect_token_lifetime)),
    /// for up to that lifetime: a restarted server cannot tell which tokens
    /// it already used. With it, every token the server admits is recorded
    /// (written and synced) before the first packet under its keys leaves,
    /// restored on start and refused until it expires, so tokens issued
    /// before a restart are accepted at once (those issued after the file
    /// began; the rule still covers the second the file began in and what
    /// came before). Choose it where restarts are routine (rolling deploys,
    /// crash recovery) and players must not wait out the window.
    ///
    /// * **Off the game loop.** Records are written by a thread of the
    ///   server's, which syncs every record waiting under one `fsync`
    ///   (group commit); `update` never waits for the disk. A new client's
    ///   request is held until its record is durable and answered then;
    ///   other clients are served meanwhile. At most
    ///   [`HistoryWriter::MAX_IN_FLIGHT`](crate::history_store::HistoryWriter::MAX_IN_FLIGHT)
    ///   records wait at once: beyond that, new tokens are refused until
    ///   the disk catches up (their clients retry ten times a second).
    /// * **Always recorded.** A file holding more unexpired tokens than the
    ///   server's usual history makes the history that much larger (up to
    ///   [`MAX_RESTORED_TOKENS`](crate::MAX_RESTORED_TOKENS); beyond it the
    ///   server is not made: [`CreateError::TokenHistoryTooLarge`](crate::CreateError::TokenHistoryTooLarge)).
    ///   There is no mode in which a server with a file runs without
    ///   recording.
    /// * **One server per file.** The file's lock (on `FILE.lock`, released
    ///   by the kernel when the process ends, however it ends) refuses a
    ///   second server: [`CreateError::TokenHistoryLocked`](crate::CreateError::TokenHistoryLocked).
    /// * **Clock steps.** The file keeps the latest second it was written
    ///   at; a restarted server judges expiry against that second at least,
    ///   so a wall clock that stepped back cannot revive a token whose
    ///   record was dropped as expired (a clock leaping forward by mistake
    ///   makes the server refuse tokens as expired until real time catches
    ///   up, or until the file is removed).
    /// * **Damage.** A damaged file is never trusted: the server logs why,
    ///   keeps it as `FILE.damaged`, and starts a new one, behind the
    ///   restart rule. A write that fails refuses the token (the client's
    ///   next request asks again), logged at most once a second.
    pub token_history_file: Option<std::path::PathBuf>,
    /// Whether a public address may be the unspecified address (`0.0.0.0`
    /// or `::`, at a port), as the C library allows: the address is then
    /// used as given, and connect tokens must list it exactly (as their
    /// internal server address) for their clients to be admitted. Off by
    /// default: such a server is refused with
    /// [`CreateError::UnspecifiedPublicAddress`](crate::CreateError::UnspecifiedPublicAddress),
    /// since no client can be sent to that address.
    pub allow_unspecified_public_address: bool,
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
            allow_unspecified_public_address: false,
        }
    }
}
