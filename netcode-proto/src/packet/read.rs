//! Reading packets: every check of the standard, in its exact order, on a
//! datagram decrypted in place (STANDARD.md: *Reading Encrypted Packets*,
//! *Replay Protection*, and the request checks of *Processing Connection
//! Requests* up to reading the private connect token).

use core::convert::Infallible;

use crate::bytes::Reader;
use crate::constants::{
    CHALLENGE_BODY_BYTES, CONNECT_TOKEN_NONCE_BYTES, CONNECT_TOKEN_PRIVATE_BYTES,
    CONNECTION_REQUEST_BYTES, KEEP_ALIVE_BODY_BYTES, MAC_BYTES, MIN_ENCRYPTED_PACKET_BYTES,
    VERSION_INFO, VERSION_INFO_BYTES, is_payload_size,
};
use crate::crypto::{self, Key, OpeningKey, Tag, sequence_nonce};
use crate::replay::ReplayProtection;
use crate::token::{PrivateConnectToken, TokenError};

use super::context::{PacketContext, ReadContext, RequestContext};
use super::write::packet_associated_data;
use super::{ChallengePacket, KeepAlivePacket, Packet, PacketError, PacketType};

/// A connection request after its private connect token was opened and read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionRequest {
    /// The connect token's expire timestamp (unix seconds).
    pub expire_timestamp: u64,
    /// The connect token's nonce.
    pub nonce: [u8; CONNECT_TOKEN_NONCE_BYTES],
    /// The opened private connect token.
    pub token: PrivateConnectToken,
    /// The sealed token's tag: what identifies this connect token in the
    /// server's history of used tokens.
    pub mac: Tag,
}

/// A packet that passed every check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadPacket<'a> {
    /// The packet's sequence (0 for a connection request, which has none).
    pub sequence: u64,
    /// The packet, borrowing the decrypted bytes of the caller's buffer.
    pub packet: Packet<'a, ConnectionRequest>,
}

/// Reads one datagram with the combined [`ReadContext`]: the same as
/// [`read_packet_with`] with its two halves.
pub fn read_packet<'b>(
    context: &ReadContext<'_>,
    buffer: &'b mut [u8],
    replay: Option<&mut ReplayProtection>,
) -> Result<ReadPacket<'b>, PacketError> {
    let (packets, requests) = context.split();
    read_packet_with(&packets, requests.as_ref(), buffer, replay)
}

/// Reads one datagram, decrypting it in place.
///
/// The checks run in the order of the standard and the reference:
///
/// * connection request: accepted type, exactly 1078 bytes, a request
///   context (a server's), version info, protocol id, expiry against
///   `current_timestamp`, the restart rule, decryption of the private token,
///   then reading it;
/// * any other type: a read key (the reference checks this before the size),
///   at least 18 bytes, a valid and accepted type, 1 to 8 sequence bytes, the
///   size for that many, the replay window (keep-alive, payload and
///   disconnect, when `replay` is given), decryption, *then* the replay window
///   advances, *then* the body size is checked.
///
/// Nothing here panics, whatever the bytes. When the datagram is dropped,
/// the contents of `buffer` are unspecified (a failed decryption may have
/// overwritten them): read nothing from it afterwards.
pub fn read_packet_with<'b>(
    context: &PacketContext<'_>,
    requests: Option<&RequestContext<'_>>,
    buffer: &'b mut [u8],
    replay: Option<&mut ReplayProtection>,
) -> Result<ReadPacket<'b>, PacketError> {
    let prefix = *buffer.first().ok_or(PacketError::TooSmall)?;
    if prefix == 0 {
        return read_request(context, requests, buffer).map(|request| ReadPacket {
            sequence: 0,
            packet: Packet::Request(request),
        });
    }
    let (sequence, packet) = read_encrypted(context, None, buffer, replay)?;
    Ok(ReadPacket {
        sequence,
        packet: packet.with_request(),
    })
}

/// Reads one encrypted packet (any type but the request), decrypting it in
/// place, as [`read_packet_with`] does: its sequence and the packet. A
/// request is refused as a side with no request context refuses it. The
/// packet it returns is small (its request variant cannot exist), which
/// keeps the large parsed request out of the per-packet path. `prepared`,
/// when given, is the context's read key set up beforehand, and is used in
/// its place.
pub(crate) fn read_encrypted<'b>(
    context: &PacketContext<'_>,
    prepared: Option<&OpeningKey>,
    buffer: &'b mut [u8],
    replay: Option<&mut ReplayProtection>,
) -> Result<(u64, Packet<'b, Infallible>), PacketError> {
    let prefix = *buffer.first().ok_or(PacketError::TooSmall)?;
    if prefix == 0 {
        return read_request(context, None, buffer).and(Err(PacketError::NoKey));
    }
    let key = match (prepared, context.read_key) {
        (Some(prepared), _) => Opener::Prepared(prepared),
        (None, Some(key)) => Opener::Key(key),
        (None, None) => return Err(PacketError::NoKey),
    };
    if buffer.len() < MIN_ENCRYPTED_PACKET_BYTES {
        return Err(PacketError::TooSmall);
    }
    let packet_type = match PacketType::from_u8(prefix & 0x0f) {
        Some(PacketType::Request) | None => return Err(PacketError::InvalidType),
        Some(t) => t,
    };
    if !context.accepted.contains(packet_type) {
        return Err(PacketError::TypeNotAccepted);
    }
    let sequence_bytes = usize::from(prefix >> 4);
    if !(1..=8).contains(&sequence_bytes) {
        return Err(PacketError::InvalidSequenceBytes);
    }
    let header = 1 + sequence_bytes;
    if buffer.len() < header + MAC_BYTES {
        return Err(PacketError::TooSmall);
    }
    // At least 18 bytes, so the 8 after the prefix are there: read them all
    // and keep the sequence's own.
    let mut window = [0u8; 8];
    window.copy_from_slice(&buffer[1..9]);
    let sequence = u64::from_le_bytes(window) & (u64::MAX >> (64 - 8 * sequence_bytes));

    let mut replay = replay.filter(|_| packet_type.replay_protected());
    if replay
        .as_ref()
        .is_some_and(|w| w.already_received(sequence))
    {
        return Err(PacketError::Replayed);
    }

    let ad = packet_associated_data(context.protocol_id, prefix);
    let body_end = buffer.len() - MAC_BYTES;
    let (text, tag) = buffer.split_at_mut(body_end);
    let tag: &Tag = (&*tag).try_into().map_err(|_| PacketError::TooSmall)?;
    let nonce = sequence_nonce(sequence);
    match key {
        Opener::Key(key) => crypto::decrypt(key, &nonce, &ad, &mut text[header..], tag),
        Opener::Prepared(key) => {
            crypto::decrypt_prepared(key, &nonce, &ad, &mut text[header..], tag)
        }
    }
    .map_err(|_| PacketError::DecryptFailed)?;

    if let Some(window) = replay.as_mut() {
        window.advance(sequence);
    }

    let body: &'b [u8] = &buffer[header..body_end];
    let packet = match packet_type {
        PacketType::Denied | PacketType::Disconnect if !body.is_empty() => {
            return Err(PacketError::WrongBodySize);
        }
        PacketType::Denied => Packet::Denied,
        PacketType::Disconnect => Packet::Disconnect,
        PacketType::Challenge | PacketType::Response => {
            if body.len() != CHALLENGE_BODY_BYTES {
                return Err(PacketError::WrongBodySize);
            }
            let (sequence, token) = body.split_at(8);
            let challenge = ChallengePacket {
                challenge_sequence: u64::from_le_bytes(
                    sequence
                        .try_into()
                        .map_err(|_| PacketError::WrongBodySize)?,
                ),
                token: token.try_into().map_err(|_| PacketError::WrongBodySize)?,
            };
            if packet_type == PacketType::Challenge {
                Packet::Challenge(challenge)
            } else {
                Packet::Response(challenge)
            }
        }
        PacketType::KeepAlive => {
            if body.len() != KEEP_ALIVE_BODY_BYTES {
                return Err(PacketError::WrongBodySize);
            }
            let mut r = Reader::new(body);
            Packet::KeepAlive(KeepAlivePacket {
                client_index: r.u32().ok_or(PacketError::WrongBodySize)?,
                max_clients: r.u32().ok_or(PacketError::WrongBodySize)?,
            })
        }
        PacketType::Payload => {
            if !is_payload_size(body.len()) {
                return Err(PacketError::WrongBodySize);
            }
            Packet::Payload(body)
        }
        PacketType::Request => return Err(PacketError::InvalidType),
    };
    Ok((sequence, packet))
}

/// The key an encrypted packet is opened with.
#[derive(Clone, Copy)]
enum Opener<'k> {
    Key(&'k Key),
    Prepared(&'k OpeningKey),
}

/// Reads a connection request (prefix 0) and opens its private token.
pub(crate) fn read_request(
    context: &PacketContext<'_>,
    requests: Option<&RequestContext<'_>>,
    buffer: &mut [u8],
) -> Result<ConnectionRequest, PacketError> {
    if !context.accepted.contains(PacketType::Request) {
        return Err(PacketError::TypeNotAccepted);
    }
    let buffer: &mut [u8; CONNECTION_REQUEST_BYTES] = buffer
        .try_into()
        .map_err(|_| PacketError::RequestWrongSize)?;
    let requests = requests.ok_or(PacketError::NoKey)?;

    let (head, private_data) =
        buffer.split_at_mut(CONNECTION_REQUEST_BYTES - CONNECT_TOKEN_PRIVATE_BYTES);
    let mut r = Reader::new(&head[1..]);
    // `head` has exactly 1 + 13 + 8 + 8 + 24 bytes, so these reads succeed.
    let version = r
        .array::<VERSION_INFO_BYTES>()
        .ok_or(PacketError::RequestWrongSize)?;
    if version != VERSION_INFO {
        return Err(PacketError::VersionMismatch);
    }
    if r.u64() != Some(context.protocol_id) {
        return Err(PacketError::ProtocolMismatch);
    }
    let expire_timestamp = r.u64().ok_or(PacketError::RequestWrongSize)?;
    if expire_timestamp <= requests.current_timestamp {
        return Err(PacketError::TokenExpired);
    }
    if expire_timestamp < requests.min_expire_timestamp {
        return Err(PacketError::TokenPredatesStart);
    }
    let nonce = r
        .array::<CONNECT_TOKEN_NONCE_BYTES>()
        .ok_or(PacketError::RequestWrongSize)?;

    let private_data: &mut [u8; CONNECT_TOKEN_PRIVATE_BYTES] = private_data
        .try_into()
        .map_err(|_| PacketError::RequestWrongSize)?;
    let token = PrivateConnectToken::decrypt(
        private_data,
        context.protocol_id,
        expire_timestamp,
        &nonce,
        requests.private_key,
    )
    .map_err(|e| match e {
        TokenError::Decrypt(_) => PacketError::DecryptFailed,
        _ => PacketError::InvalidPrivateToken,
    })?;
    let mut mac = [0u8; MAC_BYTES];
    mac.copy_from_slice(&private_data[CONNECT_TOKEN_PRIVATE_BYTES - MAC_BYTES..]);
    Ok(ConnectionRequest {
        expire_timestamp,
        nonce,
        token,
        mac,
    })
}
