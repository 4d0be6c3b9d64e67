//! Connection requests and responses: the token's checks after the packet
//! reader's, the connect token history, the encryption mapping, the
//! challenge, and the slot a response takes (STANDARD.md: *Processing
//! Connection Requests*, *Processing Connection Response Packets*).

use core::net::SocketAddr;
use core::time::Duration;

use super::persist::UsedToken;
use super::tables::TokenLookup;
use super::{ClientSlot, Server, ServerEvent, ServerStorage};
use crate::io::Output;
use crate::packet::{ChallengePacket, ConnectionRequest, Packet};
use crate::stats::DropReason;
use crate::token::ChallengeToken;

impl<S: ServerStorage> Server<S> {
    pub(super) fn process_request<O: Output<ServerEvent>>(
        &mut self,
        now: Duration,
        from: SocketAddr,
        request: &ConnectionRequest,
        out: &mut O,
    ) -> Result<(), DropReason> {
        let token = &request.token;
        if !token
            .server_addresses
            .iter()
            .any(|a| self.config.is_public_address(a))
        {
            return Err(DropReason::ServerAddressNotInToken);
        }
        let hasher = self.hasher;
        let mut tables = self.storage.tables();
        if tables.slot_by_address(&hasher, &from).is_some() {
            return Err(DropReason::AddressAlreadyConnected);
        }
        if tables.slot_by_client_id(&hasher, token.client_id).is_some() {
            return Err(DropReason::ClientIdAlreadyConnected);
        }
        let entry = match tables.find_or_add_token(
            &mut self.live,
            &hasher,
            from,
            &request.mac,
            request.expire_timestamp,
            self.unix_time,
        ) {
            TokenLookup::Admitted(entry) => entry,
            TokenLookup::Refused => return Err(DropReason::TokenAlreadyUsed),
            TokenLookup::Full => return Err(DropReason::TokenHistoryFull),
        };
        // The first packet under the token's keys leaves below (a denial or
        // a challenge): with a persisted history, only once it is durable.
        if self.persisting && !tables.token_durable(entry) {
            let used = UsedToken {
                mac: request.mac,
                address: from,
                expire_timestamp: request.expire_timestamp,
            };
            if !out.persist_used_token(&used) {
                return Err(DropReason::TokenNotDurable);
            }
            tables.mark_token_durable(entry);
        }
        if self.num_connected >= self.max_clients {
            self.send_global(from, &Packet::Denied, &token.server_to_client_key, out);
            return Ok(());
        }
        tables
            .add_mapping(
                &mut self.live,
                &hasher,
                now,
                from,
                &token.server_to_client_key,
                &token.client_to_server_key,
                token.timeout_seconds,
                entry,
            )
            .ok_or(DropReason::MappingTableFull)?;
        let challenge = ChallengeToken {
            client_id: token.client_id,
            user_data: token.user_data,
        };
        let sealed = challenge.encrypt(self.challenge_sequence, &self.challenge_key);
        let packet = Packet::Challenge(ChallengePacket {
            challenge_sequence: self.challenge_sequence,
            token: &sealed,
        });
        self.challenge_sequence += 1;
        self.send_global(from, &packet, &token.server_to_client_key, out);
        Ok(())
    }

    pub(super) fn process_response<O: Output<ServerEvent>>(
        &mut self,
        now: Duration,
        from: SocketAddr,
        mapping: Option<usize>,
        response: &ChallengePacket<'_>,
        out: &mut O,
    ) -> Result<(), DropReason> {
        let mut sealed = *response.token;
        let challenge = ChallengeToken::decrypt(
            &mut sealed,
            response.challenge_sequence,
            &self.challenge_key,
        )
        .map_err(|_| DropReason::ChallengeTokenInvalid)?;
        let Some(mapping) = mapping else {
            return Err(crate::packet::PacketError::NoKey.into());
        };
        let hasher = self.hasher;
        let tables = self.storage.tables();
        if tables.slot_by_address(&hasher, &from).is_some() {
            return Err(DropReason::AddressAlreadyConnected);
        }
        if tables
            .slot_by_client_id(&hasher, challenge.client_id)
            .is_some()
        {
            return Err(DropReason::ClientIdAlreadyConnected);
        }
        let send_key = tables.mappings[mapping].send_key.clone();
        let slot = match tables.lowest_free_slot(self.max_clients) {
            Some(slot) if self.num_connected < self.max_clients => slot,
            _ => {
                self.send_global(from, &Packet::Denied, &send_key, out);
                return Ok(());
            }
        };
        self.connect_slot(now, slot, from, mapping, &challenge, out);
        Ok(())
    }

    fn connect_slot<O: Output<ServerEvent>>(
        &mut self,
        now: Duration,
        index: usize,
        address: SocketAddr,
        mapping: usize,
        challenge: &ChallengeToken,
        out: &mut O,
    ) {
        let hasher = self.hasher;
        let mut tables = self.storage.tables();
        tables.own_mapping(&self.live, mapping, index);
        let m = &tables.mappings[mapping];
        let timeout = m.timeout.silence();
        let receive_key = Some(crate::crypto::OpeningKey::new(&m.receive_key));
        if let Some(entry) = m.token_entry.get() {
            tables.consume_token(entry, &address);
        }
        let slot = &mut tables.slots[index];
        *slot = ClientSlot {
            connected: true,
            client_id: challenge.client_id,
            address: Some(address),
            last_send: now,
            last_receive: now,
            timeout,
            mapping: Some(mapping as u32),
            receive_key,
            user_data: challenge.user_data,
            ..ClientSlot::EMPTY
        };
        tables.mark_slot(index, false);
        tables.index_client_id(&hasher, index);
        self.num_connected += 1;
        self.send_keep_alive(now, index, out);
        self.deadline = Some(self.deadline.map_or(now, |d| d.min(now)));
        out.event(ServerEvent::ClientConnected {
            client_index: index,
            client_id: challenge.client_id,
            address: Some(address),
        });
    }
}
