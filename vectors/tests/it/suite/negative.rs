//! Negative checks over any set: changed bytes, another protocol id and
//! another expire timestamp must be refused, and a connection request must
//! get exactly the outcome the standard's order of checks gives for the
//! values it carries and the clock it is read at (STANDARD.md, "Processing
//! Connection Requests", and "Nonce Reuse and Server Restarts" for the
//! restart rule).

use std::collections::BTreeMap;

use netcode_proto::PacketError;
use netcode_proto::constants::{
    CONNECT_TOKEN_NONCE_BYTES, CONNECT_TOKEN_PRIVATE_BYTES, CONNECTION_REQUEST_BYTES, VERSION_INFO,
    VERSION_INFO_BYTES,
};
use netcode_proto::token::TokenError;
use netcode_vectors::decode::{Overrides, Rejection, RequestClock, open};
use netcode_vectors::manifest::{Body, PacketContent, RequestFields};
use netcode_vectors::{Vector, VectorSet};

use super::entries;

/// A fixed current time (unix seconds) that requests are also read at, and
/// around which the generated set puts expire timestamps.
pub(crate) const TEST_NOW: u64 = 1_900_000_000;

/// How long before the restart bound a token may be issued, for the clock
/// that applies the restart rule at [`TEST_NOW`].
const RESTART_WINDOW: u64 = 45;

const PROTOCOL_OFFSET: usize = 1 + VERSION_INFO_BYTES;
const EXPIRE_OFFSET: usize = PROTOCOL_OFFSET + 8;
const NONCE_OFFSET: usize = EXPIRE_OFFSET + 8;
const PRIVATE_OFFSET: usize = NONCE_OFFSET + CONNECT_TOKEN_NONCE_BYTES;

fn u64_at(bytes: &[u8], offset: usize) -> u64 {
    let mut le = [0u8; 8];
    le.copy_from_slice(&bytes[offset..offset + 8]);
    u64::from_le_bytes(le)
}

/// What a server reading at `clock` under `protocol_id` must do with
/// `bytes`, a connection request built from `entry` and then perhaps
/// changed: the first check it fails, in the standard's order (size,
/// version info, protocol id, expiry, the restart rule, then decryption of
/// the private token, which opens only under the values it was sealed
/// with). `None` when the bytes are no longer a connection request.
fn request_outcome(
    bytes: &[u8],
    entry: &RequestFields,
    protocol_id: u64,
    clock: RequestClock,
) -> Option<Result<(), PacketError>> {
    if bytes.len() != CONNECTION_REQUEST_BYTES || bytes.first() != Some(&0) {
        return None;
    }
    let wire_protocol_id = u64_at(bytes, PROTOCOL_OFFSET);
    let expire = u64_at(bytes, EXPIRE_OFFSET);
    let sealed = &entry.private_token;
    let outcome = if bytes[1..PROTOCOL_OFFSET] != VERSION_INFO {
        Err(PacketError::VersionMismatch)
    } else if wire_protocol_id != protocol_id {
        Err(PacketError::ProtocolMismatch)
    } else if expire <= clock.current_timestamp {
        Err(PacketError::TokenExpired)
    } else if expire < clock.min_expire_timestamp {
        Err(PacketError::TokenPredatesStart)
    } else if wire_protocol_id != sealed.protocol_id
        || expire != sealed.expire_timestamp
        || bytes[NONCE_OFFSET..PRIVATE_OFFSET] != sealed.nonce
        || bytes[PRIVATE_OFFSET..] != entry.private_data
    {
        Err(PacketError::DecryptFailed)
    } else {
        Ok(())
    };
    Some(outcome)
}

/// The request an entry holds, if it is one.
fn request(vector: &Vector) -> Option<(u64, &RequestFields)> {
    match &vector.body {
        Body::Packet(fields) => match &fields.content {
            PacketContent::Request(request) => Some((fields.protocol_id, request)),
            _ => None,
        },
        _ => None,
    }
}

/// How often each outcome was seen, for the summary line.
#[derive(Default)]
struct Tally(BTreeMap<String, usize>);

impl Tally {
    fn count(&mut self, result: &Result<(), Rejection>) {
        let key = match result {
            Ok(()) => "accepted".to_owned(),
            Err(Rejection::Packet(e)) => e.to_string(),
            Err(Rejection::Token(_)) => "token_decrypt_failed".to_owned(),
            Err(Rejection::Challenge(_)) => "challenge_decrypt_failed".to_owned(),
            Err(Rejection::Setup(e)) => panic!("unusable entry: {e}"),
        };
        *self.0.entry(key).or_default() += 1;
    }

    /// `<count> <what>: <outcome> <count>, ...`.
    fn summary(&self, what: &str) -> String {
        let parts: Vec<String> = self.0.iter().map(|(k, n)| format!("{k} {n}")).collect();
        let total: usize = self.0.values().sum();
        format!("{total} {what}: {}", parts.join(", "))
    }
}

/// The offsets of the bytes whose change `netcode-proto` must notice when
/// opening an entry, or `None` when the entry is not authenticated.
fn authenticated_offsets(vector: &Vector) -> Option<Vec<usize>> {
    match &vector.body {
        // Every byte of a sealed token, and of every packet: the prefix,
        // sequence and body of an encrypted packet, and the version,
        // protocol id, expire timestamp, nonce and sealed token of a request.
        Body::PrivateTokenEncrypted(_) | Body::ChallengeTokenEncrypted(_) | Body::Packet(_) => {
            Some((0..vector.bytes).collect())
        }
        // A connect token's version info, protocol id, expire timestamp,
        // nonce and sealed private part. The create timestamp and the public
        // fields after the private part are not authenticated by design.
        Body::ConnectToken(_) => {
            let version = VERSION_INFO_BYTES;
            let create = version + 8..version + 16;
            let private_end =
                version + 24 + CONNECT_TOKEN_NONCE_BYTES + CONNECT_TOKEN_PRIVATE_BYTES;
            Some((0..create.start).chain(create.end..private_end).collect())
        }
        Body::PrivateTokenPlaintext(_) | Body::ChallengeTokenPlaintext(_) => None,
    }
}

/// Changing any authenticated byte of any entry, in one bit or in all
/// eight, is refused; a connection request, whose header is checked in the
/// clear, gets the outcome of the standard's order for the bytes it then has.
pub(crate) fn flipping_any_authenticated_byte_is_rejected(set: &VectorSet) {
    let mut tally = Tally::default();
    for vector in entries(set) {
        let Some(offsets) = authenticated_offsets(vector) else {
            continue;
        };
        let bytes = set.read(vector).unwrap();
        let request = request(vector);
        let clock = request.map(|(_, r)| RequestClock::just_before(r.expire_timestamp));
        let overrides = Overrides {
            clock,
            ..Overrides::default()
        };
        let expected = |candidate: &[u8]| {
            request.and_then(|(protocol_id, r)| {
                request_outcome(candidate, r, protocol_id, clock?)
                    .map(|outcome| outcome.map_err(Rejection::Packet))
            })
        };
        let unchanged = open(vector, &bytes, &overrides);
        assert_eq!(
            unchanged,
            expected(&bytes).unwrap_or(Ok(())),
            "{}: the unchanged vector",
            vector.name
        );
        for index in offsets {
            for mask in [0xff_u8, 0x01] {
                let mut flipped = bytes.clone();
                flipped[index] ^= mask;
                let result = open(vector, &flipped, &overrides);
                match expected(&flipped) {
                    Some(outcome) => assert_eq!(
                        result, outcome,
                        "{}: byte {index} ^ {mask:#04x}",
                        vector.name
                    ),
                    None => assert!(
                        result.is_err(),
                        "{}: byte {index} ^ {mask:#04x} was accepted",
                        vector.name
                    ),
                }
                tally.count(&result);
            }
        }
    }
    println!(
        "{}: {}",
        set.dir.display(),
        tally.summary("single-byte changes")
    );
}

/// Every packet and every sealed private token fails under another
/// protocol id: a request in the clear (it carries its protocol id), every
/// other packet and token at decryption (the id is in the associated data).
pub(crate) fn another_protocol_id_is_rejected(set: &VectorSet) {
    let mut tally = Tally::default();
    for vector in entries(set) {
        let protocol_id = match &vector.body {
            Body::Packet(fields) => fields.protocol_id,
            Body::PrivateTokenEncrypted(sealed) => sealed.protocol_id,
            Body::ConnectToken(fields) => fields.protocol_id,
            _ => continue,
        };
        let bytes = set.read(vector).unwrap();
        for other in [
            protocol_id ^ 1,
            protocol_id.wrapping_add(1 << 32),
            !protocol_id,
        ] {
            let request = request(vector);
            let clock = request.map(|(_, r)| RequestClock::just_before(r.expire_timestamp));
            let overrides = Overrides {
                protocol_id: Some(other),
                clock,
                ..Overrides::default()
            };
            let result = open(vector, &bytes, &overrides);
            let what = format!("{}: under protocol id {other:#x}", vector.name);
            match (&vector.body, request.zip(clock)) {
                (_, Some(((_, r), clock))) => assert_eq!(
                    result,
                    request_outcome(&bytes, r, other, clock)
                        .unwrap()
                        .map_err(Rejection::Packet),
                    "{what}"
                ),
                (Body::Packet(_), None) => assert_eq!(
                    result,
                    Err(Rejection::Packet(PacketError::DecryptFailed)),
                    "{what}"
                ),
                _ => assert!(
                    matches!(result, Err(Rejection::Token(TokenError::Decrypt(_)))),
                    "{what}: {result:?}"
                ),
            }
            tally.count(&result);
        }
    }
    println!(
        "{}: {}",
        set.dir.display(),
        tally.summary("opens under another protocol id")
    );
}

/// The clocks a request is read at: just before its expiry, at its expiry,
/// at [`TEST_NOW`], and with the restart rule on, both just after the
/// token's own expiry and around [`TEST_NOW`].
fn clocks(expire: u64) -> Vec<RequestClock> {
    let clock = |current_timestamp, min_expire_timestamp| RequestClock {
        current_timestamp,
        min_expire_timestamp,
    };
    vec![
        RequestClock::just_before(expire),
        clock(expire, 0),
        clock(TEST_NOW, 0),
        clock(0, expire.saturating_add(1)),
        clock(TEST_NOW, TEST_NOW.saturating_add(RESTART_WINDOW)),
    ]
}

/// The expire timestamps written into a request read at `clock`: its own,
/// its neighbours, 0, `u64::MAX`, and both sides of the clock's bounds
/// (wrapping, so `u64::MAX + 1` is 0).
fn expire_values(expire: u64, clock: &RequestClock) -> Vec<u64> {
    let mut values = vec![
        expire,
        expire.wrapping_add(1),
        expire.wrapping_sub(1),
        expire ^ 1,
        expire ^ (1 << 40),
        0,
        u64::MAX,
    ];
    for bound in [clock.current_timestamp, clock.min_expire_timestamp] {
        values.extend([bound.wrapping_sub(1), bound, bound.wrapping_add(1)]);
    }
    values.sort_unstable();
    values.dedup();
    values
}

/// A sealed private token, alone or in a connect token, fails to open under
/// any other expire timestamp (the timestamp is in its associated data).
fn token_fails_under_other_expire_timestamps(vector: &Vector, bytes: &[u8], expire: u64) -> usize {
    let mut opened = 0;
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
            Err(Rejection::Token(TokenError::Decrypt(_))) => opened += 1,
            result => panic!(
                "{}: under expire timestamp {other:#x}: {result:?}",
                vector.name
            ),
        }
    }
    opened
}

/// A sealed private token fails under any other expire timestamp; a
/// connection request whose expire timestamp is rewritten, read at each of
/// [`clocks`], gets exactly the outcome the standard's order gives for the
/// value written: expired, refused by the restart rule, failing to decrypt,
/// or (its own value, at a clock that accepts it) accepted.
pub(crate) fn another_expire_timestamp_gets_the_standard_outcome(set: &VectorSet) {
    let mut tokens = 0;
    let mut tally = Tally::default();
    for vector in entries(set) {
        let bytes = set.read(vector).unwrap();
        match &vector.body {
            Body::PrivateTokenEncrypted(sealed) => {
                tokens += token_fails_under_other_expire_timestamps(
                    vector,
                    &bytes,
                    sealed.expire_timestamp,
                );
            }
            Body::ConnectToken(fields) => {
                tokens += token_fails_under_other_expire_timestamps(
                    vector,
                    &bytes,
                    fields.expire_timestamp,
                );
            }
            _ => {}
        }
        let Some((protocol_id, entry)) = request(vector) else {
            continue;
        };
        for clock in clocks(entry.expire_timestamp) {
            for value in expire_values(entry.expire_timestamp, &clock) {
                let mut changed = bytes.clone();
                changed[EXPIRE_OFFSET..NONCE_OFFSET].copy_from_slice(&value.to_le_bytes());
                let overrides = Overrides {
                    clock: Some(clock),
                    ..Overrides::default()
                };
                let result = open(vector, &changed, &overrides);
                let expected = request_outcome(&changed, entry, protocol_id, clock)
                    .unwrap()
                    .map_err(Rejection::Packet);
                assert_eq!(
                    result, expected,
                    "{}: expire timestamp {value:#x} read at {clock:?}",
                    vector.name
                );
                tally.count(&result);
            }
        }
    }
    println!(
        "{}: {tokens} sealed tokens opened under another expire timestamp, all refused; {}",
        set.dir.display(),
        tally.summary("requests with a rewritten expire timestamp")
    );
}
