//! The challenge token (STANDARD.md: *Challenge Token*).

use crate::constants::{CHALLENGE_TOKEN_BYTES, MAC_BYTES, USER_DATA_BYTES};
use crate::crypto::{self, DecryptError, Key, Tag, sequence_nonce};

/// Bytes of the challenge token that are encrypted; the tag takes the rest.
const ENCRYPTED_BYTES: usize = CHALLENGE_TOKEN_BYTES - MAC_BYTES;

/// The token a server sends in its challenge and expects back in the
/// client's response, sealed under a key only the server knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChallengeToken {
    /// The client id from the connect token.
    pub client_id: u64,
    /// The user data from the connect token.
    pub user_data: [u8; USER_DATA_BYTES],
}

impl ChallengeToken {
    /// The 300-byte plaintext: client id, user data, zero padding (the last
    /// 16 bytes, where the tag goes, zero).
    pub fn write(&self) -> [u8; CHALLENGE_TOKEN_BYTES] {
        let mut buffer = [0u8; CHALLENGE_TOKEN_BYTES];
        buffer[..8].copy_from_slice(&self.client_id.to_le_bytes());
        buffer[8..8 + USER_DATA_BYTES].copy_from_slice(&self.user_data);
        buffer
    }

    /// Reads the fields from a plaintext buffer. Padding is not checked.
    pub fn read(plaintext: &[u8; CHALLENGE_TOKEN_BYTES]) -> Self {
        let mut client_id = [0u8; 8];
        client_id.copy_from_slice(&plaintext[..8]);
        let mut user_data = [0u8; USER_DATA_BYTES];
        user_data.copy_from_slice(&plaintext[8..8 + USER_DATA_BYTES]);
        Self {
            client_id: u64::from_le_bytes(client_id),
            user_data,
        }
    }

    /// Writes and encrypts the token with ChaCha20-Poly1305 under the nonce
    /// made from `sequence`, with no associated data.
    pub fn encrypt(&self, sequence: u64, key: &Key) -> [u8; CHALLENGE_TOKEN_BYTES] {
        let mut buffer = self.write();
        let (text, tag) = buffer.split_at_mut(ENCRYPTED_BYTES);
        tag.copy_from_slice(&crypto::encrypt(key, &sequence_nonce(sequence), &[], text));
        buffer
    }

    /// Decrypts a sealed token in place and reads it. On failure the
    /// contents of the buffer are unspecified.
    pub fn decrypt(
        buffer: &mut [u8; CHALLENGE_TOKEN_BYTES],
        sequence: u64,
        key: &Key,
    ) -> Result<Self, DecryptError> {
        let (text, tag) = buffer.split_at_mut(ENCRYPTED_BYTES);
        let tag: &Tag = (&*tag).try_into().map_err(|_| DecryptError)?;
        crypto::decrypt(key, &sequence_nonce(sequence), &[], text, tag)?;
        Ok(Self::read(buffer))
    }
}
