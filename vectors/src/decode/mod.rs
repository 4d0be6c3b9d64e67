//! Reading a vector's bytes back with `netcode-proto` and comparing every
//! field with its manifest entry.
//!
//! [`verify`] is the full check: layout (prefix byte, header, sequence bytes,
//! associated data, nonce, region sizes, zero padding), every decoded field,
//! and for encrypted entries the decrypted plaintext against the plaintext
//! the manifest gives. [`open`] runs only `netcode-proto`'s reading and
//! authentication path, for negative checks.
//!
//! The checks are split by concern: `checker` collects mismatches, `tokens`
//! checks addresses and connect and challenge tokens (STANDARD.md, "Connect
//! Token" and "Challenge Token"), `packets` checks packets ("Packets",
//! "Reading Encrypted Packets", "Processing Connection Requests").

use std::fmt::Debug;

use netcode_proto::constants::{
    CHALLENGE_TOKEN_BYTES, CONNECT_TOKEN_NONCE_BYTES, CONNECT_TOKEN_PRIVATE_BYTES,
    CONNECTION_REQUEST_BYTES, MAC_BYTES, VERSION_INFO_BYTES,
};
use netcode_proto::crypto::DecryptError;
use netcode_proto::packet::{PacketTypes, ReadContext, read_packet};
use netcode_proto::token::{ChallengeToken, ConnectToken, PrivateConnectToken, TokenError};
use netcode_proto::{Key, PacketError};

use crate::manifest::{Body, PacketContent, PacketFields, Vector};
use crate::{Error, Result, VectorSet};

mod checker;
mod packets;
mod tokens;

use checker::Checker;
use packets::check_packet;
pub(crate) use tokens::{
    CHALLENGE_DATA_BYTES, address_type, network_order, private_data_bytes, public_data_bytes,
    wire_form,
};
use tokens::{
    check_challenge_encrypted, check_challenge_plaintext, check_connect_token,
    check_private_encrypted, check_private_plaintext, private_nonce,
};

/// Encrypted bytes of a private connect token (the tag takes the rest).
pub(crate) const PRIVATE_ENCRYPTED_BYTES: usize = CONNECT_TOKEN_PRIVATE_BYTES - MAC_BYTES;
/// Encrypted bytes of a challenge token (the tag takes the rest).
pub(crate) const CHALLENGE_ENCRYPTED_BYTES: usize = CHALLENGE_TOKEN_BYTES - MAC_BYTES;
/// Where the address list starts in a private token: client id, timeout, count.
const PRIVATE_ADDRESSES_OFFSET: usize = 8 + 4 + 4;
/// Where the address list starts in a public connect token.
const PUBLIC_ADDRESSES_OFFSET: usize = VERSION_INFO_BYTES
    + 8
    + 8
    + 8
    + CONNECT_TOKEN_NONCE_BYTES
    + CONNECT_TOKEN_PRIVATE_BYTES
    + 4
    + 4;
/// Where the sealed private token starts in a connection request.
const REQUEST_PRIVATE_OFFSET: usize = CONNECTION_REQUEST_BYTES - CONNECT_TOKEN_PRIVATE_BYTES;

/// Decodes `bytes` as the entry `vector` of `set` and compares every field
/// the entry gives. Other files of the set are read where the entry names
/// them (`plaintext_vector`, `*_data_vector`, `encrypted_vector`).
///
/// Returns every mismatch found, not just the first.
pub fn verify(set: &VectorSet, vector: &Vector, bytes: &[u8]) -> Result<()> {
    let mut c = Checker::default();
    c.eq("file length", bytes.len(), vector.bytes);
    match &vector.body {
        Body::PrivateTokenPlaintext(fields) => check_private_plaintext(&mut c, fields, bytes),
        Body::PrivateTokenEncrypted(sealed) => {
            check_private_encrypted(&mut c, set, "", sealed, bytes);
        }
        Body::ConnectToken(fields) => check_connect_token(&mut c, set, fields, bytes),
        Body::ChallengeTokenPlaintext(fields) => check_challenge_plaintext(&mut c, fields, bytes),
        Body::ChallengeTokenEncrypted(sealed) => {
            check_challenge_encrypted(&mut c, set, "", sealed, bytes);
        }
        Body::Packet(fields) => check_packet(&mut c, set, fields, bytes),
    }
    c.finish(&vector.name)
}

/// Why `netcode-proto` refused a vector in [`open`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// `read_packet` dropped the packet.
    Packet(PacketError),
    /// A connect token could not be read, or its private part not opened.
    Token(TokenError),
    /// A challenge token did not authenticate.
    Challenge(DecryptError),
    /// The entry itself is unusable (not a rejection by `netcode-proto`).
    Setup(Error),
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Packet(e) => write!(f, "packet rejected: {e}"),
            Self::Token(e) => write!(f, "token rejected: {e}"),
            Self::Challenge(e) => write!(f, "challenge token rejected: {e}"),
            Self::Setup(e) => write!(f, "unusable entry: {e}"),
        }
    }
}

/// What [`open`] may use instead of the entry's own values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Overrides {
    /// Open under this protocol id instead of the entry's.
    pub protocol_id: Option<u64>,
    /// Open a private token under this expire timestamp instead of the one
    /// in the entry (or, for a connect token, in its bytes).
    pub expire_timestamp: Option<u64>,
    /// Read a connection request at this time instead of
    /// [`RequestClock::just_before`] its expire timestamp.
    pub clock: Option<RequestClock>,
}

/// The time at which a server reads a connection request, and the bound of
/// the restart rule (STANDARD.md, "Processing Connection Requests").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestClock {
    /// Unix seconds now: a token expiring at or before this is refused.
    pub current_timestamp: u64,
    /// A token expiring before this is refused by the restart rule; 0 turns
    /// the rule off.
    pub min_expire_timestamp: u64,
}

impl RequestClock {
    /// The last second at which a token expiring at `expire_timestamp` is
    /// still accepted, with the restart rule off. A token expiring at 0 is
    /// accepted at no time: this is then 0, at which it has expired.
    pub fn just_before(expire_timestamp: u64) -> Self {
        Self {
            current_timestamp: expire_timestamp.saturating_sub(1),
            min_expire_timestamp: 0,
        }
    }
}

/// Runs only `netcode-proto`'s reading and authentication path over `bytes`,
/// with the keys, nonces and bound values of the entry (or `overrides`):
///
/// * private token plaintext: `PrivateConnectToken::read`;
/// * sealed private token: `PrivateConnectToken::decrypt`;
/// * connect token: `ConnectToken::read`, then decrypting its private part
///   under the protocol id, expire timestamp and nonce read from the bytes;
/// * challenge token plaintext: `ChallengeToken::read`;
/// * sealed challenge token: `ChallengeToken::decrypt`;
/// * packet: `read_packet` accepting every type, with the entry's packet key
///   as read key, the private key for a request, and for a request the
///   clock of `overrides` or [`RequestClock::just_before`] its expire
///   timestamp.
pub fn open(
    vector: &Vector,
    bytes: &[u8],
    overrides: &Overrides,
) -> std::result::Result<(), Rejection> {
    match &vector.body {
        Body::PrivateTokenPlaintext(_) => {
            let plaintext = bytes
                .get(..PRIVATE_ENCRYPTED_BYTES)
                .ok_or(Rejection::Token(TokenError::WrongSize))?;
            PrivateConnectToken::read(plaintext).map_err(Rejection::Token)?;
        }
        Body::PrivateTokenEncrypted(sealed) => {
            let mut buffer: [u8; CONNECT_TOKEN_PRIVATE_BYTES] = bytes
                .try_into()
                .map_err(|_| Rejection::Token(TokenError::WrongSize))?;
            let nonce = private_nonce(&sealed.encryption).map_err(Rejection::Setup)?;
            PrivateConnectToken::decrypt(
                &mut buffer,
                overrides.protocol_id.unwrap_or(sealed.protocol_id),
                overrides
                    .expire_timestamp
                    .unwrap_or(sealed.expire_timestamp),
                &nonce,
                &Key::from_bytes(sealed.encryption.key),
            )
            .map_err(Rejection::Token)?;
        }
        Body::ConnectToken(fields) => {
            let token = ConnectToken::read(bytes).map_err(Rejection::Token)?;
            let mut private_data = token.private_data;
            PrivateConnectToken::decrypt(
                &mut private_data,
                overrides.protocol_id.unwrap_or(token.protocol_id),
                overrides.expire_timestamp.unwrap_or(token.expire_timestamp),
                &token.nonce,
                &Key::from_bytes(fields.private_token.encryption.key),
            )
            .map_err(Rejection::Token)?;
        }
        Body::ChallengeTokenPlaintext(_) => {
            let _: &[u8; CHALLENGE_TOKEN_BYTES] = bytes
                .try_into()
                .map_err(|_| Rejection::Challenge(DecryptError))?;
        }
        Body::ChallengeTokenEncrypted(sealed) => {
            let mut buffer: [u8; CHALLENGE_TOKEN_BYTES] = bytes
                .try_into()
                .map_err(|_| Rejection::Challenge(DecryptError))?;
            ChallengeToken::decrypt(
                &mut buffer,
                sealed.challenge_sequence,
                &Key::from_bytes(sealed.encryption.key),
            )
            .map_err(Rejection::Challenge)?;
        }
        Body::Packet(fields) => {
            let keys = PacketKeys::of(fields);
            let context = keys.context(
                fields,
                overrides.protocol_id.unwrap_or(fields.protocol_id),
                overrides.clock,
            );
            let mut buffer = bytes.to_vec();
            read_packet(&context, &mut buffer, None).map_err(Rejection::Packet)?;
        }
    }
    Ok(())
}

/// The keys `read_packet` needs for a packet entry.
struct PacketKeys {
    private_key: Option<Key>,
    read_key: Option<Key>,
}

impl PacketKeys {
    fn of(fields: &PacketFields) -> Self {
        let private_key = match &fields.content {
            PacketContent::Request(request) => {
                Some(Key::from_bytes(request.private_token.encryption.key))
            }
            _ => None,
        };
        let read_key = fields
            .framing
            .as_ref()
            .map(|framing| Key::from_bytes(framing.encryption.key));
        Self {
            private_key,
            read_key,
        }
    }

    /// A context accepting every packet type, reading a request at `clock`
    /// or just before its expire timestamp (other packets ignore the clock).
    fn context(
        &self,
        fields: &PacketFields,
        protocol_id: u64,
        clock: Option<RequestClock>,
    ) -> ReadContext<'_> {
        let clock = clock.unwrap_or(match &fields.content {
            PacketContent::Request(request) => RequestClock::just_before(request.expire_timestamp),
            _ => RequestClock::just_before(0),
        });
        ReadContext {
            protocol_id,
            current_timestamp: clock.current_timestamp,
            min_expire_timestamp: clock.min_expire_timestamp,
            private_key: self.private_key.as_ref(),
            read_key: self.read_key.as_ref(),
            accepted: PacketTypes::ALL,
        }
    }
}
