//! A world for scenario tests: servers and clients of this crate wired
//! through the [`NetworkSimulator`], on simulated time that steps frame by
//! frame or jumps to the next deadline (STANDARD.md: the whole protocol,
//! end to end; the reference's own test loops are BEHAVIOR.md section 9).
//!
//! It is a test harness: a test's own mistake (a malformed address, storage
//! out of proportion, a send from a client that is not connected) panics
//! with a message saying which, as a failed assertion would. Nothing the
//! simulated network carries can make it panic.
#![allow(clippy::panic)]

use crate::time::Instant;
use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use core::net::SocketAddr;
use core::time::Duration;

use super::fixtures::{PRIVATE_KEY, PROTOCOL_ID, UNIX_START, user_data_for};
use super::store::{ServerOutput, SimStore};
use super::{NetworkSimulator, SimConfig};
use crate::client::{Client, ClientEvent, ClientState};
use crate::constants::CONNECT_TOKEN_BYTES;
use crate::crypto::Key;
use crate::seeded::SeededRng;
use crate::server::{HeapStorage, Server, ServerConfig, ServerError, ServerEvent, ServerStorage};
use crate::token::{ConnectTokenParams, generate_connect_token};

/// A datagram filter: return false to drop the datagram (from, to, bytes).
pub type Filter = Box<dyn FnMut(SocketAddr, SocketAddr, &[u8]) -> bool>;

/// Monotonic time at the start of every world (unix time is
/// [`UNIX_START`] then).
const EPOCH: Instant = Instant::from_secs(1000);

/// One client of a [`World`].
pub struct ClientNode {
    /// Its address.
    pub address: SocketAddr,
    /// The client.
    pub client: Client,
    /// Every event it reported.
    pub events: Vec<ClientEvent>,
    /// Every payload it received: sequence and bytes.
    pub received: Vec<(u64, Vec<u8>)>,
    /// Whether the world calls its `update` (true unless a test stops it).
    pub updating: bool,
}

/// One server of a [`World`].
pub struct ServerNode {
    /// Its address.
    pub address: SocketAddr,
    /// The server.
    pub server: Server<HeapStorage>,
    /// Every event it reported.
    pub events: Vec<ServerEvent>,
    /// Every payload it received: slot, sequence and bytes.
    pub received: Vec<(usize, u64, Vec<u8>)>,
    /// Whether the world calls its `update` (true unless a test stops it).
    pub updating: bool,
    /// The durable store of its token history, once the test gives it one;
    /// a server started restored makes new tokens durable here.
    pub store: Option<SimStore>,
    /// Slots, mappings and history entries, to rebuild it after a crash.
    sizes: (usize, usize, usize),
}

/// Who is at an address.
#[derive(Debug, Clone, Copy)]
enum Node {
    Server(usize),
    Client(usize),
}

/// Servers and clients on a simulated network and clock.
///
/// Every server is made with the reference's test key and protocol id
/// ([`fixtures`](super::fixtures)) and started at once; tokens from
/// [`token_for`](Self::token_for) carry the same key. Time starts with unix
/// time at [`UNIX_START`] and moves only through [`step`](Self::step)
/// (deliver what is due, then update every client and server, as the
/// reference's test loops do) or [`advance`](Self::advance) (the same, at the
/// next deadline of anything in the world).
///
/// # Example
///
/// ```
/// use netcode_proto::client::ClientState;
/// use netcode_proto::sim::World;
/// use netcode_proto::sim::fixtures::{lossy, pattern};
///
/// // One server with 4 slots, 2 open, on the reference tests' lossy network.
/// let mut world = World::new(lossy(), 7, 4, 2);
/// let client = world.add_client("10.0.0.1:50000");
/// let token = world.token(1);
/// world.connect(client, &token);
/// assert!(world.run_until(100, |w| w.state(client) == ClientState::Connected));
///
/// world.client_send(client, &pattern(100, 1));
/// assert!(world.run_until(50, |w| !w.servers[0].received.is_empty()));
/// assert_eq!(world.servers[0].received[0].2, pattern(100, 1));
///
/// // Virtual time jumps from deadline to deadline: keep-alives hold the
/// // connection through a minute of silence.
/// let end = world.now + core::time::Duration::from_secs(60);
/// while world.now < end {
///     assert!(world.advance());
/// }
/// assert_eq!(world.state(client), ClientState::Connected);
/// ```
pub struct World {
    /// The network.
    pub sim: NetworkSimulator,
    /// Simulated monotonic time.
    pub now: Instant,
    /// Simulated unix time, in whole seconds, that goes with `now` (and
    /// any wall clock step made by [`step_wall_clock`](Self::step_wall_clock)).
    pub unix: u64,
    /// Seconds the wall clock was stepped by, in all.
    wall_clock_step: i64,
    /// The servers, by the index [`add_server`](Self::add_server) returned.
    pub servers: Vec<ServerNode>,
    /// The clients, by the index [`add_client`](Self::add_client) returned.
    pub clients: Vec<ClientNode>,
    /// The generator of server keys and tokens, seeded by the world's seed.
    pub rng: SeededRng,
    /// Drops datagrams before delivery when set.
    pub filter: Option<Filter>,
    /// Every datagram delivered while `capture` is set: from, to, bytes.
    pub captured: Vec<(SocketAddr, SocketAddr, Vec<u8>)>,
    /// Whether delivered datagrams are captured.
    pub capture: bool,
    by_address: BTreeMap<SocketAddr, Node>,
}

impl World {
    /// A world with no server and no client yet.
    pub fn empty(sim: SimConfig, seed: u64) -> Self {
        Self {
            sim: NetworkSimulator::new(sim, seed),
            now: EPOCH,
            unix: UNIX_START,
            wall_clock_step: 0,
            servers: Vec::new(),
            clients: Vec::new(),
            rng: SeededRng::new(seed),
            filter: None,
            captured: Vec::new(),
            capture: false,
            by_address: BTreeMap::new(),
        }
    }

    /// A world with one server at `[::1]:40000` of `slots` slots (the
    /// reference's table sizes), started with `max_clients` open.
    pub fn new(sim: SimConfig, seed: u64, slots: usize, max_clients: usize) -> Self {
        let address = SocketAddr::from(([0, 0, 0, 0, 0, 0, 0, 1], 40000));
        Self::with_storage(sim, seed, HeapStorage::new(slots), max_clients, address)
    }

    /// A world with one server at `address` on `storage`, started with
    /// `max_clients` open.
    pub fn with_storage(
        sim: SimConfig,
        seed: u64,
        storage: HeapStorage,
        max_clients: usize,
        address: SocketAddr,
    ) -> Self {
        let mut world = Self::empty(sim, seed);
        world.add_server(address, storage, max_clients);
        world
    }

    /// A one-slot world on a perfect network whose one client (index 0) is
    /// connected with a token of `expire` and `timeout` seconds.
    pub fn one_connected(seed: u64, expire: i64, timeout: i32) -> (Self, usize) {
        let mut w = Self::new(SimConfig::default(), seed, 1, 1);
        let c = w.add_client("[::]:50000");
        let server = w.servers[0].address;
        let token = w.token_for(1, &[server], expire, timeout);
        w.connect(c, &token);
        assert!(w.run_until(50, |w| w.state(c) == ClientState::Connected));
        (w, c)
    }

    /// The configuration of a server of the world at `address`.
    pub fn server_config(address: SocketAddr) -> ServerConfig {
        ServerConfig::new(PROTOCOL_ID, Key::from_bytes(PRIVATE_KEY), address)
    }

    /// Adds a server at `address` on `storage` and starts it with
    /// `max_clients` open; returns its index.
    ///
    /// The server is started as if a second ago, as a deployed server has
    /// been up before its backend issues tokens for it: the restart rule
    /// refuses tokens minted in a server's start second, and the world's
    /// tokens are minted at its current second.
    pub fn add_server(
        &mut self,
        address: SocketAddr,
        mut storage: HeapStorage,
        max_clients: usize,
    ) -> usize {
        let tables = storage.tables();
        let sizes = (
            tables.slots.len(),
            tables.mappings.len(),
            tables.tokens.len(),
        );
        let server = Server::new(Self::server_config(address), storage)
            .unwrap_or_else(|e| panic!("world server storage: {e}"));
        let index = self.servers.len();
        self.by_address.insert(address, Node::Server(index));
        self.servers.push(ServerNode {
            address,
            server,
            events: Vec::new(),
            received: Vec::new(),
            updating: true,
            store: None,
            sizes,
        });
        let (now, unix) = (self.now, self.unix.saturating_sub(1));
        let (server, mut out, rng) = self.server_parts(index);
        server
            .start(now, unix, max_clients, rng, &mut out)
            .unwrap_or_else(|e| panic!("world server start: {e}"));
        index
    }

    /// Adds a client at `address` (a socket address string); returns its
    /// index.
    pub fn add_client(&mut self, address: &str) -> usize {
        let address: SocketAddr = address
            .parse()
            .unwrap_or_else(|_| panic!("not a socket address: {address}"));
        let index = self.clients.len();
        self.by_address.insert(address, Node::Client(index));
        self.clients.push(ClientNode {
            address,
            client: Client::new(),
            events: Vec::new(),
            received: Vec::new(),
            updating: true,
        });
        index
    }

    /// Server `s`.
    pub fn server(&self, s: usize) -> &Server<HeapStorage> {
        &self.servers[s].server
    }

    /// Server `s`, mutably (for calls that send nothing; see
    /// [`with_server`](Self::with_server) for the others).
    pub fn server_mut(&mut self, s: usize) -> &mut Server<HeapStorage> {
        &mut self.servers[s].server
    }

    /// Removes every client (their datagrams in flight still arrive, to no
    /// one).
    pub fn clear_clients(&mut self) {
        self.clients.clear();
        self.by_address
            .retain(|_, node| matches!(node, Node::Server(_)));
    }

    /// Server `s`, its output, and the world's generator, borrowed apart.
    fn server_parts(
        &mut self,
        s: usize,
    ) -> (&mut Server<HeapStorage>, ServerOutput<'_>, &mut SeededRng) {
        let node = &mut self.servers[s];
        let out = ServerOutput::new(
            &mut self.sim,
            node.address,
            self.now,
            &mut node.events,
            node.store.as_mut(),
        );
        (&mut node.server, out, &mut self.rng)
    }

    /// (Re)starts server `s` with `max_clients` open and the restart rule
    /// counting from now.
    pub fn start_server(&mut self, s: usize, max_clients: usize) {
        let (now, unix) = (self.now, self.unix);
        let (server, mut out, rng) = self.server_parts(s);
        server
            .start(now, unix, max_clients, rng, &mut out)
            .unwrap_or_else(|e| panic!("world server start: {e}"));
    }

    /// (Re)starts server `s` with `max_clients` open and its token history
    /// restored from its store (an empty one begun now if it has none), so
    /// that it makes every new token durable there.
    pub fn start_server_restored(
        &mut self,
        s: usize,
        max_clients: usize,
    ) -> Result<(), ServerError> {
        let (now, unix) = (self.now, self.unix);
        let saved = self.servers[s]
            .store
            .get_or_insert_with(|| SimStore::new(unix))
            .clone();
        let (server, mut out, rng) = self.server_parts(s);
        server.start_restored(now, unix, max_clients, rng, &saved.restored(), &mut out)
    }

    /// Server `s` crashes: everything but its store is lost (records still
    /// being written included), and it is left stopped on new storage of
    /// the same sizes. Nothing is sent.
    pub fn crash_server(&mut self, s: usize) {
        let node = &mut self.servers[s];
        if let Some(store) = node.store.as_mut() {
            store.lose_in_flight();
        }
        let (slots, mappings, tokens) = node.sizes;
        let storage = HeapStorage::with_tables(slots, mappings, tokens);
        node.server = Server::new(Self::server_config(node.address), storage)
            .unwrap_or_else(|e| panic!("world server storage: {e}"));
    }

    /// A connect token for `client_id` listing `addresses`, made now with
    /// `expire` and `timeout` seconds.
    pub fn token_for(
        &mut self,
        client_id: u64,
        addresses: &[SocketAddr],
        expire: i64,
        timeout: i32,
    ) -> [u8; CONNECT_TOKEN_BYTES] {
        let key = Key::from_bytes(PRIVATE_KEY);
        let user_data = user_data_for(client_id);
        let params = ConnectTokenParams {
            protocol_id: PROTOCOL_ID,
            private_key: &key,
            client_id,
            public_addresses: addresses,
            internal_addresses: None,
            create_timestamp: self.unix,
            expire_seconds: expire,
            timeout_seconds: timeout,
            user_data: &user_data,
        };
        generate_connect_token(&params, &mut self.rng)
            .and_then(|t| t.write())
            .unwrap_or_else(|e| panic!("world token: {e}"))
    }

    /// A 30 s token with a 15 s timeout for `client_id`, for server 0.
    pub fn token(&mut self, client_id: u64) -> [u8; CONNECT_TOKEN_BYTES] {
        let server = self.servers[0].address;
        self.token_for(client_id, &[server], 30, 15)
    }

    /// Client `c` starts connecting with `token` (an invalid token leaves
    /// it in [`ClientState::InvalidConnectToken`]).
    pub fn connect(&mut self, c: usize, token: &[u8]) {
        let now = self.now;
        let node = &mut self.clients[c];
        let mut out = self.sim.output(now, node.address, &mut node.events);
        let _ = node.client.connect(now, token, &mut out);
    }

    /// The state of client `c`.
    pub fn state(&self, c: usize) -> ClientState {
        self.clients[c].client.state()
    }

    /// Client `c` sends a payload (it must be connected).
    pub fn client_send(&mut self, c: usize, payload: &[u8]) {
        let now = self.now;
        let node = &mut self.clients[c];
        let mut out = self.sim.output(now, node.address, &mut node.events);
        if let Err(e) = node.client.send_payload(now, payload, &mut out) {
            panic!("client {c} send: {e}");
        }
    }

    /// Client `c` disconnects (10 disconnect packets when active).
    pub fn client_disconnect(&mut self, c: usize) {
        let now = self.now;
        let node = &mut self.clients[c];
        let mut out = self.sim.output(now, node.address, &mut node.events);
        node.client.disconnect(now, &mut out);
    }

    /// Calls `f` with server `s`, the time and the server's output (into
    /// the network, its events and its store): for calls the world has no
    /// method for.
    pub fn with_server<R>(
        &mut self,
        s: usize,
        f: impl FnOnce(&mut Server<HeapStorage>, Instant, &mut ServerOutput<'_>) -> R,
    ) -> R {
        let now = self.now;
        let (server, mut out, _) = self.server_parts(s);
        f(server, now, &mut out)
    }

    /// Server `s` sends a payload to its slot `index` (which must hold a
    /// client).
    pub fn server_send(&mut self, s: usize, index: usize, payload: &[u8]) {
        let sent = self.with_server(s, |server, now, out| {
            server.send_payload(now, index, payload, out)
        });
        if let Err(e) = sent {
            panic!("server {s} send to slot {index}: {e}");
        }
    }

    /// Server `s` disconnects the client in its slot `index`.
    pub fn server_disconnect(&mut self, s: usize, index: usize) {
        self.with_server(s, |server, _, out| server.disconnect_client(index, out));
    }

    /// Advances time by `dt`: delivers every datagram due by then (through
    /// the filter, into the capture), then updates every client and server
    /// that is updating.
    pub fn step(&mut self, dt: Duration) {
        self.now = self.now.saturating_add(dt);
        self.unix = self.wall_clock();
        let now = self.now;
        while let Some(mut d) = self.sim.receive_any(now) {
            if let Some(filter) = self.filter.as_mut()
                && !filter(d.from, d.to, &d.bytes)
            {
                continue;
            }
            if self.capture {
                self.captured.push((d.from, d.to, d.bytes.clone()));
            }
            self.deliver(d.from, d.to, &mut d.bytes);
        }
        for node in self.clients.iter_mut().filter(|n| n.updating) {
            let mut out = self.sim.output(now, node.address, &mut node.events);
            node.client.update(now, &mut out);
        }
        let unix = self.unix;
        for s in 0..self.servers.len() {
            if self.servers[s].updating {
                let (server, mut out, _) = self.server_parts(s);
                server.update(now, unix, &mut out);
            }
            self.settle_store(s);
        }
    }

    /// Hands server `s` back the records its store finished writing by now
    /// (durable, or failed when the store is not writable).
    fn settle_store(&mut self, s: usize) {
        let (now, unix) = (self.now, self.unix);
        let Some(store) = self.servers[s].store.as_mut() else {
            return;
        };
        for (request, outcome) in store.finish_writes(now, unix) {
            let (server, mut out, _) = self.server_parts(s);
            server.token_persisted(now, request, outcome, &mut out);
        }
    }

    /// Steps the wall clock by `seconds` (back when negative), as an NTP
    /// correction or a virtual machine restored from a snapshot does:
    /// [`unix`](Self::unix) changes now, monotonic time does not.
    pub fn step_wall_clock(&mut self, seconds: i64) {
        self.wall_clock_step = self.wall_clock_step.saturating_add(seconds);
        self.unix = self.wall_clock();
    }

    /// The unix second that goes with `now`.
    fn wall_clock(&self) -> u64 {
        let elapsed = self.now.saturating_duration_since(EPOCH).as_secs();
        UNIX_START
            .saturating_add(elapsed)
            .saturating_add_signed(self.wall_clock_step)
    }

    /// Hands one datagram straight to whoever is at `to`, now, bypassing the
    /// network, filter and capture (a payload it carries is recorded as
    /// received); whether it carried a payload.
    pub fn deliver(&mut self, from: SocketAddr, to: SocketAddr, bytes: &mut [u8]) -> bool {
        let now = self.now;
        match self.by_address.get(&to) {
            Some(&Node::Server(s)) => {
                let (server, mut out, _) = self.server_parts(s);
                let received = server
                    .handle(now, from, bytes, &mut out)
                    .map(|(index, payload)| (index, payload.sequence, payload.data.to_vec()));
                self.settle_store(s);
                let Some(received) = received else {
                    return false;
                };
                self.servers[s].received.push(received);
                true
            }
            Some(Node::Client(c)) => {
                let node = &mut self.clients[*c];
                let mut out = self.sim.output(now, node.address, &mut node.events);
                let Some(payload) = node.client.handle(now, from, bytes, &mut out) else {
                    return false;
                };
                node.received
                    .push((payload.sequence, payload.data.to_vec()));
                true
            }
            None => false,
        }
    }

    /// Steps one [`FRAME`](super::fixtures::FRAME) at a time until `done`
    /// holds, at most `max_frames` times; whether it held.
    pub fn run_until(&mut self, max_frames: usize, mut done: impl FnMut(&World) -> bool) -> bool {
        for _ in 0..max_frames {
            if done(self) {
                return true;
            }
            self.step(super::fixtures::FRAME);
        }
        done(self)
    }

    /// The earliest deadline of anything in the world: a datagram due, a
    /// client's or a server's next update (of those updating), a token
    /// record done being written.
    pub fn next_event(&self) -> Option<Instant> {
        let clients = self
            .clients
            .iter()
            .filter(|n| n.updating)
            .filter_map(|n| n.client.next_deadline());
        let servers = self
            .servers
            .iter()
            .filter(|n| n.updating)
            .filter_map(|n| n.server.next_deadline());
        let writes = self
            .servers
            .iter()
            .filter_map(|n| n.store.as_ref()?.next_write_done());
        clients
            .chain(servers)
            .chain(writes)
            .chain(self.sim.next_delivery_time())
            .min()
    }

    /// Jumps to [`next_event`](Self::next_event) (never back in time) and
    /// steps there; false, doing nothing, when nothing is pending.
    pub fn advance(&mut self) -> bool {
        match self.next_event() {
            Some(at) => {
                self.step(at.saturating_duration_since(self.now));
                true
            }
            None => false,
        }
    }
}
