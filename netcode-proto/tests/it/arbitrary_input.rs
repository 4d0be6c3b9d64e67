//! Arbitrary bytes never panic a reader, and every reader rejects them for
//! the reason its check order gives (or, where the bytes happen to be
//! well formed, reads something that writes back to the same bytes).

use crate::common::*;
use netcode_proto::address::{AddressError, read_address_list, wire_size, write_address_list};
use netcode_proto::bytes::{Reader, Writer};
use netcode_proto::constants::{
    CHALLENGE_TOKEN_BYTES, CONNECT_TOKEN_BYTES, CONNECT_TOKEN_PRIVATE_BYTES,
    CONNECTION_REQUEST_BYTES, KEY_BYTES, MAC_BYTES, USER_DATA_BYTES, VERSION_INFO,
};
use netcode_proto::crypto::DecryptError;
use netcode_proto::packet::{PacketTypes, ReadContext};
use netcode_proto::token::{ChallengeToken, TokenError};
use netcode_proto::{ConnectToken, PrivateConnectToken, ReplayProtection, read_packet};
use proptest::prelude::*;

fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..64),
        prop::collection::vec(any::<u8>(), 0..max),
    ]
}

/// Arbitrary bytes, often with a prefix byte that gets past the first checks:
/// zero (a request) or a valid type with 1 to 8 sequence bytes.
fn datagram() -> impl Strategy<Value = Vec<u8>> {
    (
        bytes(2100),
        prop_oneof![
            2 => any::<u8>(),
            1 => Just(0u8),
            2 => (1u8..=8, 1u8..7).prop_map(|(high, low)| (high << 4) | low),
        ],
    )
        .prop_map(|(mut bytes, prefix)| {
            if let Some(first) = bytes.first_mut() {
                *first = prefix;
            }
            bytes
        })
}

fn accepted() -> impl Strategy<Value = PacketTypes> {
    prop_oneof![
        Just(PacketTypes::CLIENT),
        Just(PacketTypes::SERVER),
        Just(PacketTypes::ALL),
    ]
}

/// Offset of the address count in a public connect token.
const PUBLIC_COUNT_AT: usize = 13 + 8 + 8 + 8 + 24 + CONNECT_TOKEN_PRIVATE_BYTES + 4;
/// Offset of the address count in a private connect token.
const PRIVATE_COUNT_AT: usize = 8 + 4;

/// An address list parser written from the standard, to compare against.
fn model_address_list(bytes: &[u8]) -> Result<usize, AddressError> {
    let count = bytes.get(..4).ok_or(AddressError::Truncated)?;
    let count = u32::from_le_bytes(count.try_into().unwrap());
    if !(1..=32).contains(&count) {
        return Err(AddressError::BadCount);
    }
    let mut at = 4;
    for _ in 0..count {
        let size = match bytes.get(at) {
            None => return Err(AddressError::Truncated),
            Some(1) => 7,
            Some(2) => 19,
            Some(_) => return Err(AddressError::BadType),
        };
        if bytes.len() < at + size {
            return Err(AddressError::Truncated);
        }
        at += size;
    }
    Ok(at)
}

/// Bytes that look like an address list: a small count, mostly valid type
/// bytes, random bodies, sometimes cut short.
fn address_list_like() -> impl Strategy<Value = Vec<u8>> {
    (
        0u32..=34,
        prop::collection::vec(
            (
                prop_oneof![4 => Just(1u8), 4 => Just(2u8), 1 => any::<u8>()],
                any::<[u8; 18]>(),
            ),
            0..34,
        ),
        any::<prop::sample::Index>(),
    )
        .prop_map(|(count, entries, cut)| {
            let mut out = count.to_le_bytes().to_vec();
            for (kind, body) in entries {
                out.push(kind);
                let n = match kind {
                    1 => 6,
                    2 => 18,
                    _ => 3,
                };
                out.extend_from_slice(&body[..n]);
            }
            let keep = out.len() - cut.index(out.len() / 8 + 1);
            out.truncate(keep);
            out
        })
}

/// Overwrites a few bytes of `base` at strategy-chosen places.
fn mutate(base: impl Strategy<Value = Vec<u8>>) -> impl Strategy<Value = Vec<u8>> {
    (
        base,
        prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6),
    )
        .prop_map(|(mut bytes, changes)| {
            for (at, value) in changes {
                let i = at.index(bytes.len());
                bytes[i] = value;
            }
            bytes
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn read_packet_rejects_arbitrary_bytes(
        input in datagram(),
        accepted in accepted(),
        private_key in prop::option::of(Just(PRIVATE_KEY)),
        read_key in prop::option::of(Just(PACKET_KEY)),
        window_around in prop::option::of(prop_oneof![0u64..600, any::<u64>()]),
        current_timestamp in prop_oneof![Just(0u64), any::<u64>()],
    ) {
        let context = ReadContext {
            protocol_id: PROTOCOL_ID,
            current_timestamp,
            min_expire_timestamp: 0,
            private_key: private_key.as_ref(),
            read_key: read_key.as_ref(),
            accepted,
        };
        let mut window = window_around.map(busy_window);
        let before = window.clone();
        let expected = expected_rejection(&context, &input, window.as_ref());
        let mut buffer = input.clone();
        let result = read_packet(&context, &mut buffer, window.as_mut());
        prop_assert_eq!(result, Err(expected));
        prop_assert_eq!(window, before, "a rejected packet moved the window");
    }

    /// Random requests with the right version and protocol id: they get as
    /// far as the timestamps and the decryption of the private token.
    #[test]
    fn read_packet_rejects_arbitrary_requests(
        rest in prop::collection::vec(any::<u8>(), CONNECTION_REQUEST_BYTES - 22),
        current_timestamp in prop_oneof![Just(0u64), 0u64..1 << 40, any::<u64>()],
        min_expire_timestamp in prop_oneof![Just(0u64), any::<u64>()],
        read_key in prop::option::of(Just(PACKET_KEY)),
    ) {
        let mut input = vec![0u8];
        input.extend_from_slice(&VERSION_INFO);
        input.extend_from_slice(&PROTOCOL_ID.to_le_bytes());
        input.extend_from_slice(&rest);
        prop_assert_eq!(input.len(), CONNECTION_REQUEST_BYTES);
        let context = ReadContext {
            current_timestamp,
            min_expire_timestamp,
            ..server_context(Some(&PRIVATE_KEY), read_key.as_ref())
        };
        let expected = expected_rejection(&context, &input, None);
        // A dropped datagram's buffer is left unspecified: read a copy.
        let mut buffer = input.clone();
        prop_assert_eq!(read_packet(&context, &mut buffer, None).map(|r| r.sequence), Err(expected));
    }

    #[test]
    fn connect_token_read_rejects_arbitrary_bytes(input in bytes(2100)) {
        let result = ConnectToken::read(&input);
        if input.len() != CONNECT_TOKEN_BYTES {
            prop_assert_eq!(result, Err(TokenError::WrongSize));
        } else {
            // Arbitrary bytes of the right size have the wrong version.
            prop_assert_eq!(result, Err(TokenError::VersionMismatch));
        }
    }
}

proptest! {
    #[test]
    fn connect_token_read_on_damaged_tokens(
        input in mutate(connect_token().prop_map(|t| t.write().unwrap().to_vec())),
    ) {
        let result = ConnectToken::read(&input);
        let create = u64::from_le_bytes(input[21..29].try_into().unwrap());
        let expire = u64::from_le_bytes(input[29..37].try_into().unwrap());
        if input[..13] != VERSION_INFO {
            prop_assert_eq!(result, Err(TokenError::VersionMismatch));
        } else if create > expire {
            prop_assert_eq!(result, Err(TokenError::CreateAfterExpire));
        } else {
            match model_address_list(&input[PUBLIC_COUNT_AT..]) {
                Err(e) => prop_assert_eq!(result, Err(TokenError::Address(e))),
                Ok(list_bytes) => {
                    // Well formed: writing it back gives the same bytes up to
                    // the end of the keys (the padding is not checked).
                    let used = PUBLIC_COUNT_AT + list_bytes + 2 * KEY_BYTES;
                    let token = result.unwrap();
                    prop_assert_eq!(&token.write().unwrap()[..used], &input[..used]);
                }
            }
        }
    }

    #[test]
    fn private_token_read_on_arbitrary_bytes(
        input in prop_oneof![
            bytes(1100),
            mutate(private_token().prop_map(|t| t.write().unwrap().to_vec())),
            (private_token(), any::<prop::sample::Index>()).prop_map(|(t, cut)| {
                let bytes = t.write().unwrap();
                bytes[..cut.index(bytes.len())].to_vec()
            }),
        ],
    ) {
        let result = PrivateConnectToken::read(&input);
        if input.len() < PRIVATE_COUNT_AT {
            prop_assert_eq!(result, Err(TokenError::WrongSize));
        } else {
            match model_address_list(&input[PRIVATE_COUNT_AT..]) {
                Err(e) => prop_assert_eq!(result, Err(TokenError::Address(e))),
                Ok(list_bytes) => {
                    let used = PRIVATE_COUNT_AT + list_bytes + 2 * KEY_BYTES + USER_DATA_BYTES;
                    if input.len() < used {
                        prop_assert_eq!(result, Err(TokenError::WrongSize));
                    } else {
                        let token = result.unwrap();
                        prop_assert_eq!(&token.write().unwrap()[..used], &input[..used]);
                    }
                }
            }
        }
    }

    #[test]
    fn address_list_read_on_arbitrary_bytes(
        input in prop_oneof![bytes(700), address_list_like()],
    ) {
        let mut reader = Reader::new(&input);
        let result = read_address_list(&mut reader);
        match model_address_list(&input) {
            Err(e) => prop_assert_eq!(result, Err(e)),
            Ok(used) => {
                let list = result.unwrap();
                prop_assert!((1..=32).contains(&list.len()));
                prop_assert_eq!(reader.position(), used);
                prop_assert_eq!(used, 4 + list.iter().map(wire_size).sum::<usize>());
                let mut out = vec![0u8; used];
                write_address_list(&mut Writer::new(&mut out), &list).unwrap();
                prop_assert_eq!(&out[..], &input[..used]);
            }
        }
    }

    #[test]
    fn challenge_token_read_takes_the_bytes_as_they_are(input in byte_array::<CHALLENGE_TOKEN_BYTES>()) {
        let token = ChallengeToken::read(&input);
        prop_assert_eq!(token.client_id, u64::from_le_bytes(input[..8].try_into().unwrap()));
        prop_assert_eq!(&token.user_data[..], &input[8..8 + USER_DATA_BYTES]);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn private_token_decrypt_rejects_arbitrary_bytes(
        input in byte_array::<CONNECT_TOKEN_PRIVATE_BYTES>(),
        protocol_id in any::<u64>(),
        expire in any::<u64>(),
        nonce in nonce(),
        private_key in key(),
    ) {
        let mut buffer = input;
        prop_assert_eq!(
            PrivateConnectToken::decrypt(&mut buffer, protocol_id, expire, &nonce, &private_key),
            Err(TokenError::Decrypt(DecryptError))
        );
        // The ciphertext is left unspecified; the tag is never touched.
        let tag = CONNECT_TOKEN_PRIVATE_BYTES - MAC_BYTES;
        prop_assert_eq!(&buffer[tag..], &input[tag..]);
    }

    #[test]
    fn challenge_token_decrypt_rejects_arbitrary_bytes(
        input in byte_array::<CHALLENGE_TOKEN_BYTES>(),
        sequence in any::<u64>(),
        challenge_key in key(),
    ) {
        let mut buffer = input;
        prop_assert_eq!(
            ChallengeToken::decrypt(&mut buffer, sequence, &challenge_key),
            Err(DecryptError)
        );
        let tag = CHALLENGE_TOKEN_BYTES - MAC_BYTES;
        prop_assert_eq!(&buffer[tag..], &input[tag..]);
    }
}

#[test]
fn replay_window_fixture_is_busy() {
    // busy_window is what makes the random reads above hit `Replayed`.
    let w = busy_window(500);
    assert!(w.already_received(500));
    assert!(w.already_received(200), "older than the window");
    assert!(!w.already_received(499));
    assert!(!w.already_received(501));
    assert_ne!(w, ReplayProtection::new());
}
