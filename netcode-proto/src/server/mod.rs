//! The sans-IO netcode server (STANDARD.md: *Server-Side Connection
//! Process*).
//!
//! Drive it like the client: [`Server::handle`] for every datagram that
//! arrives, [`Server::update`] once per tick (or at
//! [`Server::next_deadline`]), [`Server::send_payload`] to talk to a client.
//! Datagrams and [`ServerEvent`]s go to an [`Output`](crate::io::Output).
//!
//! Connection requests are processed in the exact order of the standard and
//! of the newest reference release: version, protocol id, expiry, the restart
//! rule, decryption, the token's server list, address and client id already
//! connected, the connect token history (pending and consumed entries), a
//! full server answered with a denial, the encryption mapping, then the
//! challenge. Every per-packet lookup (sender to slot, sender to mapping,
//! client id, token history) is a hash lookup: the cost of one packet does
//! not grow with the slot count.
//!
//! The parts, by concern:
//!
//! * `config.rs`: [`ServerConfig`] and [`ServerError`]; `event.rs`:
//!   [`ServerEvent`];
//! * `lifecycle.rs`: start and stop; `receive.rs`: the receive path and
//!   connected clients' packets; `handshake.rs`: connection requests and
//!   responses; `send.rs`: payloads and every packet the server sends;
//!   `update.rs`: keep-alives, timeouts and disconnects; `loopback.rs`:
//!   in-process clients; `persist.rs`: the token history across restarts;
//! * `storage.rs`, `tables.rs`, `index.rs`, `expiry.rs`, `compact.rs`,
//!   `slot.rs`, `mapping.rs`, `history.rs`: the caller-sized tables and
//!   their entries; `sizing.rs`: how large the token history should be;
//!   `snapshot.rs`: copies of a whole server, for tests (feature `sim`).

mod compact;
mod config;
mod event;
mod expiry;
mod handshake;
mod history;
mod index;
mod lifecycle;
mod loopback;
mod mapping;
mod persist;
mod receive;
#[cfg(test)]
mod reclaim_model;
mod send;
mod sizing;
mod slot;
#[cfg(feature = "sim")]
mod snapshot;
mod storage;
mod tables;
mod timers;
mod update;

pub use crate::durable::{PersistOutcome, PersistRequest, UsedToken};
/// The reference's default for [`ServerConfig::max_connect_token_lifetime`]:
/// 30 s (defined with the other timing rules, in [`timing`](crate::timing)).
pub use crate::timing::DEFAULT_MAX_CONNECT_TOKEN_LIFETIME;
pub use config::{ServerConfig, ServerError};
pub use event::ServerEvent;
pub use history::TokenEntry;
pub use mapping::Mapping;
pub use persist::{HistoryEntry, RestoredHistory};
pub use sizing::{MIN_TOKENS, TOKENS_PER_SLOT, TokenHistorySize};
pub use slot::{ClientSlot, DisconnectReason};
#[cfg(feature = "alloc")]
pub use storage::HeapStorage;
pub use storage::{
    ADDRESS_BUCKETS_PER_SLOT, ArrayStorage, CLIENT_ID_BUCKETS_PER_SLOT, MAPPINGS_PER_SLOT,
    MIN_MAPPINGS, ServerStorage, TOKEN_BUCKETS_PER_SLOT,
};
pub use tables::Tables;
pub use timers::SlotTimer;

use crate::time::Instant;
use core::net::SocketAddr;

use crate::constants::{SERVER_GLOBAL_SEQUENCE_BASE, USER_DATA_BYTES};
use crate::crypto::Key;
use crate::stats::Stats;
use crate::traffic::ConnectionStats;
use index::Hasher;
use tables::Occupancy;

/// A netcode dedicated server over caller-provided storage `S`.
#[derive(Debug)]
pub struct Server<S: ServerStorage> {
    config: ServerConfig,
    storage: S,
    capacity: usize,
    token_history_capacity: usize,
    running: bool,
    max_clients: usize,
    num_connected: usize,
    challenge_key: Key,
    challenge_sequence: u64,
    global_sequence: u64,
    min_expire_timestamp: u64,
    time: Instant,
    unix_time: u64,
    hasher: Hasher,
    live: Occupancy,
    /// Started with a restored history: new tokens are made durable first.
    persisting: bool,
    /// Counts starts, so a [`PersistRequest`] from an earlier run is told
    /// apart.
    run: u32,
    deadline: Option<Instant>,
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
            && tables.free_slots.len() >= n.div_ceil(64)
            && tables.timers.len() >= n;
        if !proportional {
            return Err(ServerError::BadStorage);
        }
        let token_history_capacity = tables.tokens.len();
        let mut server = Self {
            config,
            storage,
            capacity: n,
            token_history_capacity,
            running: false,
            max_clients: 0,
            num_connected: 0,
            challenge_key: Key::from_bytes([0; 32]),
            challenge_sequence: 0,
            global_sequence: SERVER_GLOBAL_SEQUENCE_BASE,
            min_expire_timestamp: 0,
            time: Instant::ZERO,
            unix_time: 0,
            hasher: Hasher::new(0, 0),
            live: Occupancy::default(),
            persisting: false,
            run: 0,
            deadline: None,
            stats: Stats::new(),
        };
        server.storage.tables().reset(&mut server.live);
        Ok(server)
    }

    /// The configuration.
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// The storage the server keeps its tables in, to read (for example
    /// how far `HeapStorage`'s prepared key table has grown).
    pub fn storage(&self) -> &S {
        &self.storage
    }

    /// The most slots `start` accepts.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Entries of the connect token history: how many tokens it holds at
    /// once (see [`TokenHistorySize`] for what that absorbs).
    pub fn token_history_capacity(&self) -> usize {
        self.token_history_capacity
    }

    /// History entries holding a token: those admitted and not expired as
    /// of the last [`update`](Self::update), which frees the expired ones.
    /// When it reaches [`token_history_capacity`](Self::token_history_capacity),
    /// new tokens are refused
    /// ([`TokenHistoryFull`](crate::stats::DropReason::TokenHistoryFull)).
    pub fn token_history_in_use(&self) -> usize {
        self.live.tokens
    }

    /// The first unix second of issue from which the restart rule admits
    /// tokens of the maximum lifetime: one past the second it counts from
    /// (the start, or when a restored history began). Tokens issued
    /// earlier are refused
    /// ([`TokenPredatesStart`](crate::packet::PacketError::TokenPredatesStart)).
    pub fn tokens_admitted_from(&self) -> u64 {
        self.min_expire_timestamp
            .saturating_sub(self.config.effective_max_connect_token_lifetime())
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

    /// What the connection in slot `index` has carried: packets and bytes
    /// each way, duplicates dropped, packets lost by the gaps in the
    /// client's sequences, the handshake's round trip, and the time since
    /// the client's last packet (as of the last time given the server).
    /// `None` for a free slot. Worked out when asked; counting costs a few
    /// additions per packet.
    pub fn client_stats(&self, index: usize) -> Option<ConnectionStats> {
        let slot = self.connected_slot(index)?;
        let since = self.time.saturating_duration_since(slot.last_receive);
        Some(slot.traffic.report(since))
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
    pub fn next_deadline(&self) -> Option<Instant> {
        self.deadline
    }
}
