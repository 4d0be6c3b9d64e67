//! What a std client is told when it is made.

use crate::transport::udp::{DEFAULT_SOCKET_BUFFER_BYTES, PacketTagging};

/// How a [`Client`](crate::Client) sets up its sockets.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ClientConfig {
    /// Size asked for each socket's send and receive buffer (default 4 MiB,
    /// as in the reference; halved on rejection down to 256 KiB).
    pub socket_buffer_bytes: usize,
    /// Whether every datagram sent is marked for low latency (see
    /// [`PacketTagging`]). Off by default.
    pub packet_tagging: PacketTagging,
}

impl Default for ClientConfig {
    fn default() -> Self {
        Self {
            socket_buffer_bytes: DEFAULT_SOCKET_BUFFER_BYTES,
            packet_tagging: PacketTagging::Off,
        }
    }
}
