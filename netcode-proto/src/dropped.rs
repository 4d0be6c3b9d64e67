//! Why a received datagram was dropped: the reason ([`DropReason`]) and the
//! report of one drop ([`DroppedDatagram`]) that the client and server hand
//! to [`Output::dropped`](crate::io::Output::dropped) and count in their
//! [`Stats`](crate::stats::Stats).
//!
//! STANDARD.md: none (every "ignore the packet" of the standard has a
//! reason here).

use core::net::SocketAddr;

use crate::packet::{PacketError, PacketType};

/// Why the client or server ignored a datagram or a step of the handshake.
///
/// Bad input from the network is never an error returned to the caller: it is
/// dropped and counted under one of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// The datagram failed a check of the packet reader.
    Packet(PacketError),
    /// The server is not running.
    NotRunning,
    /// The client is not connecting or connected, or is in loopback mode.
    NotActive,
    /// The client got a datagram from an address other than its server's.
    NotFromServer,
    /// The packet is valid but means nothing in the current state (a
    /// challenge while already connected, a payload before connecting, ...).
    UnexpectedInState,
    /// A keep-alive, payload or disconnect from an address with no client.
    NotConnected,
    /// The server's own address is not among the token's server addresses.
    ServerAddressNotInToken,
    /// A client is already connected from this address.
    AddressAlreadyConnected,
    /// A client with this client id is already connected.
    ClientIdAlreadyConnected,
    /// This connect token was already used: from another address while
    /// pending, or from anywhere once it connected.
    TokenAlreadyUsed,
    /// The history of used connect tokens is full of unexpired entries: the
    /// counter operators watch, since every new client is refused while it
    /// rises (see [`TokenHistorySize`](crate::server::TokenHistorySize)).
    TokenHistoryFull,
    /// No room for another encryption mapping.
    MappingTableFull,
    /// The challenge token in a response does not decrypt.
    ChallengeTokenInvalid,
    /// A server with a persisted token history could not yet make this new
    /// token durable
    /// ([`Output::persist_used_token`](crate::io::Output::persist_used_token)
    /// said no), so it sent nothing under the token's keys; the client's
    /// next retry asks again.
    TokenNotDurable,
}

impl DropReason {
    /// How many distinct reasons there are, for counter arrays.
    pub const COUNT: usize = PacketError::COUNT + 13;

    /// A stable index in `0..COUNT`.
    pub fn index(self) -> usize {
        let n = PacketError::COUNT;
        match self {
            Self::Packet(e) => e.index(),
            Self::NotRunning => n,
            Self::NotActive => n + 1,
            Self::NotFromServer => n + 2,
            Self::UnexpectedInState => n + 3,
            Self::NotConnected => n + 4,
            Self::ServerAddressNotInToken => n + 5,
            Self::AddressAlreadyConnected => n + 6,
            Self::ClientIdAlreadyConnected => n + 7,
            Self::TokenAlreadyUsed => n + 8,
            Self::TokenHistoryFull => n + 9,
            Self::MappingTableFull => n + 10,
            Self::ChallengeTokenInvalid => n + 11,
            Self::TokenNotDurable => n + 12,
        }
    }

    /// The reason with index `index`, if there is one.
    pub fn from_index(index: usize) -> Option<Self> {
        let n = PacketError::COUNT;
        if index < n {
            return PacketError::ALL.get(index).map(|e| Self::Packet(*e));
        }
        Some(match index - n {
            0 => Self::NotRunning,
            1 => Self::NotActive,
            2 => Self::NotFromServer,
            3 => Self::UnexpectedInState,
            4 => Self::NotConnected,
            5 => Self::ServerAddressNotInToken,
            6 => Self::AddressAlreadyConnected,
            7 => Self::ClientIdAlreadyConnected,
            8 => Self::TokenAlreadyUsed,
            9 => Self::TokenHistoryFull,
            10 => Self::MappingTableFull,
            11 => Self::ChallengeTokenInvalid,
            12 => Self::TokenNotDurable,
            _ => return None,
        })
    }

    /// A short snake_case name, for logs and metrics.
    pub fn name(self) -> &'static str {
        match self {
            Self::Packet(e) => e.name(),
            Self::NotRunning => "not_running",
            Self::NotActive => "not_active",
            Self::NotFromServer => "not_from_server",
            Self::UnexpectedInState => "unexpected_in_state",
            Self::NotConnected => "not_connected",
            Self::ServerAddressNotInToken => "server_address_not_in_token",
            Self::AddressAlreadyConnected => "address_already_connected",
            Self::ClientIdAlreadyConnected => "client_id_already_connected",
            Self::TokenAlreadyUsed => "token_already_used",
            Self::TokenHistoryFull => "token_history_full",
            Self::MappingTableFull => "mapping_table_full",
            Self::ChallengeTokenInvalid => "challenge_token_invalid",
            Self::TokenNotDurable => "token_not_durable",
        }
    }
}

impl From<PacketError> for DropReason {
    fn from(e: PacketError) -> Self {
        Self::Packet(e)
    }
}

impl core::fmt::Display for DropReason {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// A received datagram the client or server dropped, as reported to
/// [`Output::dropped`](crate::io::Output::dropped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DroppedDatagram {
    /// Who sent it (as the transport reported; UDP senders can be spoofed).
    pub from: SocketAddr,
    /// The packet type its prefix byte names, if it names one.
    pub packet_type: Option<PacketType>,
    /// Why it was dropped.
    pub reason: DropReason,
}

impl DroppedDatagram {
    /// A drop of a datagram from `from` whose first byte was `prefix`.
    pub(crate) fn new(from: SocketAddr, prefix: Option<u8>, reason: DropReason) -> Self {
        let packet_type = prefix.and_then(|p| PacketType::from_u8(p & 0x0f));
        Self {
            from,
            packet_type,
            reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_index_round_trips() {
        for i in 0..DropReason::COUNT {
            let reason = DropReason::from_index(i).unwrap();
            assert_eq!(reason.index(), i);
        }
        assert_eq!(DropReason::from_index(DropReason::COUNT), None);
    }
}
