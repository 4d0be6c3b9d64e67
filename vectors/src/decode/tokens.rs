//! Checks of server addresses, private connect tokens, public connect
//! tokens and challenge tokens against their entries (STANDARD.md,
//! "Connect Token" and "Challenge Token").

use std::net::{IpAddr, SocketAddr};

use netcode_proto::Key;
use netcode_proto::address::{wire_size, write_address};
use netcode_proto::bytes::Writer;
use netcode_proto::constants::{
    CHALLENGE_TOKEN_BYTES, CONNECT_TOKEN_BYTES, CONNECT_TOKEN_NONCE_BYTES,
    CONNECT_TOKEN_PRIVATE_BYTES, KEY_BYTES, MAC_BYTES, USER_DATA_BYTES, VERSION_INFO,
    VERSION_INFO_BYTES,
};
use netcode_proto::crypto::sequence_nonce;
use netcode_proto::token::{
    ChallengeToken, ConnectToken, PrivateConnectToken, private_token_associated_data,
};

use crate::manifest::{
    Algorithm, ChallengeTokenFields, ConnectTokenFields, Encryption, PrivateTokenFields,
    SealedChallengeToken, SealedPrivateToken, ServerAddress,
};
use crate::{Error, Result, VectorSet};

use super::{
    CHALLENGE_ENCRYPTED_BYTES, Checker, PRIVATE_ADDRESSES_OFFSET, PRIVATE_ENCRYPTED_BYTES,
    PUBLIC_ADDRESSES_OFFSET,
};

/// The wire type byte of an address.
pub(crate) fn address_type(address: &SocketAddr) -> u8 {
    match address {
        SocketAddr::V4(_) => netcode_proto::address::ADDRESS_IPV4,
        SocketAddr::V6(_) => netcode_proto::address::ADDRESS_IPV6,
    }
}

/// The IP in network byte order.
pub(crate) fn network_order(ip: &IpAddr) -> Vec<u8> {
    match ip {
        IpAddr::V4(ip) => ip.octets().to_vec(),
        IpAddr::V6(ip) => ip.octets().to_vec(),
    }
}

/// The address as `netcode-proto` writes it inside a token.
pub(crate) fn wire_form(address: &SocketAddr) -> Option<Vec<u8>> {
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

pub(super) fn check_private_fields(
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
pub(crate) fn private_data_bytes(addresses: &[SocketAddr]) -> usize {
    let addresses: usize = addresses.iter().map(wire_size).sum();
    PRIVATE_ADDRESSES_OFFSET + addresses + 2 * KEY_BYTES + USER_DATA_BYTES
}

/// Bytes of a public connect token that hold data.
pub(crate) fn public_data_bytes(addresses: &[SocketAddr]) -> usize {
    let addresses: usize = addresses.iter().map(wire_size).sum();
    PUBLIC_ADDRESSES_OFFSET + addresses + 2 * KEY_BYTES
}

/// Bytes of a challenge token plaintext that hold data.
pub(crate) const CHALLENGE_DATA_BYTES: usize = 8 + USER_DATA_BYTES;

pub(super) fn check_private_plaintext(c: &mut Checker, fields: &PrivateTokenFields, bytes: &[u8]) {
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
    let data_bytes = private_data_bytes(&token.server_addresses);
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

pub(super) fn check_region(
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

pub(super) fn private_nonce(e: &Encryption) -> Result<[u8; CONNECT_TOKEN_NONCE_BYTES]> {
    e.nonce.as_slice().try_into().map_err(|_| {
        Error::new(format!(
            "private token nonce has {} bytes, expected 24",
            e.nonce.len()
        ))
    })
}

/// Decrypts a sealed private token with the entry's key and compares the
/// result with the fields and the plaintext vector.
pub(super) fn check_private_encrypted(
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
    let data_bytes = private_data_bytes(&token.server_addresses);
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

pub(super) fn check_connect_token(
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
    let data_bytes = public_data_bytes(&token.server_addresses);
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

pub(super) fn check_challenge_plaintext(
    c: &mut Checker,
    fields: &ChallengeTokenFields,
    bytes: &[u8],
) {
    let buffer: &[u8; CHALLENGE_TOKEN_BYTES] = match bytes.try_into() {
        Ok(buffer) => buffer,
        Err(_) => return c.fail(format!("challenge token has {} bytes", bytes.len())),
    };
    check_challenge_fields(c, "", &ChallengeToken::read(buffer), fields);
    let data_bytes = CHALLENGE_DATA_BYTES;
    if let Some(want) = fields.data_bytes {
        c.eq("data_bytes", data_bytes, want);
    }
    c.zero(
        "padding after the data (tag space included)",
        &bytes[data_bytes..],
    );
}

pub(super) fn check_challenge_encrypted(
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
    let data_bytes = CHALLENGE_DATA_BYTES;
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
