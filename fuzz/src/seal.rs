//! Packets the session targets send as a peer holding a token's keys would,
//! and the challenges they read back from the server to echo: each opened
//! once, under the key of the token whose request it answers (found by the
//! request's nonce), rather than tried under every key.

use netcode_proto::constants::{
    CHALLENGE_TOKEN_BYTES, CONNECT_TOKEN_NONCE_BYTES, MAX_PACKET_BYTES, MAX_PAYLOAD_BYTES,
    VERSION_INFO_BYTES,
};
use netcode_proto::packet::{
    ChallengePacket, KeepAlivePacket, Packet, PacketType, PacketTypes, ReadContext, RequestPacket,
};
use netcode_proto::sim::fixtures::PROTOCOL_ID;
use netcode_proto::{ConnectToken, Key, read_packet, write_packet};

use crate::Cursor;
use crate::session::SessionToken;

/// The longest raw datagram the session targets send (longer than any
/// valid packet).
pub const MAX_DATAGRAM_BYTES: usize = 1400;

/// A challenge as a client echoes it: its sequence and sealed token.
pub type Challenge = (u64, [u8; CHALLENGE_TOKEN_BYTES]);

/// Where a connection request carries its connect token's nonce: after the
/// prefix byte, the version info, the protocol id and the expire timestamp.
const REQUEST_NONCE_AT: usize = 1 + VERSION_INFO_BYTES + 8 + 8;

/// Writes into `buffer` an encrypted packet of any type built from the
/// input, as a peer holding `key` would send it; returns its bytes (none
/// when a payload is cut short by the end of the input).
///
/// Reads: the type (byte mod 7), the sequence (a flag byte: odd means an
/// explicit `u64` follows, even means `*next_sequence`, which then
/// advances), then the body the type needs: a request carries `token`'s
/// sealed private data; a challenge or response carries `challenge` when it
/// is given and the flag byte's bit 1 is set, else 8 + 300 bytes of input; a
/// keep-alive two `u32`s; a payload a `u16` length (1 to 1200) and as many
/// bytes as the input still has.
pub fn sealed_packet<'b>(
    input: &mut Cursor<'_>,
    key: &Key,
    token: &ConnectToken,
    challenge: Option<&Challenge>,
    next_sequence: &mut u64,
    buffer: &'b mut [u8; MAX_PACKET_BYTES],
) -> &'b mut [u8] {
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
    let written = write_packet(&packet, sequence, key, PROTOCOL_ID, buffer).unwrap_or(0);
    &mut buffer[..written]
}

/// The session token a connection request carries, by its nonce: the one
/// whose server-to-client key seals the server's answer.
pub fn request_token(datagram: &[u8], tokens: &[SessionToken]) -> Option<usize> {
    if datagram.first() != Some(&(PacketType::Request as u8)) {
        return None;
    }
    let nonce = datagram.get(REQUEST_NONCE_AT..REQUEST_NONCE_AT + CONNECT_TOKEN_NONCE_BYTES)?;
    tokens.iter().position(|t| t.token.nonce == nonce)
}

/// The challenge inside `datagram` if it is a challenge packet sealed with
/// `key`.
pub fn open_challenge(datagram: &[u8], key: &Key) -> Option<Challenge> {
    if datagram.first().map(|p| p & 0x0f) != Some(PacketType::Challenge as u8) {
        return None;
    }
    let mut copy = [0u8; MAX_PACKET_BYTES];
    let copy = copy.get_mut(..datagram.len())?;
    copy.copy_from_slice(datagram);
    let context = ReadContext {
        protocol_id: PROTOCOL_ID,
        current_timestamp: 0,
        min_expire_timestamp: 0,
        private_key: None,
        read_key: Some(key),
        accepted: PacketTypes::CLIENT,
    };
    match read_packet(&context, copy, None).ok()?.packet {
        Packet::Challenge(c) => Some((c.challenge_sequence, *c.token)),
        _ => None,
    }
}
