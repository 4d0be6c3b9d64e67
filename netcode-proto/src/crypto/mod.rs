//! The AEAD primitives netcode uses, and the only module that names an AEAD
//! crate.
//!
//! STANDARD.md: the AEADs of *Connect Token*, *Challenge Token* and
//! *Packets*.
//!
//! * ChaCha20-Poly1305 (IETF, 12-byte nonce) for packets and challenge tokens.
//! * XChaCha20-Poly1305 (24-byte nonce) for the private connect token.
//!
//! Both encrypt and decrypt in place with a detached 16-byte tag, so callers
//! keep ciphertext and tag wherever the wire format puts them.
//!
//! Two backends sit behind this seam, chosen at build time:
//!
//! * the pure-Rust [`chacha20poly1305`] crate (`rustcrypto.rs`), portable and
//!   `no_std`: the default;
//! * `ring`'s assembly ChaCha20-Poly1305 (`ring.rs`, feature `ring`), several
//!   times faster on x86-64 and AArch64 in a default release build. Its
//!   XChaCha20-Poly1305 is HChaCha20 (from the `chacha20` crate) followed by
//!   ChaCha20-Poly1305 under the derived key.
//!
//! [`BACKEND`] names the one compiled in. Both give identical bytes. When
//! authentication fails, the buffer's contents are unspecified (the portable
//! backend leaves it as it was, `ring` zeroes it): callers drop what failed
//! and never read it again.

use rand_core::CryptoRng;

#[cfg(feature = "ring")]
#[path = "ring.rs"]
mod backend;
#[cfg(not(feature = "ring"))]
#[path = "rustcrypto.rs"]
mod backend_aead;
/// The portable backend: its AEAD, and its (trivial) prepared key.
#[cfg(not(feature = "ring"))]
mod backend {
    pub(super) use super::backend_aead::*;
    pub(super) use super::portable_opening::*;
}
/// The portable backend beside `ring`, for the tests that compare them.
#[cfg(all(feature = "ring", test))]
mod rustcrypto;

mod key_text;
pub use key_text::{KeyError, KeyHex};

/// The AEAD backend compiled in: `"rustcrypto"` (the default) or `"ring"`.
pub const BACKEND: &str = if cfg!(feature = "ring") {
    "ring"
} else {
    "rustcrypto"
};

use crate::constants::{KEY_BYTES, MAC_BYTES};

/// A 32-byte symmetric key.
///
/// `Debug` does not print the key material.
#[derive(Clone, PartialEq, Eq)]
pub struct Key([u8; KEY_BYTES]);

impl Key {
    /// Wraps raw key bytes.
    pub const fn from_bytes(bytes: [u8; KEY_BYTES]) -> Self {
        Self(bytes)
    }

    /// A fresh random key from a cryptographically secure generator.
    pub fn generate<R: CryptoRng + ?Sized>(rng: &mut R) -> Self {
        let mut bytes = [0u8; KEY_BYTES];
        rng.fill_bytes(&mut bytes);
        Self(bytes)
    }

    /// The raw key bytes.
    pub const fn as_bytes(&self) -> &[u8; KEY_BYTES] {
        &self.0
    }
}

impl core::fmt::Debug for Key {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Key(..)")
    }
}

impl From<[u8; KEY_BYTES]> for Key {
    fn from(bytes: [u8; KEY_BYTES]) -> Self {
        Self(bytes)
    }
}

/// A Poly1305 authentication tag.
pub type Tag = [u8; MAC_BYTES];

/// Authentication failed: the ciphertext, tag, nonce, key or associated data
/// is not what was encrypted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DecryptError;

impl core::fmt::Display for DecryptError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("authentication failed")
    }
}

impl core::error::Error for DecryptError {}

/// The 12-byte nonce netcode builds from a 64-bit sequence: four zero bytes,
/// then the sequence as little-endian `u64`.
pub fn sequence_nonce(sequence: u64) -> [u8; 12] {
    let mut nonce = [0u8; 12];
    nonce[4..].copy_from_slice(&sequence.to_le_bytes());
    nonce
}

/// Encrypts `buffer` in place with ChaCha20-Poly1305 (IETF) and returns the tag.
#[inline]
pub fn encrypt(key: &Key, nonce: &[u8; 12], associated_data: &[u8], buffer: &mut [u8]) -> Tag {
    backend::encrypt(&key.0, nonce, associated_data, buffer)
}

/// Decrypts `buffer` in place with ChaCha20-Poly1305 (IETF), checking `tag`.
///
/// On failure the contents of `buffer` are unspecified.
#[inline]
pub fn decrypt(
    key: &Key,
    nonce: &[u8; 12],
    associated_data: &[u8],
    buffer: &mut [u8],
    tag: &Tag,
) -> Result<(), DecryptError> {
    backend::decrypt(&key.0, nonce, associated_data, buffer, tag)
}

/// A packet key set up once for many decryptions: the receive key of a
/// connected client, kept in a server's
/// [`Tables::prepared_keys`](crate::server::Tables::prepared_keys). With
/// `ring` it is ring's prepared key (544 bytes), which saves about 100
/// instructions per packet received against setting the key up per packet;
/// with the portable backend it is the key's 32 bytes. Opaque: only the
/// server makes one.
#[derive(Clone)]
pub struct OpeningKey(backend::OpeningKey);

impl OpeningKey {
    /// `key`, set up for decryption.
    pub(crate) fn new(key: &Key) -> Self {
        Self(backend::opening_key(&key.0))
    }
}

impl core::fmt::Debug for OpeningKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("OpeningKey(..)")
    }
}

/// [`decrypt`] with a key set up beforehand.
#[inline]
pub(crate) fn decrypt_prepared(
    key: &OpeningKey,
    nonce: &[u8; 12],
    associated_data: &[u8],
    buffer: &mut [u8],
    tag: &Tag,
) -> Result<(), DecryptError> {
    backend::decrypt_prepared(&key.0, nonce, associated_data, buffer, tag)
}

/// The portable backend sets nothing up: its prepared key is the key.
#[cfg(not(feature = "ring"))]
mod portable_opening {
    use super::{DecryptError, KEY_BYTES, Tag, backend};

    pub(super) type OpeningKey = [u8; KEY_BYTES];

    pub(super) fn opening_key(bytes: &[u8; KEY_BYTES]) -> OpeningKey {
        *bytes
    }

    pub(super) fn decrypt_prepared(
        key: &OpeningKey,
        nonce: &[u8; 12],
        associated_data: &[u8],
        buffer: &mut [u8],
        tag: &Tag,
    ) -> Result<(), DecryptError> {
        backend::decrypt(key, nonce, associated_data, buffer, tag)
    }
}

/// Encrypts `buffer` in place with XChaCha20-Poly1305 and returns the tag.
pub fn encrypt_x(key: &Key, nonce: &[u8; 24], associated_data: &[u8], buffer: &mut [u8]) -> Tag {
    backend::encrypt_x(&key.0, nonce, associated_data, buffer)
}

/// Decrypts `buffer` in place with XChaCha20-Poly1305, checking `tag`.
///
/// On failure the contents of `buffer` are unspecified.
pub fn decrypt_x(
    key: &Key,
    nonce: &[u8; 24],
    associated_data: &[u8],
    buffer: &mut [u8],
    tag: &Tag,
) -> Result<(), DecryptError> {
    backend::decrypt_x(&key.0, nonce, associated_data, buffer, tag)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex<const N: usize>(s: &str) -> [u8; N] {
        let mut out = [0u8; N];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap();
        }
        out
    }

    // RFC 8439 section 2.8.2 test vector.
    #[test]
    fn chacha20poly1305_matches_rfc8439() {
        let key = Key::from_bytes(hex(
            "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f",
        ));
        let nonce: [u8; 12] = hex("070000004041424344454647");
        let aad: [u8; 12] = hex("50515253c0c1c2c3c4c5c6c7");
        let mut text = *b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.";
        let original = text;
        let tag = encrypt(&key, &nonce, &aad, &mut text);
        assert_eq!(tag, hex::<16>("1ae10b594f09e26a7e902ecbd0600691"));
        assert_eq!(&text[..4], &[0xd3, 0x1a, 0x8d, 0x34]);
        decrypt(&key, &nonce, &aad, &mut text, &tag).unwrap();
        assert_eq!(text, original);
    }

    #[test]
    fn tampering_is_detected() {
        let key = Key::from_bytes([7; 32]);
        let nonce = [1u8; 24];
        let mut text = [42u8; 64];
        let tag = encrypt_x(&key, &nonce, b"ad", &mut text);
        let ciphertext = text;
        let mut bad_tag = tag;
        bad_tag[0] ^= 1;
        let mut copy = ciphertext;
        assert_eq!(
            decrypt_x(&key, &nonce, b"ad", &mut copy, &bad_tag),
            Err(DecryptError)
        );
        let mut copy = ciphertext;
        assert_eq!(
            decrypt_x(&key, &nonce, b"ae", &mut copy, &tag),
            Err(DecryptError)
        );
        decrypt_x(&key, &nonce, b"ad", &mut text, &tag).unwrap();
        assert_eq!(text, [42u8; 64]);
    }

    #[test]
    fn sequence_nonce_is_zero_prefixed_little_endian() {
        assert_eq!(
            sequence_nonce(0x1122_3344_5566_7788),
            [0, 0, 0, 0, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11]
        );
    }
}
