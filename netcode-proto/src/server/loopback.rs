//! In-process clients of a listen server: slots connected and confirmed at
//! once, with no packets, mappings, keep-alives or timeouts (BEHAVIOR.md
//! section 5; loopback is not part of STANDARD.md's wire protocol).

use crate::time::Instant;

use super::{ClientSlot, DisconnectReason, Server, ServerError, ServerEvent, ServerStorage};
use crate::constants::{USER_DATA_BYTES, is_payload_size};
use crate::io::Output;
use crate::session::{Payload, SendError};

impl<S: ServerStorage> Server<S> {
    /// Puts an in-process client in slot `index`: connected and confirmed at
    /// once, with no mapping, packets, keep-alives or timeouts.
    pub fn connect_loopback_client<O: Output<ServerEvent>>(
        &mut self,
        index: usize,
        client_id: u64,
        user_data: Option<&[u8; USER_DATA_BYTES]>,
        out: &mut O,
    ) -> Result<(), ServerError> {
        if !self.running {
            return Err(ServerError::NotRunning);
        }
        if index >= self.max_clients {
            return Err(ServerError::InvalidClientIndex);
        }
        let hasher = self.hasher;
        let mut tables = self.storage.tables();
        if tables.slots[index].connected {
            return Err(ServerError::SlotTaken);
        }
        if tables.slot_by_client_id(&hasher, client_id).is_some() {
            return Err(ServerError::ClientIdInUse);
        }
        tables.slots[index] = ClientSlot {
            connected: true,
            loopback: true,
            confirmed: true,
            client_id,
            last_send: self.time,
            last_receive: self.time,
            user_data: user_data.copied().unwrap_or([0; USER_DATA_BYTES]),
            ..ClientSlot::EMPTY
        };
        tables.mark_slot(index, false);
        tables.index_client_id(&hasher, index);
        self.num_connected += 1;
        out.event(ServerEvent::ClientConnected {
            client_index: index,
            client_id,
            address: None,
        });
        Ok(())
    }

    /// Empties loopback slot `index`.
    pub fn disconnect_loopback_client<O: Output<ServerEvent>>(
        &mut self,
        index: usize,
        out: &mut O,
    ) -> Result<(), ServerError> {
        match self.connected_slot(index) {
            None if !self.running => Err(ServerError::NotRunning),
            Some(s) if s.loopback => {
                self.disconnect_slot(index, DisconnectReason::ServerDisconnect, false, out);
                Ok(())
            }
            _ => Err(ServerError::NotLoopback),
        }
    }

    /// Accepts a payload the in-process client of loopback slot `index` sent.
    pub fn receive_loopback_payload<'b>(
        &mut self,
        now: Instant,
        index: usize,
        data: &'b [u8],
        sequence: u64,
    ) -> Result<Payload<'b>, SendError> {
        if !is_payload_size(data.len()) {
            return Err(SendError::PayloadSize);
        }
        if !self.client_loopback(index) {
            return Err(SendError::NotConnected);
        }
        self.storage.tables().slots[index].last_receive = now;
        self.stats
            .count_received(crate::packet::PacketType::Payload);
        Ok(Payload { sequence, data })
    }
}
