//! The manifest's JSON read into its types: the file as a whole, then each
//! entry by its kind, then what one field says about another: a packet
//! type against its kind, an encryption key against its named key, what a
//! sealed token gives by where it is (STANDARD.md: the formats the vectors
//! hold).

use std::collections::{BTreeMap, BTreeSet};

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::json;
use super::{
    Body, ChallengeFields, ChallengeTokenFields, ConnectTokenFields, Encryption, FORMAT,
    FORMAT_VERSION, Framing, Kind, Manifest, NamedKey, PacketContent, PacketFields,
    PrivateTokenFields, Protocol, RequestFields, SealedChallengeToken, SealedPrivateToken, Vector,
};
use crate::{Error, Result, hex};

/// The named keys every `encryption.key_hex` is checked against.
type NamedKeys = BTreeMap<String, NamedKey>;

/// `manifest.json` as a whole, its entries as `V`.
#[derive(Serialize, Deserialize)]
#[serde(rename = "Manifest", deny_unknown_fields)]
pub(super) struct ManifestFile<V> {
    pub(super) format: String,
    pub(super) format_version: u64,
    pub(super) set: String,
    /// What made the set (informational).
    pub(super) generator: Option<Value>,
    /// How to read the fields (informational).
    #[serde(default, skip_serializing)]
    #[allow(dead_code, reason = "accepted with any value, and not kept")]
    pub(super) conventions: Option<IgnoredAny>,
    pub(super) protocol: Protocol,
    pub(super) named_keys: NamedKeys,
    pub(super) vector_count: usize,
    /// The entries; each is read on its own, so that an error names it.
    pub(super) vectors: Vec<V>,
}

/// The fields every entry gives before those of its kind.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Head {
    name: String,
    kind: Kind,
    file: String,
    description: String,
    bytes: usize,
    sha256: String,
}

/// The fields every packet entry gives before its framing and content.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PacketHead {
    packet_type: u8,
    packet_type_name: String,
    direction: String,
    protocol_id: u64,
    encrypted: bool,
    prefix_byte: u8,
}

/// The content of a keep-alive packet.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeepAlive {
    client_index: u32,
    max_clients: u32,
}

/// The content of a payload packet.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Payload {
    payload_bytes: usize,
    #[serde(with = "json::hex")]
    payload_hex: Vec<u8>,
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
        let mut value = value.clone();
        if let Some(protocol) = value.get_mut("protocol") {
            json::strip(protocol, "protocol")?;
        }
        let file: ManifestFile<Value> = json::read(&value).map_err(|e| e.context("manifest"))?;
        if file.format != FORMAT {
            return Err(Error::new(format!(
                "manifest format is {:?}, expected {FORMAT:?}",
                file.format
            )));
        }
        if file.format_version != FORMAT_VERSION {
            return Err(Error::new(format!(
                "manifest format_version is {}, expected {FORMAT_VERSION}",
                file.format_version
            )));
        }
        let mut vectors = Vec::with_capacity(file.vectors.len());
        for (index, entry) in file.vectors.iter().enumerate() {
            let vector = Vector::from_value(entry, &file.named_keys)
                .map_err(|e| e.context(format!("vectors[{index}]")))?;
            vectors.push(vector);
        }
        let mut names = BTreeSet::new();
        if let Some(twice) = vectors.iter().find(|v| !names.insert(v.name.as_str())) {
            return Err(Error::new(format!(
                "duplicate vector name {:?}",
                twice.name
            )));
        }
        Ok(Self {
            set: file.set,
            protocol: file.protocol,
            named_keys: file.named_keys,
            vector_count: file.vector_count,
            vectors,
        })
    }
}

impl Vector {
    /// Parses one entry of `manifest.vectors`; `named_keys` are the
    /// manifest's, which every `encryption.key_hex` must agree with.
    pub fn from_value(value: &Value, named_keys: &BTreeMap<String, NamedKey>) -> Result<Self> {
        let context = match value.get("name").and_then(Value::as_str) {
            Some(name) => format!("vector {name:?}"),
            None => "vector".to_owned(),
        };
        entry(value, named_keys).map_err(|e| e.context(context))
    }
}

fn entry(value: &Value, keys: &NamedKeys) -> Result<Vector> {
    let mut value = value.clone();
    json::strip(&mut value, "")?;
    let mut fields: Map<String, Value> =
        serde_json::from_value(value).map_err(|e| Error::new(e.to_string()))?;
    let head: Head = json::take(&mut fields)?;
    let body = match head.kind {
        Kind::PrivateConnectTokenPlaintext => {
            let token: PrivateTokenFields = json::read_all(fields)?;
            own_entry(token.data_bytes)?;
            Body::PrivateTokenPlaintext(token)
        }
        Kind::PrivateConnectTokenEncrypted => {
            let token: SealedPrivateToken = json::read_flattened::<PrivateTokenFields, _>(fields)?;
            sealed(&token, None, keys)?;
            Body::PrivateTokenEncrypted(token)
        }
        Kind::ConnectToken => {
            let token: ConnectTokenFields = json::read_all(fields)?;
            sealed(&token.private_token, Some("private_connect_token"), keys)?;
            Body::ConnectToken(Box::new(token))
        }
        Kind::ChallengeTokenPlaintext => {
            let token: ChallengeTokenFields = json::read_all(fields)?;
            own_entry(token.data_bytes)?;
            Body::ChallengeTokenPlaintext(token)
        }
        Kind::ChallengeTokenEncrypted => {
            let token: SealedChallengeToken =
                json::read_flattened::<ChallengeTokenFields, _>(fields)?;
            sealed(&token, None, keys)?;
            Body::ChallengeTokenEncrypted(token)
        }
        kind => Body::Packet(packet(kind, fields, keys)?),
    };
    let Head {
        name,
        kind,
        file,
        description,
        bytes,
        sha256,
    } = head;
    if file.is_empty()
        || file.contains(['/', '\\'])
        || file.starts_with('.')
        || !file.ends_with(".bin")
    {
        return Err(Error::new(format!(
            "file {file:?} must be a plain .bin file name"
        )));
    }
    if sha256.len() != 64 || hex::decode(&sha256).is_err() {
        return Err(Error::new(format!(
            "sha256 {sha256:?} is not 32 bytes of hex"
        )));
    }
    Ok(Vector {
        name,
        file,
        kind,
        description,
        bytes,
        sha256,
        body,
    })
}

/// The fields of a packet entry of `kind`, after its head.
fn packet(kind: Kind, mut fields: Map<String, Value>, keys: &NamedKeys) -> Result<PacketFields> {
    let head: PacketHead = json::take(&mut fields)?;
    if Some(head.packet_type) != kind.packet_type() {
        return Err(Error::new(format!(
            "packet_type {} does not match kind {kind}",
            head.packet_type
        )));
    }
    // Every packet but the request is encrypted, and framed.
    let framing: Option<Framing> = match kind {
        Kind::PacketRequest => None,
        _ => Some(json::take(&mut fields)?),
    };
    if let Some(framing) = &framing {
        check_key(&framing.encryption, keys)?;
    }
    let content = match kind {
        Kind::PacketRequest => {
            let request: RequestFields = json::read_all(fields)?;
            sealed(&request.private_token, Some("private_connect_token"), keys)?;
            PacketContent::Request(Box::new(request))
        }
        Kind::PacketChallenge | Kind::PacketResponse => {
            let challenge: ChallengeFields = json::read_all(fields)?;
            sealed(&challenge.token, Some("challenge_token"), keys)?;
            match kind {
                Kind::PacketChallenge => PacketContent::Challenge(Box::new(challenge)),
                _ => PacketContent::Response(Box::new(challenge)),
            }
        }
        Kind::PacketKeepAlive => {
            let KeepAlive {
                client_index,
                max_clients,
            } = json::read_all(fields)?;
            PacketContent::KeepAlive {
                client_index,
                max_clients,
            }
        }
        Kind::PacketPayload => {
            let Payload {
                payload_bytes,
                payload_hex,
            } = json::read_all(fields)?;
            PacketContent::Payload {
                payload_bytes,
                payload: payload_hex,
            }
        }
        Kind::PacketDenied | Kind::PacketDisconnect => {
            json::refuse_rest(&fields)?;
            match kind {
                Kind::PacketDenied => PacketContent::Denied,
                _ => PacketContent::Disconnect,
            }
        }
        token => return Err(Error::new(format!("{token} is not a packet kind"))),
    };
    Ok(PacketFields {
        packet_type: head.packet_type,
        packet_type_name: head.packet_type_name,
        direction: head.direction,
        protocol_id: head.protocol_id,
        encrypted: head.encrypted,
        prefix_byte: head.prefix_byte,
        framing,
        content,
    })
}

/// A token that is an entry of its own gives `data_bytes`.
fn own_entry(data_bytes: Option<usize>) -> Result<()> {
    match data_bytes {
        Some(_) => Ok(()),
        None => Err(Error::new("missing field `data_bytes`")),
    }
}

/// A sealed token, of either kind, as its place in the manifest is checked.
trait Sealed {
    /// Its `data_bytes`, its `encrypted_vector`, and how it was sealed.
    fn parts(&self) -> (Option<usize>, Option<&String>, &Encryption);
}

impl Sealed for SealedPrivateToken {
    fn parts(&self) -> (Option<usize>, Option<&String>, &Encryption) {
        let encrypted_vector = self.encrypted_vector.as_ref();
        (self.token.data_bytes, encrypted_vector, &self.encryption)
    }
}

impl Sealed for SealedChallengeToken {
    fn parts(&self) -> (Option<usize>, Option<&String>, &Encryption) {
        let encrypted_vector = self.encrypted_vector.as_ref();
        (self.token.data_bytes, encrypted_vector, &self.encryption)
    }
}

/// A sealed token where it is: as an entry of its own (`nested` is `None`)
/// it gives `data_bytes` and no `encrypted_vector` (its file is the sealed
/// bytes); nested in another entry as the object `nested`, the reverse.
/// Either way its key must be the named key it names.
fn sealed(token: &impl Sealed, nested: Option<&str>, keys: &NamedKeys) -> Result<()> {
    let (data_bytes, encrypted_vector, encryption) = token.parts();
    let check = match (nested, data_bytes, encrypted_vector) {
        (None, None, _) => Err(Error::new("missing field `data_bytes`")),
        (None, Some(_), Some(_)) => Err(Error::new("unknown field `encrypted_vector`")),
        (Some(_), Some(_), _) => Err(Error::new("unknown field `data_bytes`")),
        (Some(_), None, None) => Err(Error::new("missing field `encrypted_vector`")),
        (None, Some(_), None) | (Some(_), None, Some(_)) => Ok(()),
    };
    let check = check.and_then(|()| check_key(encryption, keys));
    match nested {
        Some(field) => check.map_err(|e| e.context(field)),
        None => check,
    }
}

/// An `encryption` object's key must be the named key it names.
fn check_key(encryption: &Encryption, keys: &NamedKeys) -> Result<()> {
    let name = &encryption.key_name;
    match keys.get(name) {
        Some(named) if named.key == encryption.key => Ok(()),
        Some(_) => Err(Error::new(format!(
            "encryption.key_hex differs from named key {name:?}"
        ))),
        None => Err(Error::new(format!(
            "encryption.key_name: unknown key name {name:?}"
        ))),
    }
}
