//! Holds `netcode-proto` to the golden wire vectors of the C reference.
//!
//! Two sets are checked the same way: the reference set at
//! `<repo>/../shared/vectors` and our committed copy in `vectors/data`, whose
//! `.bin` files our own encoder wrote (`--bin regenerate`).

use std::collections::BTreeSet;

use netcode_proto::PacketError;
use netcode_proto::constants;
use netcode_proto::token::TokenError;
use netcode_vectors::decode::{Overrides, Rejection, open};
use netcode_vectors::manifest::{Body, PacketContent};
use netcode_vectors::{
    Kind, Manifest, Vector, VectorSet, data_dir, encode, hex, shared_dir, verify,
};
use sha2::{Digest, Sha256};

/// The number of vectors of the public reference set.
const PUBLIC_SET_VECTORS: usize = 61;

/// The reference set, or `None` (after saying so loudly) when it is absent.
/// Under `CI=true` an absent reference set is a failure.
fn shared_set() -> Option<VectorSet> {
    let dir = shared_dir();
    if dir.join(netcode_vectors::MANIFEST_FILE).is_file() {
        return Some(VectorSet::open(&dir).expect("the shared vector set must parse"));
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!(
            "FAILED: ../shared/vectors not found (looked in {}); CI=true requires the reference vector set",
            dir.display()
        );
    }
    let message = format!(
        "SKIPPED: ../shared/vectors not found (looked in {}); wire compatibility checked only against the committed copy",
        dir.display()
    );
    // println! is captured by the test harness for passing tests; a direct
    // write to stderr is not, so the skip is always visible (once per run).
    println!("{message}");
    static ANNOUNCED: std::sync::Once = std::sync::Once::new();
    ANNOUNCED.call_once(|| {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "{message}");
    });
    None
}

fn committed_set() -> VectorSet {
    VectorSet::open(data_dir()).expect("vectors/data/manifest.json must parse")
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes).as_slice())
}

/// Every entry, in manifest order; the count must be `vector_count`.
fn entries(set: &VectorSet) -> &[Vector] {
    let manifest = &set.manifest;
    assert_eq!(
        manifest.vectors.len(),
        manifest.vector_count,
        "{}: manifest.vectors has {} entries but vector_count is {}",
        set.dir.display(),
        manifest.vectors.len(),
        manifest.vector_count
    );
    &manifest.vectors
}

/// For every entry: length, sha256, decoding against every field, and
/// re-encoding from the fields byte for byte.
fn check_set(set: &VectorSet) {
    let mut failures = Vec::new();
    let mut kinds = BTreeSet::new();
    for vector in entries(set) {
        kinds.insert(vector.kind);
        let bytes = match set.read(vector) {
            Ok(bytes) => bytes,
            Err(e) => {
                failures.push(format!("{}: {e}", vector.name));
                continue;
            }
        };
        if bytes.len() != vector.bytes {
            failures.push(format!(
                "{}: file has {} bytes, manifest says {}",
                vector.name,
                bytes.len(),
                vector.bytes
            ));
        }
        let digest = sha256_hex(&bytes);
        if digest != vector.sha256 {
            failures.push(format!(
                "{}: sha256 {digest}, manifest says {}",
                vector.name, vector.sha256
            ));
        }
        if let Err(e) = verify(set, vector, &bytes) {
            failures.push(format!("decode: {e}"));
        }
        match encode(vector) {
            Ok(encoded) if encoded == bytes => {}
            Ok(encoded) => {
                let first = encoded
                    .iter()
                    .zip(&bytes)
                    .position(|(a, b)| a != b)
                    .unwrap_or(encoded.len().min(bytes.len()));
                failures.push(format!(
                    "{}: re-encoding differs from the file ({} vs {} bytes, first difference at offset {first})",
                    vector.name,
                    encoded.len(),
                    bytes.len()
                ));
            }
            Err(e) => failures.push(format!("{}: encode: {e}", vector.name)),
        }
    }
    assert!(
        failures.is_empty(),
        "{}: {} problem(s):\n{}",
        set.dir.display(),
        failures.len(),
        failures.join("\n")
    );
    let missing: Vec<Kind> = Kind::ALL
        .into_iter()
        .filter(|k| !kinds.contains(k))
        .collect();
    assert!(missing.is_empty(), "kinds with no vector: {missing:?}");
    println!(
        "{}: {} vectors decoded, compared field by field and re-encoded byte for byte",
        set.dir.display(),
        set.manifest.vectors.len()
    );
}

#[test]
fn shared_set_decodes_and_reencodes() {
    if let Some(set) = shared_set() {
        assert_eq!(set.manifest.vector_count, PUBLIC_SET_VECTORS);
        check_set(&set);
    }
}

#[test]
fn committed_copy_decodes_and_reencodes() {
    let set = committed_set();
    assert_eq!(set.manifest.vector_count, PUBLIC_SET_VECTORS);
    check_set(&set);
}

#[test]
fn committed_copy_equals_shared_set() {
    let Some(shared) = shared_set() else {
        return;
    };
    let ours = committed_set();
    assert_eq!(
        ours.manifest_bytes, shared.manifest_bytes,
        "vectors/data/manifest.json must be a copy of the shared manifest"
    );
    assert_eq!(ours.manifest, shared.manifest);
    let our_files = ours.bin_files().unwrap();
    let shared_files = shared.bin_files().unwrap();
    assert_eq!(our_files, shared_files, "the .bin file names differ");
    for name in &shared_files {
        let a = std::fs::read(ours.dir.join(name)).unwrap();
        let b = std::fs::read(shared.dir.join(name)).unwrap();
        assert!(a == b, "{name}: our copy differs from the shared set");
    }
    println!(
        "vectors/data equals the shared set: manifest and {} .bin files",
        shared_files.len()
    );
}

#[test]
fn encoder_reproduces_committed_copy() {
    let set = committed_set();
    let listed: Vec<String> = {
        let mut names: Vec<String> = entries(&set).iter().map(|v| v.file.clone()).collect();
        names.sort();
        names
    };
    assert_eq!(
        set.bin_files().unwrap(),
        listed,
        "vectors/data must hold exactly the .bin files its manifest lists"
    );
    for vector in entries(&set) {
        let encoded = encode(vector).unwrap_or_else(|e| panic!("{}: {e}", vector.name));
        let committed = set.read(vector).unwrap();
        assert!(
            encoded == committed,
            "{}: vectors/data/{} is not what the encoder writes; run `cargo run -p netcode-vectors --bin regenerate`",
            vector.name,
            vector.file
        );
    }
}

#[test]
fn manifest_protocol_constants_match_netcode_proto() {
    let set = committed_set();
    let p = &set.manifest.protocol;
    assert_eq!(p.version_info.as_bytes(), &constants::VERSION_INFO[..12]);
    assert_eq!(p.version_info_bytes, constants::VERSION_INFO);
    assert_eq!(p.connect_token_bytes, constants::CONNECT_TOKEN_BYTES);
    assert_eq!(
        p.connect_token_private_bytes,
        constants::CONNECT_TOKEN_PRIVATE_BYTES
    );
    assert_eq!(
        p.connect_token_nonce_bytes,
        constants::CONNECT_TOKEN_NONCE_BYTES
    );
    assert_eq!(p.challenge_token_bytes, constants::CHALLENGE_TOKEN_BYTES);
    assert_eq!(p.key_bytes, constants::KEY_BYTES);
    assert_eq!(p.mac_bytes, constants::MAC_BYTES);
    assert_eq!(p.user_data_bytes, constants::USER_DATA_BYTES);
    assert_eq!(
        p.max_servers_per_connect,
        constants::MAX_SERVERS_PER_CONNECT
    );
    assert_eq!(p.max_payload_bytes, constants::MAX_PAYLOAD_BYTES);
    assert_eq!(
        p.connection_request_packet_bytes,
        constants::CONNECTION_REQUEST_BYTES
    );
    assert_eq!(
        p.server_global_sequence_base,
        constants::SERVER_GLOBAL_SEQUENCE_BASE
    );
}

#[test]
fn an_unknown_kind_fails_instead_of_being_skipped() {
    let set = committed_set();
    let mut value: serde_json::Value = serde_json::from_slice(&set.manifest_bytes).unwrap();
    value["vectors"][3]["kind"] = serde_json::Value::from("packet_from_the_future");
    let err = Manifest::from_value(&value).unwrap_err();
    assert!(
        err.message().contains("unknown vector kind"),
        "unexpected error: {err}"
    );
}

/// The offsets of the bytes whose change `netcode-proto` must notice when
/// opening an entry, or `None` when the entry is not encrypted.
fn authenticated_offsets(vector: &Vector) -> Option<Vec<usize>> {
    match &vector.body {
        Body::PrivateTokenEncrypted(_) | Body::ChallengeTokenEncrypted(_) => {
            Some((0..vector.bytes).collect())
        }
        // Every byte of every packet: the prefix, sequence and body of an
        // encrypted packet, and the version, protocol id, expire timestamp,
        // nonce and sealed token of a request.
        Body::Packet(_) => Some((0..vector.bytes).collect()),
        // A connect token's version info, protocol id, expire timestamp,
        // nonce and sealed private part. The create timestamp and the public
        // fields after the private part are not authenticated by design.
        Body::ConnectToken(_) => {
            let version = constants::VERSION_INFO_BYTES;
            let create = version + 8..version + 16;
            let private_end = version
                + 24
                + constants::CONNECT_TOKEN_NONCE_BYTES
                + constants::CONNECT_TOKEN_PRIVATE_BYTES;
            Some((0..create.start).chain(create.end..private_end).collect())
        }
        Body::PrivateTokenPlaintext(_) | Body::ChallengeTokenPlaintext(_) => None,
    }
}

fn check_flips(set: &VectorSet) {
    let mut checked_vectors = 0;
    let mut checked_flips = 0usize;
    for vector in entries(set) {
        let Some(offsets) = authenticated_offsets(vector) else {
            continue;
        };
        let bytes = set.read(vector).unwrap();
        open(vector, &bytes, &Overrides::default())
            .unwrap_or_else(|e| panic!("{}: the unmodified vector must open: {e}", vector.name));
        for index in offsets {
            for mask in [0xff_u8, 0x01] {
                let mut flipped = bytes.clone();
                flipped[index] ^= mask;
                match open(vector, &flipped, &Overrides::default()) {
                    Ok(()) => panic!("{}: byte {index} ^ {mask:#04x} was accepted", vector.name),
                    Err(Rejection::Setup(e)) => panic!("{}: {e}", vector.name),
                    Err(_) => checked_flips += 1,
                }
            }
        }
        checked_vectors += 1;
    }
    assert!(
        checked_vectors >= 50,
        "only {checked_vectors} encrypted vectors"
    );
    println!(
        "{}: {checked_flips} single-byte changes over {checked_vectors} encrypted vectors, all rejected",
        set.dir.display()
    );
}

#[test]
fn flipping_any_byte_of_an_encrypted_shared_vector_is_rejected() {
    if let Some(set) = shared_set() {
        check_flips(&set);
    }
}

#[test]
fn flipping_any_byte_of_an_encrypted_committed_vector_is_rejected() {
    check_flips(&committed_set());
}

fn check_wrong_protocol_id(set: &VectorSet) {
    let mut checked = 0;
    for vector in entries(set) {
        let (protocol_id, expected) = match &vector.body {
            Body::Packet(fields) => {
                let expected = match fields.content {
                    // The request names its protocol id in the clear.
                    PacketContent::Request(_) => Rejection::Packet(PacketError::ProtocolMismatch),
                    _ => Rejection::Packet(PacketError::DecryptFailed),
                };
                (fields.protocol_id, Some(expected))
            }
            Body::PrivateTokenEncrypted(sealed) => (sealed.protocol_id, None),
            Body::ConnectToken(fields) => (fields.protocol_id, None),
            _ => continue,
        };
        let bytes = set.read(vector).unwrap();
        for other in [
            protocol_id ^ 1,
            protocol_id.wrapping_add(1 << 32),
            !protocol_id,
        ] {
            let overrides = Overrides {
                protocol_id: Some(other),
                ..Overrides::default()
            };
            let result = open(vector, &bytes, &overrides);
            match (&expected, &result) {
                (Some(expected), Err(got)) => assert_eq!(got, expected, "{}", vector.name),
                (None, Err(Rejection::Token(TokenError::Decrypt(_)))) => {}
                _ => panic!("{}: under protocol id {other:#x}: {result:?}", vector.name),
            }
        }
        checked += 1;
    }
    assert!(checked >= 50);
}

#[test]
fn packets_and_private_tokens_fail_under_another_protocol_id() {
    if let Some(set) = shared_set() {
        check_wrong_protocol_id(&set);
    }
    check_wrong_protocol_id(&committed_set());
}

fn check_wrong_expire_timestamp(set: &VectorSet) {
    let mut checked = 0;
    for vector in entries(set) {
        let bytes = set.read(vector).unwrap();
        match &vector.body {
            Body::PrivateTokenEncrypted(sealed) => {
                check_expire_overrides(vector, &bytes, sealed.expire_timestamp);
            }
            Body::ConnectToken(fields) => {
                check_expire_overrides(vector, &bytes, fields.expire_timestamp);
            }
            Body::Packet(fields) => {
                let PacketContent::Request(request) = &fields.content else {
                    continue;
                };
                // Rewrite the expire timestamp the request carries to a
                // later one: the sealed token must no longer open.
                let offset = 1 + constants::VERSION_INFO_BYTES + 8;
                for other in [
                    request.expire_timestamp.wrapping_add(1),
                    request.expire_timestamp ^ (1 << 40),
                ] {
                    let mut changed = bytes.clone();
                    changed[offset..offset + 8].copy_from_slice(&other.to_le_bytes());
                    let result = open(vector, &changed, &Overrides::default());
                    assert_eq!(
                        result,
                        Err(Rejection::Packet(PacketError::DecryptFailed)),
                        "{}: expire timestamp {other:#x}",
                        vector.name
                    );
                }
            }
            _ => continue,
        }
        checked += 1;
    }
    assert_eq!(checked, 7, "3 private tokens, 3 connect tokens, 1 request");
}

fn check_expire_overrides(vector: &Vector, bytes: &[u8], expire: u64) {
    for other in [
        expire ^ 1,
        expire.wrapping_add(1),
        expire.wrapping_sub(1),
        0,
        u64::MAX,
    ] {
        if other == expire {
            continue;
        }
        let overrides = Overrides {
            expire_timestamp: Some(other),
            ..Overrides::default()
        };
        match open(vector, bytes, &overrides) {
            Err(Rejection::Token(TokenError::Decrypt(_))) => {}
            result => panic!(
                "{}: under expire timestamp {other:#x}: {result:?}",
                vector.name
            ),
        }
    }
}

#[test]
fn private_tokens_fail_under_another_expire_timestamp() {
    if let Some(set) = shared_set() {
        check_wrong_expire_timestamp(&set);
    }
    check_wrong_expire_timestamp(&committed_set());
}

/// Fields that only describe an entry: changing them changes no byte.
const INFORMATIONAL: &[&str] = &[
    "name",
    "file",
    "description",
    "sha256",
    "string",
    "type_name",
    "packet_type_name",
    "direction",
    "key_name",
    "user_data_recipe",
    "payload_recipe",
];

fn leaf_paths(value: &serde_json::Value, path: String, out: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, child) in map {
                leaf_paths(child, format!("{path}/{key}"), out);
            }
        }
        serde_json::Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                leaf_paths(child, format!("{path}/{index}"), out);
            }
        }
        _ => out.push(path),
    }
}

/// The field name a leaf path ends in (an array element is named by its array).
fn field_name(path: &str) -> &str {
    path.rsplit('/')
        .find(|segment| segment.parse::<usize>().is_err())
        .unwrap_or("")
}

/// Changes the leaf at `path` of `manifest`; `None` when the leaf is
/// informational or the numeric twin of another field.
fn mutate(manifest: &mut serde_json::Value, path: &str) -> Option<String> {
    use serde_json::Value;
    let name = field_name(path).to_owned();
    if INFORMATIONAL.contains(&name.as_str()) {
        return None;
    }
    let (parent_path, key) = path.rsplit_once('/')?;
    if let Some(base) = name.strip_suffix("_hex")
        && manifest
            .pointer(&format!("{parent_path}/{base}"))
            .is_some_and(Value::is_number)
    {
        return None; // changed together with its number
    }
    let leaf = manifest.pointer_mut(path)?;
    let description = match leaf.clone() {
        Value::Bool(b) => {
            *leaf = Value::Bool(!b);
            format!("{path}: {b} -> {}", !b)
        }
        Value::Number(n) if n.as_u64().is_some() => {
            let old = n.as_u64()?;
            let new = old ^ 1;
            *leaf = Value::from(new);
            let twin = format!("{parent_path}/{key}_hex");
            if let Some(twin) = manifest.pointer_mut(&twin) {
                *twin = Value::from(format!("{new:#018x}"));
            }
            format!("{path}: {old} -> {new}")
        }
        Value::Number(n) => {
            let old = n.as_i64()?;
            *leaf = Value::from(old ^ 1);
            format!("{path}: {old} -> {}", old ^ 1)
        }
        Value::String(text) if name.ends_with("_hex") => {
            let new = match text.pop_last_digit() {
                None => "00".to_owned(),
                Some((head, digit)) => format!("{head}{:x}", digit ^ 1),
            };
            *leaf = Value::from(new.clone());
            format!("{path}: ..{} -> ..{}", tail(&text), tail(&new))
        }
        Value::String(text) if name.ends_with("_vector") || name == "kind" => {
            let new = if text == "packet_denied" {
                "packet_disconnect"
            } else {
                "packet_denied"
            };
            *leaf = Value::from(new);
            format!("{path}: {text} -> {new}")
        }
        Value::String(text) if name == "algorithm" => {
            let new = if text.starts_with('x') {
                "chacha20poly1305_ietf"
            } else {
                "xchacha20poly1305_ietf"
            };
            *leaf = Value::from(new);
            format!("{path}: {text} -> {new}")
        }
        other => panic!("{path}: no mutation for {other}; add one or list it as informational"),
    };
    Some(description)
}

fn tail(text: &str) -> &str {
    &text[text.len().saturating_sub(6)..]
}

trait PopLastDigit {
    fn pop_last_digit(&self) -> Option<(String, u32)>;
}

impl PopLastDigit for String {
    fn pop_last_digit(&self) -> Option<(String, u32)> {
        let mut head = self.clone();
        let digit = head.pop()?.to_digit(16)?;
        Some((head, digit))
    }
}

/// Changing any one field an entry gives (other than descriptions) must make
/// the manifest unreadable, or decoding disagree, or encoding differ: proof
/// that every field is actually compared.
#[test]
fn every_manifest_field_is_checked() {
    let set = committed_set();
    let original: serde_json::Value = serde_json::from_slice(&set.manifest_bytes).unwrap();
    let named_keys = &set.manifest.named_keys;
    let mut mutations = 0;
    let mut unnoticed = Vec::new();
    for (index, vector) in entries(&set).iter().enumerate() {
        let bytes = set.read(vector).unwrap();
        let entry = &original["vectors"][index];
        let mut paths = Vec::new();
        leaf_paths(entry, String::new(), &mut paths);
        for path in paths {
            let mut changed = entry.clone();
            let Some(description) = mutate(&mut changed, &path) else {
                continue;
            };
            mutations += 1;
            let Ok(changed_vector) = Vector::from_value(&changed, named_keys) else {
                continue; // the parser refused the change
            };
            // Referenced files are looked up in the unchanged set.
            let decoded = verify(&set, &changed_vector, &bytes).is_err();
            let encoded = encode(&changed_vector).map_or(true, |e| e != bytes);
            if !decoded && !encoded {
                unnoticed.push(format!("{}: {description}", vector.name));
            }
        }
    }
    assert!(
        unnoticed.is_empty(),
        "{} of {mutations} field changes went unnoticed:\n{}",
        unnoticed.len(),
        unnoticed.join("\n")
    );
    assert!(mutations > 1000, "only {mutations} mutations");
    println!("{mutations} single-field manifest changes, all noticed");
}

/// The suite runs against the AEAD backend the features chose (CI runs it
/// under both): this says which one, and that the `ring` pass-through works.
/// Without the feature here another workspace member may still have enabled
/// it (cargo unifies features), so only its presence is asserted.
#[test]
fn runs_on_the_selected_aead_backend() {
    println!("AEAD backend: {}", netcode_proto::crypto::BACKEND);
    if cfg!(feature = "ring") {
        assert_eq!(netcode_proto::crypto::BACKEND, "ring");
    }
}
