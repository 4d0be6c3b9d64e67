//! The fast backend (feature `ring`): `ring`'s ChaCha20-Poly1305, with
//! runtime CPU dispatch to its assembly.
//!
//! STANDARD.md: the AEADs of *Connect Token*, *Challenge Token* and
//! *Packets*.
//!
//! * XChaCha20-Poly1305 is built from it as the construction defines it:
//!   HChaCha20 (the `chacha20` crate) derives a subkey from the key and the
//!   first 16 nonce bytes, then ChaCha20-Poly1305 runs under that subkey with
//!   the nonce `[0, 0, 0, 0] ++ nonce[16..24]`.
//! * `ring` decrypts while it authenticates and zeroes the buffer when the
//!   tag is wrong. The seam allows that (a failed decryption leaves the
//!   buffer's contents unspecified, and every caller drops what failed), so
//!   the buffer is opened in place with no copy.
//! * Keys are set up per call (a 544-byte `LessSafeKey` built and moved),
//!   except the receive key of a connected client, which the server's
//!   prepared key table keeps set up ([`OpeningKey`](super::OpeningKey)).

use chacha20::{R20, hchacha};
use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, Nonce, UnboundKey};

use super::{DecryptError, Tag};
use crate::constants::KEY_BYTES;

fn key(bytes: &[u8; KEY_BYTES]) -> LessSafeKey {
    // A 32-byte key always has the length CHACHA20_POLY1305 wants.
    let unbound = UnboundKey::new(&CHACHA20_POLY1305, bytes)
        .unwrap_or_else(|_| unreachable!("32-byte key for ChaCha20-Poly1305"));
    LessSafeKey::new(unbound)
}

pub(super) fn encrypt(
    key_bytes: &[u8; KEY_BYTES],
    nonce: &[u8; 12],
    associated_data: &[u8],
    buffer: &mut [u8],
) -> Tag {
    let tag = key(key_bytes)
        .seal_in_place_separate_tag(
            Nonce::assume_unique_for_key(*nonce),
            Aad::from(associated_data),
            buffer,
        )
        .unwrap_or_else(|_| unreachable!("netcode messages are far below the AEAD size limit"));
    let mut out = [0u8; 16];
    out.copy_from_slice(tag.as_ref());
    out
}

pub(super) fn decrypt(
    key_bytes: &[u8; KEY_BYTES],
    nonce: &[u8; 12],
    associated_data: &[u8],
    buffer: &mut [u8],
    tag: &Tag,
) -> Result<(), DecryptError> {
    decrypt_prepared(&key(key_bytes), nonce, associated_data, buffer, tag)
}

/// A key set up once: `ring`'s own prepared key.
pub(super) type OpeningKey = LessSafeKey;

pub(super) fn opening_key(bytes: &[u8; KEY_BYTES]) -> OpeningKey {
    key(bytes)
}

pub(super) fn decrypt_prepared(
    key: &LessSafeKey,
    nonce: &[u8; 12],
    associated_data: &[u8],
    buffer: &mut [u8],
    tag: &Tag,
) -> Result<(), DecryptError> {
    key.open_in_place_separate_tag(
        Nonce::assume_unique_for_key(*nonce),
        Aad::from(associated_data),
        (*tag).into(),
        buffer,
        0..,
    )
    .map(|_| ())
    .map_err(|_| DecryptError)
}

/// The HChaCha20 subkey and the 12-byte ChaCha20-Poly1305 nonce that
/// XChaCha20-Poly1305 with `nonce` reduces to.
fn x_reduce(key_bytes: &[u8; KEY_BYTES], nonce: &[u8; 24]) -> ([u8; KEY_BYTES], [u8; 12]) {
    let mut head = [0u8; 16];
    head.copy_from_slice(&nonce[..16]);
    let subkey: [u8; KEY_BYTES] = hchacha::<R20>(&(*key_bytes).into(), &head.into()).into();
    let mut short = [0u8; 12];
    short[4..].copy_from_slice(&nonce[16..]);
    (subkey, short)
}

pub(super) fn encrypt_x(
    key_bytes: &[u8; KEY_BYTES],
    nonce: &[u8; 24],
    associated_data: &[u8],
    buffer: &mut [u8],
) -> Tag {
    let (subkey, short) = x_reduce(key_bytes, nonce);
    encrypt(&subkey, &short, associated_data, buffer)
}

pub(super) fn decrypt_x(
    key_bytes: &[u8; KEY_BYTES],
    nonce: &[u8; 24],
    associated_data: &[u8],
    buffer: &mut [u8],
    tag: &Tag,
) -> Result<(), DecryptError> {
    let (subkey, short) = x_reduce(key_bytes, nonce);
    decrypt(&subkey, &short, associated_data, buffer, tag)
}

#[cfg(test)]
mod tests {
    use super::super::rustcrypto;
    use super::*;

    /// Both backends give the same bytes and tags, and the same verdicts,
    /// at every size up to past the largest datagram.
    #[test]
    fn agrees_with_the_portable_backend() {
        let key = [0x5a; KEY_BYTES];
        let xnonce: [u8; 24] = core::array::from_fn(|i| i as u8 * 7);
        for len in [
            0, 1, 15, 16, 17, 63, 64, 100, 159, 160, 161, 1008, 1200, 1300, 1301, 2000,
        ] {
            let plain: [u8; 2000] = core::array::from_fn(|i| (i * 31 + len) as u8);
            let nonce = [len as u8; 12];
            let mut a = plain;
            let mut b = plain;
            let ta = encrypt(&key, &nonce, b"ad", &mut a[..len]);
            let tb = rustcrypto::encrypt(&key, &nonce, b"ad", &mut b[..len]);
            assert_eq!((ta, &a[..len]), (tb, &b[..len]), "len {len}");
            let xa = encrypt_x(&key, &xnonce, b"xad", &mut a[..len]);
            let xb = rustcrypto::encrypt_x(&key, &xnonce, b"xad", &mut b[..len]);
            assert_eq!((xa, &a[..len]), (xb, &b[..len]), "x len {len}");

            let sealed = a;
            let mut bad = xa;
            bad[3] ^= 0x10;
            let mut damaged = sealed;
            assert_eq!(
                decrypt_x(&key, &xnonce, b"xad", &mut damaged[..len], &bad),
                Err(DecryptError)
            );
            assert_eq!(
                rustcrypto::decrypt_x(&key, &xnonce, b"xad", &mut b[..len], &bad),
                Err(DecryptError)
            );
            decrypt_x(&key, &xnonce, b"xad", &mut a[..len], &xa).unwrap();
            decrypt(&key, &nonce, b"ad", &mut a[..len], &ta).unwrap();
            assert_eq!(&a[..len], &plain[..len]);
        }
    }
}
