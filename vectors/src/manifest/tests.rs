//! The parser on minimal manifests: what it accepts and what it refuses.

use serde_json::Value;

use super::*;
use crate::Result;

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

fn denied() -> String {
    with_key(&minimal("packet_denied"))
}

fn parse_err(text: &str) -> String {
    Manifest::parse(text.as_bytes())
        .unwrap_err()
        .message()
        .to_owned()
}

#[test]
fn an_error_names_the_entry_and_the_field() {
    let err = parse_err(&denied().replace(r#""prefix_byte": 17"#, r#""prefix_byte": 300"#));
    assert!(
        err.starts_with(r#"vectors[0]: vector "x": prefix_byte: invalid value"#),
        "{err}"
    );
    let err = parse_err(&denied().replace(r#""nonce_hex": """#, r#""nonce_hex": "0g""#));
    assert!(
        err.starts_with(r#"vectors[0]: vector "x": encryption.nonce_hex: invalid hex digit"#),
        "{err}"
    );
    let err = parse_err(&denied().replace(r#""mac_bytes": 16"#, r#""mac_bytes": "16""#));
    assert!(
        err.starts_with("manifest: protocol.mac_bytes: invalid type"),
        "{err}"
    );
}

#[test]
fn unknown_fields_are_refused_at_every_level() {
    let err = parse_err(&denied().replace(r#""tag_bytes": 16"#, r#""tag_bytes": 16, "z": 1"#));
    assert!(err.contains("encryption: unknown field `z`"), "{err}");
    let err = parse_err(&denied().replace(r#""mac_bytes": 16"#, r#""mac_bytes": 16, "z": 1"#));
    assert!(err.contains("protocol: unknown field `z`"), "{err}");
    let err = parse_err(&denied().replace(r#""set": "test""#, r#""set": "test", "z": 1"#));
    assert!(err.contains("unknown field `z`"), "{err}");
    // A field of another kind is unknown to this one.
    let err = parse_err(&denied().replace(
        r#""plaintext_hex": """#,
        r#""plaintext_hex": "", "client_index": 0"#,
    ));
    assert!(err.contains("unknown field `client_index`"), "{err}");
    // A recipe is accepted only beside the byte string it describes.
    let err = parse_err(&denied().replace(
        r#""tag_bytes": 16"#,
        r#""tag_bytes": 16, "payload_recipe": """#,
    ));
    assert!(
        err.contains("encryption: payload_recipe is given without payload_hex"),
        "{err}"
    );
    // A twin is accepted only beside its value.
    let err = parse_err(&denied().replace(
        r#""plaintext_hex": """#,
        r#""plaintext_hex": "", "client_id_hex": "0x0000000000000001""#,
    ));
    assert!(
        err.contains("client_id_hex is given without client_id"),
        "{err}"
    );
}

#[test]
fn a_64_bit_value_is_read_exactly() {
    let text = denied().replace(
        r#""protocol_id": 1,"#,
        r#""protocol_id": 18446744073709551615, "protocol_id_hex": "0xffffffffffffffff","#,
    );
    let manifest = Manifest::parse(text.as_bytes()).unwrap();
    let Body::Packet(packet) = &manifest.vectors[0].body else {
        panic!("not a packet: {:?}", manifest.vectors[0].body);
    };
    assert_eq!(packet.protocol_id, u64::MAX);
    let err = parse_err(&denied().replace(r#""protocol_id": 1,"#, r#""protocol_id": 1.0,"#));
    assert!(err.contains("protocol_id: invalid type"), "{err}");
}

#[test]
fn a_twin_must_agree_with_its_value() {
    let text = denied().replace(
        r#""protocol_id": 1,"#,
        r#""protocol_id": 1, "protocol_id_hex": "0x0000000000000001","#,
    );
    Manifest::parse(text.as_bytes()).unwrap();
    let text = text.replace("0x0000000000000001", "0x0000000000000002");
    let err = parse_err(&text);
    assert!(err.contains("protocol_id_hex is"), "{err}");
}

#[test]
fn the_packet_type_must_match_the_kind() {
    let err = parse_err(&with_key(&minimal("packet_disconnect")));
    assert!(
        err.contains("does not match kind packet_disconnect"),
        "{err}"
    );
}

#[test]
fn what_is_written_reads_back_the_same() {
    let manifest = Manifest::parse(denied().as_bytes()).unwrap();
    let value = write::manifest_value(&manifest, serde_json::json!({"by": "test"}));
    assert_eq!(value["generator"]["by"], "test");
    assert_eq!(value["vectors"][0]["sequence_hex"], "0x0000000000000000");
    assert_eq!(Manifest::from_value(&value).unwrap(), manifest);
}

/// This crate's copy of the reference manifest, as JSON.
fn committed() -> Value {
    serde_json::from_str(include_str!("../../data/manifest.json")).unwrap()
}

/// The committed entry called `name`, with the field at `pointer` set to
/// `value` (or removed, for `None`), read again.
fn read_changed(name: &str, pointer: &str, value: Option<Value>) -> Result<Vector> {
    let manifest = committed();
    let named_keys = Manifest::from_value(&manifest).unwrap().named_keys;
    let mut entries = manifest["vectors"].as_array().unwrap().iter();
    let mut entry = entries.find(|entry| entry["name"] == name).unwrap().clone();
    let (parent, field) = pointer.rsplit_once('/').unwrap();
    let parent = entry.pointer_mut(parent).unwrap();
    match value {
        Some(value) => parent[field] = value,
        None => _ = parent.as_object_mut().unwrap().remove(field),
    }
    Vector::from_value(&entry, &named_keys)
}

/// Runs a table of changes to committed entries, one a line: the entry,
/// the pointer to a field, its new JSON value (`-` removes it), `=>`, and
/// how the error must start once the entry's name is taken off.
fn each_refused(table: &str) {
    for line in table.lines().map(str::trim).filter(|line| !line.is_empty()) {
        let (change, start) = line.split_once(" => ").unwrap();
        let mut words = change.splitn(3, ' ');
        let (name, pointer, value) = (words.next().unwrap(), words.next().unwrap(), words.next());
        let value = value
            .filter(|v| *v != "-")
            .map(|v| serde_json::from_str(v).unwrap());
        let err = read_changed(name, pointer, value).unwrap_err();
        let rest = err.message().strip_prefix(&format!("vector {name:?}: "));
        assert!(
            rest.is_some_and(|rest| rest.starts_with(start)),
            "{line}\n{err}"
        );
    }
}

#[test]
fn errors_name_the_field_and_element() {
    each_refused(
        r#"
        private_connect_token_mixed /server_addresses/1/port 70000 => server_addresses[1].port: invalid value
        private_connect_token_mixed /server_addresses/0/extra 0 => server_addresses[0]: unknown field `extra`
        private_connect_token_ipv4 /description 1 => description: invalid type
        private_connect_token_ipv4 /data_bytes -1 => data_bytes: invalid value
        private_connect_token_ipv4 /timeout_seconds - => missing field `timeout_seconds`
        "#,
    );
    let mut manifest = committed();
    manifest["named_keys"]["private_key"]["hex"] = Value::from("00");
    let err = Manifest::from_value(&manifest).unwrap_err();
    assert_eq!(
        err.message(),
        "manifest: named_keys.private_key.hex: expected 32 bytes of hex, got 1"
    );
}

/// A sealed token's fields sit beside its sealing's, flattened into one
/// type; an error in either names its field, whether the token is an entry
/// of its own or nested in another. What it must give depends on which.
#[test]
fn errors_in_a_sealed_token_name_their_field() {
    each_refused(
        r#"
        private_connect_token_ipv4_encrypted /user_data_hex "00" => user_data_hex: expected 256 bytes
        private_connect_token_ipv4_encrypted /encryption/nonce_hex "0g" => encryption.nonce_hex: invalid hex digit
        connect_token_mixed /private_connect_token/server_addresses/2/port "x" => private_connect_token: server_addresses[2].port: invalid type
        packet_challenge /challenge_token/z 0 => challenge_token: unknown field `z`
        packet_request /private_connect_token/data_bytes 0 => private_connect_token: unknown field `data_bytes`
        packet_request /private_connect_token/encrypted_vector - => private_connect_token: missing field `encrypted_vector`
        private_connect_token_ipv4_encrypted /encrypted_vector "x" => unknown field `encrypted_vector`
        private_connect_token_ipv4_encrypted /data_bytes - => missing field `data_bytes`
        "#,
    );
}

#[test]
fn u64_is_exact_and_timeout_is_signed_32_bit() {
    let manifest = committed();
    let mut entry = manifest["vectors"][0].clone();
    entry["client_id"] = Value::from(u64::MAX);
    entry["client_id_hex"] = Value::from("0xffffffffffffffff");
    entry["timeout_seconds"] = Value::from(i32::MIN);
    let named_keys = Manifest::from_value(&manifest).unwrap().named_keys;
    let Body::PrivateTokenPlaintext(token) = Vector::from_value(&entry, &named_keys).unwrap().body
    else {
        panic!("vectors[0] is not a private token plaintext");
    };
    assert_eq!(
        (token.client_id, token.timeout_seconds),
        (u64::MAX, i32::MIN)
    );
    each_refused(
        r#"
        private_connect_token_ipv4 /client_id 1.5 => client_id: invalid type
        private_connect_token_ipv4 /client_id -1 => client_id: invalid value
        private_connect_token_ipv4 /timeout_seconds 2147483648 => timeout_seconds: invalid value
        private_connect_token_ipv4 /timeout_seconds -2147483649 => timeout_seconds: invalid value
        "#,
    );
}

#[test]
fn fixed_arrays_take_exactly_their_length() {
    let vector = read_changed(
        "private_connect_token_ipv4",
        "/server_addresses/0/ipv4",
        Some(serde_json::json!([127, 0, 0, 2])),
    );
    let Body::PrivateTokenPlaintext(token) = vector.unwrap().body else {
        panic!("not a private token plaintext");
    };
    assert_eq!(token.server_addresses[0].ip.to_string(), "127.0.0.2");
    each_refused(
        r#"
        private_connect_token_ipv4 /server_addresses/0/ipv4 [127,0,0] => server_addresses[0].ipv4: invalid length 3
        private_connect_token_ipv4 /server_addresses/0/ipv4 [127,0,0,1,5] => server_addresses[0].ipv4: invalid length 5
        private_connect_token_ipv4 /server_addresses/0/ipv4 [127,256,0,1] => server_addresses[0].ipv4[1]: invalid value
        private_connect_token_ipv4 /server_addresses/0/ipv4 [127,0,0,1.0] => server_addresses[0].ipv4[3]: invalid type
        private_connect_token_ipv4 /user_data_hex "00" => user_data_hex: expected 256 bytes of hex, got 1
        "#,
    );
}

#[test]
fn hex_fields_have_their_length_and_digits() {
    let good = serde_json::json!({"role": "r", "hex": "00".repeat(32), "recipe": ""});
    let key: NamedKey = serde_json::from_value(good.clone()).unwrap();
    assert_eq!(key.key, [0; 32]);
    assert_eq!(serde_json::to_value(&key).unwrap(), good);
    let short = serde_json::json!({"role": "r", "hex": "00", "recipe": ""});
    let err = serde_json::from_value::<NamedKey>(short).unwrap_err();
    assert!(
        err.to_string().contains("expected 32 bytes of hex"),
        "{err}"
    );
    let bad = serde_json::json!({"role": "r", "hex": "zz".repeat(32), "recipe": ""});
    assert!(serde_json::from_value::<NamedKey>(bad).is_err());
}
