//! The simulator's random generator: xorshift64*, seeded by the caller.

use core::time::Duration;

/// A duration in whole nanoseconds, saturating at `u64::MAX` (584 years).
pub(super) fn duration_nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

/// xorshift64*: small, fast, good enough for a simulator, and identical on
/// every platform.
#[derive(Debug, Clone)]
pub(super) struct Rng {
    state: u64,
}

impl Rng {
    /// Any state but zero works; zero would stay zero forever.
    const FALLBACK_STATE: u64 = 0x9E37_79B9_7F4A_7C15;

    /// Seeds by one round of the SplitMix64 mixer, so that nearby seeds
    /// (0, 1, 2, ...) still start far apart.
    pub(super) fn new(seed: u64) -> Self {
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        Self::from_state(z)
    }

    pub(super) fn from_state(state: u64) -> Self {
        Self {
            state: if state == 0 {
                Self::FALLBACK_STATE
            } else {
                state
            },
        }
    }

    pub(super) fn next_u64(&mut self) -> u64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A uniform integer in `0..n` (`0` when `n` is `0`), by the high half
    /// of a 64x64-bit product: no division, and a bias below 2^-64 · n.
    pub(super) fn below_u64(&mut self, n: u64) -> u64 {
        let product = u128::from(self.next_u64()) * u128::from(n);
        (product >> 64) as u64
    }

    /// A uniform duration in `0..max`, in whole nanoseconds (zero when
    /// `max` is zero).
    pub(super) fn below(&mut self, max: Duration) -> Duration {
        Duration::from_nanos(self.below_u64(duration_nanos(max)))
    }

    /// True with chance `percent` / 100, clamped to `0..=100` (NaN is 0).
    /// Always draws exactly one number.
    pub(super) fn chance(&mut self, percent: f32) -> bool {
        const ONE: u32 = 1 << 24;
        let draw = (self.next_u64() >> 40) as u32; // uniform in 0..2^24
        let threshold = if percent.is_nan() || percent <= 0.0 {
            0
        } else if percent >= 100.0 {
            ONE
        } else {
            // In 0.0..2^24; `as` saturates anyway.
            (percent / 100.0 * ONE as f32) as u32
        };
        draw < threshold
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    #[test]
    fn xorshift64_star_step() {
        let mut rng = Rng::from_state(1);
        // 1 ^ (1 >> 12) = 1; 1 ^ (1 << 25) = 0x200_0001; >> 27 adds nothing.
        assert_eq!(
            rng.next_u64(),
            0x200_0001u64.wrapping_mul(0x2545_F491_4F6C_DD1D)
        );
        assert_eq!(rng.state, 0x200_0001);
    }

    #[test]
    fn seed_zero_is_not_degenerate() {
        let mut rng = Rng::new(0);
        let draws: Vec<u64> = (0..8).map(|_| rng.next_u64()).collect();
        assert!(draws.iter().all(|&d| d != 0));
        assert_ne!(draws[0], draws[1]);
        // The seed that the mixer sends to zero works too.
        let mut rng = Rng::from_state(0);
        assert_ne!(rng.next_u64(), 0);
    }
}
