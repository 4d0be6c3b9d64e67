//! Rebuilding a vector's bytes from its manifest fields alone, with
//! `netcode-proto`'s writers and AEADs.
//!
//! Nothing here reads another vector file: nested inputs (the private token
//! inside a connect token or request, the challenge token inside a challenge
//! or response) are sealed again from their own fields, with the key and
//! nonce the manifest gives.

use netcode_proto::address::AddressList;
use netcode_proto::constants::{CHALLENGE_TOKEN_BYTES, CONNECT_TOKEN_PRIVATE_BYTES};
use netcode_proto::crypto::sequence_nonce;
use netcode_proto::packet::{ChallengePacket, KeepAlivePacket, RequestPacket, write_packet};
use netcode_proto::token::{ChallengeToken, ConnectToken, PrivateConnectToken};
use netcode_proto::{Key, Packet};

use crate::manifest::{
    Algorithm, Body, ChallengeFields, ChallengeTokenFields, ConnectTokenFields, Encryption,
    PacketContent, PacketFields, PrivateTokenFields, SealedChallengeToken, SealedPrivateToken,
    ServerAddress, Vector,
};
use crate::{Error, Result};

/// The bytes of `vector`, built from its fields.
///
/// The result has the length the entry gives, or this returns an error.
pub fn encode(vector: &Vector) -> Result<Vec<u8>> {
    let bytes = encode_body(&vector.body)?;
    if bytes.len() != vector.bytes {
        return Err(Error::new(format!(
            "{}: encoded {} bytes, the manifest says {}",
            vector.name,
            bytes.len(),
            vector.bytes
        )));
    }
    Ok(bytes)
}

/// The bytes of an entry with this body, whatever length they have.
pub fn encode_body(body: &Body) -> Result<Vec<u8>> {
    Ok(match body {
        Body::PrivateTokenPlaintext(fields) => private_token(fields)?
            .write()
            .map_err(|e| Error::new(format!("writing the private token: {e}")))?
            .to_vec(),
        Body::PrivateTokenEncrypted(sealed) => seal_private_token(sealed)?.to_vec(),
        Body::ConnectToken(fields) => connect_token(fields)?,
        Body::ChallengeTokenPlaintext(fields) => challenge_token(fields).write().to_vec(),
        Body::ChallengeTokenEncrypted(sealed) => seal_challenge_token(sealed)?.to_vec(),
        Body::Packet(fields) => packet(fields)?,
    })
}

/// The address list of a token from the manifest's addresses.
pub fn address_list(addresses: &[ServerAddress]) -> Result<AddressList> {
    let mut list = AddressList::new();
    for address in addresses {
        list.push(address.socket_addr())
            .map_err(|_| Error::new("more than 32 server addresses"))?;
    }
    Ok(list)
}

/// The private connect token with these fields.
pub fn private_token(fields: &PrivateTokenFields) -> Result<PrivateConnectToken> {
    Ok(PrivateConnectToken {
        client_id: fields.client_id,
        timeout_seconds: fields.timeout_seconds,
        server_addresses: address_list(&fields.server_addresses)?,
        client_to_server_key: Key::from_bytes(fields.client_to_server_key),
        server_to_client_key: Key::from_bytes(fields.server_to_client_key),
        user_data: fields.user_data,
    })
}

/// The sealed private connect token: written, then encrypted with the
/// entry's key and 24-byte nonce under its protocol id and expire timestamp.
pub fn seal_private_token(
    sealed: &SealedPrivateToken,
) -> Result<[u8; CONNECT_TOKEN_PRIVATE_BYTES]> {
    let encryption = &sealed.encryption;
    expect_algorithm(encryption, Algorithm::XChaCha20Poly1305)?;
    let nonce: [u8; 24] = encryption.nonce.as_slice().try_into().map_err(|_| {
        Error::new(format!(
            "private token nonce has {} bytes, expected 24",
            encryption.nonce.len()
        ))
    })?;
    private_token(&sealed.token)?
        .encrypt(
            sealed.protocol_id,
            sealed.expire_timestamp,
            &nonce,
            &Key::from_bytes(encryption.key),
        )
        .map_err(|e| Error::new(format!("sealing the private token: {e}")))
}

/// The challenge token with these fields.
pub fn challenge_token(fields: &ChallengeTokenFields) -> ChallengeToken {
    ChallengeToken {
        client_id: fields.client_id,
        user_data: fields.user_data,
    }
}

/// The sealed challenge token, encrypted with the entry's key at its
/// challenge sequence.
///
/// `netcode-proto` derives the nonce from the sequence, so the entry's nonce
/// must be that nonce; anything else is an error rather than a silent
/// substitution.
pub fn seal_challenge_token(sealed: &SealedChallengeToken) -> Result<[u8; CHALLENGE_TOKEN_BYTES]> {
    let encryption = &sealed.encryption;
    expect_algorithm(encryption, Algorithm::ChaCha20Poly1305)?;
    expect_sequence_nonce(encryption, sealed.challenge_sequence)?;
    Ok(challenge_token(&sealed.token)
        .encrypt(sealed.challenge_sequence, &Key::from_bytes(encryption.key)))
}

fn connect_token(fields: &ConnectTokenFields) -> Result<Vec<u8>> {
    let token = ConnectToken {
        protocol_id: fields.protocol_id,
        create_timestamp: fields.create_timestamp,
        expire_timestamp: fields.expire_timestamp,
        nonce: fields.nonce,
        private_data: seal_private_token(&fields.private_token)?,
        timeout_seconds: fields.timeout_seconds,
        server_addresses: address_list(&fields.server_addresses)?,
        client_to_server_key: Key::from_bytes(fields.client_to_server_key),
        server_to_client_key: Key::from_bytes(fields.server_to_client_key),
    };
    Ok(token
        .write()
        .map_err(|e| Error::new(format!("writing the connect token: {e}")))?
        .to_vec())
}

fn packet(fields: &PacketFields) -> Result<Vec<u8>> {
    let mut out = vec![0u8; netcode_proto::constants::MAX_PACKET_BYTES];
    let protocol_id = fields.protocol_id;
    let written = match &fields.content {
        PacketContent::Request(request) => {
            if fields.framing.is_some() {
                return Err(Error::new("a connection request has no encrypted framing"));
            }
            let private_data = seal_private_token(&request.private_token)?;
            let packet = Packet::Request(RequestPacket {
                expire_timestamp: request.expire_timestamp,
                nonce: &request.nonce,
                private_data: &private_data,
            });
            // A request is not encrypted: write_packet ignores sequence and key.
            write_packet(&packet, 0, &Key::from_bytes([0; 32]), protocol_id, &mut out)
        }
        content => {
            let framing = fields
                .framing
                .as_ref()
                .ok_or_else(|| Error::new("an encrypted packet entry has no framing"))?;
            expect_algorithm(&framing.encryption, Algorithm::ChaCha20Poly1305)?;
            expect_sequence_nonce(&framing.encryption, framing.sequence)?;
            let key = Key::from_bytes(framing.encryption.key);
            let token;
            let packet = match content {
                PacketContent::Request(_) => {
                    return Err(Error::new("a connection request is not encrypted"));
                }
                PacketContent::Denied => Packet::Denied,
                PacketContent::Disconnect => Packet::Disconnect,
                PacketContent::Challenge(challenge) => {
                    token = seal_challenge_token(&challenge.token)?;
                    Packet::Challenge(challenge_body(challenge, &token))
                }
                PacketContent::Response(challenge) => {
                    token = seal_challenge_token(&challenge.token)?;
                    Packet::Response(challenge_body(challenge, &token))
                }
                PacketContent::KeepAlive {
                    client_index,
                    max_clients,
                } => Packet::KeepAlive(KeepAlivePacket {
                    client_index: *client_index,
                    max_clients: *max_clients,
                }),
                PacketContent::Payload { payload, .. } => Packet::Payload(payload),
            };
            write_packet(&packet, framing.sequence, &key, protocol_id, &mut out)
        }
    }
    .map_err(|e| Error::new(format!("writing the packet: {e}")))?;
    out.truncate(written);
    Ok(out)
}

fn challenge_body<'a>(
    challenge: &ChallengeFields,
    token: &'a [u8; CHALLENGE_TOKEN_BYTES],
) -> ChallengePacket<'a> {
    ChallengePacket {
        challenge_sequence: challenge.challenge_sequence,
        token,
    }
}

fn expect_algorithm(encryption: &Encryption, algorithm: Algorithm) -> Result<()> {
    if encryption.algorithm == algorithm {
        Ok(())
    } else {
        Err(Error::new(format!(
            "encryption algorithm is {:?}, expected {algorithm:?}",
            encryption.algorithm
        )))
    }
}

fn expect_sequence_nonce(encryption: &Encryption, sequence: u64) -> Result<()> {
    if encryption.nonce == sequence_nonce(sequence) {
        Ok(())
    } else {
        Err(Error::new(format!(
            "encryption nonce {} is not the nonce of sequence {sequence:#x}",
            crate::hex::encode(&encryption.nonce)
        )))
    }
}
