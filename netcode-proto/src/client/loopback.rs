//! A client in the same process as its server (a listen server's own
//! player): loopback mode, connected at once with no packets, keep-alives
//! or timeouts (STANDARD.md: none; the reference's loopback clients,
//! BEHAVIOR.md).

use super::{Client, ClientEvent, ClientState};
use crate::constants::is_payload_size;
use crate::io::Output;
use crate::session::{Payload, SendError};

/// Why loopback mode could not be entered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LoopbackError {
    /// The client is connecting or connected over the network.
    Busy,
    /// `client_index` is not below `max_clients`.
    InvalidClientIndex,
}

impl core::fmt::Display for LoopbackError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Self::Busy => "client is already connecting or connected",
            Self::InvalidClientIndex => "client index must be below max clients",
        })
    }
}

impl core::error::Error for LoopbackError {}

impl Client {
    /// Becomes the loopback client of an in-process server, in slot
    /// `client_index` of `max_clients`: connected at once, with no packets,
    /// keep-alives or timeouts. Payloads then go through
    /// [`Sent::Loopback`](crate::session::Sent::Loopback) and [`receive_loopback_payload`](Self::receive_loopback_payload).
    pub fn connect_loopback<O: Output<ClientEvent>>(
        &mut self,
        client_index: u32,
        max_clients: u32,
        out: &mut O,
    ) -> Result<(), LoopbackError> {
        if self.state.is_active() {
            return Err(LoopbackError::Busy);
        }
        if client_index >= max_clients {
            return Err(LoopbackError::InvalidClientIndex);
        }
        self.loopback = true;
        self.client_index = client_index;
        self.max_clients = max_clients;
        self.set_state(ClientState::Connected, out);
        Ok(())
    }

    /// Leaves loopback mode and moves to [`ClientState::Disconnected`].
    pub fn disconnect_loopback<O: Output<ClientEvent>>(&mut self, out: &mut O) {
        if self.loopback {
            self.reset_connection(ClientState::Disconnected, out);
        }
    }

    /// Accepts a payload the in-process server sent this loopback client.
    pub fn receive_loopback_payload<'b>(
        &mut self,
        data: &'b [u8],
        sequence: u64,
    ) -> Result<Payload<'b>, SendError> {
        if !self.loopback {
            return Err(SendError::NotConnected);
        }
        if !is_payload_size(data.len()) {
            return Err(SendError::PayloadSize);
        }
        self.stats
            .count_received(crate::packet::PacketType::Payload);
        Ok(Payload { sequence, data })
    }
}
