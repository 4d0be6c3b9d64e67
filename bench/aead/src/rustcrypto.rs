//! RustCrypto's `chacha20poly1305` AEAD, the crate netcode-proto's portable
//! backend is, called directly: built from the key on every call
//! (`rc-aead`, as the backend does) and built once (`rc-aead-prepared`).

use chacha20poly1305::aead::AeadInOut;
use chacha20poly1305::{ChaCha20Poly1305, KeyInit, XChaCha20Poly1305};

use crate::{Aead, Implementation, KeyBytes, Nonce, Rejected, Tag};

pub(crate) fn implementations(key: &KeyBytes) -> Vec<Implementation> {
    vec![
        Implementation {
            name: "rc-aead",
            portable: true,
            restores_on_failure: true,
            aead: Box::new(PerCall(*key)),
        },
        Implementation {
            name: "rc-aead-prepared",
            portable: true,
            restores_on_failure: true,
            aead: Box::new(Prepared {
                ietf: ChaCha20Poly1305::new(key.into()),
                x: XChaCha20Poly1305::new(key.into()),
            }),
        },
    ]
}

/// The `chacha20poly1305` AEAD, built from the key on every call.
struct PerCall(KeyBytes);

impl Aead for PerCall {
    fn seal(&self, nonce: &Nonce, ad: &[u8], buffer: &mut [u8]) -> Tag {
        match nonce {
            Nonce::Ietf(n) => seal_with(&ChaCha20Poly1305::new(&self.0.into()), n, ad, buffer),
            Nonce::X(n) => seal_with(&XChaCha20Poly1305::new(&self.0.into()), n, ad, buffer),
        }
    }
    fn open(&self, nonce: &Nonce, ad: &[u8], buffer: &mut [u8], tag: &Tag) -> Result<(), Rejected> {
        match nonce {
            Nonce::Ietf(n) => open_with(&ChaCha20Poly1305::new(&self.0.into()), n, ad, buffer, tag),
            Nonce::X(n) => open_with(&XChaCha20Poly1305::new(&self.0.into()), n, ad, buffer, tag),
        }
    }
}

/// The `chacha20poly1305` AEADs, built once and kept.
struct Prepared {
    ietf: ChaCha20Poly1305,
    x: XChaCha20Poly1305,
}

impl Aead for Prepared {
    fn seal(&self, nonce: &Nonce, ad: &[u8], buffer: &mut [u8]) -> Tag {
        match nonce {
            Nonce::Ietf(n) => seal_with(&self.ietf, n, ad, buffer),
            Nonce::X(n) => seal_with(&self.x, n, ad, buffer),
        }
    }
    fn open(&self, nonce: &Nonce, ad: &[u8], buffer: &mut [u8], tag: &Tag) -> Result<(), Rejected> {
        match nonce {
            Nonce::Ietf(n) => open_with(&self.ietf, n, ad, buffer, tag),
            Nonce::X(n) => open_with(&self.x, n, ad, buffer, tag),
        }
    }
}

/// The AEAD crate's nonce type for a nonce of the construction's size.
fn aead_nonce<A: AeadInOut>(nonce: &[u8]) -> &chacha20poly1305::aead::Nonce<A> {
    nonce.try_into().expect("nonce of the construction's size")
}

fn seal_with<A: AeadInOut>(cipher: &A, nonce: &[u8], ad: &[u8], buffer: &mut [u8]) -> Tag {
    let tag = cipher
        .encrypt_inout_detached(aead_nonce::<A>(nonce), ad, buffer.into())
        .expect("within the AEAD's size limit");
    tag.as_slice().try_into().expect("16-byte tag")
}

fn open_with<A: AeadInOut>(
    cipher: &A,
    nonce: &[u8],
    ad: &[u8],
    buffer: &mut [u8],
    tag: &Tag,
) -> Result<(), Rejected> {
    let tag = chacha20poly1305::aead::Tag::<A>::try_from(&tag[..]).map_err(|_| Rejected)?;
    cipher
        .decrypt_inout_detached(aead_nonce::<A>(nonce), ad, buffer.into(), &tag)
        .map_err(|_| Rejected)
}
