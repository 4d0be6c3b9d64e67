//! Everything a server sends: payloads (a keep-alive first while the
//! client is unconfirmed), keep-alives, packets to a slot under its key and
//! sequence, and challenges and denials from the global sequence
//! (STANDARD.md: *Connected Clients*, *Nonce Reuse and Server Restarts*).

use crate::time::Instant;
use core::net::SocketAddr;

use super::{Server, ServerEvent, ServerStorage, compact};
use crate::constants::is_payload_size;
use crate::crypto::Key;
use crate::io::Output;
use crate::packet::{KeepAlivePacket, Packet, write_packet};
use crate::session::{SendError, Sent};

impl<S: ServerStorage> Server<S> {
    /// Sends a payload of 1 to 1200 bytes to slot `index`. Until the client
    /// confirms its connection, a keep-alive goes first so it learns its slot.
    pub fn send_payload<O: Output<ServerEvent>>(
        &mut self,
        now: Instant,
        index: usize,
        payload: &[u8],
        out: &mut O,
    ) -> Result<Sent, SendError> {
        if !is_payload_size(payload.len()) {
            return Err(SendError::PayloadSize);
        }
        if !self.running {
            return Err(SendError::NotRunning);
        }
        if index >= self.max_clients {
            return Err(SendError::InvalidClientIndex);
        }
        let tables = self.storage.tables();
        let slot = &mut tables.slots[index];
        if !slot.connected {
            return Err(SendError::NotConnected);
        }
        if slot.loopback {
            let sequence = slot.sequence;
            slot.sequence += 1;
            slot.last_send = now;
            return Ok(Sent::Loopback {
                client_index: index,
                sequence,
            });
        }
        if !slot.confirmed {
            self.send_keep_alive(now, index, out);
        }
        self.send_to_slot(now, index, &Packet::Payload(payload), out);
        Ok(Sent::Network)
    }

    pub(super) fn send_keep_alive<O: Output<ServerEvent>>(
        &mut self,
        now: Instant,
        index: usize,
        out: &mut O,
    ) {
        let keep_alive = KeepAlivePacket {
            client_index: index as u32,
            max_clients: self.max_clients as u32,
        };
        self.send_to_slot(now, index, &Packet::KeepAlive(keep_alive), out);
    }

    /// Sends a packet to a connected slot with its key and next sequence.
    pub(super) fn send_to_slot<O: Output<ServerEvent>>(
        &mut self,
        now: Instant,
        index: usize,
        packet: &Packet<'_>,
        out: &mut O,
    ) {
        let tables = self.storage.tables();
        let slot = &mut tables.slots[index];
        let (Some(mapping), Some(address)) = (slot.mapping, slot.address) else {
            return;
        };
        let Some(mapping) = tables.mappings.get_mut(mapping as usize) else {
            return;
        };
        let sequence = slot.sequence;
        slot.sequence += 1;
        let went_back = now < slot.last_send;
        slot.last_send = now;
        mapping.last_access = compact::Nanos::new(now);
        let (key, protocol_id) = (&mapping.send_key, self.config.protocol_id);
        let written = out.send_with(address, &mut |buffer| {
            write_packet(packet, sequence, key, protocol_id, buffer).ok()
        });
        if let Some(n) = written {
            self.stats.count_sent(packet.packet_type());
            self.storage.tables().slots[index].traffic.sent(n);
        }
        // A caller's clock that went back moved the slot's deadline earlier
        // than its timer's key, which must never be later.
        if went_back {
            self.storage.tables().arm_timer(&mut self.live, index);
        }
    }

    /// Sends a challenge or denial from the global sequence.
    pub(super) fn send_global<O: Output<ServerEvent>>(
        &mut self,
        to: SocketAddr,
        packet: &Packet<'_>,
        key: &Key,
        out: &mut O,
    ) {
        let sequence = self.global_sequence;
        self.global_sequence = self.global_sequence.wrapping_add(1);
        let protocol_id = self.config.protocol_id;
        let written = out.send_with(to, &mut |buffer| {
            write_packet(packet, sequence, key, protocol_id, buffer).ok()
        });
        if written.is_some() {
            self.stats.count_sent(packet.packet_type());
        }
    }
}
