//! A seeded, reproducible random generator for simulations and tests.
//!
//! STANDARD.md: none (a test and simulation aid; real servers use the OS
//! generator).

use chacha20::ChaCha20;
use chacha20::cipher::{KeyIvInit, StreamCipher};
use core::convert::Infallible;
use rand_core::{TryCryptoRng, TryRng};

/// The ChaCha20 keystream under a key made from a 64-bit seed: the same seed
/// always gives the same bytes, so simulated servers and tokens are
/// reproducible. Never use it outside tests and simulations: 64 bits of
/// seed are guessable.
pub struct SeededRng(ChaCha20);

impl core::fmt::Debug for SeededRng {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("SeededRng(..)")
    }
}

impl SeededRng {
    /// The generator for `seed`.
    pub fn new(seed: u64) -> Self {
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        Self(ChaCha20::new(&key.into(), &[0u8; 12].into()))
    }
}

impl TryRng for SeededRng {
    type Error = Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        let mut b = [0u8; 4];
        self.0.apply_keystream(&mut b);
        Ok(u32::from_le_bytes(b))
    }

    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        let mut b = [0u8; 8];
        self.0.apply_keystream(&mut b);
        Ok(u64::from_le_bytes(b))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        dst.fill(0);
        self.0.apply_keystream(dst);
        Ok(())
    }
}

impl TryCryptoRng for SeededRng {}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::Rng;

    #[test]
    fn same_seed_same_stream() {
        let (mut a, mut b, mut c) = (SeededRng::new(7), SeededRng::new(7), SeededRng::new(8));
        let x = a.next_u64();
        assert_eq!(x, b.next_u64());
        assert_ne!(x, c.next_u64());
        assert_ne!(x, a.next_u64());
    }
}
