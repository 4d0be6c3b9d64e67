//! The checks every conforming vector set must pass, whatever its values:
//! the C reference's set, our committed copy and the generated set all run
//! the same functions, each as its own test ([`suite_tests!`]).
//!
//! Nothing here depends on the values of one set: no counts, no kinds that
//! must be present, no timestamps that must lie on one side of a clock.
//! What a set happens to cover is printed, and the callers that know their
//! set (ours) assert it.

use std::collections::BTreeSet;

use netcode_proto::constants;
use netcode_vectors::manifest::write::vector_value;
use netcode_vectors::{Kind, Manifest, Vector, VectorSet, encode, hex, verify};
use sha2::{Digest, Sha256};

pub(crate) mod fields;
pub(crate) mod negative;

/// One `#[test]` per check of the suite, each over the set `$open` gives,
/// with the attributes given (for instance an `ignore`).
macro_rules! suite_tests {
    ($(#[$attr:meta])* open: $open:expr) => {
        $(#[$attr])*
        #[test]
        fn decodes_and_reencodes() {
            $crate::suite::decodes_and_reencodes(&$open);
        }

        $(#[$attr])*
        #[test]
        fn holds_exactly_the_listed_files() {
            $crate::suite::holds_exactly_the_listed_files(&$open);
        }

        $(#[$attr])*
        #[test]
        fn protocol_constants_match_netcode_proto() {
            $crate::suite::protocol_constants_match_netcode_proto(&$open);
        }

        $(#[$attr])*
        #[test]
        fn an_unknown_kind_is_refused() {
            $crate::suite::an_unknown_kind_is_refused(&$open);
        }

        $(#[$attr])*
        #[test]
        fn the_manifest_writer_round_trips_every_entry() {
            $crate::suite::the_manifest_writer_round_trips_every_entry(&$open);
        }

        $(#[$attr])*
        #[test]
        fn every_manifest_field_is_checked() {
            $crate::suite::fields::every_manifest_field_is_checked(&$open);
        }

        $(#[$attr])*
        #[test]
        fn flipping_any_authenticated_byte_is_rejected() {
            $crate::suite::negative::flipping_any_authenticated_byte_is_rejected(&$open);
        }

        $(#[$attr])*
        #[test]
        fn another_protocol_id_is_rejected() {
            $crate::suite::negative::another_protocol_id_is_rejected(&$open);
        }

        $(#[$attr])*
        #[test]
        fn another_expire_timestamp_gets_the_standard_outcome() {
            $crate::suite::negative::another_expire_timestamp_gets_the_standard_outcome(&$open);
        }
    };
}

pub(crate) use suite_tests;

/// Every entry, in manifest order. The manifest must list `vector_count`
/// of them, and at least one: an empty set checks nothing.
pub(crate) fn entries(set: &VectorSet) -> &[Vector] {
    let manifest = &set.manifest;
    assert_eq!(
        manifest.vectors.len(),
        manifest.vector_count,
        "{}: manifest.vectors has {} entries but vector_count is {}",
        set.dir.display(),
        manifest.vectors.len(),
        manifest.vector_count
    );
    assert!(
        !manifest.vectors.is_empty(),
        "{}: the manifest lists no vectors",
        set.dir.display()
    );
    &manifest.vectors
}

/// The kinds the set's entries have.
pub(crate) fn kinds(set: &VectorSet) -> BTreeSet<Kind> {
    entries(set).iter().map(|v| v.kind).collect()
}

/// Every kind has at least one entry (for sets we make ourselves).
pub(crate) fn covers_every_kind(set: &VectorSet) {
    let kinds = kinds(set);
    let missing: Vec<Kind> = Kind::ALL
        .into_iter()
        .filter(|k| !kinds.contains(k))
        .collect();
    assert!(
        missing.is_empty(),
        "{}: kinds with no vector: {missing:?}",
        set.dir.display()
    );
}

/// The SHA-256 of `bytes`, lowercase hex.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes).as_slice())
}

/// For every entry: length, SHA-256, decoding against every field, and
/// re-encoding from the fields byte for byte.
pub(crate) fn decodes_and_reencodes(set: &VectorSet) {
    let mut failures = Vec::new();
    for vector in entries(set) {
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
        "{}: {} problem(s):\n{}\n(vectors/data is written by `cargo run -p netcode-vectors --bin regenerate`)",
        set.dir.display(),
        failures.len(),
        failures.join("\n")
    );
    let kinds: Vec<String> = kinds(set).iter().map(Kind::to_string).collect();
    println!(
        "{}: {} vectors decoded, compared field by field and re-encoded byte for byte; kinds: {}",
        set.dir.display(),
        set.manifest.vectors.len(),
        kinds.join(", ")
    );
}

/// The directory holds a `.bin` file for every entry and no other: an
/// unlisted `.bin` file would be a vector nobody checks.
pub(crate) fn holds_exactly_the_listed_files(set: &VectorSet) {
    let mut listed: Vec<String> = entries(set).iter().map(|v| v.file.clone()).collect();
    listed.sort();
    let unique: BTreeSet<&String> = listed.iter().collect();
    assert_eq!(
        unique.len(),
        listed.len(),
        "{}: two entries share a file",
        set.dir.display()
    );
    assert_eq!(
        set.bin_files().unwrap(),
        listed,
        "{}: the .bin files present are not exactly those the manifest lists",
        set.dir.display()
    );
}

/// The `protocol` object gives netcode 1.02's constants, as netcode-proto has them.
pub(crate) fn protocol_constants_match_netcode_proto(set: &VectorSet) {
    let p = &set.manifest.protocol;
    let version = constants::VERSION_INFO;
    assert_eq!(p.version_info.as_bytes(), &version[..version.len() - 1]);
    assert_eq!(p.version_info_bytes, version);
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

/// Giving any one entry a kind nobody knows makes the whole manifest
/// unreadable: an unknown kind is never skipped.
pub(crate) fn an_unknown_kind_is_refused(set: &VectorSet) {
    let original: serde_json::Value = serde_json::from_slice(&set.manifest_bytes).unwrap();
    for index in 0..entries(set).len() {
        let mut value = original.clone();
        value["vectors"][index]["kind"] = serde_json::Value::from("packet_from_the_future");
        let err = Manifest::from_value(&value).unwrap_err();
        assert!(
            err.message().contains("unknown vector kind"),
            "vectors[{index}]: unexpected error: {err}"
        );
    }
}

/// Every entry written back by the manifest writer reads as the same entry
/// (the generated set is written by it).
pub(crate) fn the_manifest_writer_round_trips_every_entry(set: &VectorSet) {
    let named_keys = &set.manifest.named_keys;
    for vector in entries(set) {
        let reread = Vector::from_value(&vector_value(vector), named_keys)
            .unwrap_or_else(|e| panic!("{}: the written entry does not parse: {e}", vector.name));
        assert_eq!(&reread, vector, "{}", vector.name);
    }
}
