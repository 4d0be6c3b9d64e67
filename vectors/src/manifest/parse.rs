//! Each kind's fields read out of its JSON object into the manifest's
//! types, every field accounted for (STANDARD.md: the formats the vectors
//! hold).

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use serde_json::Value;

use super::json::{Obj, number_array};
use super::*;
use crate::{Error, Result, hex};

pub(super) fn parse_protocol(p: &Obj<'_>) -> Result<Protocol> {
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

pub(super) fn parse_vector(
    value: &Value,
    named_keys: &BTreeMap<String, NamedKey>,
) -> Result<Vector> {
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
