//! The portable backend: the pure-Rust `chacha20poly1305` crate, `no_std`,
//! with no assembly. It checks the tag before it decrypts, so a failed
//! decryption never touches the buffer. With the `ring` feature it still
//! serves inputs larger than any netcode message (and the tests).
#![cfg_attr(feature = "ring", allow(dead_code))]

use chacha20poly1305::aead::AeadInOut;
use chacha20poly1305::{ChaCha20Poly1305, KeyInit, XChaCha20Poly1305};

use super::{DecryptError, Tag};
use crate::constants::KEY_BYTES;

pub(super) fn encrypt(
    key: &[u8; KEY_BYTES],
    nonce: &[u8; 12],
    associated_data: &[u8],
    buffer: &mut [u8],
) -> Tag {
    ChaCha20Poly1305::new(&(*key).into())
        .encrypt_inout_detached(&(*nonce).into(), associated_data, buffer.into())
        .unwrap_or_else(|_| unreachable!("netcode messages are far below the AEAD size limit"))
        .into()
}

pub(super) fn decrypt(
    key: &[u8; KEY_BYTES],
    nonce: &[u8; 12],
    associated_data: &[u8],
    buffer: &mut [u8],
    tag: &Tag,
) -> Result<(), DecryptError> {
    ChaCha20Poly1305::new(&(*key).into())
        .decrypt_inout_detached(
            &(*nonce).into(),
            associated_data,
            buffer.into(),
            &(*tag).into(),
        )
        .map_err(|_| DecryptError)
}

pub(super) fn encrypt_x(
    key: &[u8; KEY_BYTES],
    nonce: &[u8; 24],
    associated_data: &[u8],
    buffer: &mut [u8],
) -> Tag {
    XChaCha20Poly1305::new(&(*key).into())
        .encrypt_inout_detached(&(*nonce).into(), associated_data, buffer.into())
        .unwrap_or_else(|_| unreachable!("netcode messages are far below the AEAD size limit"))
        .into()
}

pub(super) fn decrypt_x(
    key: &[u8; KEY_BYTES],
    nonce: &[u8; 24],
    associated_data: &[u8],
    buffer: &mut [u8],
    tag: &Tag,
) -> Result<(), DecryptError> {
    XChaCha20Poly1305::new(&(*key).into())
        .decrypt_inout_detached(
            &(*nonce).into(),
            associated_data,
            buffer.into(),
            &(*tag).into(),
        )
        .map_err(|_| DecryptError)
}
