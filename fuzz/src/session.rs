//! The session the `server_connected` and `client` targets start from, set
//! up once per process on the core's scenario world
//! ([`netcode_proto::sim::World`], with its fixtures' key and protocol id):
//! a server with small tables and one real client connected to it, the
//! client as it was in each state of its handshake, and the connect tokens
//! the targets send. Only setup runs here: each input restores a copy.
//!
//! The tables are small on purpose: 4 slots, one mapping more than slots
//! and a token history of 6 entries for 8 tokens, so that a handful of
//! requests fills the mappings or the history.

use netcode_proto::Instant;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::sync::OnceLock;

use netcode_proto::ConnectToken;
use netcode_proto::client::{Client, ClientState};
use netcode_proto::constants::{CONNECT_TOKEN_BYTES, CONNECT_TOKEN_PRIVATE_BYTES, MAC_BYTES};
use netcode_proto::server::{HeapStorage, Server, UsedToken};
use netcode_proto::sim::World;
use netcode_proto::sim::fixtures::perfect;

/// The address the session's server listens on.
pub const SERVER_ADDRESS: SocketAddr =
    SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 1), 40000));

/// The address of the session's real client.
pub const CLIENT_ADDRESS: SocketAddr =
    SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 1), 50000));

/// A link-local IPv6 address, given with and without a scope id below
/// (netcode compares addresses without it).
const LINK_LOCAL: Ipv6Addr = Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 1);

/// The addresses datagrams reach the server from: the real client first,
/// then its port + 1, another host, an IPv6 host, the client's address
/// IPv4-mapped, port 0, and one link-local host with two scope ids and
/// none.
pub const PEERS: [SocketAddr; 8] = [
    CLIENT_ADDRESS,
    SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 1), 50001)),
    SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 2), 50000)),
    SocketAddr::V6(SocketAddrV6::new(Ipv6Addr::LOCALHOST, 50000, 0, 0)),
    SocketAddr::V6(SocketAddrV6::new(
        Ipv4Addr::new(127, 0, 0, 1).to_ipv6_mapped(),
        50000,
        0,
        0,
    )),
    SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 1), 0)),
    SocketAddr::V6(SocketAddrV6::new(LINK_LOCAL, 50000, 0, 3)),
    SocketAddr::V6(SocketAddrV6::new(LINK_LOCAL, 50000, 7, 0)),
];

/// The addresses datagrams reach the client from: the server first, then
/// its port + 1, another host, and the server's address IPv4-mapped.
pub const SERVER_LOOKALIKES: [SocketAddr; 4] = [
    SERVER_ADDRESS,
    SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 1), 40001)),
    SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 3), 40000)),
    SocketAddr::V6(SocketAddrV6::new(
        Ipv4Addr::new(127, 0, 0, 1).to_ipv6_mapped(),
        40000,
        0,
        0,
    )),
];

/// Slots of the session's server.
pub const SLOTS: usize = 4;
/// Its encryption mappings: one per slot and one more.
pub const MAPPINGS: usize = SLOTS + 1;
/// Its connect token history entries: fewer than [`NUM_TOKENS`].
pub const HISTORY: usize = 6;

/// How many connect tokens the session issues.
pub const NUM_TOKENS: usize = 8;

/// Client id, lifetime (s) and timeout (s) of each token, all for
/// [`SERVER_ADDRESS`]. Token 0 is the real client's. The last repeats
/// client id 1; the others try a short timeout, a zero one (a handshake
/// that lapses at once) and a negative one (no timeout), and a longer
/// lifetime.
const TOKEN_PARAMS: [(u64, i64, i32); NUM_TOKENS] = [
    (1, 30, 5),
    (2, 30, 5),
    (3, 30, 5),
    (4, 60, 5),
    (5, 30, 1),
    (6, 30, 0),
    (7, 30, -1),
    (1, 30, 5),
];

/// One connect token of the session.
#[derive(Debug)]
pub struct SessionToken {
    /// The client id sealed in it.
    pub client_id: u64,
    /// Its bytes, as a client is given them.
    pub bytes: [u8; CONNECT_TOKEN_BYTES],
    /// What they hold (the keys, the sealed private part, ...).
    pub token: ConnectToken,
}

/// The client as it was on entering one state of the handshake.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The client.
    pub client: Client,
    /// The world's time then.
    pub now: Instant,
}

/// The session, built once.
#[derive(Debug)]
pub struct Session {
    /// The server: [`SLOTS`] slots open, slot 0 taken by the real client at
    /// [`CLIENT_ADDRESS`] (token 0).
    pub server: Server<HeapStorage>,
    /// Monotonic time at the end of the handshake.
    pub now: Instant,
    /// Unix time then.
    pub unix: u64,
    /// The real client on entering each state of its handshake: sending
    /// requests, sending responses, connected.
    pub clients: Vec<Snapshot>,
    /// The tokens; token 0 is the real client's.
    pub tokens: Vec<SessionToken>,
    /// Used tokens a restarted server may restore: token 1's, as if used
    /// from `PEERS[1]`, then [`HISTORY`] made-up ones that never expire
    /// (all of them together are more than the history holds).
    pub restorable: Vec<UsedToken>,
}

/// The session, built on first use.
pub fn session() -> &'static Session {
    static SESSION: OnceLock<Session> = OnceLock::new();
    SESSION.get_or_init(connect)
}

/// The private token's tag, which identifies a used token.
fn mac_of(token: &ConnectToken) -> [u8; MAC_BYTES] {
    let mut mac = [0u8; MAC_BYTES];
    mac.copy_from_slice(&token.private_data[CONNECT_TOKEN_PRIVATE_BYTES - MAC_BYTES..]);
    mac
}

/// Starts the world's server and connects the real client, recording it
/// in each state on the way.
fn connect() -> Session {
    let storage = HeapStorage::with_tables(SLOTS, MAPPINGS, HISTORY);
    let mut world = World::with_storage(perfect(), 1, storage, SLOTS, SERVER_ADDRESS);
    let tokens: Vec<SessionToken> = TOKEN_PARAMS
        .iter()
        .map(|&(client_id, expire, timeout)| {
            let bytes = world.token_for(client_id, &[SERVER_ADDRESS], expire, timeout);
            let token = ConnectToken::read(&bytes).expect("harness: a world token reads");
            SessionToken {
                client_id,
                bytes,
                token,
            }
        })
        .collect();
    let c = world.add_client(&CLIENT_ADDRESS.to_string());
    world.connect(c, &tokens[0].bytes);
    let mut clients: Vec<Snapshot> = Vec::new();
    let mut last_state = None;
    let connected = world.run_until(100, |w| {
        let client = &w.clients[c].client;
        if last_state != Some(client.state()) {
            last_state = Some(client.state());
            clients.push(Snapshot {
                client: client.clone(),
                now: w.now,
            });
        }
        client.state() == ClientState::Connected
    });
    assert!(connected, "harness: the client did not connect");
    assert_eq!(clients.len(), 3, "harness: three handshake states");
    let server = world.servers.swap_remove(0).server;
    assert_eq!(server.client_address(0), Some(CLIENT_ADDRESS));
    assert_eq!(server.num_connected_clients(), 1);

    let mut restorable = vec![UsedToken {
        mac: mac_of(&tokens[1].token),
        address: PEERS[1],
        expire_timestamp: tokens[1].token.expire_timestamp,
    }];
    restorable.extend((0..HISTORY as u8).map(|i| UsedToken {
        mac: [i; MAC_BYTES],
        address: PEERS[usize::from(i) % PEERS.len()],
        expire_timestamp: u64::MAX,
    }));
    Session {
        server,
        now: world.now,
        unix: world.unix,
        clients,
        tokens,
        restorable,
    }
}
