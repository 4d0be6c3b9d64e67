//! Damaged input is rejected with the reason the check order dictates, and
//! never accepted.

use std::collections::BTreeSet;

use crate::common::*;
use netcode_proto::address::AddressError;
use netcode_proto::constants::{
    CHALLENGE_BODY_BYTES, CHALLENGE_TOKEN_BYTES, CONNECT_TOKEN_BYTES, CONNECT_TOKEN_PRIVATE_BYTES,
    CONNECTION_REQUEST_BYTES, MAC_BYTES, MAX_PAYLOAD_BYTES, MIN_ENCRYPTED_PACKET_BYTES,
    VERSION_INFO_BYTES,
};
use netcode_proto::crypto::{DecryptError, encrypt_x};
use netcode_proto::packet::{PacketTypes, ReadContext};
use netcode_proto::token::{ChallengeToken, TokenError, private_token_associated_data};
use netcode_proto::{
    ConnectToken, Packet, PacketError, PacketType, PrivateConnectToken, ReplayProtection,
    read_packet,
};
use proptest::prelude::*;

/// Reads a copy of `bytes`, so the caller's bytes stay as they were.
fn read_copy(
    context: &ReadContext<'_>,
    bytes: &[u8],
    replay: Option<&mut ReplayProtection>,
) -> Result<(u64, PacketType), PacketError> {
    let mut copy = bytes.to_vec();
    read_packet(context, &mut copy, replay).map(|r| (r.sequence, r.packet.packet_type()))
}

// ---------------------------------------------------------------------------
// Encrypted packets.
// ---------------------------------------------------------------------------

#[test]
fn every_truncation_of_every_encrypted_packet_is_rejected() {
    let keyed = any_context(None, Some(&PACKET_KEY));
    let keyless = any_context(None, None);
    for packet in fixture_packets() {
        for sequence in FIXTURE_SEQUENCES {
            let bytes = write(&packet, sequence);
            let header = bytes.len() - packet.body_len() - MAC_BYTES;
            let mut window = ReplayProtection::new();
            assert_eq!(
                read_copy(&keyed, &bytes, Some(&mut window.clone())),
                Ok((sequence, packet.packet_type())),
                "the intact packet must read"
            );
            for len in 0..bytes.len() {
                let cut = &bytes[..len];
                let result = read_copy(&keyed, cut, Some(&mut window));
                let expected = if len < MIN_ENCRYPTED_PACKET_BYTES || len < header + MAC_BYTES {
                    PacketError::TooSmall
                } else {
                    PacketError::DecryptFailed
                };
                assert_eq!(
                    result,
                    Err(expected),
                    "{packet:?} sequence {sequence} cut to {len}"
                );
                assert_eq!(expected, expected_rejection(&keyed, cut, Some(&window)));
                assert_eq!(
                    window,
                    ReplayProtection::new(),
                    "a rejection moved the window"
                );

                // With no read key the key check comes before the size check.
                let keyless_expected = if len == 0 {
                    PacketError::TooSmall
                } else {
                    PacketError::NoKey
                };
                assert_eq!(read_copy(&keyless, cut, None), Err(keyless_expected));
            }
        }
    }
}

#[test]
fn every_bit_flip_of_every_encrypted_packet_is_rejected() {
    let contexts = [
        any_context(None, Some(&PACKET_KEY)),
        client_context(Some(&PACKET_KEY)),
        server_context(None, Some(&PACKET_KEY)),
    ];
    let mut seen = BTreeSet::new();
    for packet in fixture_packets() {
        for sequence in [0, 0x12_3456_789a] {
            let bytes = write(&packet, sequence);
            for (c, context) in contexts.iter().enumerate() {
                if !context.accepted.contains(packet.packet_type()) {
                    continue;
                }
                let mut window = ReplayProtection::new();
                assert!(read_copy(context, &bytes, Some(&mut window.clone())).is_ok());
                // Every bit for the ALL context; the prefix and sequence
                // bytes only for the one-sided ones, where acceptance matters.
                let bits = if c == 0 { bytes.len() * 8 } else { 9 * 8 };
                for bit in 0..bits {
                    let mut damaged = bytes.clone();
                    flip(&mut damaged, bit);
                    let expected = expected_rejection(context, &damaged, Some(&window));
                    let result = read_copy(context, &damaged, Some(&mut window));
                    assert_eq!(
                        result,
                        Err(expected),
                        "{packet:?} sequence {sequence} bit {bit} context {c}"
                    );
                    assert_eq!(
                        window,
                        ReplayProtection::new(),
                        "a rejection moved the window"
                    );
                    seen.insert(expected);

                    let byte = bit / 8;
                    if byte == 0 {
                        let prefix = damaged[0];
                        if prefix & 0x0f >= 7 || prefix & 0x0f == 0 {
                            assert_eq!(result, Err(PacketError::InvalidType));
                        }
                    } else {
                        // Sequence, body and tag damage can only fail
                        // authentication (the window is empty).
                        assert_eq!(result, Err(PacketError::DecryptFailed));
                    }
                }
            }
        }
    }
    for reason in [
        PacketError::TooSmall,
        PacketError::TypeNotAccepted,
        PacketError::InvalidType,
        PacketError::InvalidSequenceBytes,
        PacketError::DecryptFailed,
    ] {
        assert!(seen.contains(&reason), "no flip produced {reason}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Sampled flips of arbitrary packets at arbitrary sequences and keys,
    /// always including every bit of the first and last 16 bytes.
    #[test]
    fn sampled_bit_flips_are_rejected(
        packet in encrypted_packet(),
        sequence in sequence(),
        protocol_id in any::<u64>(),
        packet_key in key(),
        sample in prop::collection::vec(any::<prop::sample::Index>(), 64),
    ) {
        let mut bytes = vec![0u8; 1300];
        let n = netcode_proto::write_packet(&packet.packet(), sequence, &packet_key, protocol_id, &mut bytes)
            .unwrap();
        bytes.truncate(n);
        let context = ReadContext {
            protocol_id,
            read_key: Some(&packet_key),
            ..any_context(None, None)
        };
        let window = busy_window(sequence.saturating_sub(1));
        let edges = (0..16 * 8).chain((n - 16) * 8..n * 8);
        let sampled = sample.iter().map(|i| i.index(n * 8));
        for bit in edges.chain(sampled) {
            let mut damaged = bytes.clone();
            flip(&mut damaged, bit);
            let mut w = window.clone();
            let expected = expected_rejection(&context, &damaged, Some(&w));
            prop_assert_eq!(read_copy(&context, &damaged, Some(&mut w)), Err(expected), "bit {}", bit);
            prop_assert_eq!(&w, &window);
        }
    }

    /// Anything shorter than 18 bytes with a key is too small, whatever it holds.
    #[test]
    fn short_packets_are_too_small(bytes in prop::collection::vec(any::<u8>(), 1..MIN_ENCRYPTED_PACKET_BYTES)) {
        prop_assume!(bytes[0] != 0);
        let context = any_context(None, Some(&PACKET_KEY));
        prop_assert_eq!(read_copy(&context, &bytes, None), Err(PacketError::TooSmall));
    }

    /// A type nibble of 0 or 7..=15 on an encrypted packet is invalid,
    /// before acceptance and sequence byte checks.
    #[test]
    fn invalid_type_nibbles_are_invalid_types(
        high in 0u8..16,
        low in prop_oneof![Just(0u8), 7u8..16],
        rest in prop::collection::vec(any::<u8>(), MIN_ENCRYPTED_PACKET_BYTES - 1..1300),
    ) {
        let prefix = (high << 4) | low;
        prop_assume!(prefix != 0);
        let mut bytes = vec![prefix];
        bytes.extend_from_slice(&rest);
        for accepted in [PacketTypes::ALL, PacketTypes::CLIENT, PacketTypes::SERVER, PacketTypes::NONE] {
            let context = ReadContext { accepted, ..any_context(None, Some(&PACKET_KEY)) };
            prop_assert_eq!(read_copy(&context, &bytes, None), Err(PacketError::InvalidType));
        }
    }

    /// A valid type with a sequence byte count outside 1..=8.
    #[test]
    fn bad_sequence_byte_counts_are_refused(
        high in prop_oneof![Just(0u8), 9u8..16],
        low in 1u8..7,
        rest in prop::collection::vec(any::<u8>(), MIN_ENCRYPTED_PACKET_BYTES - 1..1300),
    ) {
        let mut bytes = vec![(high << 4) | low];
        bytes.extend_from_slice(&rest);
        let context = any_context(None, Some(&PACKET_KEY));
        prop_assert_eq!(read_copy(&context, &bytes, None), Err(PacketError::InvalidSequenceBytes));
    }
}

#[test]
fn wrong_key_or_protocol_fails_decryption() {
    for packet in fixture_packets() {
        let bytes = write(&packet, 5);
        let wrong_key = any_context(None, Some(&OTHER_KEY));
        let wrong_protocol = ReadContext {
            protocol_id: PROTOCOL_ID ^ 1,
            ..any_context(None, Some(&PACKET_KEY))
        };
        for context in [wrong_key, wrong_protocol] {
            let mut window = ReplayProtection::new();
            assert_eq!(
                read_copy(&context, &bytes, Some(&mut window)),
                Err(PacketError::DecryptFailed)
            );
            assert_eq!(window, ReplayProtection::new());
        }
    }
}

// ---------------------------------------------------------------------------
// Replay protection and body sizes, where the check order decides the error.
// ---------------------------------------------------------------------------

fn replay_protected_fixtures() -> Vec<Encrypted> {
    fixture_packets()
        .into_iter()
        .filter(|p| p.packet_type().replay_protected())
        .collect()
}

#[test]
fn replayed_packets_are_refused() {
    let context = any_context(None, Some(&PACKET_KEY));
    for packet in replay_protected_fixtures() {
        let mut window = ReplayProtection::new();
        let at_1000 = write(&packet, 1000);
        assert_eq!(
            read_copy(&context, &at_1000, Some(&mut window)),
            Ok((1000, packet.packet_type()))
        );
        let after_first = window.clone();
        assert_eq!(
            read_copy(&context, &at_1000, Some(&mut window)),
            Err(PacketError::Replayed)
        );
        assert_eq!(window, after_first, "a replay must not move the window");

        // Older but inside the window, and not seen yet: fine, once.
        let at_800 = write(&packet, 800);
        assert!(read_copy(&context, &at_800, Some(&mut window)).is_ok());
        assert_eq!(
            read_copy(&context, &at_800, Some(&mut window)),
            Err(PacketError::Replayed)
        );
        // 1000 - 256 and older are outside the window, seen or not.
        for old in [744, 500, 0] {
            assert_eq!(
                read_copy(&context, &write(&packet, old), Some(&mut window)),
                Err(PacketError::Replayed),
                "sequence {old}"
            );
        }
        assert!(read_copy(&context, &write(&packet, 745), Some(&mut window)).is_ok());
        assert_eq!(window.most_recent_sequence(), 1000);
    }
}

#[test]
fn the_replay_check_comes_before_decryption() {
    let context = any_context(None, Some(&PACKET_KEY));
    for packet in replay_protected_fixtures() {
        let mut window = ReplayProtection::new();
        window.advance(40);
        // Garbage under a header that names sequence 40 (seen) and 41 (not).
        let mut seen = write(&packet, 40);
        let last = seen.len() - 1;
        seen[last] ^= 0x80;
        assert_eq!(
            read_copy(&context, &seen, Some(&mut window)),
            Err(PacketError::Replayed)
        );
        let mut unseen = write(&packet, 41);
        let last = unseen.len() - 1;
        unseen[last] ^= 0x80;
        assert_eq!(
            read_copy(&context, &unseen, Some(&mut window)),
            Err(PacketError::DecryptFailed)
        );
        // Without a window there is no replay check at all.
        assert_eq!(
            read_copy(&context, &seen, None),
            Err(PacketError::DecryptFailed)
        );
    }
}

#[test]
fn handshake_packets_are_not_replay_checked() {
    let context = any_context(None, Some(&PACKET_KEY));
    for packet in fixture_packets()
        .into_iter()
        .filter(|p| !p.packet_type().replay_protected())
    {
        let bytes = write(&packet, 9);
        let mut window = ReplayProtection::new();
        window.advance(9);
        let before = window.clone();
        for _ in 0..2 {
            assert_eq!(
                read_copy(&context, &bytes, Some(&mut window)),
                Ok((9, packet.packet_type()))
            );
        }
        assert_eq!(window, before);
    }
}

#[test]
fn wrong_body_sizes_are_refused_after_the_window_advances() {
    let context = any_context(None, Some(&PACKET_KEY));
    let big = vec![7u8; MAX_PAYLOAD_BYTES + 1];
    let cases: [(PacketType, &[u8]); 10] = [
        (PacketType::Denied, &[0]),
        (PacketType::Challenge, &big[..CHALLENGE_BODY_BYTES - 1]),
        (PacketType::Challenge, &big[..CHALLENGE_BODY_BYTES + 1]),
        (PacketType::Response, &big[..CHALLENGE_BODY_BYTES + 1]),
        (PacketType::KeepAlive, &big[..7]),
        (PacketType::KeepAlive, &big[..9]),
        (PacketType::Payload, &[]),
        (PacketType::Payload, &big),
        (PacketType::Disconnect, &[0]),
        (PacketType::Disconnect, &big[..8]),
    ];
    for (packet_type, body) in cases {
        let sequence = 3000;
        let bytes = craft(packet_type as u8, sequence, body);
        let mut window = ReplayProtection::new();
        window.advance(2000);
        let before = window.clone();
        assert_eq!(
            read_copy(&context, &bytes, Some(&mut window)),
            Err(PacketError::WrongBodySize),
            "{packet_type} with {} body bytes",
            body.len()
        );
        if packet_type.replay_protected() {
            assert!(window.already_received(sequence));
            assert_eq!(window.most_recent_sequence(), sequence);
            // The authentic packet that comes next with that sequence is a replay.
            let right = match packet_type {
                PacketType::KeepAlive => craft(4, sequence, &[0; 8]),
                PacketType::Payload => craft(5, sequence, &[1]),
                _ => craft(6, sequence, &[]),
            };
            assert_eq!(
                read_copy(&context, &right, Some(&mut window)),
                Err(PacketError::Replayed)
            );
            assert!(read_copy(&context, &right, Some(&mut ReplayProtection::new())).is_ok());
        } else {
            assert_eq!(window, before);
        }
    }
}

// ---------------------------------------------------------------------------
// Connection requests.
// ---------------------------------------------------------------------------

const MIN_EXPIRE: u64 = 1_700_000_050;

fn request_context<'k>(read_key: Option<&'k netcode_proto::Key>) -> ReadContext<'k> {
    ReadContext {
        min_expire_timestamp: MIN_EXPIRE,
        ..server_context(Some(&PRIVATE_KEY), read_key)
    }
}

#[test]
fn the_fixture_request_reads() {
    let mut bytes = fixture_request();
    let read = read_packet(&request_context(None), &mut bytes, None).unwrap();
    let Packet::Request(request) = read.packet else {
        panic!("not a request: {:?}", read.packet);
    };
    assert_eq!(request.token, fixture_private_token());
    assert_eq!(request.expire_timestamp, REQUEST_EXPIRE);
    assert_eq!(request.nonce, REQUEST_NONCE);
}

#[test]
fn every_bit_flip_of_a_connection_request_is_rejected() {
    let bytes = fixture_request();
    let mut expire_outcomes = BTreeSet::new();
    for read_key in [None, Some(&OTHER_KEY)] {
        let context = request_context(read_key);
        for bit in 0..CONNECTION_REQUEST_BYTES * 8 {
            let mut damaged = bytes.clone();
            flip(&mut damaged, bit);
            let result = read_copy(&context, &damaged, None);
            let expected = expected_rejection(&context, &damaged, None);
            assert_eq!(result, Err(expected), "bit {bit}");
            let byte = bit / 8;
            let by_region = match byte {
                0 if read_key.is_none() => PacketError::NoKey,
                0 => expected,
                1..14 => PacketError::VersionMismatch,
                14..22 => PacketError::ProtocolMismatch,
                22..30 => {
                    let expire = u64::from_le_bytes(damaged[22..30].try_into().unwrap());
                    let e = if expire <= REQUEST_NOW {
                        PacketError::TokenExpired
                    } else if expire < MIN_EXPIRE {
                        PacketError::TokenPredatesStart
                    } else {
                        // A changed expire changes the associated data.
                        PacketError::DecryptFailed
                    };
                    expire_outcomes.insert(e);
                    e
                }
                _ => PacketError::DecryptFailed,
            };
            assert_eq!(result, Err(by_region), "bit {bit}");
        }
    }
    assert_eq!(
        expire_outcomes,
        BTreeSet::from([
            PacketError::TokenExpired,
            PacketError::TokenPredatesStart,
            PacketError::DecryptFailed
        ])
    );
}

#[test]
fn connection_requests_of_the_wrong_size_are_refused() {
    let bytes = fixture_request();
    let context = request_context(None);
    assert_eq!(read_copy(&context, &[], None), Err(PacketError::TooSmall));
    for len in 1..CONNECTION_REQUEST_BYTES {
        assert_eq!(
            read_copy(&context, &bytes[..len], None),
            Err(PacketError::RequestWrongSize),
            "{len}"
        );
    }
    for extra in (1..=64).chain([222, 1000]) {
        let mut longer = bytes.clone();
        longer.resize(CONNECTION_REQUEST_BYTES + extra, 0);
        assert_eq!(
            read_copy(&context, &longer, None),
            Err(PacketError::RequestWrongSize)
        );
    }
}

#[test]
fn connection_request_checks_in_order() {
    let bytes = fixture_request();
    // A client never accepts requests, before any other check.
    assert_eq!(
        read_copy(&client_context(Some(&PACKET_KEY)), &bytes[..5], None),
        Err(PacketError::TypeNotAccepted)
    );
    // No private key, after the size check.
    let keyless = server_context(None, None);
    assert_eq!(
        read_copy(&keyless, &bytes[..5], None),
        Err(PacketError::RequestWrongSize)
    );
    assert_eq!(read_copy(&keyless, &bytes, None), Err(PacketError::NoKey));
    // Time: expired exactly at the expire timestamp.
    for now in [REQUEST_EXPIRE, REQUEST_EXPIRE + 1, u64::MAX] {
        let context = ReadContext {
            current_timestamp: now,
            ..request_context(None)
        };
        assert_eq!(
            read_copy(&context, &bytes, None),
            Err(PacketError::TokenExpired)
        );
    }
    let restart = ReadContext {
        min_expire_timestamp: REQUEST_EXPIRE + 1,
        ..request_context(None)
    };
    assert_eq!(
        read_copy(&restart, &bytes, None),
        Err(PacketError::TokenPredatesStart)
    );
    let wrong_key = ReadContext {
        private_key: Some(&OTHER_KEY),
        ..request_context(None)
    };
    assert_eq!(
        read_copy(&wrong_key, &bytes, None),
        Err(PacketError::DecryptFailed)
    );
}

/// Seals an arbitrary private token plaintext the way the backend would.
fn seal_plaintext(
    mut plain: [u8; CONNECT_TOKEN_PRIVATE_BYTES],
    expire: u64,
) -> [u8; CONNECT_TOKEN_PRIVATE_BYTES] {
    let ad = private_token_associated_data(PROTOCOL_ID, expire);
    let (text, tag) = plain.split_at_mut(CONNECT_TOKEN_PRIVATE_BYTES - MAC_BYTES);
    tag.copy_from_slice(&encrypt_x(&PRIVATE_KEY, &REQUEST_NONCE, &ad, text));
    plain
}

#[test]
fn authentic_but_malformed_private_tokens_are_invalid() {
    let plain = fixture_private_token().write().unwrap();
    // Address count at bytes 12..16; the first address type at byte 16.
    let mut count_zero = plain;
    count_zero[12..16].copy_from_slice(&0u32.to_le_bytes());
    let mut count_33 = plain;
    count_33[12..16].copy_from_slice(&33u32.to_le_bytes());
    let mut bad_type = plain;
    bad_type[16] = 3;
    for (plain, reason) in [
        (count_zero, AddressError::BadCount),
        (count_33, AddressError::BadCount),
        (bad_type, AddressError::BadType),
    ] {
        let mut sealed = seal_plaintext(plain, REQUEST_EXPIRE);
        let mut request = fixture_request();
        request[54..].copy_from_slice(&sealed);
        assert_eq!(
            read_copy(&request_context(None), &request, None),
            Err(PacketError::InvalidPrivateToken)
        );
        assert_eq!(
            PrivateConnectToken::decrypt(
                &mut sealed,
                PROTOCOL_ID,
                REQUEST_EXPIRE,
                &REQUEST_NONCE,
                &PRIVATE_KEY
            ),
            Err(TokenError::Address(reason))
        );
    }
}

// ---------------------------------------------------------------------------
// Tokens.
// ---------------------------------------------------------------------------

fn fixture_connect_token() -> ConnectToken {
    let token = fixture_private_token();
    ConnectToken {
        protocol_id: PROTOCOL_ID,
        create_timestamp: REQUEST_NOW,
        expire_timestamp: REQUEST_EXPIRE,
        nonce: REQUEST_NONCE,
        private_data: token
            .encrypt(PROTOCOL_ID, REQUEST_EXPIRE, &REQUEST_NONCE, &PRIVATE_KEY)
            .unwrap(),
        timeout_seconds: token.timeout_seconds,
        server_addresses: token.server_addresses.clone(),
        client_to_server_key: token.client_to_server_key.clone(),
        server_to_client_key: token.server_to_client_key.clone(),
    }
}

#[test]
fn public_tokens_of_the_wrong_size_are_refused() {
    let bytes = fixture_connect_token().write().unwrap();
    assert_eq!(ConnectToken::read(&bytes), Ok(fixture_connect_token()));
    for len in 0..CONNECT_TOKEN_BYTES {
        assert_eq!(
            ConnectToken::read(&bytes[..len]),
            Err(TokenError::WrongSize),
            "{len}"
        );
    }
    let mut longer = bytes.to_vec();
    for _ in 0..CONNECT_TOKEN_BYTES {
        longer.push(0);
        assert_eq!(ConnectToken::read(&longer), Err(TokenError::WrongSize));
    }
}

#[test]
fn public_token_version_and_timestamps_are_checked() {
    let bytes = fixture_connect_token().write().unwrap();
    for bit in 0..VERSION_INFO_BYTES * 8 {
        let mut damaged = bytes;
        flip(&mut damaged, bit);
        assert_eq!(
            ConnectToken::read(&damaged),
            Err(TokenError::VersionMismatch)
        );
    }
    // create at 21..29, expire at 29..37.
    let mut backwards = bytes;
    backwards[21..29].copy_from_slice(&(REQUEST_EXPIRE + 1).to_le_bytes());
    assert_eq!(
        ConnectToken::read(&backwards),
        Err(TokenError::CreateAfterExpire)
    );
    // The address count sits after nonce, private data and timeout.
    let count_at = 13 + 24 + 24 + CONNECT_TOKEN_PRIVATE_BYTES + 4;
    for (count, reason) in [(0u32, AddressError::BadCount), (33, AddressError::BadCount)] {
        let mut damaged = bytes;
        damaged[count_at..count_at + 4].copy_from_slice(&count.to_le_bytes());
        assert_eq!(
            ConnectToken::read(&damaged),
            Err(TokenError::Address(reason))
        );
    }
    let mut bad_type = bytes;
    bad_type[count_at + 4] = 0;
    assert_eq!(
        ConnectToken::read(&bad_type),
        Err(TokenError::Address(AddressError::BadType))
    );
}

proptest! {
    #[test]
    fn create_after_expire_is_refused(
        token in connect_token(),
        later in prop_oneof![Just(1u64), 1..=u64::MAX],
    ) {
        let mut token = token;
        token.create_timestamp = token.expire_timestamp.saturating_add(later);
        prop_assume!(token.create_timestamp > token.expire_timestamp);
        let bytes = token.write().unwrap();
        prop_assert_eq!(ConnectToken::read(&bytes), Err(TokenError::CreateAfterExpire));
    }
}

#[test]
fn every_bit_flip_of_a_sealed_private_token_fails_decryption() {
    let sealed = fixture_connect_token().private_data;
    let open = PrivateConnectToken::decrypt;
    let mut intact = sealed;
    assert_eq!(
        open(
            &mut intact,
            PROTOCOL_ID,
            REQUEST_EXPIRE,
            &REQUEST_NONCE,
            &PRIVATE_KEY
        ),
        Ok(fixture_private_token())
    );
    let decrypt_error = Err(TokenError::Decrypt(DecryptError));
    for bit in 0..CONNECT_TOKEN_PRIVATE_BYTES * 8 {
        let mut damaged = sealed;
        flip(&mut damaged, bit);
        assert_eq!(
            open(
                &mut damaged,
                PROTOCOL_ID,
                REQUEST_EXPIRE,
                &REQUEST_NONCE,
                &PRIVATE_KEY
            ),
            decrypt_error,
            "bit {bit}"
        );
    }
    // Everything the tag binds: protocol id, expire timestamp, nonce, key.
    for bit in 0..64 {
        let mut buffer = sealed;
        assert_eq!(
            open(
                &mut buffer,
                PROTOCOL_ID ^ (1 << bit),
                REQUEST_EXPIRE,
                &REQUEST_NONCE,
                &PRIVATE_KEY
            ),
            decrypt_error
        );
        // A failed decryption leaves the buffer unspecified: a fresh copy.
        let mut buffer = sealed;
        assert_eq!(
            open(
                &mut buffer,
                PROTOCOL_ID,
                REQUEST_EXPIRE ^ (1 << bit),
                &REQUEST_NONCE,
                &PRIVATE_KEY
            ),
            decrypt_error
        );
    }
    for bit in 0..24 * 8 {
        let mut nonce = REQUEST_NONCE;
        flip(&mut nonce, bit);
        let mut buffer = sealed;
        assert_eq!(
            open(
                &mut buffer,
                PROTOCOL_ID,
                REQUEST_EXPIRE,
                &nonce,
                &PRIVATE_KEY
            ),
            decrypt_error
        );
    }
    for bit in 0..32 * 8 {
        let mut key = *PRIVATE_KEY.as_bytes();
        flip(&mut key, bit);
        let mut buffer = sealed;
        assert_eq!(
            open(
                &mut buffer,
                PROTOCOL_ID,
                REQUEST_EXPIRE,
                &REQUEST_NONCE,
                &netcode_proto::Key::from_bytes(key)
            ),
            decrypt_error
        );
    }
}

#[test]
fn every_bit_flip_of_a_sealed_challenge_token_fails_decryption() {
    let token = ChallengeToken {
        client_id: 0x0102_0304_0506_0708,
        user_data: [0x77; 256],
    };
    let challenge_key = netcode_proto::Key::from_bytes([0x11; 32]);
    let sequence = 0x8000_0000_0000_0005;
    let sealed = token.encrypt(sequence, &challenge_key);
    let mut intact = sealed;
    assert_eq!(
        ChallengeToken::decrypt(&mut intact, sequence, &challenge_key),
        Ok(token)
    );
    for bit in 0..CHALLENGE_TOKEN_BYTES * 8 {
        let mut damaged = sealed;
        flip(&mut damaged, bit);
        assert_eq!(
            ChallengeToken::decrypt(&mut damaged, sequence, &challenge_key),
            Err(DecryptError),
            "bit {bit}"
        );
    }
    for bit in 0..64 {
        let mut buffer = sealed;
        assert_eq!(
            ChallengeToken::decrypt(&mut buffer, sequence ^ (1 << bit), &challenge_key),
            Err(DecryptError)
        );
    }
    let mut buffer = sealed;
    assert_eq!(
        ChallengeToken::decrypt(&mut buffer, sequence, &OTHER_KEY),
        Err(DecryptError)
    );
}
