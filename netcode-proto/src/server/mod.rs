//! The sans-IO netcode server.
//!
//! Drive it like the client: [`Server::handle`] for every datagram that
//! arrives, [`Server::update`] once per tick (or at
//! [`Server::next_deadline`]), [`Server::send_payload`] to talk to a client.
//! Datagrams and [`ServerEvent`]s go to an [`Output`].
//!
//! Connection requests are processed in the exact order of the standard and
//! of the newest reference release: version, protocol id, expiry, the restart
//! rule, decryption, the token's server list, address and client id already
//! connected, the connect token history (pending and consumed entries), a
//! full server answered with a denial, the encryption mapping, then the
//! challenge. Every per-packet lookup (sender to slot, sender to mapping,
//! client id, token history) is a hash lookup: the cost of one packet does
//! not grow with the slot count.

mod compact;
mod history;
mod index;
mod mapping;
mod slot;
mod storage;
mod tables;

pub use history::TokenEntry;
pub use mapping::Mapping;
pub use slot::{ClientSlot, DisconnectReason};
#[cfg(feature = "alloc")]
pub use storage::HeapStorage;
pub use storage::{
    ADDRESS_BUCKETS_PER_SLOT, ArrayStorage, CLIENT_ID_BUCKETS_PER_SLOT, MAPPINGS_PER_SLOT,
    MIN_MAPPINGS, MIN_TOKENS, ServerStorage, TOKEN_BUCKETS_PER_SLOT, TOKENS_PER_SLOT, Tables,
};

use core::net::SocketAddr;
use core::time::Duration;

use rand_core::CryptoRng;

use crate::address::same_endpoint;
use crate::constants::{
    MAX_ENCRYPTED_PACKET_BYTES, MAX_PAYLOAD_BYTES, SERVER_GLOBAL_SEQUENCE_BASE, USER_DATA_BYTES,
};
use crate::crypto::Key;
use crate::io::Output;
use crate::packet::{
    ChallengePacket, ConnectionRequest, KeepAlivePacket, Packet, PacketTypes, ReadContext,
    read_packet, write_packet,
};
use crate::session::{
    NUM_DISCONNECT_PACKETS, PACKET_SEND_INTERVAL, Payload, SendError, Sent, after,
};
use crate::stats::{DropReason, DroppedDatagram, Stats};
use crate::token::ChallengeToken;
use index::Hasher;
use tables::{FreeLists, TokenLookup};

/// The reference's default for [`ServerConfig::max_connect_token_lifetime`]: 30 s.
pub const DEFAULT_MAX_CONNECT_TOKEN_LIFETIME: u64 = 30;

/// How a server identifies itself and checks tokens.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Identifies the game or application.
    pub protocol_id: u64,
    /// The key shared with the web backend that issues connect tokens.
    pub private_key: Key,
    /// The address clients reach this server at; it must be among a
    /// token's server addresses for the token to be accepted here.
    pub public_address: SocketAddr,
    /// A second public address (a dual-stack server's other family), also
    /// accepted in tokens.
    pub secondary_address: Option<SocketAddr>,
    /// The longest lifetime, in seconds, of the tokens the backend issues.
    /// A token whose expiry is earlier than start time plus this may predate
    /// the server's start and is refused (the restart rule, which keeps a
    /// restarted server from reusing nonces under an old token's keys).
    /// 0 means the default, 30 s: the rule is mandatory.
    pub max_connect_token_lifetime: u64,
}

impl ServerConfig {
    /// The lifetime the restart rule uses: the configured one, or the
    /// default when it is 0 (as the reference treats values <= 0), so the
    /// rule cannot be switched off by a zeroed config.
    pub fn effective_max_connect_token_lifetime(&self) -> u64 {
        match self.max_connect_token_lifetime {
            0 => DEFAULT_MAX_CONNECT_TOKEN_LIFETIME,
            seconds => seconds,
        }
    }

    /// A configuration with the reference's default token lifetime.
    pub fn new(protocol_id: u64, private_key: Key, public_address: SocketAddr) -> Self {
        Self {
            protocol_id,
            private_key,
            public_address,
            secondary_address: None,
            max_connect_token_lifetime: DEFAULT_MAX_CONNECT_TOKEN_LIFETIME,
        }
    }
}

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

/// Why a server could not be made or started. These are caller mistakes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ServerError {
    /// The storage has no slots, or tables out of proportion with its slots.
    BadStorage,
    /// `max_clients` is 0 or larger than the storage's slots.
    InvalidMaxClients,
    /// The server is not running.
    NotRunning,
    /// The client index is not a slot of this server.
    InvalidClientIndex,
    /// The slot is taken.
    SlotTaken,
    /// The slot does not hold a loopback client.
    NotLoopback,
    /// A client with this client id is already connected.
    ClientIdInUse,
}

impl core::fmt::Display for ServerError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Self::BadStorage => "server storage is empty or its tables are out of proportion",
            Self::InvalidMaxClients => "max clients must be between 1 and the storage's slot count",
            Self::NotRunning => "server is not running",
            Self::InvalidClientIndex => "no such client slot",
            Self::SlotTaken => "client slot is taken",
            Self::NotLoopback => "client slot does not hold a loopback client",
            Self::ClientIdInUse => "a client with this id is already connected",
        })
    }
}

impl core::error::Error for ServerError {}

/// A netcode dedicated server over caller-provided storage `S`.
#[derive(Debug)]
pub struct Server<S: ServerStorage> {
    config: ServerConfig,
    storage: S,
    capacity: usize,
    running: bool,
    max_clients: usize,
    num_connected: usize,
    challenge_key: Key,
    challenge_sequence: u64,
    global_sequence: u64,
    min_expire_timestamp: u64,
    time: Duration,
    unix_time: u64,
    hasher: Hasher,
    free: FreeLists,
    deadline: Option<Duration>,
    stats: Stats,
}

impl<S: ServerStorage> Server<S> {
    /// A stopped server over `storage`, whose slot count caps `max_clients`.
    pub fn new(config: ServerConfig, mut storage: S) -> Result<Self, ServerError> {
        let tables = storage.tables();
        let n = tables.slots.len();
        // Every index is stored as a u32 (entry + 1), and each hash index
        // keeps at most half its buckets full.
        let fits = |len: usize| u32::try_from(len).is_ok();
        let proportional = n > 0
            && tables.mappings.len() >= n
            && !tables.tokens.is_empty()
            && fits(tables.address_index.len())
            && fits(tables.token_index.len())
            && fits(tables.client_id_index.len())
            && tables.address_index.len() >= 2 * tables.mappings.len()
            && tables.client_id_index.len() >= 2 * n
            && tables.token_index.len() >= 2 * tables.tokens.len()
            && tables.free_slots.len() >= n.div_ceil(64);
        if !proportional {
            return Err(ServerError::BadStorage);
        }
        let mut server = Self {
            config,
            storage,
            capacity: n,
            running: false,
            max_clients: 0,
            num_connected: 0,
            challenge_key: Key::from_bytes([0; 32]),
            challenge_sequence: 0,
            global_sequence: SERVER_GLOBAL_SEQUENCE_BASE,
            min_expire_timestamp: 0,
            time: Duration::ZERO,
            unix_time: 0,
            hasher: Hasher::new(0, 0),
            free: FreeLists::default(),
            deadline: None,
            stats: Stats::new(),
        };
        server.storage.tables().reset(&mut server.free);
        Ok(server)
    }

    /// The configuration.
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// The most slots `start` accepts.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Opens `max_clients` slots. `now` is the monotonic time and
    /// `unix_seconds` the wall clock (for token expiry and the restart rule);
    /// `rng` supplies a fresh challenge key and hash keys. A running server
    /// is stopped first (its clients get disconnect packets).
    ///
    /// The global sequence starts at 2^63 on every start, and the token
    /// history and encryption mappings start empty.
    pub fn start<R: CryptoRng + ?Sized, O: Output<ServerEvent>>(
        &mut self,
        now: Duration,
        unix_seconds: u64,
        max_clients: usize,
        rng: &mut R,
        out: &mut O,
    ) -> Result<(), ServerError> {
        if max_clients == 0 || max_clients > self.capacity {
            return Err(ServerError::InvalidMaxClients);
        }
        if self.running {
            self.stop(now, out);
        }
        self.time = now;
        self.unix_time = unix_seconds;
        self.running = true;
        self.max_clients = max_clients;
        self.num_connected = 0;
        self.challenge_sequence = 0;
        self.challenge_key = Key::generate(rng);
        self.hasher = Hasher::new(rng.next_u64(), rng.next_u64());
        self.min_expire_timestamp =
            unix_seconds.saturating_add(self.config.effective_max_connect_token_lifetime());
        self.global_sequence = SERVER_GLOBAL_SEQUENCE_BASE;
        self.deadline = None;
        let mut tables = self.storage.tables();
        tables.reset(&mut self.free);
        for slot in tables.slots.iter_mut() {
            slot.disconnect_reason = DisconnectReason::None;
        }
        Ok(())
    }

    /// Disconnects every client (network clients get disconnect packets)
    /// and closes the slots. The token history and mappings are forgotten.
    pub fn stop<O: Output<ServerEvent>>(&mut self, now: Duration, out: &mut O) {
        if !self.running {
            return;
        }
        self.time = now;
        for index in 0..self.max_clients {
            if self.storage.slots()[index].connected {
                self.disconnect_slot(index, DisconnectReason::ServerDisconnect, true, out);
            }
        }
        self.running = false;
        self.max_clients = 0;
        self.num_connected = 0;
        self.challenge_sequence = 0;
        self.challenge_key = Key::from_bytes([0; 32]);
        self.global_sequence = SERVER_GLOBAL_SEQUENCE_BASE;
        self.deadline = None;
        self.storage.tables().reset(&mut self.free);
    }

    /// Whether the server is running.
    pub fn running(&self) -> bool {
        self.running
    }

    /// Open slots (0 when stopped).
    pub fn max_clients(&self) -> usize {
        self.max_clients
    }

    /// Occupied slots.
    pub fn num_connected_clients(&self) -> usize {
        self.num_connected
    }

    /// The sequence the next challenge or denied packet will carry.
    pub fn global_sequence(&self) -> u64 {
        self.global_sequence
    }

    /// Counters since the server was created.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    fn slot(&self, index: usize) -> Option<&ClientSlot> {
        if !self.running || index >= self.max_clients {
            return None;
        }
        self.storage.slots().get(index)
    }

    fn connected_slot(&self, index: usize) -> Option<&ClientSlot> {
        self.slot(index).filter(|s| s.connected)
    }

    /// Whether slot `index` holds a client.
    pub fn client_connected(&self, index: usize) -> bool {
        self.connected_slot(index).is_some()
    }

    /// The client id in slot `index`.
    pub fn client_id(&self, index: usize) -> Option<u64> {
        self.connected_slot(index).map(|s| s.client_id)
    }

    /// The address of the client in slot `index` (`None` for loopback).
    pub fn client_address(&self, index: usize) -> Option<SocketAddr> {
        self.connected_slot(index).and_then(|s| s.address)
    }

    /// The user data from the connect token of the client in slot `index`.
    pub fn client_user_data(&self, index: usize) -> Option<&[u8; USER_DATA_BYTES]> {
        self.connected_slot(index).map(|s| &s.user_data)
    }

    /// Whether slot `index` holds a loopback client.
    pub fn client_loopback(&self, index: usize) -> bool {
        self.connected_slot(index).is_some_and(|s| s.loopback)
    }

    /// Why slot `index` was last vacated ([`DisconnectReason::None`] since
    /// start or while occupied).
    pub fn disconnect_reason(&self, index: usize) -> DisconnectReason {
        self.slot(index)
            .map_or(DisconnectReason::None, |s| s.disconnect_reason)
    }

    /// The sequence the next packet to slot `index` will carry.
    pub fn next_packet_sequence(&self, index: usize) -> Option<u64> {
        self.connected_slot(index).map(|s| s.sequence)
    }

    /// When [`update`](Self::update) next has a keep-alive to send or a
    /// timeout to apply, or `None` while nothing is pending. It may be
    /// early (after payloads postponed a keep-alive), never late.
    pub fn next_deadline(&self) -> Option<Duration> {
        self.deadline
    }

    /// Processes one received datagram, decrypting it in place.
    ///
    /// Returns the client slot and payload if it carried one. Anything
    /// invalid or unexpected is dropped and counted in [`stats`](Self::stats);
    /// connection requests and responses may send a challenge, a denial or a
    /// keep-alive, and a response that completes a handshake reports
    /// [`ServerEvent::ClientConnected`].
    pub fn handle<'b, O: Output<ServerEvent>>(
        &mut self,
        now: Duration,
        from: SocketAddr,
        datagram: &'b mut [u8],
        out: &mut O,
    ) -> Option<(usize, Payload<'b>)> {
        self.time = now;
        let prefix = datagram.first().copied();
        match self.process(now, from, datagram, out) {
            Ok(payload) => payload,
            Err(reason) => {
                self.stats.count_drop(reason);
                out.dropped(DroppedDatagram::new(from, prefix, reason));
                None
            }
        }
    }

    fn process<'b, O: Output<ServerEvent>>(
        &mut self,
        now: Duration,
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
        let tables = self.storage.tables();
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
        let context = ReadContext {
            protocol_id: self.config.protocol_id,
            current_timestamp: self.unix_time,
            min_expire_timestamp: self.min_expire_timestamp,
            private_key: Some(&self.config.private_key),
            read_key: mapping.map(|m| &tables.mappings[m].receive_key),
            accepted: PacketTypes::SERVER,
        };
        let replay = client.map(|c| &mut tables.slots[c].replay);
        let read = read_packet(&context, datagram, replay)?;
        let packet_type = read.packet.packet_type();

        let result = match read.packet {
            Packet::Request(request) => {
                self.process_request(now, from, &request, out)?;
                None
            }
            Packet::Response(response) => {
                self.process_response(now, from, mapping, &response, out)?;
                None
            }
            Packet::KeepAlive(_) | Packet::Payload(_) | Packet::Disconnect => {
                let Some(c) = client else {
                    return Err(DropReason::NotConnected);
                };
                let tables = self.storage.tables();
                let slot = &mut tables.slots[c];
                slot.last_receive = now;
                match read.packet {
                    Packet::Disconnect => {
                        self.stats.count_received(packet_type);
                        self.disconnect_slot(c, DisconnectReason::ClientDisconnect, false, out);
                        return Ok(None);
                    }
                    Packet::Payload(data) => {
                        slot.confirmed = true;
                        Some((
                            c,
                            Payload {
                                sequence: read.sequence,
                                data,
                            },
                        ))
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

    fn process_request<O: Output<ServerEvent>>(
        &mut self,
        now: Duration,
        from: SocketAddr,
        request: &ConnectionRequest,
        out: &mut O,
    ) -> Result<(), DropReason> {
        let token = &request.token;
        let ours = |a: &SocketAddr| {
            same_endpoint(a, &self.config.public_address)
                || self
                    .config
                    .secondary_address
                    .is_some_and(|s| same_endpoint(a, &s))
        };
        if !token.server_addresses.iter().any(ours) {
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
            &mut self.free,
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
        if self.num_connected >= self.max_clients {
            self.send_global(from, &Packet::Denied, &token.server_to_client_key, out);
            return Ok(());
        }
        tables
            .add_mapping(
                &mut self.free,
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

    fn process_response<O: Output<ServerEvent>>(
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
        let m = &mut tables.mappings[mapping];
        m.expire_time = compact::Nanos::NEVER;
        m.client_index = compact::Link::to(index as u32);
        let timeout = u64::try_from(m.timeout_seconds)
            .ok()
            .filter(|s| *s > 0)
            .map(Duration::from_secs);
        if let Some(entry) = m.token_entry.get() {
            tables.consume_token(entry);
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

    /// Sends keep-alives that are due and applies timeouts. Handle the
    /// datagrams that arrived first. `unix_seconds` (the wall clock) is
    /// kept for the connection requests handled until the next update.
    pub fn update<O: Output<ServerEvent>>(
        &mut self,
        now: Duration,
        unix_seconds: u64,
        out: &mut O,
    ) {
        self.time = now;
        self.unix_time = unix_seconds;
        if !self.running {
            return;
        }
        let mut deadline: Option<Duration> = None;
        for index in 0..self.max_clients {
            let slot = &self.storage.slots()[index];
            if !slot.connected || slot.loopback {
                continue;
            }
            if after(slot.last_send, PACKET_SEND_INTERVAL) <= now {
                self.send_keep_alive(now, index, out);
            }
            let slot = &self.storage.slots()[index];
            if let Some(timeout) = slot.timeout {
                let expires = after(slot.last_receive, timeout);
                if expires <= now {
                    self.disconnect_slot(index, DisconnectReason::TimedOut, false, out);
                    continue;
                }
                deadline = Some(deadline.map_or(expires, |d| d.min(expires)));
            }
            let slot = &self.storage.slots()[index];
            let keep_alive = after(slot.last_send, PACKET_SEND_INTERVAL);
            deadline = Some(deadline.map_or(keep_alive, |d| d.min(keep_alive)));
        }
        self.deadline = deadline;
    }

    /// Sends a payload of 1 to 1200 bytes to slot `index`. Until the client
    /// confirms its connection, a keep-alive goes first so it learns its slot.
    pub fn send_payload<O: Output<ServerEvent>>(
        &mut self,
        now: Duration,
        index: usize,
        payload: &[u8],
        out: &mut O,
    ) -> Result<Sent, SendError> {
        if payload.is_empty() || payload.len() > MAX_PAYLOAD_BYTES {
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

    /// Disconnects the client in slot `index` with 10 disconnect packets.
    /// Loopback slots are left alone (use
    /// [`disconnect_loopback_client`](Self::disconnect_loopback_client)).
    pub fn disconnect_client<O: Output<ServerEvent>>(&mut self, index: usize, out: &mut O) {
        if self.connected_slot(index).is_some_and(|s| !s.loopback) {
            self.disconnect_slot(index, DisconnectReason::ServerDisconnect, true, out);
        }
    }

    /// Disconnects every network client (loopback slots stay).
    pub fn disconnect_all_clients<O: Output<ServerEvent>>(&mut self, out: &mut O) {
        for index in 0..self.max_clients {
            self.disconnect_client(index, out);
        }
    }

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
        now: Duration,
        index: usize,
        data: &'b [u8],
        sequence: u64,
    ) -> Result<Payload<'b>, SendError> {
        if data.is_empty() || data.len() > MAX_PAYLOAD_BYTES {
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

    fn disconnect_slot<O: Output<ServerEvent>>(
        &mut self,
        index: usize,
        reason: DisconnectReason,
        send_packets: bool,
        out: &mut O,
    ) {
        let slot = &self.storage.slots()[index];
        let (client_id, address, loopback) = (slot.client_id, slot.address, slot.loopback);
        self.storage.tables().slots[index].disconnect_reason = reason;
        out.event(ServerEvent::ClientDisconnected {
            client_index: index,
            client_id,
            address,
            reason,
        });
        if send_packets && !loopback {
            for _ in 0..NUM_DISCONNECT_PACKETS {
                self.send_to_slot(self.time, index, &Packet::Disconnect, out);
            }
        }
        let hasher = self.hasher;
        let mut tables = self.storage.tables();
        tables.unindex_client_id(&hasher, index);
        if let Some(mapping) = tables.slots[index].mapping {
            tables.remove_mapping(&mut self.free, &hasher, mapping as usize);
        }
        tables.slots[index].clear();
        tables.mark_slot(index, true);
        self.num_connected -= 1;
    }

    fn send_keep_alive<O: Output<ServerEvent>>(
        &mut self,
        now: Duration,
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
    fn send_to_slot<O: Output<ServerEvent>>(
        &mut self,
        now: Duration,
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
        slot.last_send = now;
        mapping.last_access = compact::Nanos::new(now);
        let mut buffer = [0u8; MAX_ENCRYPTED_PACKET_BYTES];
        if let Ok(n) = write_packet(
            packet,
            sequence,
            &mapping.send_key,
            self.config.protocol_id,
            &mut buffer,
        ) {
            out.send(address, &buffer[..n]);
            self.stats.count_sent(packet.packet_type());
        }
    }

    /// Sends a challenge or denial from the global sequence.
    fn send_global<O: Output<ServerEvent>>(
        &mut self,
        to: SocketAddr,
        packet: &Packet<'_>,
        key: &Key,
        out: &mut O,
    ) {
        let sequence = self.global_sequence;
        self.global_sequence = self.global_sequence.wrapping_add(1);
        let mut buffer = [0u8; MAX_ENCRYPTED_PACKET_BYTES];
        if let Ok(n) = write_packet(packet, sequence, key, self.config.protocol_id, &mut buffer) {
            out.send(to, &buffer[..n]);
            self.stats.count_sent(packet.packet_type());
        }
    }
}
