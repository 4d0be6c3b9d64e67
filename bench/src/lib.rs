//! Fixtures shared by the benchmarks and the allocation counts: the inputs
//! every implementation gets (keys, protocol id, addresses, payloads) and
//! in-memory drivers for netcode-proto's client and server.
//!
//! The benchmarks themselves live in `benches/netcode.rs`; run them with
//! `cargo bench -p netcode-bench`. The peers (`renetcode`, `netcode-official`)
//! are dev-dependencies, driven from `benches/peers.rs`.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use netcode_proto::Key;
use netcode_proto::client::{Client, ClientState};
use netcode_proto::constants::{CONNECT_TOKEN_BYTES, MAX_PACKET_BYTES, USER_DATA_BYTES};
use netcode_proto::io::Output;
use netcode_proto::seeded::SeededRng;
use netcode_proto::server::{HeapStorage, Server, ServerConfig};
use netcode_proto::token::{ConnectTokenParams, generate_connect_token};

/// The protocol id every implementation uses.
pub const PROTOCOL_ID: u64 = 0x1122_3344_5566_7788;

/// The private key shared by the "web backend" and the servers.
pub const PRIVATE_KEY: [u8; 32] = [
    0x60, 0x6a, 0xbe, 0x6e, 0xc9, 0x19, 0x10, 0xea, 0x9a, 0x65, 0x62, 0xf6, 0x6f, 0x2b, 0x30, 0xe4,
    0x43, 0x71, 0xd6, 0x2c, 0xd1, 0x99, 0x27, 0x26, 0x6b, 0x3c, 0x60, 0xf4, 0xb7, 0x15, 0xab, 0xa1,
];

/// A packet key, for the wire-level benchmarks.
pub const PACKET_KEY: [u8; 32] = [0x5c; 32];

/// Unix seconds "now" for token creation and expiry.
pub const UNIX_NOW: u64 = 1_800_000_000;

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

/// A 2048-byte connect token for `client_id`, valid at [`SERVER`].
pub fn token_bytes(client_id: u64, rng: &mut SeededRng) -> [u8; CONNECT_TOKEN_BYTES] {
    let key = Key::from_bytes(PRIVATE_KEY);
    let params = ConnectTokenParams {
        protocol_id: PROTOCOL_ID,
        private_key: &key,
        client_id,
        public_addresses: &[SERVER],
        internal_addresses: None,
        create_timestamp: UNIX_NOW,
        expire_seconds: EXPIRE_SECONDS as i64,
        timeout_seconds: TIMEOUT_SECONDS,
        user_data: &USER_DATA,
    };
    generate_connect_token(&params, rng)
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
    let config = ServerConfig::new(PROTOCOL_ID, Key::from_bytes(PRIVATE_KEY), SERVER);
    let mut server = Server::new(config, HeapStorage::new(slots)).expect("proportional storage");
    server
        .start(
            Duration::ZERO,
            UNIX_NOW,
            slots,
            rng,
            &mut Discard::default(),
        )
        .expect("valid slot count");
    server
}

/// The connection request a fresh client sends first for `token`.
pub fn request_bytes(token: &[u8; CONNECT_TOKEN_BYTES]) -> ([u8; MAX_PACKET_BYTES], usize) {
    let mut client = Client::new();
    let mut out = Last::default();
    client
        .connect(Duration::ZERO, token, &mut out)
        .expect("a valid token");
    client.update(Duration::ZERO, &mut out);
    assert_eq!(out.sent, 1, "one connection request");
    out.take()
}

/// Runs a complete handshake in memory, from a fresh client and its token
/// to both sides connected, at time `now` (which must be at least 101 ms past
/// the previous handshake's on this server). `client` must be disconnected.
pub fn handshake(
    server: &mut Server<HeapStorage>,
    client: &mut Client,
    address: SocketAddr,
    token: &[u8; CONNECT_TOKEN_BYTES],
    now: Duration,
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

/// A server with `n` clients connected in memory, and those clients.
pub struct Connected {
    /// The server, `n` slots, all taken.
    pub server: Server<HeapStorage>,
    /// The clients; client `i` is at [`client_address`]`(i)`.
    pub clients: Vec<Client>,
    /// The time after the last handshake.
    pub now: Duration,
}

/// Connects `n` clients to a fresh `n`-slot server.
pub fn connected(n: usize, seed: u64) -> Connected {
    let mut rng = SeededRng::new(seed);
    let mut server = server(n, &mut rng);
    let mut clients = Vec::with_capacity(n);
    let (mut to_server, mut to_client) = (Last::default(), Last::default());
    let mut now = Duration::ZERO;
    for i in 0..n {
        let token = token_bytes(i as u64 + 1, &mut rng);
        let mut client = Client::new();
        handshake(
            &mut server,
            &mut client,
            client_address(i),
            &token,
            now,
            &mut to_server,
            &mut to_client,
        );
        assert_eq!(client.state(), ClientState::Connected, "client {i}");
        clients.push(client);
        now += Duration::from_millis(101);
    }
    assert_eq!(server.num_connected_clients(), n);
    Connected {
        server,
        clients,
        now,
    }
}
