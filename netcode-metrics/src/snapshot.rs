//! What one recording of a server holds: its protocol and transport
//! counters, its slot count, and each connected client's traffic. Built
//! from the core's types, so any host can fill one; a netcode-std server
//! (and so a netcode-mio one) fills one itself.

use netcode_std::proto::stats::Stats;
use netcode_std::transport::Socket;
use netcode_std::{ConnectionStats, Server, TransportStats};

/// The figures of one server at one moment.
///
/// Every field is public, so a host this crate does not know (a
/// netcode-tokio server, for one, whose `stats`, `transport_stats`,
/// `max_clients`, `client_id` and `client_stats` give all of them) fills
/// one itself; [`ServerSnapshot::fill_from`] does it for a netcode-std or
/// netcode-mio server.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerSnapshot {
    /// The protocol counters: packets by type, drops by reason.
    pub stats: Stats,
    /// The socket and queue counters.
    pub transport: TransportStats,
    /// Open slots (0 while the server is stopped).
    pub max_clients: usize,
    /// Every occupied slot, in slot order.
    pub clients: Vec<ClientSnapshot>,
    /// The connect token history's figures, where the host reports them.
    pub token_history: Option<TokenHistorySnapshot>,
}

/// One connected client as recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientSnapshot {
    /// Its slot.
    pub client_index: usize,
    /// The client id from its connect token.
    pub client_id: u64,
    /// What its connection has carried.
    pub connection: ConnectionStats,
}

/// The connect token history's figures: how full it is, and, with a token
/// history file, how its writer is doing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenHistorySnapshot {
    /// Entries the history holds at once.
    pub capacity: usize,
    /// Entries holding an unexpired token.
    pub in_use: usize,
    /// Records of new tokens handed to the file's writer and not yet
    /// durable (0 without a file).
    pub records_pending: usize,
    /// The file writer's counters, when the server has a file.
    pub writer: Option<TokenHistoryWriterSnapshot>,
}

/// The token history file writer's counters (netcode-std's
/// `history_store::WriterStats`, copied so that this type stays plain data).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenHistoryWriterSnapshot {
    /// Records made durable.
    pub records_durable: u64,
    /// Groups written and synced.
    pub syncs: u64,
    /// Records whose group failed to be written or synced.
    pub records_failed: u64,
    /// Requests refused because the writer was full.
    pub requests_refused: u64,
    /// Compactions done.
    pub compactions: u64,
    /// Compactions that failed.
    pub compactions_failed: u64,
}

impl ClientSnapshot {
    /// The client in slot `client_index`, with id `client_id`, whose
    /// connection carried `connection`.
    pub fn new(client_index: usize, client_id: u64, connection: ConnectionStats) -> Self {
        Self {
            client_index,
            client_id,
            connection,
        }
    }
}

impl ServerSnapshot {
    /// A snapshot of `stats`, `transport` and `max_clients`, with no
    /// clients and no token history figures yet.
    pub fn new(stats: Stats, transport: TransportStats, max_clients: usize) -> Self {
        Self {
            stats,
            transport,
            max_clients,
            clients: Vec::new(),
            token_history: None,
        }
    }

    /// A snapshot of `server` now.
    pub fn of_server<S: Socket>(server: &Server<S>) -> Self {
        let mut snapshot = Self::default();
        snapshot.fill_from(server);
        snapshot
    }

    /// Overwrites this snapshot with `server`'s figures now, reusing the
    /// client list's memory: once it has held as many clients as the
    /// server has, recording allocates nothing.
    ///
    /// The cost is one pass over the server's slots.
    pub fn fill_from<S: Socket>(&mut self, server: &Server<S>) {
        self.stats = server.stats();
        self.transport = server.transport_stats();
        self.max_clients = server.max_clients();
        self.clients.clear();
        self.clients
            .extend((0..self.max_clients).filter_map(|index| {
                let client_id = server.client_id(index)?;
                let connection = server.client_stats(index)?;
                Some(ClientSnapshot::new(index, client_id, connection))
            }));
        self.token_history = Some(TokenHistorySnapshot {
            capacity: server.token_history_capacity(),
            in_use: server.token_history_in_use(),
            records_pending: server.token_records_pending(),
            writer: server
                .token_history_stats()
                .map(|w| TokenHistoryWriterSnapshot {
                    records_durable: w.records_durable,
                    syncs: w.syncs,
                    records_failed: w.records_failed,
                    requests_refused: w.requests_refused,
                    compactions: w.compactions,
                    compactions_failed: w.compactions_failed,
                }),
        });
    }

    /// Connected clients: the occupied slots.
    pub fn clients_connected(&self) -> usize {
        self.clients.len()
    }
}
