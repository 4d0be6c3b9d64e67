//! The netcode-proto fuzz targets ([`targets`]) and the pieces they share:
//! the golden vectors' keys, a forgiving input cursor, an output that keeps
//! datagrams, and a client/server session set up in memory.
//!
//! Nothing here reads the fuzz input with `unwrap`: the cursor returns zeros
//! once the input runs out. The only panics are harness assertions about
//! setup that does not depend on the input, and the invariants the targets
//! check on purpose.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::sync::OnceLock;
use std::time::Duration;

use netcode_proto::client::{Client, ClientState};
use netcode_proto::constants::{CHALLENGE_TOKEN_BYTES, MAX_PAYLOAD_BYTES};
use netcode_proto::io::Output;
use netcode_proto::packet::{
    ChallengePacket, KeepAlivePacket, Packet, PacketType, PacketTypes, ReadContext, RequestPacket,
};
use netcode_proto::seeded::SeededRng;
use netcode_proto::server::{HeapStorage, Server, ServerConfig};
use netcode_proto::token::{ConnectTokenParams, generate_connect_token};
use netcode_proto::{ConnectToken, Key, read_packet, write_packet};

pub mod targets;

/// The protocol id of every golden vector (`vectors/data/manifest.json`).
pub const PROTOCOL_ID: u64 = 0x1122_3344_5566_7788;

/// `byte[i] = (mul * i + add) mod 256`: how the manifest's named keys are made.
const fn pattern_key(mul: usize, add: usize) -> [u8; 32] {
    let mut key = [0u8; 32];
    let mut i = 0;
    while i < 32 {
        key[i] = ((mul * i + add) % 256) as u8;
        i += 1;
    }
    key
}

/// The vectors' `private_key`: seals every private connect token.
pub const PRIVATE_KEY: [u8; 32] = pattern_key(11, 3);
/// The vectors' `packet_key`: encrypts every packet of types 1 to 6.
pub const PACKET_KEY: [u8; 32] = pattern_key(7, 1);
/// The vectors' `challenge_key`: seals every challenge token.
pub const CHALLENGE_KEY: [u8; 32] = pattern_key(13, 5);

/// Reads the fuzz input front to back; past its end every read gives zeros.
#[derive(Debug, Clone, Copy)]
pub struct Cursor<'a> {
    data: &'a [u8],
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Self { data }
    }

    /// Whether the input is used up.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Up to `n` bytes (fewer at the end of the input).
    pub fn take(&mut self, n: usize) -> &'a [u8] {
        let (head, tail) = self.data.split_at(n.min(self.data.len()));
        self.data = tail;
        head
    }

    /// The next `N` bytes, zero padded at the end of the input.
    pub fn array<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        let bytes = self.take(N);
        out[..bytes.len()].copy_from_slice(bytes);
        out
    }

    /// A byte.
    pub fn u8(&mut self) -> u8 {
        self.array::<1>()[0]
    }

    /// A little-endian `u16`.
    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.array())
    }

    /// A little-endian `u32`.
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.array())
    }

    /// A little-endian `u64`.
    pub fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.array())
    }
}

/// An [`Output`] that keeps every datagram (destination and bytes) and
/// counts events.
#[derive(Debug, Default)]
pub struct Mailbox {
    /// Datagrams in the order they were sent.
    pub datagrams: Vec<(SocketAddr, Vec<u8>)>,
    /// Events reported.
    pub events: usize,
}

impl<E> Output<E> for Mailbox {
    fn send(&mut self, to: SocketAddr, datagram: &[u8]) {
        self.datagrams.push((to, datagram.to_vec()));
    }

    fn event(&mut self, _event: E) {
        self.events += 1;
    }
}

/// The address the session's server listens on.
pub const SERVER_ADDRESS: SocketAddr =
    SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 1), 40000));

/// The address of the session's real client.
pub const CLIENT_ADDRESS: SocketAddr =
    SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 1), 50000));

/// The addresses fuzzed datagrams come from, on the server side: the real
/// client first, then its port + 1, another host, an IPv6 host.
pub const PEERS: [SocketAddr; 4] = [
    CLIENT_ADDRESS,
    SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 1), 50001)),
    SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 2), 50000)),
    SocketAddr::V6(SocketAddrV6::new(Ipv6Addr::LOCALHOST, 50000, 0, 0)),
];

/// The addresses fuzzed datagrams come from, on the client side: the server
/// first, then its port + 1, another host, and the server's address written
/// as an IPv4-mapped IPv6 address.
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
pub const MAX_CLIENTS: usize = 4;

/// How many connect tokens the session issues (client ids 1 to 5): one more
/// than the server has slots, so a fuzzer can fill the server and be denied.
pub const NUM_TOKENS: usize = 5;

/// Unix time when the session's server starts.
pub const UNIX_START: u64 = 1_800_000_000;

/// One frame of the in-memory handshake.
pub const FRAME: Duration = Duration::from_millis(50);

/// The wall clock that goes with monotonic time `now` of the session.
pub fn unix_at(now: Duration) -> u64 {
    UNIX_START.saturating_add(now.as_secs())
}

/// The session's connect tokens, made once: client ids 1 to 5, all for
/// [`SERVER_ADDRESS`], 120 s lifetime, 5 s timeout. Token 0 is the real
/// client's.
pub fn tokens() -> &'static [ConnectToken; NUM_TOKENS] {
    static TOKENS: OnceLock<[ConnectToken; NUM_TOKENS]> = OnceLock::new();
    TOKENS.get_or_init(|| {
        let private_key = Key::from_bytes(PRIVATE_KEY);
        let mut rng = SeededRng::new(2);
        std::array::from_fn(|i| {
            let mut user_data = [0u8; 256];
            user_data[0] = i as u8;
            let params = ConnectTokenParams {
                protocol_id: PROTOCOL_ID,
                private_key: &private_key,
                client_id: i as u64 + 1,
                public_addresses: &[SERVER_ADDRESS],
                internal_addresses: None,
                create_timestamp: UNIX_START,
                expire_seconds: 120,
                timeout_seconds: 5,
                user_data: &user_data,
            };
            generate_connect_token(&params, &mut rng).expect("harness: token parameters are valid")
        })
    })
}

/// A client snapshot taken during the handshake, and the time it was taken.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The client's state.
    pub state: ClientState,
    /// The client.
    pub client: Client,
    /// The session time of the snapshot.
    pub now: Duration,
}

/// A server with the real client connected to it, both in memory.
#[derive(Debug)]
pub struct Session {
    /// The server: 4 slots, slot 0 taken by the real client.
    pub server: Server<HeapStorage>,
    /// The real client, connected, at [`CLIENT_ADDRESS`].
    pub client: Client,
    /// The session time at the end of the handshake.
    pub now: Duration,
    /// The client as it was on entering each state of the handshake:
    /// sending requests, sending responses, connected.
    pub snapshots: Vec<Snapshot>,
}

impl Session {
    /// Starts a server (seeded, so every session is identical) and connects
    /// the real client by passing datagrams between them by hand.
    pub fn connect() -> Self {
        let mut server = Server::new(
            ServerConfig::new(PROTOCOL_ID, Key::from_bytes(PRIVATE_KEY), SERVER_ADDRESS),
            HeapStorage::new(MAX_CLIENTS),
        )
        .expect("harness: storage for 4 slots");
        let mut rng = SeededRng::new(1);
        let mut to_server = Mailbox::default();
        let mut to_client = Mailbox::default();
        server
            .start(
                Duration::ZERO,
                UNIX_START,
                MAX_CLIENTS,
                &mut rng,
                &mut to_client,
            )
            .expect("harness: server starts");
        let token = tokens()[0].write().expect("harness: token has an address");
        let mut client = Client::new();
        client
            .connect(Duration::ZERO, &token, &mut to_server)
            .expect("harness: token reads");

        let mut now = Duration::ZERO;
        let mut snapshots: Vec<Snapshot> = Vec::new();
        for _ in 0..100 {
            if snapshots.last().map(|s| s.state) != Some(client.state()) {
                snapshots.push(Snapshot {
                    state: client.state(),
                    client: client.clone(),
                    now,
                });
            }
            if client.state() == ClientState::Connected {
                break;
            }
            now += FRAME;
            client.update(now, &mut to_server);
            for (_, mut datagram) in std::mem::take(&mut to_server.datagrams) {
                let _ = server.handle(now, CLIENT_ADDRESS, &mut datagram, &mut to_client);
            }
            server.update(now, unix_at(now), &mut to_client);
            for (to, mut datagram) in std::mem::take(&mut to_client.datagrams) {
                if to == CLIENT_ADDRESS {
                    let _ = client.handle(now, SERVER_ADDRESS, &mut datagram, &mut to_server);
                }
            }
        }
        assert_eq!(
            client.state(),
            ClientState::Connected,
            "harness: the client did not connect"
        );
        assert_eq!(server.num_connected_clients(), 1, "harness: one client");
        Self {
            server,
            client,
            now,
            snapshots,
        }
    }
}

/// Builds an encrypted packet of any type from the input, as a peer holding
/// `key` would send it, and returns its bytes.
///
/// Reads: the type (byte mod 7), the sequence (a flag byte: odd means an
/// explicit `u64` follows, even means `*next_sequence`, which then
/// advances), then the body the type needs: a request carries `token`'s
/// sealed private data; a challenge or response carries `challenge` when it
/// is given and the flag byte's bit 1 is set, else 8 + 300 bytes of input; a
/// keep-alive two `u32`s; a payload a `u16` length (1 to 1200) and as many
/// bytes as the input still has.
pub fn sealed_packet(
    input: &mut Cursor<'_>,
    key: &Key,
    token: &ConnectToken,
    challenge: Option<&(u64, [u8; CHALLENGE_TOKEN_BYTES])>,
    next_sequence: &mut u64,
) -> Vec<u8> {
    let packet_type = PacketType::ALL[usize::from(input.u8()) % PacketType::COUNT];
    let flags = input.u8();
    let sequence = if flags & 1 == 1 {
        input.u64()
    } else {
        let sequence = *next_sequence;
        *next_sequence = next_sequence.wrapping_add(1);
        sequence
    };
    let challenge = match packet_type {
        PacketType::Challenge | PacketType::Response => match challenge {
            Some(c) if flags & 2 == 2 => *c,
            _ => (input.u64(), input.array::<CHALLENGE_TOKEN_BYTES>()),
        },
        _ => (0, [0; CHALLENGE_TOKEN_BYTES]),
    };
    let challenge = ChallengePacket {
        challenge_sequence: challenge.0,
        token: &challenge.1,
    };
    let packet = match packet_type {
        PacketType::Request => Packet::Request(RequestPacket {
            expire_timestamp: token.expire_timestamp,
            nonce: &token.nonce,
            private_data: &token.private_data,
        }),
        PacketType::Denied => Packet::Denied,
        PacketType::Challenge => Packet::Challenge(challenge),
        PacketType::Response => Packet::Response(challenge),
        PacketType::KeepAlive => Packet::KeepAlive(KeepAlivePacket {
            client_index: input.u32(),
            max_clients: input.u32(),
        }),
        PacketType::Payload => {
            let len = 1 + usize::from(input.u16()) % MAX_PAYLOAD_BYTES;
            Packet::Payload(input.take(len))
        }
        PacketType::Disconnect => Packet::Disconnect,
    };
    let mut out = [0u8; 1300];
    match write_packet(&packet, sequence, key, PROTOCOL_ID, &mut out) {
        Ok(n) => out[..n].to_vec(),
        // Only a payload cut short by the end of the input: send nothing.
        Err(_) => Vec::new(),
    }
}

/// The challenge inside `datagram` if it is a challenge packet sealed with
/// one of the session tokens' server-to-client keys.
pub fn open_challenge(datagram: &[u8]) -> Option<(u64, [u8; CHALLENGE_TOKEN_BYTES])> {
    if datagram.first().map(|p| p & 0x0f) != Some(PacketType::Challenge as u8) {
        return None;
    }
    tokens().iter().find_map(|token| {
        let context = ReadContext {
            protocol_id: PROTOCOL_ID,
            current_timestamp: 0,
            min_expire_timestamp: 0,
            private_key: None,
            read_key: Some(&token.server_to_client_key),
            accepted: PacketTypes::CLIENT,
        };
        let mut copy = datagram.to_vec();
        match read_packet(&context, &mut copy, None) {
            Ok(read) => match read.packet {
                Packet::Challenge(c) => Some((c.challenge_sequence, *c.token)),
                _ => None,
            },
            Err(_) => None,
        }
    })
}
