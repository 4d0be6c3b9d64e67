//! One client slot and why it was last vacated (STANDARD.md: *Server-Side
//! Overview*, *Connected Clients*).

use core::net::SocketAddr;
use core::time::Duration;

use crate::time::Instant;

use crate::constants::USER_DATA_BYTES;
use crate::replay::ReplayProtection;
use crate::traffic::Traffic;

/// Why a slot was last vacated, as the C library reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum DisconnectReason {
    /// Not disconnected since the server started or the slot was filled (0).
    #[default]
    None = 0,
    /// The client went silent for its timeout (1).
    TimedOut = 1,
    /// The client sent a disconnect packet (2).
    ClientDisconnect = 2,
    /// The server disconnected the client, or stopped (3).
    ServerDisconnect = 3,
}

impl DisconnectReason {
    /// The numeric code of the C library.
    pub fn code(self) -> u8 {
        self as u8
    }
}

impl core::fmt::Display for DisconnectReason {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Self::None => "none",
            Self::TimedOut => "timed out",
            Self::ClientDisconnect => "client disconnected",
            Self::ServerDisconnect => "server disconnected",
        })
    }
}

/// One client slot of a server. Opaque: read it through the server's
/// accessors.
#[derive(Debug, Clone)]
pub struct ClientSlot {
    pub(crate) connected: bool,
    pub(crate) loopback: bool,
    pub(crate) confirmed: bool,
    pub(crate) client_id: u64,
    pub(crate) address: Option<SocketAddr>,
    pub(crate) sequence: u64,
    pub(crate) last_send: Instant,
    pub(crate) last_receive: Instant,
    pub(crate) timeout: Option<Duration>,
    pub(crate) mapping: Option<u32>,
    pub(crate) user_data: [u8; USER_DATA_BYTES],
    pub(crate) replay: ReplayProtection,
    pub(crate) disconnect_reason: DisconnectReason,
    /// What the connection carried.
    pub(crate) traffic: Traffic,
}

impl ClientSlot {
    /// An empty slot.
    pub const EMPTY: Self = Self {
        connected: false,
        loopback: false,
        confirmed: false,
        client_id: 0,
        address: None,
        sequence: 0,
        last_send: Instant::ZERO,
        last_receive: Instant::ZERO,
        timeout: None,
        mapping: None,
        user_data: [0; USER_DATA_BYTES],
        replay: ReplayProtection::new(),
        disconnect_reason: DisconnectReason::None,
        traffic: Traffic::EMPTY,
    };

    /// Empties the slot but keeps why it was last vacated.
    pub(crate) fn clear(&mut self) {
        let reason = self.disconnect_reason;
        *self = Self::EMPTY;
        self.disconnect_reason = reason;
    }
}

impl Default for ClientSlot {
    fn default() -> Self {
        Self::EMPTY
    }
}
