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
//! [`write`](mod@write) is the inverse: typed values back to JSON.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

use serde_json::{Map, Value};

use crate::{Error, Result, hex};

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

fn parse_protocol(p: &Obj<'_>) -> Result<Protocol> {
    let protocol = Protocol {
        version_info: p.str("version_info")?.to_owned(),
        version_info_bytes: p.hex("version_info_hex")?,
        connect_token_bytes: p.usize("connect_token_bytes")?,
        connect_token_private_bytes: p.usize("connect_token_private_bytes")?,
        connect_token_nonce_bytes: p.usize("connect_token_nonce_bytes")?,
        challenge_token_bytes: p.usize("challenge_token_bytes")?,
        key_bytes: p.usize("key_bytes")?,
        mac_bytes: p.usize("mac_bytes")?,
        user_data_bytes: p.usize("user_data_bytes")?,
        max_servers_per_connect: p.usize("max_servers_per_connect")?,
        max_payload_bytes: p.usize("max_payload_bytes")?,
        connection_request_packet_bytes: p.usize("connection_request_packet_bytes")?,
        server_global_sequence_base: p.u64("server_global_sequence_base")?,
    };
    p.finish()?;
    Ok(protocol)
}

fn parse_vector(value: &Value, named_keys: &BTreeMap<String, NamedKey>) -> Result<Vector> {
    let v = Obj::new(value, "vector")?;
    let name = v.str("name")?.to_owned();
    let inner = || -> Result<Vector> {
        let file = v.str("file")?.to_owned();
        if file.is_empty()
            || file.contains(['/', '\\'])
            || file.starts_with('.')
            || !file.ends_with(".bin")
        {
            return Err(Error::new(format!(
                "file {file:?} must be a plain .bin file name"
            )));
        }
        let kind = Kind::from_name(v.str("kind")?)?;
        let description = v.str("description")?.to_owned();
        let bytes = v.usize("bytes")?;
        let sha256 = v.str("sha256")?.to_owned();
        if sha256.len() != 64 || hex::decode(&sha256).is_err() {
            return Err(Error::new(format!(
                "sha256 {sha256:?} is not 32 bytes of hex"
            )));
        }
        let body = match kind {
            Kind::PrivateConnectTokenPlaintext => {
                Body::PrivateTokenPlaintext(private_token_fields(&v, true)?)
            }
            Kind::PrivateConnectTokenEncrypted => {
                Body::PrivateTokenEncrypted(sealed_private_token(&v, true, named_keys)?)
            }
            Kind::ConnectToken => {
                Body::ConnectToken(Box::new(connect_token_fields(&v, named_keys)?))
            }
            Kind::ChallengeTokenPlaintext => {
                Body::ChallengeTokenPlaintext(challenge_token_fields(&v, true)?)
            }
            Kind::ChallengeTokenEncrypted => {
                Body::ChallengeTokenEncrypted(sealed_challenge_token(&v, true, named_keys)?)
            }
            Kind::PacketRequest
            | Kind::PacketDenied
            | Kind::PacketChallenge
            | Kind::PacketResponse
            | Kind::PacketKeepAlive
            | Kind::PacketPayload
            | Kind::PacketDisconnect => Body::Packet(packet_fields(&v, kind, named_keys)?),
        };
        v.finish()?;
        Ok(Vector {
            name: name.clone(),
            file,
            kind,
            description,
            bytes,
            sha256,
            body,
        })
    };
    inner().map_err(|e| e.context(format!("vector {name:?}")))
}

fn private_token_fields(v: &Obj<'_>, top_level: bool) -> Result<PrivateTokenFields> {
    let (num_server_addresses, server_addresses) = addresses(v)?;
    let fields = PrivateTokenFields {
        client_id: v.u64("client_id")?,
        timeout_seconds: v.i32("timeout_seconds")?,
        num_server_addresses,
        server_addresses,
        client_to_server_key: v.hex_array("client_to_server_key_hex")?,
        server_to_client_key: v.hex_array("server_to_client_key_hex")?,
        user_data: v.hex_array("user_data_hex")?,
        data_bytes: if top_level {
            Some(v.usize("data_bytes")?)
        } else {
            None
        },
    };
    v.ignore(&["user_data_recipe"]);
    Ok(fields)
}

fn sealed_private_token(
    v: &Obj<'_>,
    top_level: bool,
    named_keys: &BTreeMap<String, NamedKey>,
) -> Result<SealedPrivateToken> {
    Ok(SealedPrivateToken {
        token: private_token_fields(v, top_level)?,
        version_info: v.hex("version_info_hex")?,
        protocol_id: v.u64("protocol_id")?,
        expire_timestamp: v.u64("expire_timestamp")?,
        nonce: v.hex_array("nonce_hex")?,
        encryption: encryption(&v.obj("encryption")?, named_keys)?,
        plaintext_vector: Some(v.str("plaintext_vector")?.to_owned()),
        encrypted_vector: if top_level {
            None
        } else {
            Some(v.str("encrypted_vector")?.to_owned())
        },
    })
}

fn nested_sealed_private_token(
    v: &Obj<'_>,
    named_keys: &BTreeMap<String, NamedKey>,
) -> Result<SealedPrivateToken> {
    let nested = v.obj("private_connect_token")?;
    let sealed = sealed_private_token(&nested, false, named_keys)?;
    nested.finish()?;
    Ok(sealed)
}

fn connect_token_fields(
    v: &Obj<'_>,
    named_keys: &BTreeMap<String, NamedKey>,
) -> Result<ConnectTokenFields> {
    let (num_server_addresses, server_addresses) = addresses(v)?;
    Ok(ConnectTokenFields {
        version_info: v.hex("version_info_hex")?,
        protocol_id: v.u64("protocol_id")?,
        create_timestamp: v.u64("create_timestamp")?,
        expire_timestamp: v.u64("expire_timestamp")?,
        nonce: v.hex_array("nonce_hex")?,
        private_data: v.hex_array("private_data_hex")?,
        private_data_vector: Some(v.str("private_data_vector")?.to_owned()),
        timeout_seconds: v.i32("timeout_seconds")?,
        num_server_addresses,
        server_addresses,
        client_to_server_key: v.hex_array("client_to_server_key_hex")?,
        server_to_client_key: v.hex_array("server_to_client_key_hex")?,
        data_bytes: v.usize("data_bytes")?,
        public_addresses_equal_private: v.bool("public_addresses_equal_private")?,
        private_token: nested_sealed_private_token(v, named_keys)?,
    })
}

fn challenge_token_fields(v: &Obj<'_>, top_level: bool) -> Result<ChallengeTokenFields> {
    let fields = ChallengeTokenFields {
        client_id: v.u64("client_id")?,
        user_data: v.hex_array("user_data_hex")?,
        data_bytes: if top_level {
            Some(v.usize("data_bytes")?)
        } else {
            None
        },
    };
    v.ignore(&["user_data_recipe"]);
    Ok(fields)
}

fn sealed_challenge_token(
    v: &Obj<'_>,
    top_level: bool,
    named_keys: &BTreeMap<String, NamedKey>,
) -> Result<SealedChallengeToken> {
    Ok(SealedChallengeToken {
        token: challenge_token_fields(v, top_level)?,
        challenge_sequence: v.u64("challenge_sequence")?,
        encryption: encryption(&v.obj("encryption")?, named_keys)?,
        plaintext_vector: Some(v.str("plaintext_vector")?.to_owned()),
        encrypted_vector: if top_level {
            None
        } else {
            Some(v.str("encrypted_vector")?.to_owned())
        },
    })
}

fn challenge_fields(
    v: &Obj<'_>,
    named_keys: &BTreeMap<String, NamedKey>,
) -> Result<ChallengeFields> {
    let nested = v.obj("challenge_token")?;
    let token = sealed_challenge_token(&nested, false, named_keys)?;
    nested.finish()?;
    Ok(ChallengeFields {
        challenge_sequence: v.u64("challenge_token_sequence")?,
        token_data: v.hex_array("challenge_token_data_hex")?,
        token_data_vector: Some(v.str("challenge_token_data_vector")?.to_owned()),
        token,
    })
}

fn packet_fields(
    v: &Obj<'_>,
    kind: Kind,
    named_keys: &BTreeMap<String, NamedKey>,
) -> Result<PacketFields> {
    let packet_type = v.u8("packet_type")?;
    if Some(packet_type) != kind.packet_type() {
        return Err(Error::new(format!(
            "packet_type {packet_type} does not match kind {kind}"
        )));
    }
    let encrypted = v.bool("encrypted")?;
    let framing = if kind == Kind::PacketRequest {
        None
    } else {
        Some(Framing {
            sequence: v.u64("sequence")?,
            sequence_bytes: v.usize("sequence_bytes")?,
            header: v.hex("header_hex")?,
            encryption: encryption(&v.obj("encryption")?, named_keys)?,
            plaintext: v.hex("plaintext_hex")?,
        })
    };
    let content = match kind {
        Kind::PacketRequest => PacketContent::Request(Box::new(RequestFields {
            version_info: v.hex("version_info_hex")?,
            expire_timestamp: v.u64("connect_token_expire_timestamp")?,
            nonce: v.hex_array("connect_token_nonce_hex")?,
            private_data: v.hex_array("connect_token_data_hex")?,
            private_data_vector: Some(v.str("connect_token_data_vector")?.to_owned()),
            private_token: nested_sealed_private_token(v, named_keys)?,
        })),
        Kind::PacketDenied => PacketContent::Denied,
        Kind::PacketChallenge => {
            PacketContent::Challenge(Box::new(challenge_fields(v, named_keys)?))
        }
        Kind::PacketResponse => PacketContent::Response(Box::new(challenge_fields(v, named_keys)?)),
        Kind::PacketKeepAlive => PacketContent::KeepAlive {
            client_index: v.u32("client_index")?,
            max_clients: v.u32("max_clients")?,
        },
        Kind::PacketPayload => {
            v.ignore(&["payload_recipe"]);
            PacketContent::Payload {
                payload_bytes: v.usize("payload_bytes")?,
                payload: v.hex("payload_hex")?,
            }
        }
        Kind::PacketDisconnect => PacketContent::Disconnect,
        _ => return Err(Error::new(format!("{kind} is not a packet kind"))),
    };
    Ok(PacketFields {
        packet_type,
        packet_type_name: v.str("packet_type_name")?.to_owned(),
        direction: v.str("direction")?.to_owned(),
        protocol_id: v.u64("protocol_id")?,
        encrypted,
        prefix_byte: v.u8("prefix_byte")?,
        framing,
        content,
    })
}

fn encryption(e: &Obj<'_>, named_keys: &BTreeMap<String, NamedKey>) -> Result<Encryption> {
    let algorithm = match e.str("algorithm")? {
        "chacha20poly1305_ietf" => Algorithm::ChaCha20Poly1305,
        "xchacha20poly1305_ietf" => Algorithm::XChaCha20Poly1305,
        other => return Err(Error::new(format!("unknown algorithm {other:?}"))),
    };
    let key_name = e.str("key_name")?.to_owned();
    let key = e.hex_array("key_hex")?;
    match named_keys.get(&key_name) {
        Some(named) if named.key == key => {}
        Some(_) => {
            return Err(Error::new(format!(
                "encryption.key_hex differs from named key {key_name:?}"
            )));
        }
        None => return Err(Error::new(format!("unknown key name {key_name:?}"))),
    }
    let parsed = Encryption {
        algorithm,
        key_name,
        key,
        nonce: e.hex("nonce_hex")?,
        associated_data: e.hex("associated_data_hex")?,
        plaintext_offset: e.usize("plaintext_offset")?,
        plaintext_bytes: e.usize("plaintext_bytes")?,
        tag_bytes: e.usize("tag_bytes")?,
    };
    e.finish()?;
    Ok(parsed)
}

fn addresses(v: &Obj<'_>) -> Result<(usize, Vec<ServerAddress>)> {
    let count = v.usize("num_server_addresses")?;
    let mut list = Vec::new();
    for (index, value) in v.array("server_addresses")?.iter().enumerate() {
        let a = Obj::new(value, "server address")?;
        let address = server_address(&a)
            .and_then(|address| a.finish().map(|()| address))
            .map_err(|e| e.context(format!("server_addresses[{index}]")))?;
        list.push(address);
    }
    Ok((count, list))
}

fn server_address(a: &Obj<'_>) -> Result<ServerAddress> {
    let address_type = a.u8("type")?;
    let type_name = a.str("type_name")?;
    let ip = match (address_type, type_name) {
        (1, "ipv4") => {
            let octets = a.array("ipv4")?;
            let octets: [u8; 4] = number_array(octets, "ipv4")?;
            IpAddr::V4(Ipv4Addr::from(octets))
        }
        (2, "ipv6") => {
            let groups = a.array("ipv6_groups")?;
            let groups: [u16; 8] = number_array(groups, "ipv6_groups")?;
            IpAddr::V6(Ipv6Addr::from(groups))
        }
        _ => {
            return Err(Error::new(format!(
                "unknown address type {address_type} ({type_name:?})"
            )));
        }
    };
    Ok(ServerAddress {
        string: a.str("string")?.to_owned(),
        address_type,
        ip,
        port: a.u16("port")?,
        ip_bytes: a.hex("ip_bytes_hex")?,
        wire: a.hex("wire_hex")?,
    })
}

fn number_array<T: TryFrom<u64>, const N: usize>(values: &[Value], what: &str) -> Result<[T; N]> {
    if values.len() != N {
        return Err(Error::new(format!(
            "{what} has {} numbers, expected {N}",
            values.len()
        )));
    }
    let mut out = Vec::with_capacity(N);
    for value in values {
        let number = value
            .as_u64()
            .and_then(|n| T::try_from(n).ok())
            .ok_or_else(|| Error::new(format!("{what} holds {value}, not a small integer")))?;
        out.push(number);
    }
    out.try_into()
        .map_err(|_| Error::new(format!("{what} has the wrong length")))
}

/// A JSON object whose reads are tracked, so that [`Obj::finish`] can refuse
/// fields nobody read.
struct Obj<'a> {
    map: &'a Map<String, Value>,
    what: &'static str,
    used: RefCell<BTreeSet<&'a str>>,
}

impl<'a> Obj<'a> {
    fn new(value: &'a Value, what: &'static str) -> Result<Self> {
        let map = value
            .as_object()
            .ok_or_else(|| Error::new(format!("{what} is not a JSON object")))?;
        Ok(Self {
            map,
            what,
            used: RefCell::new(BTreeSet::new()),
        })
    }

    fn keys(&self) -> impl Iterator<Item = &'a str> + use<'a> {
        self.map.keys().map(String::as_str)
    }

    fn mark(&self, key: &str) {
        if let Some((k, _)) = self.map.get_key_value(key) {
            self.used.borrow_mut().insert(k.as_str());
        }
    }

    fn get(&self, key: &str) -> Result<&'a Value> {
        self.mark(key);
        self.map
            .get(key)
            .ok_or_else(|| Error::new(format!("{} has no field {key:?}", self.what)))
    }

    /// Marks informational fields as read, whether present or not.
    fn ignore(&self, keys: &[&str]) {
        for key in keys {
            self.mark(key);
        }
    }

    fn str(&self, key: &str) -> Result<&'a str> {
        self.get(key)?
            .as_str()
            .ok_or_else(|| Error::new(format!("{key} is not a string")))
    }

    fn bool(&self, key: &str) -> Result<bool> {
        self.get(key)?
            .as_bool()
            .ok_or_else(|| Error::new(format!("{key} is not a boolean")))
    }

    /// An exact unsigned 64-bit integer. When the `<key>_hex` twin exists it
    /// must be the same value as a `0x`-prefixed 16-digit numeral.
    fn u64(&self, key: &str) -> Result<u64> {
        let value = self.get(key)?;
        let number = value
            .as_u64()
            .ok_or_else(|| Error::new(format!("{key} is {value}, not an exact u64")))?;
        let twin = format!("{key}_hex");
        if self.map.contains_key(&twin) {
            let text = self.str(&twin)?;
            let expected = format!("{number:#018x}");
            if text != expected {
                return Err(Error::new(format!(
                    "{twin} is {text:?} but {key} is {number} ({expected})"
                )));
            }
        }
        Ok(number)
    }

    fn small<T: TryFrom<u64>>(&self, key: &str, type_name: &str) -> Result<T> {
        let number = self.u64(key)?;
        T::try_from(number)
            .map_err(|_| Error::new(format!("{key} is {number}, too large for {type_name}")))
    }

    fn usize(&self, key: &str) -> Result<usize> {
        self.small(key, "usize")
    }

    fn u32(&self, key: &str) -> Result<u32> {
        self.small(key, "u32")
    }

    fn u16(&self, key: &str) -> Result<u16> {
        self.small(key, "u16")
    }

    fn u8(&self, key: &str) -> Result<u8> {
        self.small(key, "u8")
    }

    fn i32(&self, key: &str) -> Result<i32> {
        let value = self.get(key)?;
        value
            .as_i64()
            .and_then(|n| i32::try_from(n).ok())
            .ok_or_else(|| Error::new(format!("{key} is {value}, not a signed 32-bit integer")))
    }

    /// A byte string from a `*_hex` field.
    fn hex(&self, key: &str) -> Result<Vec<u8>> {
        hex::decode(self.str(key)?).map_err(|e| e.context(key))
    }

    fn hex_array<const N: usize>(&self, key: &str) -> Result<[u8; N]> {
        hex::decode_array(self.str(key)?).map_err(|e| e.context(key))
    }

    fn obj(&self, key: &str) -> Result<Obj<'a>> {
        Obj::new(self.get(key)?, "object").map_err(|e| e.context(key))
    }

    fn array(&self, key: &str) -> Result<&'a Vec<Value>> {
        self.get(key)?
            .as_array()
            .ok_or_else(|| Error::new(format!("{key} is not an array")))
    }

    /// Fails when the object has a field that was never read.
    fn finish(&self) -> Result<()> {
        let used = self.used.borrow();
        let unknown: Vec<&str> = self
            .map
            .keys()
            .map(String::as_str)
            .filter(|k| !used.contains(k))
            .collect();
        if unknown.is_empty() {
            Ok(())
        } else {
            Err(Error::new(format!(
                "{} has fields this parser does not check: {unknown:?}",
                self.what
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn minimal(kind: &str) -> String {
        format!(
            r#"{{
  "format": "netcode-wire-vectors", "format_version": 1, "set": "test",
  "generator": {{}}, "conventions": {{}},
  "protocol": {{
    "version_info": "NETCODE 1.02", "version_info_hex": "4e4554434f444520312e303200",
    "connect_token_bytes": 2048, "connect_token_private_bytes": 1024,
    "connect_token_nonce_bytes": 24, "challenge_token_bytes": 300, "key_bytes": 32,
    "mac_bytes": 16, "user_data_bytes": 256, "max_servers_per_connect": 32,
    "max_payload_bytes": 1200, "connection_request_packet_bytes": 1078,
    "server_global_sequence_base": 9223372036854775808,
    "server_global_sequence_base_hex": "0x8000000000000000"
  }},
  "named_keys": {{}},
  "vector_count": 1,
  "vectors": [{{
    "name": "x", "file": "x.bin", "kind": "{kind}", "description": "",
    "bytes": 18, "sha256": "{}",
    "packet_type": 1, "packet_type_name": "connection_denied",
    "direction": "server_to_client", "protocol_id": 1, "encrypted": true,
    "sequence": 0, "sequence_bytes": 1, "prefix_byte": 17, "header_hex": "1100",
    "encryption": {{
      "algorithm": "chacha20poly1305_ietf", "key_name": "k", "key_hex": "{}",
      "nonce_hex": "", "associated_data_hex": "", "plaintext_offset": 2,
      "plaintext_bytes": 0, "tag_bytes": 16
    }},
    "plaintext_hex": ""
  }}]
}}"#,
            "00".repeat(32),
            "00".repeat(32)
        )
    }

    fn with_key(text: &str) -> String {
        text.replace(
            r#""named_keys": {}"#,
            &format!(
                r#""named_keys": {{"k": {{"role": "", "hex": "{}", "recipe": ""}}}}"#,
                "00".repeat(32)
            ),
        )
    }

    #[test]
    fn parses_a_minimal_manifest() {
        let manifest = Manifest::parse(with_key(&minimal("packet_denied")).as_bytes()).unwrap();
        assert_eq!(manifest.vectors.len(), 1);
        assert_eq!(manifest.vectors[0].kind, Kind::PacketDenied);
        assert_eq!(manifest.protocol.server_global_sequence_base, 1 << 63);
    }

    #[test]
    fn an_unknown_kind_is_an_error() {
        let err = Manifest::parse(with_key(&minimal("packet_bogus")).as_bytes()).unwrap_err();
        assert!(err.message().contains("unknown vector kind"), "{err}");
    }

    #[test]
    fn an_unknown_field_is_an_error() {
        let text = with_key(&minimal("packet_denied")).replace(
            r#""plaintext_hex": """#,
            r#""plaintext_hex": "", "surprise": 1"#,
        );
        let err = Manifest::parse(text.as_bytes()).unwrap_err();
        assert!(err.message().contains("surprise"), "{err}");
    }

    #[test]
    fn an_unknown_key_name_is_an_error() {
        assert!(Manifest::parse(minimal("packet_denied").as_bytes()).is_err());
    }

    #[test]
    fn u64_is_exact_and_checked_against_its_hex_twin() {
        let value: Value = serde_json::from_str(
            r#"{"a": 18446744073709551615, "a_hex": "0xffffffffffffffff", "b": 1.5, "c": 2, "c_hex": "0x0000000000000003"}"#,
        )
        .unwrap();
        let obj = Obj::new(&value, "test").unwrap();
        assert_eq!(obj.u64("a").unwrap(), u64::MAX);
        assert!(obj.u64("b").is_err());
        assert!(obj.u64("c").is_err());
    }

    #[test]
    fn timeout_is_signed_32_bit() {
        let value: Value =
            serde_json::from_str(r#"{"t": -1, "u": 2147483648, "v": -2147483648}"#).unwrap();
        let obj = Obj::new(&value, "test").unwrap();
        assert_eq!(obj.i32("t").unwrap(), -1);
        assert!(obj.i32("u").is_err());
        assert_eq!(obj.i32("v").unwrap(), i32::MIN);
    }
}
