//! `ChallengeToken::decrypt` under the vectors' challenge key, with the
//! sequence from the first 8 input bytes and the 300-byte token from the
//! rest (padded or cut), and `ChallengeToken::read` on the same buffer.
//! Never panics.

use crate::Cursor;
use crate::vectors::CHALLENGE_KEY;
use netcode_proto::Key;
use netcode_proto::constants::CHALLENGE_TOKEN_BYTES;
use netcode_proto::token::ChallengeToken;

/// The `challenge_token_decrypt` fuzz target: runs one input, panicking on a failed check.
pub fn challenge_token_decrypt(data: &[u8]) {
    let mut input = Cursor::new(data);
    let sequence = input.u64();
    let sealed = input.array::<CHALLENGE_TOKEN_BYTES>();
    let key = Key::from_bytes(CHALLENGE_KEY);

    let mut buffer = sealed;
    let _ = ChallengeToken::decrypt(&mut buffer, sequence, &key);

    let token = ChallengeToken::read(&sealed);
    assert_eq!(ChallengeToken::read(&token.write()), token);
}
