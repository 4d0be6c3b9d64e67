//! The inputs every implementation gets, and the in-memory plumbing the
//! timed loops use: the reference tests' key and protocol id (from
//! `netcode_proto::sim::fixtures`), addresses, payloads and token
//! parameters; connected servers and clients set up on
//! `netcode_proto::sim::World`; the one in-memory handshake.
//!
//! Setup runs on the world; the timed loops do not: the world's network
//! copies every datagram into a `Vec` of its own and records every payload
//! received, which would add an allocation and a copy per packet to what is
//! measured (and make the allocation counts of the footprint tests
//! meaningless). So the timed loops hand each datagram straight from one
//! side's [`Output`] to the other's `handle` ([`Last`], [`Discard`],
//! [`handshake`]).

use netcode_proto::Instant;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use netcode_proto::Key;
use netcode_proto::client::{Client, ClientState};
use netcode_proto::constants::{CONNECT_TOKEN_BYTES, MAX_PACKET_BYTES, USER_DATA_BYTES};
use netcode_proto::io::Output;
use netcode_proto::seeded::SeededRng;
use netcode_proto::server::{HeapStorage, Server};
use netcode_proto::sim::World;
use netcode_proto::sim::fixtures::{UNIX_START, perfect};
use netcode_proto::token::{ConnectTokenParams, generate_connect_token};

/// The protocol id every implementation uses, and the private key shared
/// by the "web backend" and the servers: the reference tests' own.
pub use netcode_proto::sim::fixtures::{PRIVATE_KEY, PROTOCOL_ID};

/// A packet key, for the wire-level benchmarks.
pub const PACKET_KEY: [u8; 32] = [0x5c; 32];

/// The payload sizes of the packet cases, in bytes.
pub const PAYLOAD_SIZES: [usize; 2] = [100, 1200];

/// One server tick: 60 Hz.
pub const TICK: Duration = Duration::from_micros(16_667);

/// Unix seconds "now" for token creation and expiry: where a world's
/// clock starts.
pub const UNIX_NOW: u64 = UNIX_START;
/// The unix second the benches' servers start in: the one before
/// [`UNIX_NOW`], since the restart rule refuses tokens made in a server's
/// start second.
pub const UNIX_STARTED: u64 = UNIX_NOW - 1;

/// Token lifetime and connection timeout, in seconds.
pub const EXPIRE_SECONDS: u64 = 30;
/// Connection timeout in seconds.
pub const TIMEOUT_SECONDS: i32 = 10;

/// The server's address.
pub const SERVER: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1)), 40000);

/// The user data in every token.
pub const USER_DATA: [u8; USER_DATA_BYTES] = [0x17; USER_DATA_BYTES];

/// A distinct loopback address for client `i` (nothing is ever sent: the
/// benchmarks run in memory).
pub fn client_address(i: usize) -> SocketAddr {
    let ip = Ipv4Addr::new(127, (i >> 16) as u8, (i >> 8) as u8, i as u8);
    SocketAddr::new(IpAddr::V4(ip), 50000)
}

/// A payload of `len` bytes, the same pattern for every implementation.
pub fn payload(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + 3) as u8).collect()
}

/// The token parameters every implementation gets, for `client_id`, sealed
/// with `key`: [`SERVER`] alone, made at [`UNIX_NOW`], [`EXPIRE_SECONDS`],
/// [`TIMEOUT_SECONDS`], [`USER_DATA`].
pub fn token_params(key: &Key, client_id: u64) -> ConnectTokenParams<'_> {
    ConnectTokenParams {
        protocol_id: PROTOCOL_ID,
        private_key: key,
        client_id,
        public_addresses: &[SERVER],
        internal_addresses: None,
        create_timestamp: UNIX_NOW,
        expire_seconds: EXPIRE_SECONDS as i64,
        timeout_seconds: TIMEOUT_SECONDS,
        user_data: &USER_DATA,
    }
}

/// A 2048-byte connect token for `client_id`, valid at [`SERVER`].
pub fn token_bytes(client_id: u64, rng: &mut SeededRng) -> [u8; CONNECT_TOKEN_BYTES] {
    let key = Key::from_bytes(PRIVATE_KEY);
    generate_connect_token(&token_params(&key, client_id), rng)
        .and_then(|t| t.write())
        .expect("valid token parameters")
}

/// An [`Output`] that keeps only the last datagram and counts everything:
/// preallocated, so it costs nothing but a copy.
pub struct Last {
    /// Where the last datagram went.
    pub to: SocketAddr,
    /// Its bytes (the first `len`).
    pub bytes: [u8; MAX_PACKET_BYTES],
    /// Its length.
    pub len: usize,
    /// Datagrams sent so far.
    pub sent: usize,
    /// Events reported so far.
    pub events: usize,
}

impl Default for Last {
    fn default() -> Self {
        Self {
            to: SERVER,
            bytes: [0; MAX_PACKET_BYTES],
            len: 0,
            sent: 0,
            events: 0,
        }
    }
}

impl Last {
    /// The last datagram, copied out (so it can be handed back in place).
    pub fn take(&self) -> ([u8; MAX_PACKET_BYTES], usize) {
        (self.bytes, self.len)
    }
}

impl<E> Output<E> for Last {
    fn send(&mut self, to: SocketAddr, datagram: &[u8]) {
        self.to = to;
        self.bytes[..datagram.len()].copy_from_slice(datagram);
        self.len = datagram.len();
        self.sent += 1;
    }

    fn event(&mut self, _event: E) {
        self.events += 1;
    }
}

/// An [`Output`] that drops datagrams and events and only counts them.
#[derive(Default)]
pub struct Discard {
    /// Datagrams sent so far.
    pub sent: usize,
    /// Events reported so far.
    pub events: usize,
}

impl<E> Output<E> for Discard {
    fn send(&mut self, _to: SocketAddr, datagram: &[u8]) {
        std::hint::black_box(datagram);
        self.sent += 1;
    }

    fn event(&mut self, _event: E) {
        self.events += 1;
    }
}

/// A netcode-proto server on the heap, started with `slots` slots.
pub fn server(slots: usize, rng: &mut SeededRng) -> Server<HeapStorage> {
    let config = World::server_config(SERVER);
    let mut server = Server::new(config, HeapStorage::new(slots)).expect("proportional storage");
    restart(&mut server, slots, rng);
    server
}

/// Restarts `server` with `slots` open: empty tables, a new challenge key,
/// nothing sent (what the batched benches do between batches).
pub fn restart(server: &mut Server<HeapStorage>, slots: usize, rng: &mut SeededRng) {
    server
        .start(
            Instant::ZERO,
            UNIX_STARTED,
            slots,
            rng,
            &mut Discard::default(),
        )
        .expect("valid slot count");
}

/// The connection request a fresh client sends first for `token`.
pub fn request_bytes(token: &[u8; CONNECT_TOKEN_BYTES]) -> ([u8; MAX_PACKET_BYTES], usize) {
    let mut client = Client::new();
    let mut out = Last::default();
    client
        .connect(Instant::ZERO, token, &mut out)
        .expect("a valid token");
    client.update(Instant::ZERO, &mut out);
    assert_eq!(out.sent, 1, "one connection request");
    out.take()
}

/// Runs a complete handshake in memory, from a fresh client and its token
/// to both sides connected, at time `now` (which must be at least 101 ms past
/// the previous handshake's on this server). `client` must be disconnected.
///
/// The timed handshake and its allocation count: each datagram goes straight
/// from one side's [`Last`] to the other side, with nothing allocated on the
/// way (the world would copy each into a `Vec`). Setup uses [`connected`].
pub fn handshake(
    server: &mut Server<HeapStorage>,
    client: &mut Client,
    address: SocketAddr,
    token: &[u8; CONNECT_TOKEN_BYTES],
    now: Instant,
    to_server: &mut Last,
    to_client: &mut Last,
) {
    let later = now + Duration::from_millis(101);
    let _ = client.connect(now, token, to_server);
    client.update(now, to_server);
    let (mut request, n) = to_server.take();
    server.handle(now, address, &mut request[..n], to_client);
    let (mut challenge, n) = to_client.take();
    client.handle(now, SERVER, &mut challenge[..n], to_server);
    client.update(later, to_server);
    let (mut response, n) = to_server.take();
    server.handle(later, address, &mut response[..n], to_client);
    let (mut keep_alive, n) = to_client.take();
    client.handle(later, SERVER, &mut keep_alive[..n], to_server);
    debug_assert_eq!(client.state(), ClientState::Connected);
}

/// A server with `n` clients connected, and those clients, taken out of the
/// world that connected them.
pub struct Connected {
    /// The server, `n` slots, all taken.
    pub server: Server<HeapStorage>,
    /// The clients; client `i` is at [`client_address`]`(i)`.
    pub clients: Vec<Client>,
    /// The world's monotonic time once every client was connected.
    pub now: Instant,
    /// The world's unix time then.
    pub unix: u64,
}

/// Connects `n` clients to a fresh `n`-slot server at [`SERVER`], on a
/// perfect simulated network (`netcode_proto::sim::World`, seeded by `seed`).
pub fn connected(n: usize, seed: u64) -> Connected {
    let mut world = World::with_storage(perfect(), seed, HeapStorage::new(n), n, SERVER);
    for i in 0..n {
        let c = world.add_client(&client_address(i).to_string());
        let token = world.token_for(
            i as u64 + 1,
            &[SERVER],
            EXPIRE_SECONDS as i64,
            TIMEOUT_SECONDS,
        );
        world.connect(c, &token);
    }
    let all = |w: &World| (0..n).all(|c| w.state(c) == ClientState::Connected);
    assert!(world.run_until(100, all), "every client connected");
    let node = world.servers.swap_remove(0);
    assert_eq!(node.server.num_connected_clients(), n);
    Connected {
        server: node.server,
        clients: world.clients.into_iter().map(|c| c.client).collect(),
        now: world.now,
        unix: world.unix,
    }
}

/// Fills `bytes` from `rng`.
pub fn rand_fill(rng: &mut SeededRng, bytes: &mut [u8]) {
    netcode_proto::rand_core::Rng::fill_bytes(rng, bytes);
}

/// A request-sized datagram of random bytes behind a request prefix (its
/// first byte 0): what every server must drop cheaply.
pub fn garbage_request() -> Vec<u8> {
    let mut rng = SeededRng::new(5);
    let mut garbage = vec![0u8; netcode_proto::constants::CONNECTION_REQUEST_BYTES];
    rand_fill(&mut rng, &mut garbage);
    garbage[0] = 0;
    garbage
}

/// One datagram per client in a server tick: room for a 100-byte payload
/// packet, and its length.
pub type TickDatagram = ([u8; 160], usize);

/// Every client sends `data` at `now` (the encryption is not what a tick
/// measures); client `i`'s datagram lands in `datagrams[i]`.
pub fn send_from_each(
    clients: &mut [Client],
    now: Instant,
    data: &[u8],
    datagrams: &mut [TickDatagram],
) {
    for (client, (bytes, len)) in clients.iter_mut().zip(datagrams) {
        let mut sent = Last::default();
        let _ = client.send_payload(now, data, &mut sent);
        bytes[..sent.len].copy_from_slice(&sent.bytes[..sent.len]);
        *len = sent.len;
    }
}
