//! What a server reports to its caller as clients come and go (STANDARD.md:
//! *Processing Connection Response Packets*, a client assigned a slot, and
//! *Connected Clients*, a slot reset).

use core::net::SocketAddr;

use super::slot::DisconnectReason;

/// What a server reports as it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerEvent {
    /// A client took a slot (after its first keep-alive was sent).
    ClientConnected {
        /// The slot.
        client_index: usize,
        /// The client id from its connect token.
        client_id: u64,
        /// Its address (`None` for a loopback client).
        address: Option<SocketAddr>,
    },
    /// A client left its slot (reported before the slot is cleared).
    ClientDisconnected {
        /// The slot.
        client_index: usize,
        /// The client id it had.
        client_id: u64,
        /// Its address (`None` for a loopback client).
        address: Option<SocketAddr>,
        /// Why.
        reason: DisconnectReason,
    },
}
