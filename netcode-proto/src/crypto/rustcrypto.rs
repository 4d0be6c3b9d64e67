//! The portable backend: the pure-Rust `chacha20poly1305` crate, `no_std`,
//! with no assembly. It checks the tag before it decrypts, so a failed
//! decryption never touches the buffer. With the `ring` feature it still
//! serves inputs larger than any netcode message (and the tests).
#![cfg_attr(feature = "ring", allow(dead_code))]

use chacha20poly1305::aead::{AeadInOut, Nonce};
use chacha20poly1305::{ChaCha20Poly1305, KeyInit, XChaCha20Poly1305};

use super::{DecryptError, Tag};
use crate::constants::KEY_BYTES;

pub(super) fn encrypt(
    key: &[u8; KEY_BYTES],
    nonce: &[u8; 12],
    associated_data: &[u8],
    buffer: &mut [u8],
) -> Tag {
    seal::<ChaCha20Poly1305>(key, &(*nonce).into(), associated_data, buffer)
}

pub(super) fn decrypt(
    key: &[u8; KEY_BYTES],
    nonce: &[u8; 12],
    associated_data: &[u8],
    buffer: &mut [u8],
    tag: &Tag,
) -> Result<(), DecryptError> {
    open::<ChaCha20Poly1305>(key, &(*nonce).into(), associated_data, buffer, tag)
}

pub(super) fn encrypt_x(
    key: &[u8; KEY_BYTES],
    nonce: &[u8; 24],
    associated_data: &[u8],
    buffer: &mut [u8],
) -> Tag {
    seal::<XChaCha20Poly1305>(key, &(*nonce).into(), associated_data, buffer)
}

pub(super) fn decrypt_x(
    key: &[u8; KEY_BYTES],
    nonce: &[u8; 24],
    associated_data: &[u8],
    buffer: &mut [u8],
    tag: &Tag,
) -> Result<(), DecryptError> {
    open::<XChaCha20Poly1305>(key, &(*nonce).into(), associated_data, buffer, tag)
}

/// Encrypts in place with either construction and returns the tag.
fn seal<A: KeyInit + AeadInOut>(
    key: &[u8; KEY_BYTES],
    nonce: &Nonce<A>,
    associated_data: &[u8],
    buffer: &mut [u8],
) -> Tag {
    let mut tag = [0u8; 16];
    let computed = A::new_from_slice(key)
        .unwrap_or_else(|_| unreachable!("32-byte key for a ChaCha20-Poly1305 construction"))
        .encrypt_inout_detached(nonce, associated_data, buffer.into())
        .unwrap_or_else(|_| unreachable!("netcode messages are far below the AEAD size limit"));
    tag.copy_from_slice(&computed);
    tag
}

/// Checks the tag, then decrypts in place, with either construction.
fn open<A: KeyInit + AeadInOut>(
    key: &[u8; KEY_BYTES],
    nonce: &Nonce<A>,
    associated_data: &[u8],
    buffer: &mut [u8],
    tag: &Tag,
) -> Result<(), DecryptError> {
    let tag = chacha20poly1305::aead::Tag::<A>::try_from(&tag[..]).map_err(|_| DecryptError)?;
    A::new_from_slice(key)
        .map_err(|_| DecryptError)?
        .decrypt_inout_detached(nonce, associated_data, buffer.into(), &tag)
        .map_err(|_| DecryptError)
}
