//! netcode-proto's own `crypto` functions, as its packets and tokens call
//! them: whichever backend it was built with (`crypto::BACKEND`; the
//! portable one in this crate's build, which never enables `ring`).

use netcode_proto::crypto;

use crate::{Aead, Implementation, KeyBytes, Nonce, Rejected, Tag};

pub(crate) fn implementations(key: &KeyBytes) -> Vec<Implementation> {
    vec![Implementation {
        name: "seam",
        portable: true,
        restores_on_failure: true,
        aead: Box::new(Seam(netcode_proto::Key::from_bytes(*key))),
    }]
}

/// The seam under a fixed key.
struct Seam(netcode_proto::Key);

impl Aead for Seam {
    fn seal(&self, nonce: &Nonce, ad: &[u8], buffer: &mut [u8]) -> Tag {
        match nonce {
            Nonce::Ietf(nonce) => crypto::encrypt(&self.0, nonce, ad, buffer),
            Nonce::X(nonce) => crypto::encrypt_x(&self.0, nonce, ad, buffer),
        }
    }
    fn open(&self, nonce: &Nonce, ad: &[u8], buffer: &mut [u8], tag: &Tag) -> Result<(), Rejected> {
        match nonce {
            Nonce::Ietf(nonce) => crypto::decrypt(&self.0, nonce, ad, buffer, tag),
            Nonce::X(nonce) => crypto::decrypt_x(&self.0, nonce, ad, buffer, tag),
        }
        .map_err(|_| Rejected)
    }
}
