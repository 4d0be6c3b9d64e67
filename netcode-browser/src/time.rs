//! The client's clock: `performance.now()` milliseconds (or any other
//! millisecond clock) turned into netcode-proto's monotonic
//! [`Instant`], refusing values that are not finite, negative or too large,
//! and never going back.

use core::time::Duration;

use netcode_proto::Instant;

/// `milliseconds` since any epoch as an [`Instant`], or `None` when it is
/// not a finite, non-negative number of milliseconds that a [`Duration`]
/// can hold.
pub fn instant_from_millis(milliseconds: f64) -> Option<Instant> {
    if !milliseconds.is_finite() || milliseconds < 0.0 {
        return None;
    }
    Duration::try_from_secs_f64(milliseconds / 1000.0)
        .ok()
        .map(Instant::from_duration)
}

/// A monotonic clock over a millisecond reading: each reading becomes an
/// [`Instant`], except that a reading that is unusable
/// ([`instant_from_millis`] refuses it) or earlier than one already seen
/// gives the latest instant seen instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    latest: Instant,
}

impl Default for Clock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock {
    /// A clock that has seen nothing yet (its latest instant is
    /// [`Instant::ZERO`]).
    pub const fn new() -> Self {
        Self {
            latest: Instant::ZERO,
        }
    }

    /// The instant of the reading `milliseconds`, remembered as the latest.
    pub fn tick(&mut self, milliseconds: f64) -> Instant {
        self.latest = self.peek(milliseconds);
        self.latest
    }

    /// The instant of the reading `milliseconds`, without remembering it.
    pub fn peek(&self, milliseconds: f64) -> Instant {
        instant_from_millis(milliseconds).map_or(self.latest, |now| now.max(self.latest))
    }

    /// The latest instant this clock gave.
    pub fn latest(&self) -> Instant {
        self.latest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn milliseconds_keep_their_fraction() {
        let now = instant_from_millis(1500.25).unwrap();
        assert_eq!(now.since_epoch(), Duration::from_micros(1_500_250));
        assert_eq!(instant_from_millis(0.0), Some(Instant::ZERO));
    }

    #[test]
    fn unusable_readings_are_refused() {
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0, f64::MAX] {
            assert_eq!(instant_from_millis(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_clock_never_goes_back() {
        let mut clock = Clock::new();
        assert_eq!(clock.tick(100.0), Instant::from_millis(100));
        assert_eq!(clock.tick(f64::NAN), Instant::from_millis(100));
        assert_eq!(clock.tick(50.0), Instant::from_millis(100));
        assert_eq!(clock.peek(200.0), Instant::from_millis(200));
        assert_eq!(clock.latest(), Instant::from_millis(100));
        assert_eq!(clock.tick(200.0), Instant::from_millis(200));
    }
}
