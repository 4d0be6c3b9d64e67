//! Strategies, fixtures and a small model of the packet reader's check order,
//! shared by the integration tests. Each module uses a different subset.
#![allow(dead_code)]

use core::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

use netcode_proto::address::AddressList;
use netcode_proto::constants::{
    CHALLENGE_TOKEN_BYTES, CONNECT_TOKEN_NONCE_BYTES, CONNECT_TOKEN_PRIVATE_BYTES,
    CONNECTION_REQUEST_BYTES, MAC_BYTES, MAX_PAYLOAD_BYTES, MAX_SERVERS_PER_CONNECT,
    MIN_ENCRYPTED_PACKET_BYTES, USER_DATA_BYTES, VERSION_INFO,
};
use netcode_proto::packet::{
    ChallengePacket, ConnectionRequest, KeepAlivePacket, PacketTypes, ReadContext, RequestPacket,
};
use netcode_proto::{
    ConnectToken, Key, Packet, PacketError, PacketType, PrivateConnectToken, ReplayProtection,
    write_packet,
};
use proptest::prelude::*;

// ---------------------------------------------------------------------------
// Strategies.
// ---------------------------------------------------------------------------

pub(crate) fn byte_array<const N: usize>() -> impl Strategy<Value = [u8; N]> {
    prop::collection::vec(any::<u8>(), N).prop_map(|v| <[u8; N]>::try_from(v).unwrap())
}

pub(crate) fn key() -> impl Strategy<Value = Key> {
    any::<[u8; 32]>().prop_map(Key::from_bytes)
}

pub(crate) fn nonce() -> impl Strategy<Value = [u8; CONNECT_TOKEN_NONCE_BYTES]> {
    any::<[u8; CONNECT_TOKEN_NONCE_BYTES]>()
}

pub(crate) fn user_data() -> impl Strategy<Value = [u8; USER_DATA_BYTES]> {
    byte_array::<USER_DATA_BYTES>()
}

/// An IPv4 address, any IP and port.
pub(crate) fn ipv4() -> impl Strategy<Value = SocketAddr> {
    (any::<[u8; 4]>(), any::<u16>())
        .prop_map(|(ip, port)| SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::from(ip), port)))
}

/// An IPv6 address with flow info and scope id zero (what the wire carries).
pub(crate) fn ipv6() -> impl Strategy<Value = SocketAddr> {
    (any::<[u16; 8]>(), any::<u16>()).prop_map(|(groups, port)| {
        SocketAddr::V6(SocketAddrV6::new(Ipv6Addr::from(groups), port, 0, 0))
    })
}

/// An IPv6 address with arbitrary flow info and scope id, which the wire
/// does not carry.
pub(crate) fn ipv6_with_flow_and_scope() -> impl Strategy<Value = SocketAddr> {
    (any::<[u16; 8]>(), any::<u16>(), any::<u32>(), any::<u32>()).prop_map(
        |(groups, port, flow, scope)| {
            SocketAddr::V6(SocketAddrV6::new(Ipv6Addr::from(groups), port, flow, scope))
        },
    )
}

/// Any address the wire can carry exactly.
pub(crate) fn address() -> impl Strategy<Value = SocketAddr> {
    prop_oneof![ipv4(), ipv6()]
}

/// The address with what the wire does not carry zeroed.
pub(crate) fn on_the_wire(address: SocketAddr) -> SocketAddr {
    match address {
        SocketAddr::V4(v4) => SocketAddr::V4(v4),
        SocketAddr::V6(v6) => SocketAddr::V6(SocketAddrV6::new(*v6.ip(), v6.port(), 0, 0)),
    }
}

pub(crate) fn addresses() -> impl Strategy<Value = Vec<SocketAddr>> {
    prop::collection::vec(address(), 1..=MAX_SERVERS_PER_CONNECT)
}

pub(crate) fn address_list() -> impl Strategy<Value = AddressList> {
    addresses().prop_map(|v| AddressList::from_slice(&v).unwrap())
}

pub(crate) fn private_token() -> impl Strategy<Value = PrivateConnectToken> {
    (
        any::<u64>(),
        any::<i32>(),
        address_list(),
        key(),
        key(),
        user_data(),
    )
        .prop_map(
            |(
                client_id,
                timeout_seconds,
                server_addresses,
                client_to_server_key,
                server_to_client_key,
                user_data,
            )| PrivateConnectToken {
                client_id,
                timeout_seconds,
                server_addresses,
                client_to_server_key,
                server_to_client_key,
                user_data,
            },
        )
}

/// `(create, expire)` with `create <= expire`.
pub(crate) fn create_and_expire() -> impl Strategy<Value = (u64, u64)> {
    any::<u64>().prop_flat_map(|create| (Just(create), create..=u64::MAX))
}

/// A public connect token whose private data is arbitrary bytes (the public
/// token's reader never opens it).
pub(crate) fn connect_token() -> impl Strategy<Value = ConnectToken> {
    (
        any::<u64>(),
        create_and_expire(),
        nonce(),
        byte_array::<CONNECT_TOKEN_PRIVATE_BYTES>(),
        any::<i32>(),
        address_list(),
        key(),
        key(),
    )
        .prop_map(
            |(
                protocol_id,
                (create_timestamp, expire_timestamp),
                nonce,
                private_data,
                timeout_seconds,
                server_addresses,
                client_to_server_key,
                server_to_client_key,
            )| ConnectToken {
                protocol_id,
                create_timestamp,
                expire_timestamp,
                nonce,
                private_data,
                timeout_seconds,
                server_addresses,
                client_to_server_key,
                server_to_client_key,
            },
        )
}

/// An owned description of an encrypted packet (every type but the request).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Encrypted {
    Denied,
    Challenge(u64, Box<[u8; CHALLENGE_TOKEN_BYTES]>),
    Response(u64, Box<[u8; CHALLENGE_TOKEN_BYTES]>),
    KeepAlive(KeepAlivePacket),
    Payload(Vec<u8>),
    Disconnect,
}

impl Encrypted {
    /// The packet to hand to `write_packet`.
    pub(crate) fn packet(&self) -> Packet<'_> {
        match self {
            Self::Denied => Packet::Denied,
            Self::Challenge(s, t) => Packet::Challenge(ChallengePacket {
                challenge_sequence: *s,
                token: t,
            }),
            Self::Response(s, t) => Packet::Response(ChallengePacket {
                challenge_sequence: *s,
                token: t,
            }),
            Self::KeepAlive(k) => Packet::KeepAlive(*k),
            Self::Payload(p) => Packet::Payload(p),
            Self::Disconnect => Packet::Disconnect,
        }
    }

    /// The packet `read_packet` must give back.
    pub(crate) fn expected(&self) -> Packet<'_, ConnectionRequest> {
        match self {
            Self::Denied => Packet::Denied,
            Self::Challenge(s, t) => Packet::Challenge(ChallengePacket {
                challenge_sequence: *s,
                token: t,
            }),
            Self::Response(s, t) => Packet::Response(ChallengePacket {
                challenge_sequence: *s,
                token: t,
            }),
            Self::KeepAlive(k) => Packet::KeepAlive(*k),
            Self::Payload(p) => Packet::Payload(p),
            Self::Disconnect => Packet::Disconnect,
        }
    }

    pub(crate) fn packet_type(&self) -> PacketType {
        self.packet().packet_type()
    }

    /// Size of the plaintext body.
    pub(crate) fn body_len(&self) -> usize {
        match self {
            Self::Denied | Self::Disconnect => 0,
            Self::Challenge(..) | Self::Response(..) => 8 + CHALLENGE_TOKEN_BYTES,
            Self::KeepAlive(_) => 8,
            Self::Payload(p) => p.len(),
        }
    }
}

fn challenge_token_bytes() -> impl Strategy<Value = Box<[u8; CHALLENGE_TOKEN_BYTES]>> {
    byte_array::<CHALLENGE_TOKEN_BYTES>().prop_map(Box::new)
}

pub(crate) fn payload() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 1..=MAX_PAYLOAD_BYTES)
}

pub(crate) fn encrypted_packet() -> impl Strategy<Value = Encrypted> {
    prop_oneof![
        Just(Encrypted::Denied),
        (any::<u64>(), challenge_token_bytes()).prop_map(|(s, t)| Encrypted::Challenge(s, t)),
        (any::<u64>(), challenge_token_bytes()).prop_map(|(s, t)| Encrypted::Response(s, t)),
        (any::<u32>(), any::<u32>()).prop_map(|(client_index, max_clients)| {
            Encrypted::KeepAlive(KeepAlivePacket {
                client_index,
                max_clients,
            })
        }),
        payload().prop_map(Encrypted::Payload),
        Just(Encrypted::Disconnect),
    ]
}

/// Sequences spread over every byte count (1 to 8 bytes on the wire).
pub(crate) fn sequence() -> impl Strategy<Value = u64> {
    prop_oneof![
        any::<u64>(),
        (0u32..64, any::<u64>()).prop_map(|(bits, v)| v >> bits),
        Just(0u64),
        Just(u64::MAX),
    ]
}

// ---------------------------------------------------------------------------
// Fixtures.
// ---------------------------------------------------------------------------

pub(crate) const PROTOCOL_ID: u64 = 0x1122_3344_5566_7788;
pub(crate) const PACKET_KEY: Key = Key::from_bytes([0x5a; 32]);
pub(crate) const OTHER_KEY: Key = Key::from_bytes([0xa5; 32]);
pub(crate) const PRIVATE_KEY: Key = Key::from_bytes([0x3c; 32]);

/// Writes `packet` with the fixture key and protocol id.
pub(crate) fn write(packet: &Encrypted, sequence: u64) -> Vec<u8> {
    let mut out = vec![0u8; 2048];
    let n = write_packet(
        &packet.packet(),
        sequence,
        &PACKET_KEY,
        PROTOCOL_ID,
        &mut out,
    )
    .unwrap();
    out.truncate(n);
    out
}

/// One packet of every encrypted type, with small and full payloads.
pub(crate) fn fixture_packets() -> Vec<Encrypted> {
    let mut token = [0u8; CHALLENGE_TOKEN_BYTES];
    for (i, b) in token.iter_mut().enumerate() {
        *b = (i * 7 + 3) as u8;
    }
    vec![
        Encrypted::Denied,
        Encrypted::Challenge(0x0102_0304_0506_0708, Box::new(token)),
        Encrypted::Response(77, Box::new(token)),
        Encrypted::KeepAlive(KeepAlivePacket {
            client_index: 3,
            max_clients: 64,
        }),
        Encrypted::Payload(vec![0xee]),
        Encrypted::Payload((0..40u8).collect()),
        Encrypted::Payload((0..MAX_PAYLOAD_BYTES).map(|i| (i % 251) as u8).collect()),
        Encrypted::Disconnect,
    ]
}

/// Sequences with 1, 2, 5 and 8 bytes on the wire.
pub(crate) const FIXTURE_SEQUENCES: [u64; 4] = [0, 1000, 0x12_3456_789a, u64::MAX];

pub(crate) fn fixture_private_token() -> PrivateConnectToken {
    PrivateConnectToken {
        client_id: 0xdead_beef_0000_0001,
        timeout_seconds: 10,
        server_addresses: AddressList::from_slice(&[
            "127.0.0.1:40000".parse().unwrap(),
            "[::1]:40001".parse().unwrap(),
        ])
        .unwrap(),
        client_to_server_key: Key::from_bytes([1; 32]),
        server_to_client_key: Key::from_bytes([2; 32]),
        user_data: [9; USER_DATA_BYTES],
    }
}

pub(crate) const REQUEST_NOW: u64 = 1_700_000_000;
pub(crate) const REQUEST_EXPIRE: u64 = 1_700_000_100;
pub(crate) const REQUEST_NONCE: [u8; CONNECT_TOKEN_NONCE_BYTES] = [0x42; CONNECT_TOKEN_NONCE_BYTES];

/// A valid 1078-byte connection request for [`fixture_private_token`].
pub(crate) fn fixture_request() -> Vec<u8> {
    let sealed = fixture_private_token()
        .encrypt(PROTOCOL_ID, REQUEST_EXPIRE, &REQUEST_NONCE, &PRIVATE_KEY)
        .unwrap();
    let packet = Packet::Request(RequestPacket {
        expire_timestamp: REQUEST_EXPIRE,
        nonce: &REQUEST_NONCE,
        private_data: &sealed,
    });
    let mut out = vec![0u8; CONNECTION_REQUEST_BYTES];
    let n = write_packet(&packet, 0, &OTHER_KEY, PROTOCOL_ID, &mut out).unwrap();
    assert_eq!(n, CONNECTION_REQUEST_BYTES);
    out
}

/// What a client reads with.
pub(crate) fn client_context(read_key: Option<&Key>) -> ReadContext<'_> {
    ReadContext {
        protocol_id: PROTOCOL_ID,
        current_timestamp: REQUEST_NOW,
        min_expire_timestamp: 0,
        private_key: None,
        read_key,
        accepted: PacketTypes::CLIENT,
    }
}

/// What a server reads with.
pub(crate) fn server_context<'k>(
    private_key: Option<&'k Key>,
    read_key: Option<&'k Key>,
) -> ReadContext<'k> {
    ReadContext {
        protocol_id: PROTOCOL_ID,
        current_timestamp: REQUEST_NOW,
        min_expire_timestamp: 0,
        private_key,
        read_key,
        accepted: PacketTypes::SERVER,
    }
}

/// A reader that accepts every type.
pub(crate) fn any_context<'k>(
    private_key: Option<&'k Key>,
    read_key: Option<&'k Key>,
) -> ReadContext<'k> {
    ReadContext {
        accepted: PacketTypes::ALL,
        ..server_context(private_key, read_key)
    }
}

pub(crate) fn flip(bytes: &mut [u8], bit: usize) {
    bytes[bit / 8] ^= 1 << (bit % 8);
}

// ---------------------------------------------------------------------------
// A model of the reader's check order, for bytes that are not authentic.
// ---------------------------------------------------------------------------

/// The error `read_packet` must return for `buffer` when `buffer` is not an
/// authentic packet under the context's keys (random or damaged bytes), as
/// the standard orders the checks. Forging a Poly1305 tag by accident has
/// probability 2^-100 or less, so "reaches decryption" means `DecryptFailed`.
pub(crate) fn expected_rejection(
    context: &ReadContext<'_>,
    buffer: &[u8],
    replay: Option<&ReplayProtection>,
) -> PacketError {
    let Some(&prefix) = buffer.first() else {
        return PacketError::TooSmall;
    };
    if prefix == 0 {
        if !context.accepted.contains(PacketType::Request) {
            return PacketError::TypeNotAccepted;
        }
        if buffer.len() != CONNECTION_REQUEST_BYTES {
            return PacketError::RequestWrongSize;
        }
        if context.private_key.is_none() {
            return PacketError::NoKey;
        }
        if buffer[1..14] != VERSION_INFO {
            return PacketError::VersionMismatch;
        }
        if u64::from_le_bytes(buffer[14..22].try_into().unwrap()) != context.protocol_id {
            return PacketError::ProtocolMismatch;
        }
        let expire = u64::from_le_bytes(buffer[22..30].try_into().unwrap());
        if expire <= context.current_timestamp {
            return PacketError::TokenExpired;
        }
        if expire < context.min_expire_timestamp {
            return PacketError::TokenPredatesStart;
        }
        return PacketError::DecryptFailed;
    }
    if context.read_key.is_none() {
        return PacketError::NoKey;
    }
    if buffer.len() < MIN_ENCRYPTED_PACKET_BYTES {
        return PacketError::TooSmall;
    }
    let packet_type = match PacketType::from_u8(prefix & 0x0f) {
        None | Some(PacketType::Request) => return PacketError::InvalidType,
        Some(t) => t,
    };
    if !context.accepted.contains(packet_type) {
        return PacketError::TypeNotAccepted;
    }
    let sequence_bytes = usize::from(prefix >> 4);
    if !(1..=8).contains(&sequence_bytes) {
        return PacketError::InvalidSequenceBytes;
    }
    if buffer.len() < 1 + sequence_bytes + MAC_BYTES {
        return PacketError::TooSmall;
    }
    let mut le = [0u8; 8];
    le[..sequence_bytes].copy_from_slice(&buffer[1..1 + sequence_bytes]);
    let sequence = u64::from_le_bytes(le);
    let replay_protected = matches!(
        packet_type,
        PacketType::KeepAlive | PacketType::Payload | PacketType::Disconnect
    );
    if replay_protected && replay.is_some_and(|w| w.already_received(sequence)) {
        return PacketError::Replayed;
    }
    PacketError::DecryptFailed
}

/// A replay window that has seen some traffic around `around`, so replay
/// checks on random sequences sometimes fire.
pub(crate) fn busy_window(around: u64) -> ReplayProtection {
    let mut w = ReplayProtection::new();
    for s in (around.saturating_sub(300)..=around).step_by(3) {
        w.advance(s);
    }
    w
}

/// Seals an arbitrary body under an arbitrary type nibble, bypassing
/// `write_packet`'s own checks, to make authentic packets with bodies of the
/// wrong size.
pub(crate) fn craft(packet_type: u8, sequence: u64, body: &[u8]) -> Vec<u8> {
    use netcode_proto::bytes::Writer;
    use netcode_proto::crypto::{encrypt, sequence_nonce};
    use netcode_proto::packet::{packet_associated_data, write_prefix_and_sequence};

    let mut out = vec![0u8; 9 + body.len() + MAC_BYTES];
    let mut w = Writer::new(&mut out);
    let header = write_prefix_and_sequence(&mut w, packet_type, sequence).unwrap();
    w.bytes(body).unwrap();
    out.truncate(header + body.len() + MAC_BYTES);
    let ad = packet_associated_data(PROTOCOL_ID, out[0]);
    let (text, tag) = out.split_at_mut(header + body.len());
    tag.copy_from_slice(&encrypt(
        &PACKET_KEY,
        &sequence_nonce(sequence),
        &ad,
        &mut text[header..],
    ));
    out
}
