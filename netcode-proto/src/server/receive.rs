//! The receive path: every datagram a server gets, read with its sender's
//! key and replay window, then handed to the handshake or to the connected
//! client it came from (STANDARD.md: *Reading Encrypted Packets*,
//! *Connected Clients*).

use crate::time::Instant;
use core::net::SocketAddr;

use super::{DisconnectReason, Server, ServerEvent, ServerStorage, compact};
use crate::io::Output;
use crate::packet::PacketError;
use crate::packet::{
    Packet, PacketContext, PacketType, PacketTypes, RequestContext, read_encrypted, read_request,
};
use crate::session::Payload;
use crate::stats::{DropReason, DroppedDatagram};

impl<S: ServerStorage> Server<S> {
    /// Processes one received datagram, decrypting it in place.
    ///
    /// Returns the client slot and payload if it carried one. Anything
    /// invalid or unexpected is dropped and counted in [`stats`](Self::stats);
    /// connection requests and responses may send a challenge, a denial or a
    /// keep-alive, and a response that completes a handshake reports
    /// [`ServerEvent::ClientConnected`].
    pub fn handle<'b, O: Output<ServerEvent>>(
        &mut self,
        now: Instant,
        from: SocketAddr,
        datagram: &'b mut [u8],
        out: &mut O,
    ) -> Option<(usize, Payload<'b>)> {
        self.time = now;
        let prefix = datagram.first().copied();
        self.process(now, from, datagram, out)
            .unwrap_or_else(|reason| {
                self.stats
                    .report_drop(out, DroppedDatagram::new(from, prefix, reason));
                None
            })
    }

    fn process<'b, O: Output<ServerEvent>>(
        &mut self,
        now: Instant,
        from: SocketAddr,
        datagram: &'b mut [u8],
        out: &mut O,
    ) -> Result<Option<(usize, Payload<'b>)>, DropReason> {
        if !self.running {
            return Err(DropReason::NotRunning);
        }
        if datagram.len() <= 1 {
            return Err(crate::packet::PacketError::TooSmall.into());
        }
        let hasher = self.hasher;
        let mut tables = self.storage.tables();
        let mapping = tables.mapping_by_address(&hasher, &from);
        // A connected sender reads with its slot's key and replay window; any
        // other sender with a live mapping reads with its key (refreshing the
        // mapping) and no window.
        let client = mapping.and_then(|m| {
            let slot = tables.mappings[m].client_index.get()? as usize;
            tables.slots.get(slot).filter(|s| s.connected).map(|_| slot)
        });
        let mapping = match (mapping, client) {
            (Some(m), Some(_)) => Some(m),
            (Some(m), None) if !tables.mappings[m].expired(now) => {
                tables.mappings[m].last_access = compact::Nanos::new(now);
                Some(m)
            }
            _ => None,
        };
        let context = PacketContext {
            protocol_id: self.config.protocol_id,
            read_key: mapping.map(|m| &tables.mappings[m].receive_key),
            accepted: PacketTypes::SERVER,
        };
        if datagram[0] == 0 {
            let requests = RequestContext {
                private_key: &self.config.private_key,
                current_timestamp: self.unix_time,
                min_expire_timestamp: self.min_expire_timestamp,
            };
            let request = read_request(&context, Some(&requests), datagram)?;
            self.process_request(now, from, &request, out)?;
            self.stats.count_received(PacketType::Request);
            return Ok(None);
        }
        // A connected client's key was set up when it connected, where the
        // prepared key table reaches its slot.
        let (prepared, replay) = match client {
            Some(c) => (
                tables.prepared_keys.get(c).and_then(Option::as_ref),
                Some(&mut tables.slots[c].replay),
            ),
            None => (None, None),
        };
        let bytes = datagram.len();
        let (sequence, packet) = match read_encrypted(&context, prepared, datagram, replay) {
            Ok(read) => read,
            Err(e) => {
                if let (PacketError::Replayed, Some(c)) = (e, client) {
                    self.storage.tables().slots[c].traffic.duplicate();
                }
                return Err(e.into());
            }
        };
        let packet_type = packet.packet_type();

        let result = match packet {
            Packet::Request(never) => match never {},
            Packet::Response(response) => {
                self.process_response(now, from, mapping, &response, out)?;
                None
            }
            Packet::KeepAlive(_) | Packet::Payload(_) | Packet::Disconnect => {
                let Some(c) = client else {
                    return Err(DropReason::NotConnected);
                };
                // See `send_to_slot`: a clock that went back re-arms.
                if now < tables.slots[c].last_receive {
                    tables.slots[c].last_receive = now;
                    tables.arm_timer(&mut self.live, c);
                }
                let slot = &mut tables.slots[c];
                slot.last_receive = now;
                slot.traffic.received(sequence, bytes);
                match packet {
                    Packet::Disconnect => {
                        self.stats.count_received(packet_type);
                        self.disconnect_slot(c, DisconnectReason::ClientDisconnect, false, out);
                        return Ok(None);
                    }
                    Packet::Payload(data) => {
                        slot.confirmed = true;
                        Some((c, Payload { sequence, data }))
                    }
                    _ => {
                        slot.confirmed = true;
                        None
                    }
                }
            }
            Packet::Denied | Packet::Challenge(_) => return Err(DropReason::UnexpectedInState),
        };
        self.stats.count_received(packet_type);
        Ok(result)
    }
}
