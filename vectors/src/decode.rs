//! Reading a vector's bytes back with `netcode-proto` and comparing every
//! field with its manifest entry.
//!
//! [`verify`] is the full check: layout (prefix byte, header, sequence bytes,
//! associated data, nonce, region sizes, zero padding), every decoded field,
//! and for encrypted entries the decrypted plaintext against the plaintext
//! the manifest gives. [`open`] runs only `netcode-proto`'s reading and
//! authentication path, for negative checks.

use std::fmt::{Debug, Display};
use std::net::{IpAddr, SocketAddr};

use netcode_proto::address::{wire_size, write_address};
use netcode_proto::bytes::Writer;
use netcode_proto::constants::{
    CHALLENGE_TOKEN_BYTES, CONNECT_TOKEN_BYTES, CONNECT_TOKEN_NONCE_BYTES,
    CONNECT_TOKEN_PRIVATE_BYTES, CONNECTION_REQUEST_BYTES, KEY_BYTES, MAC_BYTES, USER_DATA_BYTES,
    VERSION_INFO, VERSION_INFO_BYTES,
};
use netcode_proto::crypto::{DecryptError, sequence_nonce};
use netcode_proto::packet::{
    ConnectionRequest, KeepAlivePacket, PacketTypes, ReadContext, packet_associated_data,
    read_packet, sequence_bytes,
};
use netcode_proto::token::{
    ChallengeToken, ConnectToken, PrivateConnectToken, TokenError, private_token_associated_data,
};
use netcode_proto::{Key, Packet, PacketError};

use crate::manifest::{
    Algorithm, Body, ChallengeFields, ChallengeTokenFields, ConnectTokenFields, Encryption,
    PacketContent, PacketFields, PrivateTokenFields, RequestFields, SealedChallengeToken,
    SealedPrivateToken, ServerAddress, Vector,
};
use crate::{Error, Result, VectorSet, hex};

/// Encrypted bytes of a private connect token (the tag takes the rest).
const PRIVATE_ENCRYPTED_BYTES: usize = CONNECT_TOKEN_PRIVATE_BYTES - MAC_BYTES;
/// Encrypted bytes of a challenge token (the tag takes the rest).
const CHALLENGE_ENCRYPTED_BYTES: usize = CHALLENGE_TOKEN_BYTES - MAC_BYTES;
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
///   as read key, the private key for a request, and a current time just
///   before the request's expire timestamp.
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
            let context = keys.context(fields, overrides.protocol_id.unwrap_or(fields.protocol_id));
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

    /// A context accepting every packet type, at a time just before the
    /// request's expire timestamp (0 for other packets).
    fn context(&self, fields: &PacketFields, protocol_id: u64) -> ReadContext<'_> {
        let current_timestamp = match &fields.content {
            PacketContent::Request(request) => request.expire_timestamp.saturating_sub(1),
            _ => 0,
        };
        ReadContext {
            protocol_id,
            current_timestamp,
            min_expire_timestamp: 0,
            private_key: self.private_key.as_ref(),
            read_key: self.read_key.as_ref(),
            accepted: PacketTypes::ALL,
        }
    }
}

/// Collects mismatches.
#[derive(Default)]
struct Checker {
    problems: Vec<String>,
}

impl Checker {
    fn fail(&mut self, problem: impl Into<String>) {
        self.problems.push(problem.into());
    }

    fn eq<T: PartialEq + Debug>(&mut self, what: impl Display, got: T, want: T) {
        if got != want {
            self.fail(format!("{what}: got {got:?}, manifest says {want:?}"));
        }
    }

    fn bytes(&mut self, what: impl Display, got: &[u8], want: &[u8]) {
        if got == want {
            return;
        }
        let first = got
            .iter()
            .zip(want)
            .position(|(a, b)| a != b)
            .unwrap_or(got.len().min(want.len()));
        let excerpt = |b: &[u8]| hex::encode(&b[first.min(b.len())..(first + 16).min(b.len())]);
        self.fail(format!(
            "{what}: {} bytes vs {} expected, first difference at offset {first}: got {}.. expected {}..",
            got.len(),
            want.len(),
            excerpt(got),
            excerpt(want)
        ));
    }

    fn zero(&mut self, what: impl Display, bytes: &[u8]) {
        if let Some(offset) = bytes.iter().position(|&b| b != 0) {
            self.fail(format!("{what}: non-zero padding byte at offset {offset}"));
        }
    }

    /// A slice of `bytes`, or a recorded problem when it is out of range.
    fn slice<'b>(
        &mut self,
        what: impl Display,
        bytes: &'b [u8],
        range: std::ops::Range<usize>,
    ) -> Option<&'b [u8]> {
        let slice = bytes.get(range.clone());
        if slice.is_none() {
            self.fail(format!(
                "{what}: range {range:?} is outside the {} bytes",
                bytes.len()
            ));
        }
        slice
    }

    fn other_file(&mut self, set: &VectorSet, name: &str) -> Option<Vec<u8>> {
        match set.read_named(name) {
            Ok(bytes) => Some(bytes),
            Err(e) => {
                self.fail(format!("referenced vector {name:?}: {e}"));
                None
            }
        }
    }

    fn finish(self, name: &str) -> Result<()> {
        if self.problems.is_empty() {
            Ok(())
        } else {
            Err(Error::new(format!(
                "{name}: {} mismatch(es):\n  {}",
                self.problems.len(),
                self.problems.join("\n  ")
            )))
        }
    }
}

fn address_type(address: &SocketAddr) -> u8 {
    match address {
        SocketAddr::V4(_) => netcode_proto::address::ADDRESS_IPV4,
        SocketAddr::V6(_) => netcode_proto::address::ADDRESS_IPV6,
    }
}

fn network_order(ip: &IpAddr) -> Vec<u8> {
    match ip {
        IpAddr::V4(ip) => ip.octets().to_vec(),
        IpAddr::V6(ip) => ip.octets().to_vec(),
    }
}

fn wire_form(address: &SocketAddr) -> Option<Vec<u8>> {
    let mut buffer = [0u8; 19];
    let mut writer = Writer::new(&mut buffer);
    write_address(&mut writer, address)?;
    let written = writer.position();
    Some(buffer[..written].to_vec())
}

fn check_addresses(
    c: &mut Checker,
    what: &str,
    got: &[SocketAddr],
    num_server_addresses: usize,
    want: &[ServerAddress],
) {
    c.eq(
        format!("{what}num_server_addresses"),
        got.len(),
        num_server_addresses,
    );
    c.eq(
        format!("{what}server_addresses length"),
        want.len(),
        num_server_addresses,
    );
    for (index, (got, want)) in got.iter().zip(want).enumerate() {
        let what = format!("{what}server_addresses[{index}]");
        c.eq(format!("{what}.type"), address_type(got), want.address_type);
        c.eq(format!("{what}.ip"), got.ip(), want.ip);
        c.eq(format!("{what}.port"), got.port(), want.port);
        c.bytes(
            format!("{what}.ip_bytes"),
            &network_order(&got.ip()),
            &want.ip_bytes,
        );
        match wire_form(got) {
            Some(wire) => c.bytes(format!("{what}.wire"), &wire, &want.wire),
            None => c.fail(format!("{what}: netcode-proto could not write the address")),
        }
    }
}

/// The manifest's address wire forms, concatenated, must be exactly what the
/// token holds at `offset`.
fn check_address_bytes(
    c: &mut Checker,
    what: &str,
    bytes: &[u8],
    offset: usize,
    want: &[ServerAddress],
) {
    let expected: Vec<u8> = want.iter().flat_map(|a| a.wire.iter().copied()).collect();
    if let Some(got) = c.slice(
        format!("{what}address list"),
        bytes,
        offset..offset + expected.len(),
    ) {
        c.bytes(format!("{what}address list wire bytes"), got, &expected);
    }
}

fn check_private_fields(
    c: &mut Checker,
    what: &str,
    got: &PrivateConnectToken,
    want: &PrivateTokenFields,
) {
    c.eq(format!("{what}client_id"), got.client_id, want.client_id);
    c.eq(
        format!("{what}timeout_seconds"),
        got.timeout_seconds,
        want.timeout_seconds,
    );
    check_addresses(
        c,
        what,
        &got.server_addresses,
        want.num_server_addresses,
        &want.server_addresses,
    );
    c.bytes(
        format!("{what}client_to_server_key"),
        got.client_to_server_key.as_bytes(),
        &want.client_to_server_key,
    );
    c.bytes(
        format!("{what}server_to_client_key"),
        got.server_to_client_key.as_bytes(),
        &want.server_to_client_key,
    );
    c.bytes(format!("{what}user_data"), &got.user_data, &want.user_data);
}

/// Bytes of a private token plaintext that hold data.
fn private_data_bytes(token: &PrivateConnectToken) -> usize {
    let addresses: usize = token.server_addresses.iter().map(wire_size).sum();
    PRIVATE_ADDRESSES_OFFSET + addresses + 2 * KEY_BYTES + USER_DATA_BYTES
}

fn check_private_plaintext(c: &mut Checker, fields: &PrivateTokenFields, bytes: &[u8]) {
    c.eq("length", bytes.len(), CONNECT_TOKEN_PRIVATE_BYTES);
    let Some(plaintext) = c.slice("plaintext", bytes, 0..PRIVATE_ENCRYPTED_BYTES) else {
        return;
    };
    let token = match PrivateConnectToken::read(plaintext) {
        Ok(token) => token,
        Err(e) => return c.fail(format!("PrivateConnectToken::read: {e}")),
    };
    check_private_fields(c, "", &token, fields);
    check_address_bytes(
        c,
        "",
        bytes,
        PRIVATE_ADDRESSES_OFFSET,
        &fields.server_addresses,
    );
    let data_bytes = private_data_bytes(&token);
    if let Some(want) = fields.data_bytes {
        c.eq("data_bytes", data_bytes, want);
    }
    if let Some(padding) = bytes.get(data_bytes..) {
        c.zero("padding after the data (tag space included)", padding);
    }
}

/// The encryption parameters of a sealed private token are those the
/// standard fixes for it.
fn check_private_sealing(c: &mut Checker, what: &str, sealed: &SealedPrivateToken) {
    let e = &sealed.encryption;
    c.bytes(
        format!("{what}version_info"),
        &sealed.version_info,
        &VERSION_INFO,
    );
    c.eq(
        format!("{what}encryption.algorithm"),
        e.algorithm,
        Algorithm::XChaCha20Poly1305,
    );
    c.bytes(format!("{what}encryption.nonce"), &e.nonce, &sealed.nonce);
    c.bytes(
        format!("{what}encryption.associated_data (computed by netcode-proto)"),
        &private_token_associated_data(sealed.protocol_id, sealed.expire_timestamp),
        &e.associated_data,
    );
    check_region(
        c,
        what,
        e,
        0,
        PRIVATE_ENCRYPTED_BYTES,
        CONNECT_TOKEN_PRIVATE_BYTES,
    );
}

fn check_region(
    c: &mut Checker,
    what: &str,
    e: &Encryption,
    offset: usize,
    plaintext_bytes: usize,
    total: usize,
) {
    c.eq(
        format!("{what}encryption.plaintext_offset"),
        offset,
        e.plaintext_offset,
    );
    c.eq(
        format!("{what}encryption.plaintext_bytes"),
        plaintext_bytes,
        e.plaintext_bytes,
    );
    c.eq(
        format!("{what}encryption.tag_bytes"),
        MAC_BYTES,
        e.tag_bytes,
    );
    c.eq(
        format!("{what}offset + plaintext_bytes + tag_bytes"),
        total,
        e.plaintext_offset + e.plaintext_bytes + e.tag_bytes,
    );
}

fn private_nonce(e: &Encryption) -> Result<[u8; CONNECT_TOKEN_NONCE_BYTES]> {
    e.nonce.as_slice().try_into().map_err(|_| {
        Error::new(format!(
            "private token nonce has {} bytes, expected 24",
            e.nonce.len()
        ))
    })
}

/// Decrypts a sealed private token with the entry's key and compares the
/// result with the fields and the plaintext vector.
fn check_private_encrypted(
    c: &mut Checker,
    set: &VectorSet,
    what: &str,
    sealed: &SealedPrivateToken,
    bytes: &[u8],
) {
    check_private_sealing(c, what, sealed);
    let mut buffer: [u8; CONNECT_TOKEN_PRIVATE_BYTES] = match bytes.try_into() {
        Ok(buffer) => buffer,
        Err(_) => {
            return c.fail(format!(
                "{what}sealed private token has {} bytes, expected {CONNECT_TOKEN_PRIVATE_BYTES}",
                bytes.len()
            ));
        }
    };
    let nonce = match private_nonce(&sealed.encryption) {
        Ok(nonce) => nonce,
        Err(e) => return c.fail(format!("{what}{e}")),
    };
    let token = match PrivateConnectToken::decrypt(
        &mut buffer,
        sealed.protocol_id,
        sealed.expire_timestamp,
        &nonce,
        &Key::from_bytes(sealed.encryption.key),
    ) {
        Ok(token) => token,
        Err(e) => return c.fail(format!("{what}PrivateConnectToken::decrypt: {e}")),
    };
    check_private_fields(c, what, &token, &sealed.token);
    let data_bytes = private_data_bytes(&token);
    if let Some(want) = sealed.token.data_bytes {
        c.eq(format!("{what}data_bytes"), data_bytes, want);
    }
    if let Some(padding) = buffer.get(data_bytes..PRIVATE_ENCRYPTED_BYTES) {
        c.zero(format!("{what}decrypted padding"), padding);
    }
    c.bytes(
        format!("{what}tag left in place"),
        &buffer[PRIVATE_ENCRYPTED_BYTES..],
        &bytes[PRIVATE_ENCRYPTED_BYTES..],
    );
    if let Some(name) = &sealed.plaintext_vector
        && let Some(plaintext) = c.other_file(set, name)
        && let Some(want) = c.slice(
            format!("{what}plaintext vector {name}"),
            &plaintext,
            0..PRIVATE_ENCRYPTED_BYTES,
        )
    {
        c.bytes(
            format!("{what}decrypted plaintext vs {name}"),
            &buffer[..PRIVATE_ENCRYPTED_BYTES],
            want,
        );
    }
    if let Some(name) = &sealed.encrypted_vector
        && let Some(encrypted) = c.other_file(set, name)
    {
        c.bytes(format!("{what}sealed bytes vs {name}"), bytes, &encrypted);
    }
}

fn check_connect_token(
    c: &mut Checker,
    set: &VectorSet,
    fields: &ConnectTokenFields,
    bytes: &[u8],
) {
    c.eq("length", bytes.len(), CONNECT_TOKEN_BYTES);
    c.bytes("version_info", &fields.version_info, &VERSION_INFO);
    if let Some(version) = c.slice("version info", bytes, 0..VERSION_INFO_BYTES) {
        c.bytes("version info bytes", version, &fields.version_info);
    }
    let token = match ConnectToken::read(bytes) {
        Ok(token) => token,
        Err(e) => return c.fail(format!("ConnectToken::read: {e}")),
    };
    c.eq("protocol_id", token.protocol_id, fields.protocol_id);
    c.eq(
        "create_timestamp",
        token.create_timestamp,
        fields.create_timestamp,
    );
    c.eq(
        "expire_timestamp",
        token.expire_timestamp,
        fields.expire_timestamp,
    );
    c.bytes("nonce", &token.nonce, &fields.nonce);
    c.bytes("private_data", &token.private_data, &fields.private_data);
    c.eq(
        "timeout_seconds",
        token.timeout_seconds,
        fields.timeout_seconds,
    );
    check_addresses(
        c,
        "",
        &token.server_addresses,
        fields.num_server_addresses,
        &fields.server_addresses,
    );
    check_address_bytes(
        c,
        "",
        bytes,
        PUBLIC_ADDRESSES_OFFSET,
        &fields.server_addresses,
    );
    c.bytes(
        "client_to_server_key",
        token.client_to_server_key.as_bytes(),
        &fields.client_to_server_key,
    );
    c.bytes(
        "server_to_client_key",
        token.server_to_client_key.as_bytes(),
        &fields.server_to_client_key,
    );
    let addresses: usize = token.server_addresses.iter().map(wire_size).sum();
    let data_bytes = PUBLIC_ADDRESSES_OFFSET + addresses + 2 * KEY_BYTES;
    c.eq("data_bytes", data_bytes, fields.data_bytes);
    if let Some(padding) = bytes.get(data_bytes..) {
        c.zero("padding after the data", padding);
    }
    if let Some(name) = &fields.private_data_vector
        && let Some(sealed) = c.other_file(set, name)
    {
        c.bytes(
            format!("private_data vs {name}"),
            &token.private_data,
            &sealed,
        );
    }

    // The sealed private part, against its own inputs.
    let nested = &fields.private_token;
    c.eq(
        "private_connect_token.protocol_id",
        nested.protocol_id,
        token.protocol_id,
    );
    c.eq(
        "private_connect_token.expire_timestamp",
        nested.expire_timestamp,
        token.expire_timestamp,
    );
    c.bytes("private_connect_token.nonce", &nested.nonce, &token.nonce);
    check_private_encrypted(
        c,
        set,
        "private_connect_token.",
        nested,
        &token.private_data,
    );
    let private_addresses = match encode_addresses(&nested.token.server_addresses) {
        Ok(list) => list,
        Err(e) => return c.fail(format!("private_connect_token addresses: {e}")),
    };
    c.eq(
        "public_addresses_equal_private",
        token.server_addresses.as_slice() == private_addresses.as_slice(),
        fields.public_addresses_equal_private,
    );
}

fn encode_addresses(addresses: &[ServerAddress]) -> Result<Vec<SocketAddr>> {
    Ok(crate::encode::address_list(addresses)?.to_vec())
}

fn check_challenge_fields(
    c: &mut Checker,
    what: &str,
    got: &ChallengeToken,
    want: &ChallengeTokenFields,
) {
    c.eq(format!("{what}client_id"), got.client_id, want.client_id);
    c.bytes(format!("{what}user_data"), &got.user_data, &want.user_data);
}

fn check_challenge_plaintext(c: &mut Checker, fields: &ChallengeTokenFields, bytes: &[u8]) {
    let buffer: &[u8; CHALLENGE_TOKEN_BYTES] = match bytes.try_into() {
        Ok(buffer) => buffer,
        Err(_) => return c.fail(format!("challenge token has {} bytes", bytes.len())),
    };
    check_challenge_fields(c, "", &ChallengeToken::read(buffer), fields);
    let data_bytes = 8 + USER_DATA_BYTES;
    if let Some(want) = fields.data_bytes {
        c.eq("data_bytes", data_bytes, want);
    }
    c.zero(
        "padding after the data (tag space included)",
        &bytes[data_bytes..],
    );
}

fn check_challenge_encrypted(
    c: &mut Checker,
    set: &VectorSet,
    what: &str,
    sealed: &SealedChallengeToken,
    bytes: &[u8],
) {
    let e = &sealed.encryption;
    c.eq(
        format!("{what}encryption.algorithm"),
        e.algorithm,
        Algorithm::ChaCha20Poly1305,
    );
    c.bytes(
        format!("{what}encryption.nonce (computed by netcode-proto)"),
        &sequence_nonce(sealed.challenge_sequence),
        &e.nonce,
    );
    c.bytes(
        format!("{what}encryption.associated_data"),
        &[],
        &e.associated_data,
    );
    check_region(
        c,
        what,
        e,
        0,
        CHALLENGE_ENCRYPTED_BYTES,
        CHALLENGE_TOKEN_BYTES,
    );
    let mut buffer: [u8; CHALLENGE_TOKEN_BYTES] = match bytes.try_into() {
        Ok(buffer) => buffer,
        Err(_) => {
            return c.fail(format!(
                "{what}sealed challenge token has {} bytes",
                bytes.len()
            ));
        }
    };
    let token = match ChallengeToken::decrypt(
        &mut buffer,
        sealed.challenge_sequence,
        &Key::from_bytes(e.key),
    ) {
        Ok(token) => token,
        Err(err) => return c.fail(format!("{what}ChallengeToken::decrypt: {err}")),
    };
    check_challenge_fields(c, what, &token, &sealed.token);
    let data_bytes = 8 + USER_DATA_BYTES;
    if let Some(want) = sealed.token.data_bytes {
        c.eq(format!("{what}data_bytes"), data_bytes, want);
    }
    c.zero(
        format!("{what}decrypted padding"),
        &buffer[data_bytes..CHALLENGE_ENCRYPTED_BYTES],
    );
    if let Some(name) = &sealed.plaintext_vector
        && let Some(plaintext) = c.other_file(set, name)
        && let Some(want) = c.slice(
            format!("{what}plaintext vector {name}"),
            &plaintext,
            0..CHALLENGE_ENCRYPTED_BYTES,
        )
    {
        c.bytes(
            format!("{what}decrypted plaintext vs {name}"),
            &buffer[..CHALLENGE_ENCRYPTED_BYTES],
            want,
        );
    }
    if let Some(name) = &sealed.encrypted_vector
        && let Some(encrypted) = c.other_file(set, name)
    {
        c.bytes(format!("{what}sealed bytes vs {name}"), bytes, &encrypted);
    }
}

/// A read packet, copied out of the buffer it borrowed.
enum Decoded {
    Request(Box<ConnectionRequest>),
    Denied,
    Challenge(u64, [u8; CHALLENGE_TOKEN_BYTES]),
    Response(u64, [u8; CHALLENGE_TOKEN_BYTES]),
    KeepAlive(KeepAlivePacket),
    Payload(Vec<u8>),
    Disconnect,
}

impl Decoded {
    fn name(&self) -> &'static str {
        match self {
            Self::Request(_) => "request",
            Self::Denied => "denied",
            Self::Challenge(..) => "challenge",
            Self::Response(..) => "response",
            Self::KeepAlive(_) => "keep-alive",
            Self::Payload(_) => "payload",
            Self::Disconnect => "disconnect",
        }
    }
}

fn read_owned(
    context: &ReadContext<'_>,
    buffer: &mut [u8],
) -> std::result::Result<(u64, Decoded), PacketError> {
    let read = read_packet(context, buffer, None)?;
    let decoded = match read.packet {
        Packet::Request(request) => Decoded::Request(Box::new(request)),
        Packet::Denied => Decoded::Denied,
        Packet::Challenge(c) => Decoded::Challenge(c.challenge_sequence, *c.token),
        Packet::Response(c) => Decoded::Response(c.challenge_sequence, *c.token),
        Packet::KeepAlive(k) => Decoded::KeepAlive(k),
        Packet::Payload(p) => Decoded::Payload(p.to_vec()),
        Packet::Disconnect => Decoded::Disconnect,
    };
    Ok((read.sequence, decoded))
}

fn check_packet(c: &mut Checker, set: &VectorSet, fields: &PacketFields, bytes: &[u8]) {
    c.eq(
        "prefix byte on the wire",
        bytes.first().copied(),
        Some(fields.prefix_byte),
    );
    let is_request = matches!(fields.content, PacketContent::Request(_));
    c.eq("encrypted", fields.encrypted, !is_request);
    match &fields.framing {
        None => {
            c.eq("request prefix_byte", fields.prefix_byte, 0);
            c.eq("request length", bytes.len(), CONNECTION_REQUEST_BYTES);
        }
        Some(framing) => {
            let count = sequence_bytes(framing.sequence);
            c.eq(
                "sequence_bytes (computed by netcode-proto)",
                count,
                framing.sequence_bytes,
            );
            let prefix =
                u8::try_from(framing.sequence_bytes << 4).unwrap_or(0xf0) | fields.packet_type;
            c.eq(
                "prefix_byte = sequence bytes << 4 | type",
                prefix,
                fields.prefix_byte,
            );
            if let Some(header) = c.slice("header", bytes, 0..1 + count) {
                c.bytes("header", header, &framing.header);
            }
            let e = &framing.encryption;
            c.eq(
                "encryption.algorithm",
                e.algorithm,
                Algorithm::ChaCha20Poly1305,
            );
            c.bytes(
                "encryption.nonce (computed by netcode-proto)",
                &sequence_nonce(framing.sequence),
                &e.nonce,
            );
            c.bytes(
                "encryption.associated_data (computed by netcode-proto)",
                &packet_associated_data(fields.protocol_id, fields.prefix_byte),
                &e.associated_data,
            );
            check_region(c, "", e, 1 + count, framing.plaintext.len(), bytes.len());
        }
    }

    let keys = PacketKeys::of(fields);
    let context = keys.context(fields, fields.protocol_id);
    let mut buffer = bytes.to_vec();
    let (sequence, decoded) = match read_owned(&context, &mut buffer) {
        Ok(read) => read,
        Err(e) => return c.fail(format!("read_packet: {e}")),
    };
    if let Some(framing) = &fields.framing {
        c.eq("sequence", sequence, framing.sequence);
        let start = framing.encryption.plaintext_offset;
        if let Some(plaintext) = c.slice(
            "decrypted body",
            &buffer,
            start..buffer.len().saturating_sub(MAC_BYTES),
        ) {
            c.bytes(
                "decrypted body vs plaintext_hex",
                plaintext,
                &framing.plaintext,
            );
        }
        c.bytes(
            "tag left in place",
            &buffer[buffer.len().saturating_sub(MAC_BYTES)..],
            &bytes[bytes.len().saturating_sub(MAC_BYTES)..],
        );
    }

    match (&fields.content, decoded) {
        (PacketContent::Request(want), Decoded::Request(got)) => {
            check_request(c, set, fields, want, &got, &buffer);
        }
        (PacketContent::Denied, Decoded::Denied)
        | (PacketContent::Disconnect, Decoded::Disconnect) => {}
        (PacketContent::Challenge(want), Decoded::Challenge(sequence, token))
        | (PacketContent::Response(want), Decoded::Response(sequence, token)) => {
            check_challenge_body(c, set, want, sequence, &token);
        }
        (
            PacketContent::KeepAlive {
                client_index,
                max_clients,
            },
            Decoded::KeepAlive(got),
        ) => {
            c.eq("client_index", got.client_index, *client_index);
            c.eq("max_clients", got.max_clients, *max_clients);
        }
        (
            PacketContent::Payload {
                payload_bytes,
                payload,
            },
            Decoded::Payload(got),
        ) => {
            c.eq("payload_bytes", got.len(), *payload_bytes);
            c.bytes("payload", &got, payload);
        }
        (_, other) => c.fail(format!(
            "read_packet returned a {} packet for a {} entry",
            other.name(),
            fields.packet_type_name
        )),
    }
}

fn check_request(
    c: &mut Checker,
    set: &VectorSet,
    fields: &PacketFields,
    want: &RequestFields,
    got: &ConnectionRequest,
    decrypted: &[u8],
) {
    c.bytes("version_info", &want.version_info, &VERSION_INFO);
    if let Some(version) = c.slice("version info", decrypted, 1..1 + VERSION_INFO_BYTES) {
        c.bytes("version info bytes", version, &want.version_info);
    }
    let protocol_offset = 1 + VERSION_INFO_BYTES;
    if let Some(protocol) = c.slice(
        "protocol id",
        decrypted,
        protocol_offset..protocol_offset + 8,
    ) {
        c.bytes(
            "protocol id bytes",
            protocol,
            &fields.protocol_id.to_le_bytes(),
        );
    }
    c.eq(
        "connect_token_expire_timestamp",
        got.expire_timestamp,
        want.expire_timestamp,
    );
    c.bytes("connect_token_nonce", &got.nonce, &want.nonce);
    c.bytes(
        "mac (tag of the sealed token)",
        &got.mac,
        &want.private_data[PRIVATE_ENCRYPTED_BYTES..],
    );
    check_private_fields(
        c,
        "private_connect_token.",
        &got.token,
        &want.private_token.token,
    );

    let nested = &want.private_token;
    c.eq(
        "private_connect_token.protocol_id",
        nested.protocol_id,
        fields.protocol_id,
    );
    c.eq(
        "private_connect_token.expire_timestamp",
        nested.expire_timestamp,
        want.expire_timestamp,
    );
    c.bytes("private_connect_token.nonce", &nested.nonce, &want.nonce);
    if let Some(name) = &want.private_data_vector
        && let Some(sealed) = c.other_file(set, name)
    {
        c.bytes(
            format!("connect_token_data vs {name}"),
            &want.private_data,
            &sealed,
        );
    }
    // The sealed token as it appears on the wire: check it on its own (this
    // decrypts a copy of the original bytes, not read_packet's buffer).
    if let Some(tag) = c.slice(
        "tag of the sealed token on the wire",
        decrypted,
        CONNECTION_REQUEST_BYTES - MAC_BYTES..CONNECTION_REQUEST_BYTES,
    ) {
        c.bytes(
            "tag of the sealed token on the wire",
            tag,
            &want.private_data[PRIVATE_ENCRYPTED_BYTES..],
        );
    }
    check_private_encrypted(c, set, "private_connect_token.", nested, &want.private_data);
    // read_packet decrypted the token in place: that plaintext must be the
    // plaintext vector's.
    if let Some(name) = &nested.plaintext_vector
        && let Some(plaintext) = c.other_file(set, name)
        && let Some(want_plain) =
            c.slice("plaintext vector", &plaintext, 0..PRIVATE_ENCRYPTED_BYTES)
        && let Some(got_plain) = c.slice(
            "request plaintext",
            decrypted,
            REQUEST_PRIVATE_OFFSET..REQUEST_PRIVATE_OFFSET + PRIVATE_ENCRYPTED_BYTES,
        )
    {
        c.bytes(
            format!("private token decrypted by read_packet vs {name}"),
            got_plain,
            want_plain,
        );
    }
}

fn check_challenge_body(
    c: &mut Checker,
    set: &VectorSet,
    want: &ChallengeFields,
    sequence: u64,
    token: &[u8; CHALLENGE_TOKEN_BYTES],
) {
    c.eq(
        "challenge_token_sequence",
        sequence,
        want.challenge_sequence,
    );
    c.bytes("challenge_token_data", token, &want.token_data);
    if let Some(name) = &want.token_data_vector
        && let Some(sealed) = c.other_file(set, name)
    {
        c.bytes(format!("challenge_token_data vs {name}"), token, &sealed);
    }
    c.eq(
        "challenge_token.challenge_sequence",
        want.token.challenge_sequence,
        want.challenge_sequence,
    );
    check_challenge_encrypted(c, set, "challenge_token.", &want.token, token);
}
