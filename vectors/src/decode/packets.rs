//! Checks of packets against their entries: framing, decryption and body of
//! encrypted packets, and connection requests both on the wire and as a
//! server reads them (STANDARD.md, "Packets", "Reading Encrypted Packets",
//! "Processing Connection Requests").

use netcode_proto::constants::{
    CHALLENGE_TOKEN_BYTES, CONNECTION_REQUEST_BYTES, MAC_BYTES, VERSION_INFO,
};
use netcode_proto::crypto::sequence_nonce;
use netcode_proto::packet::{
    ConnectionRequest, KeepAlivePacket, ReadContext, packet_associated_data, read_packet,
    sequence_bytes,
};
use netcode_proto::{Packet, PacketError};

use crate::VectorSet;
use crate::manifest::{Algorithm, ChallengeFields, PacketContent, PacketFields, RequestFields};

use super::tokens::{
    check_challenge_encrypted, check_private_encrypted, check_private_fields, check_region,
};
use super::{Checker, PRIVATE_ENCRYPTED_BYTES, PacketKeys, REQUEST_PRIVATE_OFFSET};

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

pub(super) fn check_packet(c: &mut Checker, set: &VectorSet, fields: &PacketFields, bytes: &[u8]) {
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
            if let PacketContent::Request(want) = &fields.content {
                check_request_wire(c, set, fields, want, bytes);
            }
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
    let context = keys.context(fields, fields.protocol_id, None);
    let mut buffer = bytes.to_vec();
    let read = read_owned(&context, &mut buffer);
    if let PacketContent::Request(want) = &fields.content
        && want.expire_timestamp == 0
    {
        // No current time is before 0: a server refuses this request at
        // any time, so its fields can only be checked on the wire (above).
        return c.eq(
            "read_packet of a request whose token expires at 0",
            read.map(|_| ()),
            Err(PacketError::TokenExpired),
        );
    }
    let (sequence, decoded) = match read {
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
            check_request_read(c, set, want, &got, &buffer);
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

/// The bytes of a connection request against its entry, without reading it
/// as a server would.
fn check_request_wire(
    c: &mut Checker,
    set: &VectorSet,
    fields: &PacketFields,
    want: &RequestFields,
    bytes: &[u8],
) {
    c.bytes("version_info", &want.version_info, &VERSION_INFO);
    let mut offset = 1;
    let mut field = |c: &mut Checker, what: &str, want: &[u8]| {
        if let Some(got) = c.slice(what, bytes, offset..offset + want.len()) {
            c.bytes(what, got, want);
        }
        offset += want.len();
    };
    field(c, "version info bytes", &want.version_info);
    field(c, "protocol id bytes", &fields.protocol_id.to_le_bytes());
    field(
        c,
        "connect token expire timestamp bytes",
        &want.expire_timestamp.to_le_bytes(),
    );
    field(c, "connect token nonce bytes", &want.nonce);
    field(c, "sealed private connect token bytes", &want.private_data);

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
    // The sealed token on its own (this decrypts a copy of the manifest's
    // bytes, which must be the wire's, not read_packet's buffer).
    check_private_encrypted(c, set, "private_connect_token.", nested, &want.private_data);
}

/// What `read_packet` made of a connection request against its entry.
fn check_request_read(
    c: &mut Checker,
    set: &VectorSet,
    want: &RequestFields,
    got: &ConnectionRequest,
    decrypted: &[u8],
) {
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
    if let Some(tag) = c.slice(
        "tag of the sealed token after read_packet",
        decrypted,
        CONNECTION_REQUEST_BYTES - MAC_BYTES..CONNECTION_REQUEST_BYTES,
    ) {
        c.bytes(
            "tag of the sealed token after read_packet",
            tag,
            &want.private_data[PRIVATE_ENCRYPTED_BYTES..],
        );
    }
    // read_packet decrypted the token in place: that plaintext must be the
    // plaintext vector's.
    if let Some(name) = &want.private_token.plaintext_vector
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
