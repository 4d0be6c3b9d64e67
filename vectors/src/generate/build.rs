//! Manifest entries built from their inputs alone: every derived field
//! (lengths, associated data, nonces, wire forms of addresses, sealed
//! parts, headers, packet plaintexts, SHA-256) is computed with
//! `netcode-proto` and this crate's encoder, never written by hand.

use std::net::SocketAddr;

use netcode_proto::Key;
use netcode_proto::constants::{
    CONNECT_TOKEN_NONCE_BYTES, KEY_BYTES, MAC_BYTES, USER_DATA_BYTES, VERSION_INFO,
};
use netcode_proto::crypto::{self, Tag, sequence_nonce};
use netcode_proto::packet::{packet_associated_data, sequence_bytes};
use netcode_proto::token::private_token_associated_data;
use sha2::{Digest, Sha256};

use crate::decode::{
    CHALLENGE_DATA_BYTES, CHALLENGE_ENCRYPTED_BYTES, PRIVATE_ENCRYPTED_BYTES, address_type,
    network_order, private_data_bytes, public_data_bytes, wire_form,
};
use crate::encode::{encode_body, seal_challenge_token, seal_private_token};
use crate::manifest::{
    Algorithm, Body, ChallengeFields, ChallengeTokenFields, ConnectTokenFields, Encryption,
    Framing, Kind, PacketContent, PacketFields, PrivateTokenFields, RequestFields,
    SealedChallengeToken, SealedPrivateToken, ServerAddress, Vector,
};
use crate::{Error, Result, hex};

/// A named key of the set.
#[derive(Debug, Clone, Copy)]
pub(super) struct NamedKey {
    pub(super) name: &'static str,
    pub(super) key: [u8; KEY_BYTES],
}

/// Everything that goes into a private connect token and its sealing.
#[derive(Debug, Clone)]
pub(super) struct PrivateInputs {
    pub(super) name: &'static str,
    pub(super) client_id: u64,
    pub(super) timeout_seconds: i32,
    pub(super) addresses: Vec<SocketAddr>,
    pub(super) client_to_server_key: [u8; KEY_BYTES],
    pub(super) server_to_client_key: [u8; KEY_BYTES],
    pub(super) user_data: [u8; USER_DATA_BYTES],
    pub(super) protocol_id: u64,
    pub(super) expire_timestamp: u64,
    pub(super) nonce: [u8; CONNECT_TOKEN_NONCE_BYTES],
    pub(super) key: NamedKey,
}

/// Everything that goes into a challenge token and its sealing.
#[derive(Debug, Clone)]
pub(super) struct ChallengeInputs {
    pub(super) name: &'static str,
    pub(super) client_id: u64,
    pub(super) user_data: [u8; USER_DATA_BYTES],
    pub(super) sequence: u64,
    pub(super) key: NamedKey,
}

/// The name of the plaintext entry of the token called `name`.
fn plaintext_name(name: &str) -> String {
    format!("{name}_plaintext")
}

/// The name of the sealed entry of the token called `name`.
pub(super) fn encrypted_name(name: &str) -> String {
    format!("{name}_encrypted")
}

/// The framing of an encrypted packet: its sequence and its key.
#[derive(Debug, Clone, Copy)]
pub(super) struct PacketInputs {
    pub(super) protocol_id: u64,
    pub(super) sequence: u64,
    pub(super) key: NamedKey,
    pub(super) direction: &'static str,
}

/// An entry with `body`, its length and SHA-256 taken from its encoding.
pub(super) fn entry(name: &str, kind: Kind, description: String, body: Body) -> Result<Vector> {
    let bytes = encode_body(&body).map_err(|e| e.context(name))?;
    Ok(Vector {
        name: name.to_owned(),
        file: format!("{name}.bin"),
        kind,
        description,
        bytes: bytes.len(),
        sha256: hex::encode(Sha256::digest(&bytes).as_slice()),
        body,
    })
}

fn server_address(address: &SocketAddr) -> Result<ServerAddress> {
    Ok(ServerAddress {
        string: address.to_string(),
        address_type: address_type(address),
        ip: address.ip(),
        port: address.port(),
        ip_bytes: network_order(&address.ip()),
        wire: wire_form(address)
            .ok_or_else(|| Error::new(format!("cannot write the address {address}")))?,
    })
}

fn server_addresses(addresses: &[SocketAddr]) -> Result<Vec<ServerAddress>> {
    addresses.iter().map(server_address).collect()
}

/// The token's fields; a top-level entry also says how many bytes hold data.
pub(super) fn private_fields(
    inputs: &PrivateInputs,
    top_level: bool,
) -> Result<PrivateTokenFields> {
    Ok(PrivateTokenFields {
        client_id: inputs.client_id,
        timeout_seconds: inputs.timeout_seconds,
        num_server_addresses: inputs.addresses.len(),
        server_addresses: server_addresses(&inputs.addresses)?,
        client_to_server_key: inputs.client_to_server_key,
        server_to_client_key: inputs.server_to_client_key,
        user_data: inputs.user_data,
        data_bytes: top_level.then(|| private_data_bytes(&inputs.addresses)),
    })
}

/// The sealed token; a nested one also names the sealed entry.
pub(super) fn sealed_private(
    inputs: &PrivateInputs,
    top_level: bool,
) -> Result<SealedPrivateToken> {
    Ok(SealedPrivateToken {
        token: private_fields(inputs, top_level)?,
        version_info: VERSION_INFO.to_vec(),
        protocol_id: inputs.protocol_id,
        expire_timestamp: inputs.expire_timestamp,
        nonce: inputs.nonce,
        encryption: Encryption {
            algorithm: Algorithm::XChaCha20Poly1305,
            key_name: inputs.key.name.to_owned(),
            key: inputs.key.key,
            nonce: inputs.nonce.to_vec(),
            associated_data: private_token_associated_data(
                inputs.protocol_id,
                inputs.expire_timestamp,
            )
            .to_vec(),
            plaintext_offset: 0,
            plaintext_bytes: PRIVATE_ENCRYPTED_BYTES,
            tag_bytes: MAC_BYTES,
        },
        plaintext_vector: Some(plaintext_name(inputs.name)),
        encrypted_vector: (!top_level).then(|| encrypted_name(inputs.name)),
    })
}

fn challenge_fields(inputs: &ChallengeInputs, top_level: bool) -> ChallengeTokenFields {
    ChallengeTokenFields {
        client_id: inputs.client_id,
        user_data: inputs.user_data,
        data_bytes: top_level.then_some(CHALLENGE_DATA_BYTES),
    }
}

fn sealed_challenge(inputs: &ChallengeInputs, top_level: bool) -> SealedChallengeToken {
    SealedChallengeToken {
        token: challenge_fields(inputs, top_level),
        challenge_sequence: inputs.sequence,
        encryption: Encryption {
            algorithm: Algorithm::ChaCha20Poly1305,
            key_name: inputs.key.name.to_owned(),
            key: inputs.key.key,
            nonce: sequence_nonce(inputs.sequence).to_vec(),
            associated_data: Vec::new(),
            plaintext_offset: 0,
            plaintext_bytes: CHALLENGE_ENCRYPTED_BYTES,
            tag_bytes: MAC_BYTES,
        },
        plaintext_vector: Some(plaintext_name(inputs.name)),
        encrypted_vector: (!top_level).then(|| encrypted_name(inputs.name)),
    }
}

/// The plaintext and the sealed entry of a private connect token.
pub(super) fn private_token_entries(inputs: &PrivateInputs) -> Result<[Vector; 2]> {
    let count = inputs.addresses.len();
    Ok([
        entry(
            &plaintext_name(inputs.name),
            Kind::PrivateConnectTokenPlaintext,
            format!("private connect token plaintext, {count} server address(es)"),
            Body::PrivateTokenPlaintext(private_fields(inputs, true)?),
        )?,
        entry(
            &encrypted_name(inputs.name),
            Kind::PrivateConnectTokenEncrypted,
            format!(
                "private connect token sealed with {}, expire timestamp {:#x}",
                inputs.key.name, inputs.expire_timestamp
            ),
            Body::PrivateTokenEncrypted(sealed_private(inputs, true)?),
        )?,
    ])
}

/// The plaintext and the sealed entry of a challenge token.
pub(super) fn challenge_token_entries(inputs: &ChallengeInputs) -> Result<[Vector; 2]> {
    Ok([
        entry(
            &plaintext_name(inputs.name),
            Kind::ChallengeTokenPlaintext,
            "challenge token plaintext".to_owned(),
            Body::ChallengeTokenPlaintext(challenge_fields(inputs, true)),
        )?,
        entry(
            &encrypted_name(inputs.name),
            Kind::ChallengeTokenEncrypted,
            format!(
                "challenge token sealed with {} at challenge sequence {:#x}",
                inputs.key.name, inputs.sequence
            ),
            Body::ChallengeTokenEncrypted(sealed_challenge(inputs, true)),
        )?,
    ])
}

/// A public connect token wrapping the sealed token of `private`, listing
/// `public_addresses` and issued at `create_timestamp`.
pub(super) fn connect_token_entry(
    name: &str,
    private: &PrivateInputs,
    public_addresses: &[SocketAddr],
    create_timestamp: u64,
) -> Result<Vector> {
    let nested = sealed_private(private, false)?;
    let fields = ConnectTokenFields {
        version_info: VERSION_INFO.to_vec(),
        protocol_id: private.protocol_id,
        create_timestamp,
        expire_timestamp: private.expire_timestamp,
        nonce: private.nonce,
        private_data: seal_private_token(&nested)?,
        private_data_vector: Some(encrypted_name(private.name)),
        timeout_seconds: private.timeout_seconds,
        num_server_addresses: public_addresses.len(),
        server_addresses: server_addresses(public_addresses)?,
        client_to_server_key: private.client_to_server_key,
        server_to_client_key: private.server_to_client_key,
        data_bytes: public_data_bytes(public_addresses),
        public_addresses_equal_private: public_addresses == private.addresses.as_slice(),
        private_token: nested,
    };
    entry(
        name,
        Kind::ConnectToken,
        format!(
            "public connect token wrapping {}",
            encrypted_name(private.name)
        ),
        Body::ConnectToken(Box::new(fields)),
    )
}

/// A connection request carrying the sealed token of `private`.
pub(super) fn request_entry(name: &str, private: &PrivateInputs) -> Result<Vector> {
    let nested = sealed_private(private, false)?;
    let fields = PacketFields {
        packet_type: 0,
        packet_type_name: "connection_request".to_owned(),
        direction: "client_to_server".to_owned(),
        protocol_id: private.protocol_id,
        encrypted: false,
        prefix_byte: 0,
        framing: None,
        content: PacketContent::Request(Box::new(RequestFields {
            version_info: VERSION_INFO.to_vec(),
            expire_timestamp: private.expire_timestamp,
            nonce: private.nonce,
            private_data: seal_private_token(&nested)?,
            private_data_vector: Some(encrypted_name(private.name)),
            private_token: nested,
        })),
    };
    entry(
        name,
        Kind::PacketRequest,
        format!(
            "connection request carrying {}, expire timestamp {:#x}",
            encrypted_name(private.name),
            private.expire_timestamp
        ),
        Body::Packet(fields),
    )
}

/// The content of a challenge or response packet carrying `challenge`.
pub(super) fn challenge_content(challenge: &ChallengeInputs) -> Result<Box<ChallengeFields>> {
    let token = sealed_challenge(challenge, false);
    Ok(Box::new(ChallengeFields {
        challenge_sequence: challenge.sequence,
        token_data: seal_challenge_token(&token)?,
        token_data_vector: Some(encrypted_name(challenge.name)),
        token,
    }))
}

/// The kind of a packet entry with this content.
fn packet_kind(content: &PacketContent) -> Kind {
    match content {
        PacketContent::Request(_) => Kind::PacketRequest,
        PacketContent::Denied => Kind::PacketDenied,
        PacketContent::Challenge(_) => Kind::PacketChallenge,
        PacketContent::Response(_) => Kind::PacketResponse,
        PacketContent::KeepAlive { .. } => Kind::PacketKeepAlive,
        PacketContent::Payload { .. } => Kind::PacketPayload,
        PacketContent::Disconnect => Kind::PacketDisconnect,
    }
}

/// An encrypted packet with `content`.
///
/// The prefix byte, header and plaintext are read back from the packet
/// `netcode-proto` writes: it is encrypted once with placeholders in those
/// fields (which the encoder does not use), then opened again.
pub(super) fn packet_entry(
    name: &str,
    framing: PacketInputs,
    content: PacketContent,
) -> Result<Vector> {
    let kind = packet_kind(&content);
    let packet_type = kind
        .packet_type()
        .ok_or_else(|| Error::new(format!("{kind} is not a packet kind")))?;
    let count = sequence_bytes(framing.sequence);
    let mut fields = PacketFields {
        packet_type,
        packet_type_name: format!("connection_{}", kind.name().trim_start_matches("packet_")),
        direction: framing.direction.to_owned(),
        protocol_id: framing.protocol_id,
        encrypted: true,
        prefix_byte: 0,
        framing: Some(Framing {
            sequence: framing.sequence,
            sequence_bytes: count,
            header: Vec::new(),
            encryption: Encryption {
                algorithm: Algorithm::ChaCha20Poly1305,
                key_name: framing.key.name.to_owned(),
                key: framing.key.key,
                nonce: sequence_nonce(framing.sequence).to_vec(),
                associated_data: Vec::new(),
                plaintext_offset: 1 + count,
                plaintext_bytes: 0,
                tag_bytes: MAC_BYTES,
            },
            plaintext: Vec::new(),
        }),
        content,
    };
    let sealed = encode_body(&Body::Packet(fields.clone())).map_err(|e| e.context(name))?;
    let prefix = sealed[0];
    let associated_data = packet_associated_data(framing.protocol_id, prefix);
    let (head, tag) = sealed.split_at(sealed.len() - MAC_BYTES);
    let tag: &Tag = tag
        .try_into()
        .map_err(|_| Error::new(format!("{name}: the packet has no tag")))?;
    let mut plaintext = head[1 + count..].to_vec();
    crypto::decrypt(
        &Key::from_bytes(framing.key.key),
        &sequence_nonce(framing.sequence),
        &associated_data,
        &mut plaintext,
        tag,
    )
    .map_err(|_| Error::new(format!("{name}: the packet does not open")))?;
    fields.prefix_byte = prefix;
    if let Some(f) = fields.framing.as_mut() {
        f.header = head[..1 + count].to_vec();
        f.encryption.associated_data = associated_data.to_vec();
        f.encryption.plaintext_bytes = plaintext.len();
        f.plaintext = plaintext;
    }
    entry(
        name,
        kind,
        format!(
            "{} packet, sequence {:#x} ({count} sequence bytes), {}",
            kind.name().trim_start_matches("packet_"),
            framing.sequence,
            framing.key.name
        ),
        Body::Packet(fields),
    )
}
