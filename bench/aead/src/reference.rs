//! ring's assembly ChaCha20-Poly1305, as reference points only (it needs a
//! C compiler and is not pure Rust):
//!
//! * `ring-prepared`: the key prepared once, no copy: the floor. It zeroes
//!   the buffer when a tag is wrong.
//! * `ring-per-call`: what netcode-proto's `ring` backend did when this
//!   bench was written: the key set up on every call, and the ciphertext
//!   saved on the stack before opening so a failure can put it back. XChaCha20 is HChaCha20 from `chacha20`
//!   in front of it, as there.

use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, Nonce, UnboundKey};

use crate::{Aead, Implementation, KeyBytes, Nonce as AeadNonce, Rejected, Tag};

pub(crate) fn implementations(key: &KeyBytes) -> Vec<Implementation> {
    vec![
        Implementation {
            name: "ring-prepared",
            portable: false,
            restores_on_failure: false,
            aead: Box::new(Prepared(ring_key(key), *key)),
        },
        Implementation {
            name: "ring-per-call",
            portable: false,
            restores_on_failure: true,
            aead: Box::new(PerCall(*key)),
        },
    ]
}

fn ring_key(key: &KeyBytes) -> LessSafeKey {
    LessSafeKey::new(UnboundKey::new(&CHACHA20_POLY1305, key).expect("32-byte key"))
}

fn seal(key: &LessSafeKey, nonce: [u8; 12], ad: &[u8], buffer: &mut [u8]) -> Tag {
    let tag = key
        .seal_in_place_separate_tag(Nonce::assume_unique_for_key(nonce), Aad::from(ad), buffer)
        .expect("within ring's size limit");
    tag.as_ref().try_into().expect("16-byte tag")
}

fn open(
    key: &LessSafeKey,
    nonce: [u8; 12],
    ad: &[u8],
    buffer: &mut [u8],
    tag: &Tag,
) -> Result<(), Rejected> {
    key.open_in_place_separate_tag(
        Nonce::assume_unique_for_key(nonce),
        Aad::from(ad),
        (*tag).into(),
        buffer,
        0..,
    )
    .map(|_| ())
    .map_err(|_| Rejected)
}

/// A ring key and 12-byte nonce set up for this call: for XChaCha20 from
/// the HChaCha20 subkey.
fn per_call(key: &KeyBytes, nonce: &AeadNonce) -> (LessSafeKey, [u8; 12]) {
    let (key, nonce) = nonce.reduce(key);
    (ring_key(&key), nonce)
}

/// The prepared key, and the raw key for XChaCha20's subkey, which depends
/// on the nonce and so is set up per call even here.
struct Prepared(LessSafeKey, KeyBytes);

impl Aead for Prepared {
    fn seal(&self, nonce: &AeadNonce, ad: &[u8], buffer: &mut [u8]) -> Tag {
        match nonce {
            AeadNonce::Ietf(n) => seal(&self.0, *n, ad, buffer),
            AeadNonce::X(_) => {
                let (key, n) = per_call(&self.1, nonce);
                seal(&key, n, ad, buffer)
            }
        }
    }
    fn open(
        &self,
        nonce: &AeadNonce,
        ad: &[u8],
        buffer: &mut [u8],
        tag: &Tag,
    ) -> Result<(), Rejected> {
        match nonce {
            AeadNonce::Ietf(n) => open(&self.0, *n, ad, buffer, tag),
            AeadNonce::X(_) => {
                let (key, n) = per_call(&self.1, nonce);
                open(&key, n, ad, buffer, tag)
            }
        }
    }
}

/// Room for the largest input measured, as netcode-proto's ring backend
/// keeps for a whole packet.
const SAVED: usize = 1300;

struct PerCall(KeyBytes);

impl Aead for PerCall {
    fn seal(&self, nonce: &AeadNonce, ad: &[u8], buffer: &mut [u8]) -> Tag {
        let (key, n) = per_call(&self.0, nonce);
        seal(&key, n, ad, buffer)
    }
    fn open(
        &self,
        nonce: &AeadNonce,
        ad: &[u8],
        buffer: &mut [u8],
        tag: &Tag,
    ) -> Result<(), Rejected> {
        let (key, n) = per_call(&self.0, nonce);
        let mut saved = [0u8; SAVED];
        let saved = &mut saved[..buffer.len()];
        saved.copy_from_slice(buffer);
        open(&key, n, ad, buffer, tag).inspect_err(|_| buffer.copy_from_slice(saved))
    }
}
