//! What the client and server share about payloads: where one went, why
//! one could not be sent, and one received (STANDARD.md: *Connected Clients*,
//! the connection payload packet). The timing rules live in
//! [`timing`](crate::timing); the two constants are re-exported here for
//! existing callers.

pub use crate::timing::{NUM_DISCONNECT_PACKETS, PACKET_SEND_INTERVAL};

/// Where a payload went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "a loopback payload must be delivered by the caller"]
pub enum Sent {
    /// Encrypted and handed to the output as a datagram.
    Network,
    /// The peer is a loopback peer in this process: nothing was sent, and
    /// the caller must deliver the payload itself, with this sequence, to the
    /// other side's `receive_loopback_payload`.
    Loopback {
        /// The client's slot on the server.
        client_index: usize,
        /// The payload's sequence.
        sequence: u64,
    },
}

/// Why a payload could not be sent. These are caller mistakes; the network
/// never causes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SendError {
    /// The payload is empty or larger than 1200 bytes.
    PayloadSize,
    /// The client is not connected, or the slot holds no client.
    NotConnected,
    /// The client index is not a slot of this server.
    InvalidClientIndex,
    /// The server is not running.
    NotRunning,
}

impl core::fmt::Display for SendError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Self::PayloadSize => "payload must be 1 to 1200 bytes",
            Self::NotConnected => "not connected",
            Self::InvalidClientIndex => "no such client slot",
            Self::NotRunning => "server is not running",
        })
    }
}

impl core::error::Error for SendError {}

/// A payload received from the peer, borrowing the caller's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Payload<'a> {
    /// The packet's sequence.
    pub sequence: u64,
    /// The decrypted payload, 1 to 1200 bytes.
    pub data: &'a [u8],
}
