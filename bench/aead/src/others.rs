//! The other maintained pure-Rust, `no_std` ChaCha20-Poly1305 crates:
//!
//! * `orion` 0.17 (`forbid(unsafe_code)`): in-place, detached-tag
//!   ChaCha20-Poly1305 and XChaCha20-Poly1305;
//! * `libcrux-chacha20poly1305` 0.0.10 (Cryspen, formally verified HACL
//!   code): separate input and output buffers, so in place means a stack
//!   copy; its XChaCha20 API wants the tag after the ciphertext;
//! * `chacha20-poly1305` 0.2 (rust-bitcoin, no dependencies): in place with
//!   a detached tag, IETF only; XChaCha20 here takes HChaCha20 from `chacha20`.

use crate::{Aead, Implementation, KeyBytes, Nonce, Rejected, Tag};

pub(crate) fn implementations(key: &KeyBytes) -> Vec<Implementation> {
    vec![
        Implementation {
            name: "orion",
            portable: true,
            restores_on_failure: true,
            aead: Box::new(Orion(
                orion::hazardous::aead::chacha20poly1305::SecretKey::from(*key),
            )),
        },
        Implementation {
            name: "libcrux",
            portable: true,
            restores_on_failure: true,
            aead: Box::new(Libcrux(*key)),
        },
        Implementation {
            name: "bitcoin",
            portable: true,
            restores_on_failure: true,
            aead: Box::new(Bitcoin(*key)),
        },
    ]
}

struct Orion(orion::hazardous::aead::chacha20poly1305::SecretKey);

/// Room for the largest input measured (a 1200-byte payload) and a tag.
const STACK: usize = 1300;

impl Aead for Orion {
    fn seal(&self, nonce: &Nonce, ad: &[u8], buffer: &mut [u8]) -> Tag {
        use orion::hazardous::aead::{chacha20poly1305, xchacha20poly1305};
        let length = buffer.len();
        let (mut plain, mut sealed) = ([0u8; STACK], [0u8; STACK]);
        let plain = &mut plain[..length];
        plain.copy_from_slice(buffer);
        let sealed = &mut sealed[..length + 16];
        match nonce {
            Nonce::Ietf(n) => {
                chacha20poly1305::seal(&self.0, &(*n).into(), plain, Some(ad), sealed)
            }
            Nonce::X(n) => xchacha20poly1305::seal(&self.0, &(*n).into(), plain, Some(ad), sealed),
        }
        .expect("within orion's size limit");
        buffer.copy_from_slice(&sealed[..length]);
        sealed[length..].try_into().expect("16-byte tag")
    }
    fn open(&self, nonce: &Nonce, ad: &[u8], buffer: &mut [u8], tag: &Tag) -> Result<(), Rejected> {
        use orion::hazardous::aead::{chacha20poly1305, xchacha20poly1305};
        let length = buffer.len();
        let mut sealed = [0u8; STACK];
        let sealed = &mut sealed[..length + 16];
        sealed[..length].copy_from_slice(buffer);
        sealed[length..].copy_from_slice(tag);
        match nonce {
            Nonce::Ietf(n) => {
                chacha20poly1305::open(&self.0, &(*n).into(), sealed, Some(ad), buffer)
            }
            Nonce::X(n) => xchacha20poly1305::open(&self.0, &(*n).into(), sealed, Some(ad), buffer),
        }
        .map_err(|_| Rejected)
    }
}

struct Libcrux(KeyBytes);

impl Aead for Libcrux {
    fn seal(&self, nonce: &Nonce, ad: &[u8], buffer: &mut [u8]) -> Tag {
        let mut stack = [0u8; STACK];
        let length = buffer.len();
        match nonce {
            Nonce::Ietf(n) => {
                let plain = &mut stack[..length];
                plain.copy_from_slice(buffer);
                let mut tag = [0u8; 16];
                libcrux_chacha20poly1305::encrypt_detached(&self.0, plain, buffer, &mut tag, ad, n)
                    .expect("within libcrux's size limit");
                tag
            }
            Nonce::X(n) => {
                let sealed = &mut stack[..length + 16];
                let (_, tag) = libcrux_chacha20poly1305::xchacha20_poly1305::encrypt(
                    &self.0, buffer, sealed, ad, n,
                )
                .expect("within libcrux's size limit");
                let tag = *tag;
                buffer.copy_from_slice(&sealed[..length]);
                tag
            }
        }
    }
    fn open(&self, nonce: &Nonce, ad: &[u8], buffer: &mut [u8], tag: &Tag) -> Result<(), Rejected> {
        let mut stack = [0u8; STACK];
        let length = buffer.len();
        let opened = match nonce {
            Nonce::Ietf(n) => {
                let sealed = &mut stack[..length];
                sealed.copy_from_slice(buffer);
                libcrux_chacha20poly1305::decrypt_detached(&self.0, buffer, sealed, tag, ad, n)
                    .map(|_| ())
            }
            Nonce::X(n) => {
                let sealed = &mut stack[..length + 16];
                sealed[..length].copy_from_slice(buffer);
                sealed[length..].copy_from_slice(tag);
                libcrux_chacha20poly1305::xchacha20_poly1305::decrypt(
                    &self.0, buffer, sealed, ad, n,
                )
                .map(|_| ())
            }
        };
        opened.map_err(|_| Rejected)
    }
}

struct Bitcoin(KeyBytes);

impl Bitcoin {
    fn cipher(&self, nonce: &Nonce) -> chacha20_poly1305::ChaCha20Poly1305 {
        let (key, nonce) = nonce.reduce(&self.0);
        chacha20_poly1305::ChaCha20Poly1305::new(
            chacha20_poly1305::Key::new(key),
            chacha20_poly1305::Nonce::new(nonce),
        )
    }
}

impl Aead for Bitcoin {
    fn seal(&self, nonce: &Nonce, ad: &[u8], buffer: &mut [u8]) -> Tag {
        self.cipher(nonce).encrypt(buffer, Some(ad))
    }
    fn open(&self, nonce: &Nonce, ad: &[u8], buffer: &mut [u8], tag: &Tag) -> Result<(), Rejected> {
        self.cipher(nonce)
            .decrypt(buffer, *tag, Some(ad))
            .map_err(|_| Rejected)
    }
}
