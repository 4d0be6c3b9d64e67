//! How long a client waits before it tries to connect again, after its
//! connection ended: [`Backoff`], bounded exponential backoff with jitter.
//! Not part of the standard (which leaves reconnecting to the game): the
//! one rule the reconnecting clients of the hosts (netcode-std,
//! netcode-tokio) and of the browser (netcode-browser) share. Each attempt
//! needs a fresh connect token: a server admits a token's client once
//! (STANDARD.md, *Connect Token*), and a restarted server refuses tokens
//! it may have seen.

use core::time::Duration;

/// Waits between reconnect attempts: the first is at most `first_delay`,
/// each next one's bound twice the last, up to `max_delay`, and each wait
/// is drawn from its bound's upper half (so that clients cut off together
/// do not all come back in the same instant, nor any sooner than half the
/// bound).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The first wait's bound. Default 250 ms.
    pub first_delay: Duration,
    /// The longest wait. Default 8 s.
    pub max_delay: Duration,
    /// Attempts made before giving up (`None`: never). Default `None`.
    pub max_attempts: Option<u32>,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            first_delay: Duration::from_millis(250),
            max_delay: Duration::from_secs(8),
            max_attempts: None,
        }
    }
}

impl Backoff {
    /// The bound of the wait before attempt `attempt` (1 for the first):
    /// `first_delay` doubled `attempt - 1` times, at most `max_delay`.
    pub fn bound(&self, attempt: u32) -> Duration {
        let doublings = attempt.saturating_sub(1).min(31);
        self.first_delay
            .saturating_mul(1u32 << doublings)
            .min(self.max_delay)
    }

    /// The wait before attempt `attempt`, `random` (any `u32`, uniformly
    /// drawn by the caller) placing it in the bound's upper half: 0 gives
    /// half the bound, `u32::MAX` the whole.
    pub fn delay(&self, attempt: u32, random: u32) -> Duration {
        let bound = self.bound(attempt);
        let fraction = f64::from(random) / f64::from(u32::MAX);
        bound / 2 + (bound / 2).mul_f64(fraction)
    }

    /// Whether `attempts` attempts have used up the allowance.
    pub fn exhausted(&self, attempts: u32) -> bool {
        self.max_attempts.is_some_and(|max| attempts >= max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_up_to_the_bound_with_jitter_in_the_upper_half() {
        let backoff = Backoff {
            first_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(700),
            max_attempts: Some(3),
        };
        for (attempt, bound) in [
            (0, 100),
            (1, 100),
            (2, 200),
            (3, 400),
            (4, 700),
            (u32::MAX, 700),
        ] {
            let bound = Duration::from_millis(bound);
            assert_eq!(backoff.bound(attempt), bound, "{attempt}");
            assert_eq!(backoff.delay(attempt, 0), bound / 2);
            assert_eq!(backoff.delay(attempt, u32::MAX), bound);
            let middle = backoff.delay(attempt, u32::MAX / 2);
            assert!(middle > bound / 2 && middle < bound, "{middle:?}");
        }
        assert!(!backoff.exhausted(2) && backoff.exhausted(3));
        assert!(!Backoff::default().exhausted(u32::MAX));
        // No overflow for absurd settings.
        let huge = Backoff {
            first_delay: Duration::MAX,
            max_delay: Duration::MAX,
            max_attempts: None,
        };
        assert_eq!(huge.bound(40), Duration::MAX);
        let _ = huge.delay(40, u32::MAX);
    }
}
