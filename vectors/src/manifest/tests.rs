//! The parser on minimal manifests: what it accepts and what it refuses.

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
