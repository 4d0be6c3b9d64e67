//! The portable backend: pure Rust, `no_std`, no assembly. ChaCha20-Poly1305
//! as RFC 8439 section 2.8 builds it, from RustCrypto's `chacha20` stream
//! cipher (runtime CPU dispatch to SSE2 / AVX2 on x86, NEON on AArch64) and
//! `orion`'s Poly1305 (portable 32-bit arithmetic from fiat-crypto).
//! XChaCha20-Poly1305 is HChaCha20 (`chacha20`) in front of it.
//!
//! Why not the `chacha20poly1305` AEAD crate, which this backend used to
//! be: on netcode's short packets its costs are not the cipher's work.
//! On an AVX2 machine its `poly1305` picks an AVX2 backend built for long
//! messages (key powers set up per message, a carry chain at the end, and
//! intrinsics that end up as out-of-line calls), and it asks `chacha20`
//! for the Poly1305 key block and then the message in separate calls, each
//! of which costs a four-block computation on a wide backend. A 100-byte
//! seal took about 1.35 µs that way; this takes about 0.3 µs, and a
//! 1200-byte one 1.4 µs instead of 2.1 (BENCHMARKS.md, "The portable backend
//! on short packets"). The bytes are the same: the tests hold both
//! constructions to the AEAD crate at every length up to four draws and at
//! netcode's sizes, and to the vectors of RFC 8439 and the XChaCha20 draft.
//!
//! The tag is checked, in constant time (orion compares with `subtle`),
//! before anything is decrypted, so a failed decryption never touches the
//! buffer. With the `ring` feature it is compiled only for the tests that
//! compare the two backends.
#![cfg_attr(feature = "ring", allow(dead_code))]

use chacha20::ChaCha20;
use chacha20::cipher::{KeyIvInit, StreamCipher};
use orion::hazardous::mac::poly1305::{OneTimeKey, Poly1305, Tag as PolyTag};

use super::{DecryptError, Tag, x_reduce};
use crate::constants::KEY_BYTES;

/// ChaCha20 blocks `chacha20` computes in one parallel pass on this
/// architecture (its SSE2 and AVX2 backends do four, NEON eight, the
/// portable one one). Keystream is drawn in runs of this many blocks: a
/// shorter request still costs a whole pass on a wide backend. It only
/// decides how the keystream is fetched, never what it is.
const PARALLEL_BLOCKS: usize = if cfg!(target_arch = "aarch64") {
    8
} else if cfg!(any(target_arch = "x86", target_arch = "x86_64")) {
    4
} else {
    1
};

/// A ChaCha20 block.
const BLOCK: usize = 64;

/// Keystream drawn per call.
const DRAW: usize = PARALLEL_BLOCKS * BLOCK;

/// The longest message sealed or opened: the 32-bit block counter's range
/// (RFC 8439's limit), less the few blocks the last draw may run past the
/// message. Far beyond any netcode message.
const MAX_MESSAGE_BYTES: u64 = (u32::MAX as u64 - 2 * PARALLEL_BLOCKS as u64) * BLOCK as u64;

pub(super) fn encrypt(
    key: &[u8; KEY_BYTES],
    nonce: &[u8; 12],
    associated_data: &[u8],
    buffer: &mut [u8],
) -> Tag {
    seal(key, nonce, associated_data, buffer)
}

pub(super) fn decrypt(
    key: &[u8; KEY_BYTES],
    nonce: &[u8; 12],
    associated_data: &[u8],
    buffer: &mut [u8],
    tag: &Tag,
) -> Result<(), DecryptError> {
    open(key, nonce, associated_data, buffer, tag)
}

pub(super) fn encrypt_x(
    key: &[u8; KEY_BYTES],
    nonce: &[u8; 24],
    associated_data: &[u8],
    buffer: &mut [u8],
) -> Tag {
    let (subkey, short) = x_reduce(key, nonce);
    seal(&subkey, &short, associated_data, buffer)
}

pub(super) fn decrypt_x(
    key: &[u8; KEY_BYTES],
    nonce: &[u8; 24],
    associated_data: &[u8],
    buffer: &mut [u8],
    tag: &Tag,
) -> Result<(), DecryptError> {
    let (subkey, short) = x_reduce(key, nonce);
    open(&subkey, &short, associated_data, buffer, tag)
}

fn fits(buffer: &[u8]) -> bool {
    u64::try_from(buffer.len()).is_ok_and(|length| length <= MAX_MESSAGE_BYTES)
}

/// Encrypts in place and returns the tag.
fn seal(key: &[u8; KEY_BYTES], nonce: &[u8; 12], associated_data: &[u8], buffer: &mut [u8]) -> Tag {
    assert!(
        fits(buffer),
        "ChaCha20-Poly1305 seals at most 256 GiB; netcode messages are far below"
    );
    let (mut stream, mac) = Keystream::new(key, nonce);
    stream.apply(buffer);
    let computed = authenticate(mac, associated_data, buffer);
    let bytes = computed.unprotected_as_bytes();
    let mut tag = [0u8; 16];
    tag.copy_from_slice(bytes);
    tag
}

/// Checks the tag, then decrypts in place.
fn open(
    key: &[u8; KEY_BYTES],
    nonce: &[u8; 12],
    associated_data: &[u8],
    buffer: &mut [u8],
    tag: &Tag,
) -> Result<(), DecryptError> {
    if !fits(buffer) {
        return Err(DecryptError);
    }
    let (mut stream, mac) = Keystream::new(key, nonce);
    // Constant-time comparison (orion's `Tag` equality).
    if authenticate(mac, associated_data, buffer) != PolyTag::from(*tag) {
        return Err(DecryptError);
    }
    stream.apply(buffer);
    Ok(())
}

/// Poly1305 over the associated data and the ciphertext, each zero-padded
/// to 16 bytes, then both lengths as little-endian `u64`s.
fn authenticate(mut mac: Poly1305, associated_data: &[u8], ciphertext: &[u8]) -> PolyTag {
    absorb_padded(&mut mac, associated_data);
    absorb_padded(&mut mac, ciphertext);
    let mut lengths = [0u8; 16];
    lengths[..8].copy_from_slice(&(associated_data.len() as u64).to_le_bytes());
    lengths[8..].copy_from_slice(&(ciphertext.len() as u64).to_le_bytes());
    absorb(&mut mac, &lengths);
    mac.finalize()
        .unwrap_or_else(|_| unreachable!("a Poly1305 state is finalized once"))
}

fn absorb_padded(mac: &mut Poly1305, data: &[u8]) {
    absorb(mac, data);
    let overflow = data.len() % 16;
    if overflow != 0 {
        absorb(mac, &[0u8; 16][overflow..]);
    }
}

fn absorb(mac: &mut Poly1305, data: &[u8]) {
    mac.update(data)
        .unwrap_or_else(|_| unreachable!("updates come before the state is finalized"));
}

/// ChaCha20 under one key and nonce, its first draw at hand: block 0 keys
/// Poly1305, the message's keystream starts at block 1.
struct Keystream {
    cipher: ChaCha20,
    first: [u8; DRAW],
}

impl Keystream {
    /// The stream, and the Poly1305 state keyed by the first 32 bytes of
    /// block 0.
    fn new(key: &[u8; KEY_BYTES], nonce: &[u8; 12]) -> (Self, Poly1305) {
        let mut cipher = ChaCha20::new(&(*key).into(), &(*nonce).into());
        let mut first = [0u8; DRAW];
        cipher.write_keystream(&mut first);
        let mut mac_key = [0u8; 32];
        mac_key.copy_from_slice(&first[..32]);
        (
            Self { cipher, first },
            Poly1305::new(&OneTimeKey::from(mac_key)),
        )
    }

    /// XORs the message's keystream (from block 1) into `buffer`: what is
    /// left of the first draw, then fresh draws of [`DRAW`] bytes.
    fn apply(&mut self, buffer: &mut [u8]) {
        let (head, rest) = buffer.split_at_mut(buffer.len().min(DRAW - BLOCK));
        xor(head, &self.first[BLOCK..]);
        let mut draw = [0u8; DRAW];
        for chunk in rest.chunks_mut(DRAW) {
            self.cipher.write_keystream(&mut draw);
            xor(chunk, &draw);
        }
    }
}

fn xor(bytes: &mut [u8], keystream: &[u8]) {
    for (byte, key) in bytes.iter_mut().zip(keystream) {
        *byte ^= key;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chacha20poly1305::aead::AeadInOut;
    use chacha20poly1305::{ChaCha20Poly1305, KeyInit, XChaCha20Poly1305};

    /// Seals `plain` with ours and with RustCrypto's AEAD, asserts the same
    /// ciphertext and tag, and returns ours.
    fn seal_both(
        plain: &[u8],
        ours: impl FnOnce(&mut [u8]) -> Tag,
        theirs: impl FnOnce(&mut [u8]) -> Tag,
    ) -> ([u8; 4096], Tag) {
        let length = plain.len();
        let (mut a, mut b) = ([0u8; 4096], [0u8; 4096]);
        a[..length].copy_from_slice(plain);
        b[..length].copy_from_slice(plain);
        let tag = ours(&mut a[..length]);
        let expected = theirs(&mut b[..length]);
        assert_eq!(
            (tag, &a[..length]),
            (expected, &b[..length]),
            "{length} bytes"
        );
        (a, tag)
    }

    /// A wrong tag is rejected and leaves the buffer; the right one opens it.
    fn open_checks(
        sealed: &mut [u8],
        tag: &Tag,
        plain: &[u8],
        mut open: impl FnMut(&mut [u8], &Tag) -> Result<(), DecryptError>,
    ) {
        let mut before = [0u8; 4096];
        before[..sealed.len()].copy_from_slice(sealed);
        let mut bad = *tag;
        bad[sealed.len() % 16] ^= 0x01;
        assert_eq!(open(sealed, &bad), Err(DecryptError));
        assert_eq!(
            &*sealed,
            &before[..sealed.len()],
            "a failed open leaves the buffer"
        );
        open(sealed, tag).unwrap();
        assert_eq!(&*sealed, plain);
    }

    /// The same bytes, tags and verdicts as RustCrypto's AEAD for both
    /// constructions, at every length up to four draws and at netcode's
    /// sizes; a failed open leaves the buffer as it was.
    #[test]
    fn agrees_with_the_chacha20poly1305_crate() {
        let key = [0x3c; KEY_BYTES];
        let lengths = (0..=4 * DRAW + 1).chain([1008, 1200, 1300, 4096]);
        for length in lengths {
            let plain: [u8; 4096] = core::array::from_fn(|i| (i * 29 + length) as u8);
            let plain = &plain[..length];
            let nonce = [length as u8; 12];
            let x_nonce: [u8; 24] = core::array::from_fn(|i| (i * 7 + length) as u8);
            let ad = &[0xa5u8; 40][..length % 41];

            let (mut sealed, tag) = seal_both(
                plain,
                |b| encrypt(&key, &nonce, ad, b),
                |b| {
                    ChaCha20Poly1305::new(&key.into())
                        .encrypt_inout_detached(&nonce.into(), ad, b.into())
                        .unwrap()
                        .into()
                },
            );
            let sealed = &mut sealed[..length];
            let mut other_nonce = nonce;
            other_nonce[11] ^= 0x80;
            let wrong = [
                decrypt(&key, &other_nonce, ad, sealed, &tag),
                decrypt(&key, &nonce, b"other", sealed, &tag),
            ];
            assert_eq!(wrong, [Err(DecryptError); 2]);
            open_checks(sealed, &tag, plain, |b, t| decrypt(&key, &nonce, ad, b, t));

            let (mut sealed, tag) = seal_both(
                plain,
                |b| encrypt_x(&key, &x_nonce, ad, b),
                |b| {
                    XChaCha20Poly1305::new(&key.into())
                        .encrypt_inout_detached(&x_nonce.into(), ad, b.into())
                        .unwrap()
                        .into()
                },
            );
            let sealed = &mut sealed[..length];
            open_checks(sealed, &tag, plain, |b, t| {
                decrypt_x(&key, &x_nonce, ad, b, t)
            });
        }
    }

    /// draft-irtf-cfrg-xchacha-03, appendix A.3.1.
    #[test]
    fn xchacha20poly1305_matches_the_draft() {
        let key: [u8; 32] = core::array::from_fn(|i| 0x80 + i as u8);
        let nonce: [u8; 24] = core::array::from_fn(|i| 0x40 + i as u8);
        let ad = [
            0x50, 0x51, 0x52, 0x53, 0xc0, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7,
        ];
        let mut text = *b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.";
        let tag = encrypt_x(&key, &nonce, &ad, &mut text);
        assert_eq!(
            tag,
            [
                0xc0, 0x87, 0x59, 0x24, 0xc1, 0xc7, 0x98, 0x79, 0x47, 0xde, 0xaf, 0xd8, 0x78, 0x0a,
                0xcf, 0x49
            ]
        );
        assert_eq!(
            &text[..8],
            &[0xbd, 0x6d, 0x17, 0x9d, 0x3e, 0x83, 0xd4, 0x3b]
        );
    }
}
