//! RFC 8439 section 2.8 composed by hand from the `chacha20` stream cipher
//! and a Poly1305, to see what the AEAD crate's way of driving them costs.
//!
//! `chacha20poly1305` draws keystream block 0 (the Poly1305 key) in a call
//! of its own, seeks to block 1, and draws the message's blocks in a second
//! call. A wide backend computes four blocks per call whatever it is asked
//! for, so a 100-byte message costs three four-block computations. Here
//! blocks 0 to 3 come from one call: a 100-byte message costs one.
//!
//! The Poly1305 is a type parameter: the `poly1305` crate (whose backend
//! the `--cfg poly1305_backend` flag picks), or the scalar ones of
//! `chacha20-poly1305` (rust-bitcoin) and `orion`. A composition of
//! `chacha20` and orion's Poly1305 was evaluated as the portable backend
//! and not adopted (BENCHMARKS.md, "What was adopted, and why"); these rows
//! keep it measurable.

use chacha20::ChaCha20;
use chacha20::cipher::{KeyIvInit, StreamCipher};
use poly1305::universal_hash::{KeyInit, UniversalHash};

use crate::{Aead, Implementation, KeyBytes, Nonce, Rejected, Tag};

pub(crate) fn implementations(key: &KeyBytes) -> Vec<Implementation> {
    let composed = |name, aead| Implementation {
        name,
        portable: true,
        restores_on_failure: true,
        aead,
    };
    vec![
        composed(
            "rc-composed",
            Box::new(Composed::<RustCryptoPoly, false>::new(*key)),
        ),
        composed(
            "rc-composed-256",
            Box::new(Composed::<RustCryptoPoly, true>::new(*key)),
        ),
        composed(
            "rc-chacha+bitcoin-poly",
            Box::new(Composed::<BitcoinPoly, false>::new(*key)),
        ),
        composed(
            "rc-chacha+orion-poly",
            Box::new(Composed::<OrionPoly, false>::new(*key)),
        ),
    ]
}

/// An incremental Poly1305 fed 16-byte-padded pieces.
trait Mac {
    fn keyed(key: &[u8; 32]) -> Self;
    /// Absorbs `data`, zero-padded to a multiple of 16 bytes.
    fn absorb_padded(&mut self, data: &[u8]);
    fn tag(self) -> Tag;
}

struct RustCryptoPoly(poly1305::Poly1305);

impl Mac for RustCryptoPoly {
    fn keyed(key: &[u8; 32]) -> Self {
        Self(poly1305::Poly1305::new(key.into()))
    }
    fn absorb_padded(&mut self, data: &[u8]) {
        self.0.update_padded(data);
    }
    fn tag(self) -> Tag {
        self.0.finalize().into()
    }
}

struct BitcoinPoly(chacha20_poly1305::poly1305::Poly1305);

impl Mac for BitcoinPoly {
    fn keyed(key: &[u8; 32]) -> Self {
        Self(chacha20_poly1305::poly1305::Poly1305::new(*key))
    }
    fn absorb_padded(&mut self, data: &[u8]) {
        self.0.input(data);
        let overflow = data.len() % 16;
        if overflow > 0 {
            self.0.input(&[0; 16][overflow..]);
        }
    }
    fn tag(self) -> Tag {
        self.0.tag()
    }
}

struct OrionPoly(orion::hazardous::mac::poly1305::Poly1305);

impl Mac for OrionPoly {
    fn keyed(key: &[u8; 32]) -> Self {
        use orion::hazardous::mac::poly1305::{OneTimeKey, Poly1305};
        Self(Poly1305::new(&OneTimeKey::from(*key)))
    }
    fn absorb_padded(&mut self, data: &[u8]) {
        self.0.update(data).expect("within orion's size limit");
        let overflow = data.len() % 16;
        if overflow > 0 {
            self.0
                .update(&[0; 16][overflow..])
                .expect("within orion's size limit");
        }
    }
    fn tag(mut self) -> Tag {
        let tag = self.0.finalize().expect("not finalized before");
        let bytes: &[u8] = tag.unprotected_as_bytes();
        bytes.try_into().expect("16-byte tag")
    }
}

/// `CHUNKED`: after the first draw, the keystream is drawn 256 bytes (four
/// blocks) at a time into a stack buffer and XORed from there, so that every
/// draw is one parallel computation; otherwise the rest of the message is
/// XORed by one `apply_keystream` call, which computes its last blocks one
/// at a time.
struct Composed<M, const CHUNKED: bool> {
    key: KeyBytes,
    mac: core::marker::PhantomData<M>,
}

/// Keystream drawn in the first call: four ChaCha20 blocks.
const FIRST_DRAW: usize = 256;
/// Of which block 0 keys Poly1305.
const BLOCK: usize = 64;

impl<M: Mac, const CHUNKED: bool> Composed<M, CHUNKED> {
    fn new(key: KeyBytes) -> Self {
        Self {
            key,
            mac: core::marker::PhantomData,
        }
    }

    /// A cipher positioned after the first draw, the Poly1305 keyed by block
    /// 0, and the keystream of blocks 0 to 3.
    fn start(key: &KeyBytes, nonce: &[u8; 12]) -> (ChaCha20, M, [u8; FIRST_DRAW]) {
        let mut cipher = ChaCha20::new(key.into(), nonce.into());
        let mut first = [0u8; FIRST_DRAW];
        cipher.write_keystream(&mut first);
        let mac = M::keyed(first[..32].try_into().expect("32 bytes"));
        (cipher, mac, first)
    }

    /// XORs blocks 1 to 3 from the first draw, then the rest of the stream.
    fn xor(cipher: &mut ChaCha20, first: &[u8; FIRST_DRAW], buffer: &mut [u8]) {
        let head = buffer.len().min(FIRST_DRAW - BLOCK);
        let (head_bytes, rest) = buffer.split_at_mut(head);
        xor_into(head_bytes, &first[BLOCK..]);
        if CHUNKED {
            let mut keystream = [0u8; FIRST_DRAW];
            for chunk in rest.chunks_mut(FIRST_DRAW) {
                cipher.write_keystream(&mut keystream);
                xor_into(chunk, &keystream);
            }
        } else {
            cipher.apply_keystream(rest);
        }
    }

    fn authenticate(mut mac: M, ad: &[u8], ciphertext: &[u8]) -> Tag {
        mac.absorb_padded(ad);
        mac.absorb_padded(ciphertext);
        let mut lengths = [0u8; 16];
        lengths[..8].copy_from_slice(&(ad.len() as u64).to_le_bytes());
        lengths[8..].copy_from_slice(&(ciphertext.len() as u64).to_le_bytes());
        mac.absorb_padded(&lengths);
        mac.tag()
    }

    fn seal_ietf(key: &KeyBytes, nonce: &[u8; 12], ad: &[u8], buffer: &mut [u8]) -> Tag {
        let (mut cipher, mac, first) = Self::start(key, nonce);
        Self::xor(&mut cipher, &first, buffer);
        Self::authenticate(mac, ad, buffer)
    }
}

fn xor_into(bytes: &mut [u8], keystream: &[u8]) {
    for (byte, key) in bytes.iter_mut().zip(keystream) {
        *byte ^= key;
    }
}

impl<M: Mac, const CHUNKED: bool> Aead for Composed<M, CHUNKED> {
    fn seal(&self, nonce: &Nonce, ad: &[u8], buffer: &mut [u8]) -> Tag {
        let (key, nonce) = nonce.reduce(&self.key);
        Self::seal_ietf(&key, &nonce, ad, buffer)
    }
    fn open(&self, nonce: &Nonce, ad: &[u8], buffer: &mut [u8], tag: &Tag) -> Result<(), Rejected> {
        let (key, nonce) = nonce.reduce(&self.key);
        let (mut cipher, mac, first) = Self::start(&key, &nonce);
        let computed = Self::authenticate(mac, ad, buffer);
        // Constant time, as the AEAD crates compare.
        let difference = computed.iter().zip(tag).fold(0u8, |d, (a, b)| d | (a ^ b));
        if core::hint::black_box(difference) != 0 {
            return Err(Rejected);
        }
        Self::xor(&mut cipher, &first, buffer);
        Ok(())
    }
}
