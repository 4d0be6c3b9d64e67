//! `manifest.json` parsed into typed values.
//!
//! The parser is strict on purpose:
//!
//! * 64-bit values are read as exact integers (`serde_json`'s `as_u64`),
//!   never through a float, and checked against their `*_hex` twin;
//! * `timeout_seconds` is a signed 32-bit value;
//! * an unknown `kind` is an error, never skipped;
//! * a field this parser does not know is an error too, so a manifest that
//!   grows a field cannot silently go unchecked.
//!
//! The types are here; `parse.rs` reads each kind's fields and `json.rs`
//! holds the tracked object reader. [`write`](mod@write) is the inverse:
//! typed values back to JSON.

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, SocketAddr, SocketAddrV4, SocketAddrV6};

use serde_json::Value;

use crate::{Error, Result};

use json::Obj;
use parse::{parse_protocol, parse_vector};

mod json;
mod parse;
pub mod write;

/// The `format` value a manifest must have.
pub const FORMAT: &str = "netcode-wire-vectors";

/// The `format_version` this parser understands.
pub const FORMAT_VERSION: u64 = 1;

/// The whole manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// Which set this is (`"public"` for the shared set).
    pub set: String,
    /// The protocol constants the set was made with.
    pub protocol: Protocol,
    /// The keys the set uses, by name (`private_key`, `challenge_key`, ...).
    pub named_keys: BTreeMap<String, NamedKey>,
    /// How many vectors the manifest says it lists.
    pub vector_count: usize,
    /// Every entry, in manifest order.
    pub vectors: Vec<Vector>,
}

/// The `protocol` object: sizes and fixed values of netcode 1.02.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Protocol {
    /// The version string, without its NUL (`"NETCODE 1.02"`).
    pub version_info: String,
    /// The 13 version info bytes as they go on the wire.
    pub version_info_bytes: Vec<u8>,
    /// Size of a public connect token.
    pub connect_token_bytes: usize,
    /// Size of a sealed private connect token.
    pub connect_token_private_bytes: usize,
    /// Size of the connect token nonce.
    pub connect_token_nonce_bytes: usize,
    /// Size of a challenge token.
    pub challenge_token_bytes: usize,
    /// Size of a key.
    pub key_bytes: usize,
    /// Size of an authentication tag.
    pub mac_bytes: usize,
    /// Size of the user data.
    pub user_data_bytes: usize,
    /// Most server addresses in a token.
    pub max_servers_per_connect: usize,
    /// Largest payload.
    pub max_payload_bytes: usize,
    /// Size of a connection request packet.
    pub connection_request_packet_bytes: usize,
    /// First value of the server's global sequence.
    pub server_global_sequence_base: u64,
}

/// One entry of `named_keys`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedKey {
    /// What the key is used for (informational).
    pub role: String,
    /// The key bytes.
    pub key: [u8; 32],
    /// How the key bytes were made (informational).
    pub recipe: String,
}

/// The kind of a vector: what its bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A 1024-byte private connect token plaintext buffer.
    PrivateConnectTokenPlaintext,
    /// A sealed 1024-byte private connect token.
    PrivateConnectTokenEncrypted,
    /// A 2048-byte public connect token.
    ConnectToken,
    /// A 300-byte challenge token plaintext buffer.
    ChallengeTokenPlaintext,
    /// A sealed 300-byte challenge token.
    ChallengeTokenEncrypted,
    /// A connection request packet (type 0).
    PacketRequest,
    /// A connection denied packet (type 1).
    PacketDenied,
    /// A connection challenge packet (type 2).
    PacketChallenge,
    /// A connection response packet (type 3).
    PacketResponse,
    /// A keep-alive packet (type 4).
    PacketKeepAlive,
    /// A payload packet (type 5).
    PacketPayload,
    /// A disconnect packet (type 6).
    PacketDisconnect,
}

impl Kind {
    /// Every kind, in the order of the manifest's documentation.
    pub const ALL: [Self; 12] = [
        Self::PrivateConnectTokenPlaintext,
        Self::PrivateConnectTokenEncrypted,
        Self::ConnectToken,
        Self::ChallengeTokenPlaintext,
        Self::ChallengeTokenEncrypted,
        Self::PacketRequest,
        Self::PacketDenied,
        Self::PacketChallenge,
        Self::PacketResponse,
        Self::PacketKeepAlive,
        Self::PacketPayload,
        Self::PacketDisconnect,
    ];

    /// The name the manifest uses for this kind.
    pub fn name(self) -> &'static str {
        match self {
            Self::PrivateConnectTokenPlaintext => "private_connect_token_plaintext",
            Self::PrivateConnectTokenEncrypted => "private_connect_token_encrypted",
            Self::ConnectToken => "connect_token",
            Self::ChallengeTokenPlaintext => "challenge_token_plaintext",
            Self::ChallengeTokenEncrypted => "challenge_token_encrypted",
            Self::PacketRequest => "packet_request",
            Self::PacketDenied => "packet_denied",
            Self::PacketChallenge => "packet_challenge",
            Self::PacketResponse => "packet_response",
            Self::PacketKeepAlive => "packet_keep_alive",
            Self::PacketPayload => "packet_payload",
            Self::PacketDisconnect => "packet_disconnect",
        }
    }

    /// The kind with this manifest name; an unknown name is an error.
    pub fn from_name(name: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|kind| kind.name() == name)
            .ok_or_else(|| Error::new(format!("unknown vector kind {name:?}")))
    }

    /// The packet type number of a packet kind, `None` for tokens.
    pub fn packet_type(self) -> Option<u8> {
        match self {
            Self::PacketRequest => Some(0),
            Self::PacketDenied => Some(1),
            Self::PacketChallenge => Some(2),
            Self::PacketResponse => Some(3),
            Self::PacketKeepAlive => Some(4),
            Self::PacketPayload => Some(5),
            Self::PacketDisconnect => Some(6),
            _ => None,
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One entry of `manifest.vectors`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vector {
    /// The vector's name (its file name without `.bin`).
    pub name: String,
    /// The file name, relative to the set directory.
    pub file: String,
    /// What the bytes are.
    pub kind: Kind,
    /// A human description (informational).
    pub description: String,
    /// The file's exact length.
    pub bytes: usize,
    /// The SHA-256 of the file, lowercase hex.
    pub sha256: String,
    /// The inputs and expected contents, by kind.
    pub body: Body,
}

/// The kind-specific part of an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// `private_connect_token_plaintext`.
    PrivateTokenPlaintext(PrivateTokenFields),
    /// `private_connect_token_encrypted`.
    PrivateTokenEncrypted(SealedPrivateToken),
    /// `connect_token`.
    ConnectToken(Box<ConnectTokenFields>),
    /// `challenge_token_plaintext`.
    ChallengeTokenPlaintext(ChallengeTokenFields),
    /// `challenge_token_encrypted`.
    ChallengeTokenEncrypted(SealedChallengeToken),
    /// Every `packet_*` kind.
    Packet(PacketFields),
}

/// A server address as the manifest describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerAddress {
    /// The reference's own formatting of the address (informational).
    pub string: String,
    /// The wire type byte: 1 = IPv4, 2 = IPv6.
    pub address_type: u8,
    /// The IP, from `ipv4` (four octets) or `ipv6_groups` (eight groups).
    pub ip: IpAddr,
    /// The port.
    pub port: u16,
    /// The IP in network byte order (`ip_bytes_hex`).
    pub ip_bytes: Vec<u8>,
    /// The exact encoding inside a token (`wire_hex`).
    pub wire: Vec<u8>,
}

impl ServerAddress {
    /// The address as a socket address (no flow info, no scope id).
    pub fn socket_addr(&self) -> SocketAddr {
        match self.ip {
            IpAddr::V4(ip) => SocketAddr::V4(SocketAddrV4::new(ip, self.port)),
            IpAddr::V6(ip) => SocketAddr::V6(SocketAddrV6::new(ip, self.port, 0, 0)),
        }
    }
}

/// The `algorithm` of an `encryption` object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// `chacha20poly1305_ietf`: 12-byte nonce (packets, challenge tokens).
    ChaCha20Poly1305,
    /// `xchacha20poly1305_ietf`: 24-byte nonce (private connect tokens).
    XChaCha20Poly1305,
}

/// An `encryption` object: how part of a vector was sealed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Encryption {
    /// The AEAD.
    pub algorithm: Algorithm,
    /// Which named key sealed it.
    pub key_name: String,
    /// The key bytes.
    pub key: [u8; 32],
    /// The nonce (12 or 24 bytes by algorithm).
    pub nonce: Vec<u8>,
    /// The associated data (possibly empty).
    pub associated_data: Vec<u8>,
    /// Where the encrypted region starts in the vector.
    pub plaintext_offset: usize,
    /// Length of the encrypted region (and of its ciphertext).
    pub plaintext_bytes: usize,
    /// Length of the tag that follows the ciphertext.
    pub tag_bytes: usize,
}

/// The fields of a private connect token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrivateTokenFields {
    /// The client id.
    pub client_id: u64,
    /// The timeout, signed.
    pub timeout_seconds: i32,
    /// `num_server_addresses`.
    pub num_server_addresses: usize,
    /// The server addresses, in order.
    pub server_addresses: Vec<ServerAddress>,
    /// Key for packets from client to server.
    pub client_to_server_key: [u8; 32],
    /// Key for packets from server to client.
    pub server_to_client_key: [u8; 32],
    /// The 256 bytes of user data.
    pub user_data: [u8; 256],
    /// How many leading bytes of the plaintext buffer hold data (the rest is
    /// zero padding). Only top-level entries give it.
    pub data_bytes: Option<usize>,
}

/// A private connect token with everything that seals it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealedPrivateToken {
    /// The token's fields.
    pub token: PrivateTokenFields,
    /// The version info bytes bound into the associated data.
    pub version_info: Vec<u8>,
    /// The protocol id bound into the associated data.
    pub protocol_id: u64,
    /// The expire timestamp bound into the associated data.
    pub expire_timestamp: u64,
    /// The 24-byte XChaCha20 nonce.
    pub nonce: [u8; 24],
    /// How it was sealed.
    pub encryption: Encryption,
    /// The vector holding the plaintext buffer.
    pub plaintext_vector: Option<String>,
    /// The vector holding the sealed bytes (nested objects only).
    pub encrypted_vector: Option<String>,
}

/// The fields of a public connect token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectTokenFields {
    /// The version info bytes at the start of the token.
    pub version_info: Vec<u8>,
    /// The protocol id.
    pub protocol_id: u64,
    /// The create timestamp.
    pub create_timestamp: u64,
    /// The expire timestamp.
    pub expire_timestamp: u64,
    /// The nonce that sealed the private part.
    pub nonce: [u8; 24],
    /// The sealed private part as it appears in the token.
    pub private_data: [u8; 1024],
    /// The vector holding the same sealed bytes.
    pub private_data_vector: Option<String>,
    /// The timeout, signed.
    pub timeout_seconds: i32,
    /// `num_server_addresses`.
    pub num_server_addresses: usize,
    /// The public server addresses.
    pub server_addresses: Vec<ServerAddress>,
    /// Key for packets from client to server.
    pub client_to_server_key: [u8; 32],
    /// Key for packets from server to client.
    pub server_to_client_key: [u8; 32],
    /// How many leading bytes hold data (the rest is zero padding).
    pub data_bytes: usize,
    /// Whether the public address list equals the private one.
    pub public_addresses_equal_private: bool,
    /// Every input of the sealed private part.
    pub private_token: SealedPrivateToken,
}

/// The fields of a challenge token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChallengeTokenFields {
    /// The client id.
    pub client_id: u64,
    /// The 256 bytes of user data.
    pub user_data: [u8; 256],
    /// How many leading bytes hold data. Only top-level entries give it.
    pub data_bytes: Option<usize>,
}

/// A challenge token with everything that seals it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealedChallengeToken {
    /// The token's fields.
    pub token: ChallengeTokenFields,
    /// The challenge sequence the nonce is made from.
    pub challenge_sequence: u64,
    /// How it was sealed.
    pub encryption: Encryption,
    /// The vector holding the plaintext buffer.
    pub plaintext_vector: Option<String>,
    /// The vector holding the sealed bytes (nested objects only).
    pub encrypted_vector: Option<String>,
}

/// The fields common to every packet entry, and its body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PacketFields {
    /// The packet type number.
    pub packet_type: u8,
    /// The type's name (informational).
    pub packet_type_name: String,
    /// Which side would send it (informational; it does not choose the key).
    pub direction: String,
    /// The protocol id.
    pub protocol_id: u64,
    /// Whether the packet is encrypted (all but the request).
    pub encrypted: bool,
    /// The first byte of the packet.
    pub prefix_byte: u8,
    /// Sequence, header, encryption and plaintext of an encrypted packet.
    pub framing: Option<Framing>,
    /// The type-specific content.
    pub content: PacketContent,
}

/// What an encrypted packet's entry says about its framing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Framing {
    /// The packet sequence.
    pub sequence: u64,
    /// How many sequence bytes are on the wire.
    pub sequence_bytes: usize,
    /// The prefix byte and sequence bytes (`header_hex`).
    pub header: Vec<u8>,
    /// How the body was sealed.
    pub encryption: Encryption,
    /// The body before encryption (`plaintext_hex`).
    pub plaintext: Vec<u8>,
}

/// The type-specific content of a packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PacketContent {
    /// Connection request.
    Request(Box<RequestFields>),
    /// Connection denied.
    Denied,
    /// Connection challenge.
    Challenge(Box<ChallengeFields>),
    /// Connection response.
    Response(Box<ChallengeFields>),
    /// Keep-alive.
    KeepAlive {
        /// The client's slot.
        client_index: u32,
        /// The number of slots.
        max_clients: u32,
    },
    /// Payload.
    Payload {
        /// `payload_bytes`.
        payload_bytes: usize,
        /// The payload.
        payload: Vec<u8>,
    },
    /// Disconnect.
    Disconnect,
}

/// The content of a connection request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestFields {
    /// The version info bytes after the prefix.
    pub version_info: Vec<u8>,
    /// The connect token's expire timestamp.
    pub expire_timestamp: u64,
    /// The connect token's nonce.
    pub nonce: [u8; 24],
    /// The sealed private token the request carries.
    pub private_data: [u8; 1024],
    /// The vector holding the same sealed bytes.
    pub private_data_vector: Option<String>,
    /// Every input of the sealed private token.
    pub private_token: SealedPrivateToken,
}

/// The content of a challenge or response packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChallengeFields {
    /// The challenge sequence.
    pub challenge_sequence: u64,
    /// The sealed challenge token as carried.
    pub token_data: [u8; 300],
    /// The vector holding the same sealed bytes.
    pub token_data_vector: Option<String>,
    /// Every input of the sealed challenge token.
    pub token: SealedChallengeToken,
}

impl Manifest {
    /// Parses the bytes of `manifest.json`.
    pub fn parse(bytes: &[u8]) -> Result<Self> {
        let value: Value = serde_json::from_slice(bytes)
            .map_err(|e| Error::new(format!("manifest is not valid JSON: {e}")))?;
        Self::from_value(&value)
    }

    /// Builds the manifest from parsed JSON.
    pub fn from_value(value: &Value) -> Result<Self> {
        let top = Obj::new(value, "manifest")?;
        let format = top.str("format")?;
        if format != FORMAT {
            return Err(Error::new(format!(
                "manifest format is {format:?}, expected {FORMAT:?}"
            )));
        }
        let format_version = top.u64("format_version")?;
        if format_version != FORMAT_VERSION {
            return Err(Error::new(format!(
                "manifest format_version is {format_version}, expected {FORMAT_VERSION}"
            )));
        }
        let set = top.str("set")?.to_owned();
        top.ignore(&["generator", "conventions"]);
        let protocol = parse_protocol(&top.obj("protocol")?)?;

        let keys_obj = top.obj("named_keys")?;
        let mut named_keys = BTreeMap::new();
        for name in keys_obj.keys() {
            let key = keys_obj.obj(name)?;
            let parsed = NamedKey {
                role: key.str("role")?.to_owned(),
                key: key.hex_array("hex")?,
                recipe: key.str("recipe")?.to_owned(),
            };
            key.finish()?;
            named_keys.insert(name.to_owned(), parsed);
        }
        keys_obj.finish()?;

        let vector_count = top.usize("vector_count")?;
        let mut vectors = Vec::new();
        for (index, entry) in top.array("vectors")?.iter().enumerate() {
            let vector = parse_vector(entry, &named_keys)
                .map_err(|e| e.context(format!("vectors[{index}]")))?;
            vectors.push(vector);
        }
        top.finish()?;

        let mut names = BTreeSet::new();
        for vector in &vectors {
            if !names.insert(vector.name.as_str()) {
                return Err(Error::new(format!(
                    "duplicate vector name {:?}",
                    vector.name
                )));
            }
        }
        Ok(Self {
            set,
            protocol,
            named_keys,
            vector_count,
            vectors,
        })
    }
}

impl Vector {
    /// Parses one entry of `manifest.vectors`; `named_keys` are the
    /// manifest's, which every `encryption.key_hex` must agree with.
    pub fn from_value(value: &Value, named_keys: &BTreeMap<String, NamedKey>) -> Result<Self> {
        parse_vector(value, named_keys)
    }
}

#[cfg(test)]
mod tests;
