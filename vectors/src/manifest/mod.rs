//! `manifest.json` read into typed values, and written back.
//!
//! The reader is strict on purpose:
//!
//! * 64-bit values are read as exact integers, never through a float, and
//!   checked against their `*_hex` twin when it is given;
//! * `timeout_seconds` is a signed 32-bit value;
//! * an unknown `kind` is an error, never skipped;
//! * a field the reader does not know is an error too, so a manifest that
//!   grows a field cannot silently go unchecked;
//! * an error names the entry and the field (`vectors[3]: vector
//!   "packet_payload": encryption.key_hex: ...`).
//!
//! The types are here, and serde reads and writes them: they derive it,
//! with fields renamed where the JSON names differ and byte strings as hex.
//! An entry is one JSON object in which its head and its kind's fields sit
//! side by side, where the types nest: `read.rs` takes an entry apart by
//! its kind and checks what one field says about another, with `json.rs`
//! for what no type holds (the `_hex` twins of 64-bit values,
//! informational fields) and for objects that hold several types;
//! [`write`](mod@write) writes a manifest back.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

mod address;
mod json;
mod names;
mod read;
#[cfg(test)]
mod tests;
pub mod write;

pub use address::ServerAddress;
pub use names::{Algorithm, Kind};

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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Protocol {
    /// The version string, without its NUL (`"NETCODE 1.02"`).
    pub version_info: String,
    /// The 13 version info bytes as they go on the wire.
    #[serde(rename = "version_info_hex", with = "json::hex")]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NamedKey {
    /// What the key is used for (informational).
    pub role: String,
    /// The key bytes.
    #[serde(rename = "hex", with = "json::hex")]
    pub key: [u8; 32],
    /// How the key bytes were made (informational).
    pub recipe: String,
}

/// One entry of `manifest.vectors`. In JSON, one object: these fields, then
/// those of its body, side by side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
    #[serde(flatten)]
    pub body: Body,
}

/// The kind-specific part of an entry. In JSON, its variant's fields alone:
/// the entry's `kind` says which variant it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
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

/// An `encryption` object: how part of a vector was sealed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Encryption {
    /// The AEAD.
    pub algorithm: Algorithm,
    /// Which named key sealed it.
    pub key_name: String,
    /// The key bytes.
    #[serde(rename = "key_hex", with = "json::hex")]
    pub key: [u8; 32],
    /// The nonce (12 or 24 bytes by algorithm).
    #[serde(rename = "nonce_hex", with = "json::hex")]
    pub nonce: Vec<u8>,
    /// The associated data (possibly empty).
    #[serde(rename = "associated_data_hex", with = "json::hex")]
    pub associated_data: Vec<u8>,
    /// Where the encrypted region starts in the vector.
    pub plaintext_offset: usize,
    /// Length of the encrypted region (and of its ciphertext).
    pub plaintext_bytes: usize,
    /// Length of the tag that follows the ciphertext.
    pub tag_bytes: usize,
}

/// The fields of a private connect token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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
    #[serde(rename = "client_to_server_key_hex", with = "json::hex")]
    pub client_to_server_key: [u8; 32],
    /// Key for packets from server to client.
    #[serde(rename = "server_to_client_key_hex", with = "json::hex")]
    pub server_to_client_key: [u8; 32],
    /// The 256 bytes of user data.
    #[serde(rename = "user_data_hex", with = "json::hex")]
    pub user_data: [u8; 256],
    /// How many leading bytes of the plaintext buffer hold data (the rest is
    /// zero padding). Only top-level entries give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_bytes: Option<usize>,
}

/// A private connect token with everything that seals it. In JSON, the
/// token's fields and these side by side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SealedPrivateToken {
    /// The token's fields.
    #[serde(flatten)]
    pub token: PrivateTokenFields,
    /// The version info bytes bound into the associated data.
    #[serde(rename = "version_info_hex", with = "json::hex")]
    pub version_info: Vec<u8>,
    /// The protocol id bound into the associated data.
    pub protocol_id: u64,
    /// The expire timestamp bound into the associated data.
    pub expire_timestamp: u64,
    /// The 24-byte XChaCha20 nonce.
    #[serde(rename = "nonce_hex", with = "json::hex")]
    pub nonce: [u8; 24],
    /// How it was sealed.
    pub encryption: Encryption,
    /// The vector holding the plaintext buffer (always given).
    #[serde(deserialize_with = "json::given")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plaintext_vector: Option<String>,
    /// The vector holding the sealed bytes (nested objects only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encrypted_vector: Option<String>,
}

/// The fields of a public connect token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConnectTokenFields {
    /// The version info bytes at the start of the token.
    #[serde(rename = "version_info_hex", with = "json::hex")]
    pub version_info: Vec<u8>,
    /// The protocol id.
    pub protocol_id: u64,
    /// The create timestamp.
    pub create_timestamp: u64,
    /// The expire timestamp.
    pub expire_timestamp: u64,
    /// The nonce that sealed the private part.
    #[serde(rename = "nonce_hex", with = "json::hex")]
    pub nonce: [u8; 24],
    /// The sealed private part as it appears in the token.
    #[serde(rename = "private_data_hex", with = "json::hex")]
    pub private_data: [u8; 1024],
    /// The vector holding the same sealed bytes (always given).
    #[serde(deserialize_with = "json::given")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub private_data_vector: Option<String>,
    /// The timeout, signed.
    pub timeout_seconds: i32,
    /// `num_server_addresses`.
    pub num_server_addresses: usize,
    /// The public server addresses.
    pub server_addresses: Vec<ServerAddress>,
    /// Key for packets from client to server.
    #[serde(rename = "client_to_server_key_hex", with = "json::hex")]
    pub client_to_server_key: [u8; 32],
    /// Key for packets from server to client.
    #[serde(rename = "server_to_client_key_hex", with = "json::hex")]
    pub server_to_client_key: [u8; 32],
    /// How many leading bytes hold data (the rest is zero padding).
    pub data_bytes: usize,
    /// Whether the public address list equals the private one.
    pub public_addresses_equal_private: bool,
    /// Every input of the sealed private part (`private_connect_token`).
    #[serde(rename = "private_connect_token")]
    #[serde(deserialize_with = "json::flattened::<_, PrivateTokenFields, _>")]
    pub private_token: SealedPrivateToken,
}

/// The fields of a challenge token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChallengeTokenFields {
    /// The client id.
    pub client_id: u64,
    /// The 256 bytes of user data.
    #[serde(rename = "user_data_hex", with = "json::hex")]
    pub user_data: [u8; 256],
    /// How many leading bytes hold data. Only top-level entries give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_bytes: Option<usize>,
}

/// A challenge token with everything that seals it. In JSON, the token's
/// fields and these side by side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SealedChallengeToken {
    /// The token's fields.
    #[serde(flatten)]
    pub token: ChallengeTokenFields,
    /// The challenge sequence the nonce is made from.
    pub challenge_sequence: u64,
    /// How it was sealed.
    pub encryption: Encryption,
    /// The vector holding the plaintext buffer (always given).
    #[serde(deserialize_with = "json::given")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plaintext_vector: Option<String>,
    /// The vector holding the sealed bytes (nested objects only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encrypted_vector: Option<String>,
}

/// The fields common to every packet entry, and its body. In JSON, these,
/// the framing's and the content's side by side; the reader takes them
/// apart by the entry's kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
    #[serde(flatten)]
    pub framing: Option<Framing>,
    /// The type-specific content.
    #[serde(flatten)]
    pub content: PacketContent,
}

/// What an encrypted packet's entry says about its framing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Framing {
    /// The packet sequence.
    pub sequence: u64,
    /// How many sequence bytes are on the wire.
    pub sequence_bytes: usize,
    /// The prefix byte and sequence bytes (`header_hex`).
    #[serde(rename = "header_hex", with = "json::hex")]
    pub header: Vec<u8>,
    /// How the body was sealed.
    pub encryption: Encryption,
    /// The body before encryption (`plaintext_hex`).
    #[serde(rename = "plaintext_hex", with = "json::hex")]
    pub plaintext: Vec<u8>,
}

/// The type-specific content of a packet. In JSON, its variant's fields
/// alone (none for `Denied` and `Disconnect`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
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
        #[serde(rename = "payload_hex", with = "json::hex")]
        payload: Vec<u8>,
    },
    /// Disconnect.
    Disconnect,
}

/// The content of a connection request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestFields {
    /// The version info bytes after the prefix.
    #[serde(rename = "version_info_hex", with = "json::hex")]
    pub version_info: Vec<u8>,
    /// The connect token's expire timestamp.
    #[serde(rename = "connect_token_expire_timestamp")]
    pub expire_timestamp: u64,
    /// The connect token's nonce.
    #[serde(rename = "connect_token_nonce_hex", with = "json::hex")]
    pub nonce: [u8; 24],
    /// The sealed private token the request carries.
    #[serde(rename = "connect_token_data_hex", with = "json::hex")]
    pub private_data: [u8; 1024],
    /// The vector holding the same sealed bytes (always given).
    #[serde(rename = "connect_token_data_vector", deserialize_with = "json::given")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub private_data_vector: Option<String>,
    /// Every input of the sealed private token (`private_connect_token`).
    #[serde(rename = "private_connect_token")]
    #[serde(deserialize_with = "json::flattened::<_, PrivateTokenFields, _>")]
    pub private_token: SealedPrivateToken,
}

/// The content of a challenge or response packet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChallengeFields {
    /// The challenge sequence.
    #[serde(rename = "challenge_token_sequence")]
    pub challenge_sequence: u64,
    /// The sealed challenge token as carried.
    #[serde(rename = "challenge_token_data_hex", with = "json::hex")]
    pub token_data: [u8; 300],
    /// The vector holding the same sealed bytes (always given).
    #[serde(rename = "challenge_token_data_vector")]
    #[serde(deserialize_with = "json::given")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_data_vector: Option<String>,
    /// Every input of the sealed challenge token (`challenge_token`).
    #[serde(rename = "challenge_token")]
    #[serde(deserialize_with = "json::flattened::<_, ChallengeTokenFields, _>")]
    pub token: SealedChallengeToken,
}
