//! What can go wrong in the adapter: setting a transport up, and driving
//! it each tick.

use netcode_std::{ClientState, ConnectError, CreateError, SendError, ServerError};

/// Why a transport could not be made.
#[derive(Debug)]
#[non_exhaustive]
pub enum SetupError {
    /// The host could not create or bind its socket.
    Create(CreateError),
    /// The server could not open its slots (a slot count of 0 or over
    /// `netcode_std::MAX_CLIENTS`).
    Start(ServerError),
    /// The client refused the connect token.
    Connect(ConnectError),
}

impl core::fmt::Display for SetupError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Create(e) => write!(f, "could not create the netcode host: {e}"),
            Self::Start(e) => write!(f, "could not start the netcode server: {e}"),
            Self::Connect(e) => write!(f, "could not connect: {e}"),
        }
    }
}

impl std::error::Error for SetupError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Create(e) => Some(e),
            Self::Start(e) => Some(e),
            Self::Connect(e) => Some(e),
        }
    }
}

impl From<CreateError> for SetupError {
    fn from(e: CreateError) -> Self {
        Self::Create(e)
    }
}

impl From<ServerError> for SetupError {
    fn from(e: ServerError) -> Self {
        Self::Start(e)
    }
}

impl From<ConnectError> for SetupError {
    fn from(e: ConnectError) -> Self {
        Self::Connect(e)
    }
}

/// Why a transport's `update` or `send_packets` failed: the counterpart of
/// renet_netcode's `NetcodeTransportError`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NetcodeTransportError {
    /// The netcode client is neither connecting nor connected; its state
    /// says why (timed out, denied, token expired, disconnected).
    Disconnected(ClientState),
    /// renet ended the connection.
    Renet(renet::DisconnectReason),
    /// The netcode server is not running (it was stopped through
    /// `host_mut`).
    NotRunning,
    /// The host refused a payload.
    Send(SendError),
    /// renet handed over a packet larger than the framing carries
    /// ([`MAX_PACKET_BYTES`](crate::MAX_PACKET_BYTES)); renet 2.x never
    /// makes one.
    PacketTooLarge {
        /// The packet's length in bytes.
        len: usize,
    },
    /// The first part of a split packet used up `used` netcode sequences
    /// rather than 1 or 2, so the second part could not name it; not sent.
    /// This version of netcode-std never does that.
    SequenceGap {
        /// Sequences the first part used up.
        used: u64,
    },
}

impl core::fmt::Display for NetcodeTransportError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Disconnected(state) => write!(f, "netcode client not connected: {state}"),
            Self::Renet(reason) => write!(f, "renet disconnected: {reason}"),
            Self::NotRunning => f.write_str("netcode server is not running"),
            Self::Send(e) => write!(f, "netcode refused a payload: {e}"),
            Self::PacketTooLarge { len } => write!(
                f,
                "renet packet of {len} bytes is over the {} the framing carries",
                crate::MAX_PACKET_BYTES
            ),
            Self::SequenceGap { used } => write!(
                f,
                "a split packet's first part used {used} netcode sequences; second part not sent"
            ),
        }
    }
}

impl std::error::Error for NetcodeTransportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Send(e) => Some(e),
            _ => None,
        }
    }
}

impl From<SendError> for NetcodeTransportError {
    fn from(e: SendError) -> Self {
        Self::Send(e)
    }
}

impl From<renet::DisconnectReason> for NetcodeTransportError {
    fn from(reason: renet::DisconnectReason) -> Self {
        Self::Renet(reason)
    }
}
