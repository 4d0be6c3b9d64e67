//! What a std client is told when it is made.

use crate::socket::DEFAULT_SOCKET_BUFFER_BYTES;

/// How a [`Client`](crate::Client) sets up its sockets.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ClientConfig {
    /// Size asked for each socket's send and receive buffer (default 4 MiB,
    /// as in the reference; halved on rejection down to 256 KiB).
    pub socket_buffer_bytes: usize,
    /// Marks every datagram sent as low latency by writing 46 to `IP_TOS` /
    /// `IPV6_TCLASS`, as the reference does (see
    /// [`PACKET_TAGGING_TOS`](crate::PACKET_TAGGING_TOS)). Off by default.
    pub packet_tagging: bool,
}

impl Default for ClientConfig {
    fn default() -> Self {
        Self {
            socket_buffer_bytes: DEFAULT_SOCKET_BUFFER_BYTES,
            packet_tagging: false,
        }
    }
}
