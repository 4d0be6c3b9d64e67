//! Connection requests and responses: the token's checks after the packet
//! reader's, the connect token history, the encryption mapping, the
//! challenge, and the slot a response takes (STANDARD.md: *Processing
//! Connection Requests*, *Processing Connection Response Packets*).

use crate::time::Instant;
use core::net::SocketAddr;

use super::compact::Nanos;
use super::history::Record;
use super::tables::TokenLookup;
use super::{ClientSlot, Server, ServerEvent, ServerStorage};
use crate::constants::USER_DATA_BYTES;
use crate::crypto::Key;
use crate::io::Output;
use crate::packet::{ChallengePacket, ConnectionRequest, Packet};
use crate::stats::DropReason;
use crate::token::ChallengeToken;
use crate::traffic::Traffic;

/// A connection request admitted by the token history, as the answer
/// reads it: borrowed from the opened request, or from a
/// [`PersistRequest`](super::PersistRequest) handed back once durable.
pub(super) struct Admission<'a> {
    pub(super) from: SocketAddr,
    pub(super) client_id: u64,
    pub(super) timeout_seconds: i32,
    pub(super) client_to_server_key: &'a Key,
    pub(super) server_to_client_key: &'a Key,
    pub(super) user_data: &'a [u8; USER_DATA_BYTES],
}

impl<S: ServerStorage> Server<S> {
    pub(super) fn process_request<O: Output<ServerEvent>>(
        &mut self,
        now: Instant,
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
        self.refuse_connected(from, token.client_id)?;
        let hasher = self.hasher;
        let mut tables = self.storage.tables();
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
        // The first packet under the token's keys leaves in the answer (a
        // denial or a challenge): with a persisted history, only once the
        // token is durable. The first request asks for that and is held.
        if self.persisting {
            match tables.pending_record(entry, &from) {
                Some(Record::Durable) | None => {}
                Some(Record::Asked) => return Err(DropReason::TokenNotDurable),
                Some(Record::Unasked) => {
                    tables.set_pending_record(entry, Record::Asked);
                    out.persist_used_token(self.persist_request(request, from));
                    return Err(DropReason::TokenNotDurable);
                }
            }
        }
        let admission = Admission {
            from,
            client_id: token.client_id,
            timeout_seconds: token.timeout_seconds,
            client_to_server_key: &token.client_to_server_key,
            server_to_client_key: &token.server_to_client_key,
            user_data: &token.user_data,
        };
        self.answer_request(now, &admission, entry, out)
    }

    /// Refuses a handshake from an address, or for a client id, that
    /// already holds a slot.
    pub(super) fn refuse_connected(
        &mut self,
        from: SocketAddr,
        client_id: u64,
    ) -> Result<(), DropReason> {
        let hasher = self.hasher;
        let tables = self.storage.tables();
        if tables.slot_by_address(&hasher, &from).is_some() {
            return Err(DropReason::AddressAlreadyConnected);
        }
        if tables.slot_by_client_id(&hasher, client_id).is_some() {
            return Err(DropReason::ClientIdAlreadyConnected);
        }
        Ok(())
    }

    /// Answers a request the token history admitted (its entry `entry`):
    /// a denial when every slot is taken, otherwise the encryption mapping
    /// and a challenge.
    pub(super) fn answer_request<O: Output<ServerEvent>>(
        &mut self,
        now: Instant,
        request: &Admission<'_>,
        entry: u32,
        out: &mut O,
    ) -> Result<(), DropReason> {
        let from = request.from;
        let hasher = self.hasher;
        let mut tables = self.storage.tables();
        if self.num_connected >= self.max_clients {
            self.send_global(from, &Packet::Denied, request.server_to_client_key, out);
            return Ok(());
        }
        tables
            .add_mapping(
                &mut self.live,
                &hasher,
                now,
                from,
                request.server_to_client_key,
                request.client_to_server_key,
                request.timeout_seconds,
                entry,
            )
            .ok_or(DropReason::MappingTableFull)?;
        let challenge = ChallengeToken {
            client_id: request.client_id,
            user_data: *request.user_data,
        };
        let sealed = challenge.encrypt(self.challenge_sequence, &self.challenge_key);
        let packet = Packet::Challenge(ChallengePacket {
            challenge_sequence: self.challenge_sequence,
            token: &sealed,
        });
        self.challenge_sequence += 1;
        self.send_global(from, &packet, request.server_to_client_key, out);
        Ok(())
    }

    pub(super) fn process_response<O: Output<ServerEvent>>(
        &mut self,
        now: Instant,
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
        self.refuse_connected(from, challenge.client_id)?;
        let tables = self.storage.tables();
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
        now: Instant,
        index: usize,
        address: SocketAddr,
        mapping: usize,
        challenge: &ChallengeToken,
        out: &mut O,
    ) {
        let hasher = self.hasher;
        self.storage.reach_prepared_key(index);
        let mut tables = self.storage.tables();
        tables.own_mapping(&self.live, mapping, index);
        tables.prepare_key(index, mapping);
        let m = &tables.mappings[mapping];
        let timeout = m.timeout.silence();
        let rtt = Nanos::new(now).since(m.challenge_at);
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
            user_data: challenge.user_data,
            traffic: Traffic::new(Some(rtt)),
            ..ClientSlot::EMPTY
        };
        tables.mark_slot(index, false);
        tables.index_client_id(&hasher, index);
        self.num_connected += 1;
        self.send_keep_alive(now, index, out);
        let mut tables = self.storage.tables();
        tables.arm_timer(&mut self.live, index);
        let key = tables.first_timer(&self.live).map(|(_, key)| key.instant());
        self.deadline = self.deadline.min(key).or(key);
        out.event(ServerEvent::ClientConnected {
            client_index: index,
            client_id: challenge.client_id,
            address: Some(address),
        });
    }
}
