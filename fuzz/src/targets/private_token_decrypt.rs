//! `PrivateConnectToken::decrypt` on the input padded or cut to 1024 bytes,
//! under the parameters of each sealed private token vector, and
//! `PrivateConnectToken::read` on the raw input. Never panics; a token that
//! reads back the same after `write`.

use crate::vectors::{PRIVATE_KEY, PROTOCOL_ID};
use netcode_proto::constants::CONNECT_TOKEN_PRIVATE_BYTES;
use netcode_proto::{Key, PrivateConnectToken};

/// (expire timestamp, nonce) of the vectors private_connect_token_{ipv4,
/// mixed,max32}_encrypted.
const PARAMS: [(u64, [u8; 24]); 3] = [
    (
        1_767_225_645,
        *b"\x09\x1a\x2b\x3c\x4d\x5e\x6f\x80\x91\xa2\xb3\xc4\xd5\xe6\xf7\x08\x19\x2a\x3b\x4c\x5d\x6e\x7f\x90",
    ),
    (
        12_302_652_056_939_934_532,
        *b"\x21\x34\x47\x5a\x6d\x80\x93\xa6\xb9\xcc\xdf\xf2\x05\x18\x2b\x3e\x51\x64\x77\x8a\x9d\xb0\xc3\xd6",
    ),
    (
        4_294_967_295,
        *b"\x40\x57\x6e\x85\x9c\xb3\xca\xe1\xf8\x0f\x26\x3d\x54\x6b\x82\x99\xb0\xc7\xde\xf5\x0c\x23\x3a\x51",
    ),
];

/// The `private_token_decrypt` fuzz target: runs one input, panicking on a failed check.
pub fn private_token_decrypt(data: &[u8]) {
    let key = Key::from_bytes(PRIVATE_KEY);
    let mut sealed = [0u8; CONNECT_TOKEN_PRIVATE_BYTES];
    let n = data.len().min(CONNECT_TOKEN_PRIVATE_BYTES);
    sealed[..n].copy_from_slice(&data[..n]);
    for (expire, nonce) in &PARAMS {
        let mut buffer = sealed;
        let _ = PrivateConnectToken::decrypt(&mut buffer, PROTOCOL_ID, *expire, nonce, &key);
    }

    if let Ok(token) = PrivateConnectToken::read(data)
        && let Ok(bytes) = token.write()
    {
        assert_eq!(
            PrivateConnectToken::read(&bytes).as_ref(),
            Ok(&token),
            "write then read changed an accepted private token"
        );
    }
}
