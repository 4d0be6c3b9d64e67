//! What can go wrong in the adapter: setting a transport up, and driving
//! it each tick.

use netcode_std::{ClientState, ConnectError, CreateError, SendError, ServerError};

/// Why a transport could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SetupError {
    /// The host could not create or bind its socket.
    #[error("could not create the netcode host: {0}")]
    Create(#[from] CreateError),
    /// The server could not open its slots (a slot count of 0 or over
    /// `netcode_std::MAX_CLIENTS`).
    #[error("could not start the netcode server: {0}")]
    Start(#[from] ServerError),
    /// The client refused the connect token.
    #[error("could not connect: {0}")]
    Connect(#[from] ConnectError),
}

/// Why a transport's `update` or `send_packets` failed: the counterpart of
/// renet_netcode's `NetcodeTransportError`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NetcodeTransportError {
    /// The netcode client is neither connecting nor connected; its state
    /// says why (timed out, denied, token expired, disconnected).
    #[error("netcode client not connected: {0}")]
    Disconnected(ClientState),
    /// renet ended the connection. (renet's reason is not a
    /// `std::error::Error`, so it is no `source`.)
    #[error("renet disconnected: {0}")]
    Renet(renet::DisconnectReason),
    /// The netcode server is not running (it was stopped through
    /// `host_mut`).
    #[error("netcode server is not running")]
    NotRunning,
    /// The host refused a payload.
    #[error("netcode refused a payload: {0}")]
    Send(#[from] SendError),
    /// renet handed over a packet larger than the framing carries
    /// ([`MAX_PACKET_BYTES`](crate::MAX_PACKET_BYTES)); renet 2.x never
    /// makes one.
    #[error(
        "renet packet of {len} bytes is over the {max} the framing carries",
        max = crate::MAX_PACKET_BYTES
    )]
    PacketTooLarge {
        /// The packet's length in bytes.
        len: usize,
    },
    /// The first part of a split packet used up `used` netcode sequences
    /// rather than 1 or 2, so the second part could not name it; not sent.
    /// This version of netcode-std never does that.
    #[error("a split packet's first part used {used} netcode sequences; second part not sent")]
    SequenceGap {
        /// Sequences the first part used up.
        used: u64,
    },
}

impl From<renet::DisconnectReason> for NetcodeTransportError {
    fn from(reason: renet::DisconnectReason) -> Self {
        Self::Renet(reason)
    }
}
