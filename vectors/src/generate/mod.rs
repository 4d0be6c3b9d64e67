//! A second conforming vector set, made with our own encoder from values
//! that differ from the reference set's: other keys, protocol ids, client
//! ids, sequences and payloads; timestamps of 0, just below and just above
//! a given "now", and `u64::MAX`; address lists that are IPv6 only, 32 long,
//! or mixed, including unspecified, broadcast and IPv4-mapped addresses.
//!
//! The tests run the same checks over it as over the reference set, to show
//! that they hold for any conforming set and not only for the values of one.
//! [`another_set`] builds the manifest, [`write_set`] writes it with one
//! `.bin` file per entry, the way `--bin regenerate` writes `data/`.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::Path;

use netcode_proto::constants::{self, MAX_PAYLOAD_BYTES, MAX_SERVERS_PER_CONNECT};
use serde_json::Value;

use crate::manifest::write::manifest_value;
use crate::manifest::{self, Manifest, PacketContent, Protocol};
use crate::{Error, MANIFEST_FILE, Result, write_bin_files};

mod build;

use build::{
    ChallengeInputs, NamedKey, PacketInputs, PrivateInputs, challenge_content,
    challenge_token_entries, connect_token_entry, packet_entry, private_token_entries,
    request_entry,
};

/// The `set` name of the generated manifest.
pub const SET_NAME: &str = "generated";

/// `N` bytes with byte `i` = `(mul * i + add) mod 256`.
fn pattern<const N: usize>(mul: usize, add: usize) -> [u8; N] {
    std::array::from_fn(|i| ((mul * i + add) % 256) as u8)
}

const PRIVATE_KEY: NamedKey = NamedKey {
    name: "other_private_key",
    key: [0xa5; 32],
};
const CHALLENGE_KEY: NamedKey = NamedKey {
    name: "other_challenge_key",
    key: [0x3c; 32],
};
const CLIENT_TO_SERVER_KEY: NamedKey = NamedKey {
    name: "other_client_to_server_key",
    key: [0x5a; 32],
};
const SERVER_TO_CLIENT_KEY: NamedKey = NamedKey {
    name: "other_server_to_client_key",
    key: [0xc3; 32],
};

/// The protocol id of most entries; some use 0 and `u64::MAX` instead.
const PROTOCOL_ID: u64 = 0xfedc_ba98_7654_3210;

fn v4(a: u8, b: u8, c: u8, d: u8, port: u16) -> SocketAddr {
    SocketAddr::new(IpAddr::V4(Ipv4Addr::new(a, b, c, d)), port)
}

fn v6(groups: [u16; 8], port: u16) -> SocketAddr {
    SocketAddr::new(IpAddr::V6(Ipv6Addr::from(groups)), port)
}

/// The private connect tokens, one per kind of expire timestamp.
fn private_tokens(now: u64) -> Vec<PrivateInputs> {
    let token = |name, client_id, timeout_seconds, addresses, expire_timestamp, seed: usize| {
        PrivateInputs {
            name,
            client_id,
            timeout_seconds,
            addresses,
            client_to_server_key: pattern(seed + 3, 17),
            server_to_client_key: pattern(seed + 5, 29),
            user_data: pattern(seed + 1, 200),
            protocol_id: PROTOCOL_ID,
            expire_timestamp,
            nonce: pattern(seed + 7, 41),
            key: PRIVATE_KEY,
        }
    };
    let max_ipv6 = (0..MAX_SERVERS_PER_CONNECT)
        .map(|i| {
            let i = u16::try_from(i).unwrap_or(u16::MAX);
            v6([0xfd00, 0, 0, 0, 0, 0, i, 0x100 - i], i.wrapping_mul(2039))
        })
        .collect();
    vec![
        token(
            "other_ipv6_only_expires_at_0",
            0,
            -1,
            vec![v6([0, 0, 0, 0, 0, 0, 0, 1], 1)],
            0,
            2,
        ),
        token(
            "other_max_ipv6_never_expires",
            u64::MAX,
            i32::MIN,
            max_ipv6,
            u64::MAX,
            10,
        ),
        token(
            "other_mixed_expired_just_before_now",
            0x8000_0000_0000_0001,
            i32::MAX,
            vec![
                v4(0, 0, 0, 0, 0),
                v6([0xffff; 8], 65535),
                v4(255, 255, 255, 255, 65535),
                v6([0, 0, 0, 0, 0, 0xffff, 0xc000, 0x0201], 80),
                v4(203, 0, 113, 9, 7777),
            ],
            now.saturating_sub(1),
            20,
        ),
        token(
            "other_mixed_expires_just_after_now",
            1,
            0,
            vec![
                v4(198, 51, 100, 1, 40001),
                v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 1], 40002),
            ],
            now.saturating_add(1),
            30,
        ),
    ]
}

/// The challenge tokens: sequences 0, `u64::MAX` and one in the server's
/// global range.
fn challenge_tokens() -> Vec<ChallengeInputs> {
    let token = |name, client_id, sequence, seed: usize| ChallengeInputs {
        name,
        client_id,
        user_data: pattern(seed, 99),
        sequence,
        key: CHALLENGE_KEY,
    };
    vec![
        token("other_challenge_seq0", u64::MAX, 0, 31),
        token("other_challenge_seq_max", 0, u64::MAX, 47),
        token(
            "other_challenge_global",
            0x0123_4567_89ab_cdef,
            constants::SERVER_GLOBAL_SEQUENCE_BASE + 0x1234,
            53,
        ),
    ]
}

fn framing(protocol_id: u64, sequence: u64, to_server: bool) -> PacketInputs {
    PacketInputs {
        protocol_id,
        sequence,
        key: if to_server {
            CLIENT_TO_SERVER_KEY
        } else {
            SERVER_TO_CLIENT_KEY
        },
        direction: if to_server {
            "client_to_server"
        } else {
            "server_to_client"
        },
    }
}

fn payload(len: usize, seed: usize) -> PacketContent {
    PacketContent::Payload {
        payload_bytes: len,
        payload: (0..len).map(|i| ((i * seed + 7) % 256) as u8).collect(),
    }
}

/// The manifest of the generated set, with timestamps around `now` (unix
/// seconds): tokens and requests expiring at 0, at `now - 1`, at `now + 1`
/// and at `u64::MAX`.
pub fn another_set(now: u64) -> Result<Manifest> {
    let privates = private_tokens(now);
    let challenges = challenge_tokens();
    let mut vectors = Vec::new();
    for private in &privates {
        vectors.extend(private_token_entries(private)?);
    }
    let [at_zero, never, before_now, after_now] = privates.as_slice() else {
        return Err(Error::new("four private tokens expected"));
    };
    vectors.push(connect_token_entry(
        "other_connect_token_at_0",
        at_zero,
        &at_zero.addresses,
        0,
    )?);
    vectors.push(connect_token_entry(
        "other_connect_token_never_expires",
        never,
        &never.addresses,
        now,
    )?);
    vectors.push(connect_token_entry(
        "other_connect_token_other_public_address",
        before_now,
        &[v4(192, 0, 2, 44, 30000)],
        now.saturating_sub(31),
    )?);
    vectors.push(connect_token_entry(
        "other_connect_token_created_now",
        after_now,
        &after_now.addresses,
        now,
    )?);
    for challenge in &challenges {
        vectors.extend(challenge_token_entries(challenge)?);
    }
    for private in &privates {
        vectors.push(request_entry(
            &format!("other_request_{}", private.name),
            private,
        )?);
    }
    let [seq0, seq_max, global] = challenges.as_slice() else {
        return Err(Error::new("three challenge tokens expected"));
    };
    let base = constants::SERVER_GLOBAL_SEQUENCE_BASE;
    let packets = [
        (
            "other_denied_seq0",
            framing(PROTOCOL_ID, 0, false),
            PacketContent::Denied,
        ),
        (
            "other_denied_seq_max",
            framing(PROTOCOL_ID, u64::MAX, false),
            PacketContent::Denied,
        ),
        (
            "other_denied_global_protocol_0",
            framing(0, base + 1, false),
            PacketContent::Denied,
        ),
        (
            "other_challenge_packet",
            framing(PROTOCOL_ID, 0x01_0000, false),
            PacketContent::Challenge(challenge_content(seq0)?),
        ),
        (
            "other_challenge_packet_global_protocol_max",
            framing(u64::MAX, base + 999, false),
            PacketContent::Challenge(challenge_content(seq_max)?),
        ),
        (
            "other_response_packet",
            framing(PROTOCOL_ID, 1, true),
            PacketContent::Response(challenge_content(global)?),
        ),
        (
            "other_keep_alive_first_of_one",
            framing(PROTOCOL_ID, 0x100, false),
            PacketContent::KeepAlive {
                client_index: 0,
                max_clients: 1,
            },
        ),
        (
            "other_keep_alive_last_of_max",
            framing(PROTOCOL_ID, 1 << 32, false),
            PacketContent::KeepAlive {
                client_index: u32::MAX - 1,
                max_clients: u32::MAX,
            },
        ),
        (
            "other_keep_alive_to_server",
            framing(PROTOCOL_ID, 3, true),
            PacketContent::KeepAlive {
                client_index: 255,
                max_clients: 256,
            },
        ),
        (
            "other_payload_len1_seq0",
            framing(PROTOCOL_ID, 0, true),
            payload(1, 3),
        ),
        (
            "other_payload_max_seq_max",
            framing(PROTOCOL_ID, u64::MAX, false),
            payload(MAX_PAYLOAD_BYTES, 5),
        ),
        (
            "other_payload_600",
            framing(PROTOCOL_ID, 0x00ff_ffff_ffff_fffe, true),
            payload(600, 11),
        ),
        (
            "other_disconnect_seq_2_56",
            framing(PROTOCOL_ID, 1 << 56, false),
            PacketContent::Disconnect,
        ),
        (
            "other_disconnect_seq7",
            framing(PROTOCOL_ID, 7, true),
            PacketContent::Disconnect,
        ),
    ];
    for (name, framing, content) in packets {
        vectors.push(packet_entry(name, framing, content)?);
    }

    let named_keys = [
        (PRIVATE_KEY, "seals every private connect token of this set"),
        (CHALLENGE_KEY, "seals every challenge token of this set"),
        (
            CLIENT_TO_SERVER_KEY,
            "seals this set's packets from client to server",
        ),
        (
            SERVER_TO_CLIENT_KEY,
            "seals this set's packets from server to client",
        ),
    ]
    .into_iter()
    .map(|(key, role)| {
        (
            key.name.to_owned(),
            manifest::NamedKey {
                role: role.to_owned(),
                key: key.key,
                recipe: format!("every byte {:#04x}", key.key[0]),
            },
        )
    })
    .collect::<BTreeMap<_, _>>();
    Ok(Manifest {
        set: SET_NAME.to_owned(),
        protocol: protocol(),
        named_keys,
        vector_count: vectors.len(),
        vectors,
    })
}

/// The protocol object: netcode 1.02's sizes and fixed values.
fn protocol() -> Protocol {
    let version = constants::VERSION_INFO;
    Protocol {
        version_info: String::from_utf8_lossy(&version[..version.len() - 1]).into_owned(),
        version_info_bytes: version.to_vec(),
        connect_token_bytes: constants::CONNECT_TOKEN_BYTES,
        connect_token_private_bytes: constants::CONNECT_TOKEN_PRIVATE_BYTES,
        connect_token_nonce_bytes: constants::CONNECT_TOKEN_NONCE_BYTES,
        challenge_token_bytes: constants::CHALLENGE_TOKEN_BYTES,
        key_bytes: constants::KEY_BYTES,
        mac_bytes: constants::MAC_BYTES,
        user_data_bytes: constants::USER_DATA_BYTES,
        max_servers_per_connect: MAX_SERVERS_PER_CONNECT,
        max_payload_bytes: MAX_PAYLOAD_BYTES,
        connection_request_packet_bytes: constants::CONNECTION_REQUEST_BYTES,
        server_global_sequence_base: constants::SERVER_GLOBAL_SEQUENCE_BASE,
    }
}

/// Writes `manifest` to `<dir>/manifest.json`, then every entry's `.bin`
/// file with [`write_bin_files`] (which reads the manifest back through the
/// parser); returns how many files it wrote.
pub fn write_set(dir: &Path, manifest: &Manifest) -> Result<usize> {
    let generator = serde_json::json!({
        "implementation": "netcode-vectors (netcode_vectors::generate), encoded with netcode-proto",
        "method": "every input chosen in netcode_vectors::generate; every derived field and every .bin file computed by netcode-proto and this crate's encoder",
    });
    let value: Value = manifest_value(manifest, generator);
    let text = serde_json::to_vec_pretty(&value)
        .map_err(|e| Error::new(format!("cannot write the manifest as JSON: {e}")))?;
    let path = dir.join(MANIFEST_FILE);
    std::fs::write(&path, text)
        .map_err(|e| Error::new(format!("cannot write {}: {e}", path.display())))?;
    write_bin_files(dir)
}
