//! Typed manifest values written back as `manifest.json` JSON: the inverse
//! of the parser in [`crate::manifest`], field for field.
//!
//! Every field the parser reads is written, 64-bit values with their `_hex`
//! twin, byte strings as lowercase hex. Informational fields the typed
//! values do not keep (recipes, conventions) are not written; the parser
//! does not need them.

use std::net::IpAddr;

use serde_json::{Map, Value};

use super::{
    Algorithm, Body, ChallengeFields, ChallengeTokenFields, ConnectTokenFields, Encryption,
    Manifest, PacketContent, PacketFields, PrivateTokenFields, Protocol, SealedChallengeToken,
    SealedPrivateToken, ServerAddress, Vector,
};
use super::{FORMAT, FORMAT_VERSION};
use crate::hex;

/// The whole manifest as JSON, with `generator` saying what made the set.
pub fn manifest_value(manifest: &Manifest, generator: Value) -> Value {
    let mut top = Object::default();
    top.put("format", FORMAT);
    top.put("format_version", FORMAT_VERSION);
    top.put("set", manifest.set.as_str());
    top.put("generator", generator);
    top.put("protocol", protocol(&manifest.protocol));
    let mut keys = Object::default();
    for (name, key) in &manifest.named_keys {
        let mut k = Object::default();
        k.put("role", key.role.as_str());
        k.hex("hex", &key.key);
        k.put("recipe", key.recipe.as_str());
        keys.put(name, k);
    }
    top.put("named_keys", keys);
    top.put("vector_count", manifest.vector_count);
    let vectors: Vec<Value> = manifest.vectors.iter().map(vector_value).collect();
    top.put("vectors", vectors);
    top.into()
}

/// One entry of `manifest.vectors` as JSON.
pub fn vector_value(vector: &Vector) -> Value {
    let mut v = Object::default();
    v.put("name", vector.name.as_str());
    v.put("file", vector.file.as_str());
    v.put("kind", vector.kind.name());
    v.put("description", vector.description.as_str());
    v.put("bytes", vector.bytes);
    v.put("sha256", vector.sha256.as_str());
    match &vector.body {
        Body::PrivateTokenPlaintext(fields) => private_token_fields(&mut v, fields),
        Body::PrivateTokenEncrypted(sealed) => sealed_private_token(&mut v, sealed),
        Body::ConnectToken(fields) => connect_token(&mut v, fields),
        Body::ChallengeTokenPlaintext(fields) => challenge_token_fields(&mut v, fields),
        Body::ChallengeTokenEncrypted(sealed) => sealed_challenge_token(&mut v, sealed),
        Body::Packet(fields) => packet(&mut v, fields),
    }
    v.into()
}

/// A JSON object under construction.
#[derive(Default)]
struct Object(Map<String, Value>);

impl Object {
    fn put(&mut self, key: &str, value: impl Into<Value>) {
        self.0.insert(key.to_owned(), value.into());
    }

    /// A 64-bit value and its `_hex` twin.
    fn u64(&mut self, key: &str, value: u64) {
        self.put(key, value);
        self.put(&format!("{key}_hex"), format!("{value:#018x}"));
    }

    fn hex(&mut self, key: &str, bytes: &[u8]) {
        self.put(key, hex::encode(bytes));
    }

    fn optional(&mut self, key: &str, value: Option<&String>) {
        if let Some(value) = value {
            self.put(key, value.as_str());
        }
    }
}

impl From<Object> for Value {
    fn from(object: Object) -> Self {
        Value::Object(object.0)
    }
}

fn protocol(p: &Protocol) -> Object {
    let mut o = Object::default();
    o.put("version_info", p.version_info.as_str());
    o.hex("version_info_hex", &p.version_info_bytes);
    o.put("connect_token_bytes", p.connect_token_bytes);
    o.put("connect_token_private_bytes", p.connect_token_private_bytes);
    o.put("connect_token_nonce_bytes", p.connect_token_nonce_bytes);
    o.put("challenge_token_bytes", p.challenge_token_bytes);
    o.put("key_bytes", p.key_bytes);
    o.put("mac_bytes", p.mac_bytes);
    o.put("user_data_bytes", p.user_data_bytes);
    o.put("max_servers_per_connect", p.max_servers_per_connect);
    o.put("max_payload_bytes", p.max_payload_bytes);
    o.put(
        "connection_request_packet_bytes",
        p.connection_request_packet_bytes,
    );
    o.u64("server_global_sequence_base", p.server_global_sequence_base);
    o
}

fn addresses(o: &mut Object, count: usize, list: &[ServerAddress]) {
    o.put("num_server_addresses", count);
    let list: Vec<Value> = list.iter().map(|a| address(a).into()).collect();
    o.put("server_addresses", list);
}

fn address(a: &ServerAddress) -> Object {
    let mut o = Object::default();
    o.put("string", a.string.as_str());
    o.put("type", a.address_type);
    match a.ip {
        IpAddr::V4(ip) => {
            o.put("type_name", "ipv4");
            o.put("ipv4", ip.octets().to_vec());
        }
        IpAddr::V6(ip) => {
            o.put("type_name", "ipv6");
            o.put("ipv6_groups", ip.segments().to_vec());
        }
    }
    o.put("port", a.port);
    o.hex("ip_bytes_hex", &a.ip_bytes);
    o.hex("wire_hex", &a.wire);
    o
}

fn private_token_fields(o: &mut Object, fields: &PrivateTokenFields) {
    addresses(o, fields.num_server_addresses, &fields.server_addresses);
    o.u64("client_id", fields.client_id);
    o.put("timeout_seconds", fields.timeout_seconds);
    o.hex("client_to_server_key_hex", &fields.client_to_server_key);
    o.hex("server_to_client_key_hex", &fields.server_to_client_key);
    o.hex("user_data_hex", &fields.user_data);
    if let Some(data_bytes) = fields.data_bytes {
        o.put("data_bytes", data_bytes);
    }
}

fn sealed_private_token(o: &mut Object, sealed: &SealedPrivateToken) {
    private_token_fields(o, &sealed.token);
    o.hex("version_info_hex", &sealed.version_info);
    o.u64("protocol_id", sealed.protocol_id);
    o.u64("expire_timestamp", sealed.expire_timestamp);
    o.hex("nonce_hex", &sealed.nonce);
    o.put("encryption", encryption(&sealed.encryption));
    o.optional("plaintext_vector", sealed.plaintext_vector.as_ref());
    o.optional("encrypted_vector", sealed.encrypted_vector.as_ref());
}

fn nested_sealed_private_token(o: &mut Object, sealed: &SealedPrivateToken) {
    let mut nested = Object::default();
    sealed_private_token(&mut nested, sealed);
    o.put("private_connect_token", nested);
}

fn connect_token(o: &mut Object, fields: &ConnectTokenFields) {
    o.hex("version_info_hex", &fields.version_info);
    o.u64("protocol_id", fields.protocol_id);
    o.u64("create_timestamp", fields.create_timestamp);
    o.u64("expire_timestamp", fields.expire_timestamp);
    o.hex("nonce_hex", &fields.nonce);
    o.hex("private_data_hex", &fields.private_data);
    o.optional("private_data_vector", fields.private_data_vector.as_ref());
    o.put("timeout_seconds", fields.timeout_seconds);
    addresses(o, fields.num_server_addresses, &fields.server_addresses);
    o.hex("client_to_server_key_hex", &fields.client_to_server_key);
    o.hex("server_to_client_key_hex", &fields.server_to_client_key);
    o.put("data_bytes", fields.data_bytes);
    o.put(
        "public_addresses_equal_private",
        fields.public_addresses_equal_private,
    );
    nested_sealed_private_token(o, &fields.private_token);
}

fn challenge_token_fields(o: &mut Object, fields: &ChallengeTokenFields) {
    o.u64("client_id", fields.client_id);
    o.hex("user_data_hex", &fields.user_data);
    if let Some(data_bytes) = fields.data_bytes {
        o.put("data_bytes", data_bytes);
    }
}

fn sealed_challenge_token(o: &mut Object, sealed: &SealedChallengeToken) {
    challenge_token_fields(o, &sealed.token);
    o.u64("challenge_sequence", sealed.challenge_sequence);
    o.put("encryption", encryption(&sealed.encryption));
    o.optional("plaintext_vector", sealed.plaintext_vector.as_ref());
    o.optional("encrypted_vector", sealed.encrypted_vector.as_ref());
}

fn challenge_fields(o: &mut Object, fields: &ChallengeFields) {
    let mut nested = Object::default();
    sealed_challenge_token(&mut nested, &fields.token);
    o.put("challenge_token", nested);
    o.u64("challenge_token_sequence", fields.challenge_sequence);
    o.hex("challenge_token_data_hex", &fields.token_data);
    o.optional(
        "challenge_token_data_vector",
        fields.token_data_vector.as_ref(),
    );
}

fn packet(o: &mut Object, fields: &PacketFields) {
    o.put("packet_type", fields.packet_type);
    o.put("packet_type_name", fields.packet_type_name.as_str());
    o.put("direction", fields.direction.as_str());
    o.u64("protocol_id", fields.protocol_id);
    o.put("encrypted", fields.encrypted);
    o.put("prefix_byte", fields.prefix_byte);
    if let Some(framing) = &fields.framing {
        o.u64("sequence", framing.sequence);
        o.put("sequence_bytes", framing.sequence_bytes);
        o.hex("header_hex", &framing.header);
        o.put("encryption", encryption(&framing.encryption));
        o.hex("plaintext_hex", &framing.plaintext);
    }
    match &fields.content {
        PacketContent::Request(request) => {
            o.hex("version_info_hex", &request.version_info);
            o.u64("connect_token_expire_timestamp", request.expire_timestamp);
            o.hex("connect_token_nonce_hex", &request.nonce);
            o.hex("connect_token_data_hex", &request.private_data);
            o.optional(
                "connect_token_data_vector",
                request.private_data_vector.as_ref(),
            );
            nested_sealed_private_token(o, &request.private_token);
        }
        PacketContent::Challenge(challenge) | PacketContent::Response(challenge) => {
            challenge_fields(o, challenge);
        }
        PacketContent::KeepAlive {
            client_index,
            max_clients,
        } => {
            o.put("client_index", *client_index);
            o.put("max_clients", *max_clients);
        }
        PacketContent::Payload {
            payload_bytes,
            payload,
        } => {
            o.put("payload_bytes", *payload_bytes);
            o.hex("payload_hex", payload);
        }
        PacketContent::Denied | PacketContent::Disconnect => {}
    }
}

fn encryption(e: &Encryption) -> Object {
    let mut o = Object::default();
    o.put(
        "algorithm",
        match e.algorithm {
            Algorithm::ChaCha20Poly1305 => "chacha20poly1305_ietf",
            Algorithm::XChaCha20Poly1305 => "xchacha20poly1305_ietf",
        },
    );
    o.put("key_name", e.key_name.as_str());
    o.hex("key_hex", &e.key);
    o.hex("nonce_hex", &e.nonce);
    o.hex("associated_data_hex", &e.associated_data);
    o.put("plaintext_offset", e.plaintext_offset);
    o.put("plaintext_bytes", e.plaintext_bytes);
    o.put("tag_bytes", e.tag_bytes);
    o
}
