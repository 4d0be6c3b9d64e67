//! ChaCha20-Poly1305 implementations behind one trait, on the messages
//! netcode encrypts (STANDARD.md, "Packets" and "Connect Token"): IETF
//! ChaCha20-Poly1305 with netcode's 12-byte sequence nonce for packets,
//! XChaCha20-Poly1305 for the 1024-byte private connect token.
//!
//! * `seam.rs`: netcode-proto's crypto seam, the portable backend as netcode
//!   uses it;
//! * `rustcrypto.rs`: RustCrypto's `chacha20poly1305` AEAD called directly,
//!   per call (as the portable backend calls it) and prepared;
//! * `composed.rs`: the construction composed from the `chacha20` stream
//!   cipher and a Poly1305 (RustCrypto's, rust-bitcoin's or orion's), the
//!   keystream drawn in one call or four blocks at a time;
//! * `others.rs`: the other pure-Rust, `no_std` ChaCha20-Poly1305 crates;
//! * `reference.rs`: ring, assembly, as a reference point only;
//! * `cases.rs`: the messages measured and one operation on each;
//! * `callgrind.rs`: running one case under callgrind and reading its output.
//!
//! Every implementation is checked against the seam (`tests/agree.rs`), so a
//! figure never belongs to an implementation that computes something else.

pub mod callgrind;
pub mod cases;
mod composed;
mod others;
mod reference;
mod rustcrypto;
mod seam;

/// A Poly1305 tag.
pub type Tag = [u8; 16];

/// The 32-byte key every implementation is given.
pub type KeyBytes = [u8; 32];

/// Authentication failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rejected;

/// A nonce, and with it the construction: a 12-byte one for IETF
/// ChaCha20-Poly1305, a 24-byte one for XChaCha20-Poly1305.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nonce {
    /// ChaCha20-Poly1305 (IETF): packets.
    Ietf([u8; 12]),
    /// XChaCha20-Poly1305: the private connect token.
    X([u8; 24]),
}

impl Nonce {
    /// The key and 12-byte nonce of the IETF construction this one runs as:
    /// itself, or for XChaCha20 the HChaCha20 subkey (`chacha20`) with
    /// `[0; 4] ++ nonce[16..24]`.
    pub fn reduce(&self, key: &KeyBytes) -> (KeyBytes, [u8; 12]) {
        match self {
            Nonce::Ietf(nonce) => (*key, *nonce),
            Nonce::X(nonce) => {
                let head: &[u8; 16] = nonce[..16].try_into().expect("16 bytes");
                let subkey = chacha20::hchacha::<chacha20::R20>(key.into(), head.into());
                let mut short = [0u8; 12];
                short[4..].copy_from_slice(&nonce[16..]);
                (subkey.into(), short)
            }
        }
    }
}

/// Encryption and decryption in place with a detached tag, under the key
/// the implementation was made with: the shape of netcode-proto's crypto
/// seam. A failed `open` leaves the buffer as it was, unless the
/// implementation says otherwise.
pub trait Aead {
    /// Encrypts `buffer` in place and returns the tag.
    fn seal(&self, nonce: &Nonce, ad: &[u8], buffer: &mut [u8]) -> Tag;
    /// Checks `tag`, then decrypts `buffer` in place.
    fn open(&self, nonce: &Nonce, ad: &[u8], buffer: &mut [u8], tag: &Tag) -> Result<(), Rejected>;
}

/// One implementation, ready to use under a fixed key.
pub struct Implementation {
    /// Short name, as it appears in the tables and on the command line.
    pub name: &'static str,
    /// Pure Rust and `no_std`: a candidate for the portable backend.
    pub portable: bool,
    /// A failed `open` leaves the buffer as it was (netcode-proto's promise);
    /// only the ring floor, which zeroes it, does not.
    pub restores_on_failure: bool,
    /// The implementation.
    pub aead: Box<dyn Aead>,
}

/// Every implementation, in table order, each prepared with `key`.
pub fn implementations(key: &KeyBytes) -> Vec<Implementation> {
    let mut all = seam::implementations(key);
    all.extend(rustcrypto::implementations(key));
    all.extend(composed::implementations(key));
    all.extend(others::implementations(key));
    all.extend(reference::implementations(key));
    all
}

/// How this build's RustCrypto crates choose their backends: the
/// `--cfg chacha20_backend` / `--cfg poly1305_backend` flags it was built
/// with, or their runtime CPU dispatch when none is set.
pub fn rustcrypto_backends() -> String {
    let chacha = if cfg!(chacha20_backend = "soft") {
        "chacha20 soft (forced)"
    } else if cfg!(chacha20_backend = "sse2") {
        "chacha20 SSE2 (forced)"
    } else if cfg!(chacha20_backend = "avx2") {
        "chacha20 AVX2 (forced)"
    } else if cfg!(chacha20_backend = "avx512") {
        "chacha20 AVX-512 (forced)"
    } else {
        "chacha20 runtime dispatch (AVX2 > SSE2 > soft)"
    };
    let poly = if cfg!(poly1305_backend = "soft") {
        "poly1305 soft (forced)"
    } else {
        "poly1305 runtime dispatch (AVX2 > soft)"
    };
    format!("{chacha}, {poly}")
}

/// A short label of this build's RustCrypto configuration, for file names
/// and table rows: `default`, or the forced backends (`chacha-sse2+poly-soft`).
pub fn rustcrypto_config() -> &'static str {
    let soft_poly = cfg!(poly1305_backend = "soft");
    match (
        cfg!(chacha20_backend = "soft"),
        cfg!(chacha20_backend = "sse2"),
        cfg!(chacha20_backend = "avx2"),
        soft_poly,
    ) {
        (true, _, _, false) => "chacha-soft",
        (true, _, _, true) => "chacha-soft+poly-soft",
        (_, true, _, false) => "chacha-sse2",
        (_, true, _, true) => "chacha-sse2+poly-soft",
        (_, _, true, false) => "chacha-avx2",
        (_, _, true, true) => "chacha-avx2+poly-soft",
        (_, _, _, true) => "poly-soft",
        _ => "default",
    }
}
