//! A point in time on the caller's monotonic clock, apart from the spans
//! between points (`core::time::Duration`): the "now" every call of the
//! client and server takes, and the deadlines they report (STANDARD.md:
//! every timing rule counts from such points; the rules themselves are in
//! [`timing`](crate::timing)).
//!
//! The core never reads a clock. The caller picks the epoch (its program's
//! start, a simulation's zero, a runtime's first instant) and hands in
//! [`Instant`]s measured from it; only differences between them matter.
//! Arithmetic saturates, at the epoch and at [`Instant::MAX`], so no time
//! value a caller passes can make the core panic.

use core::ops::{Add, AddAssign, Sub};
use core::time::Duration;

/// A point on the caller's monotonic clock: a span since the clock's epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Instant(Duration);

impl Instant {
    /// The clock's epoch.
    pub const ZERO: Self = Self(Duration::ZERO);

    /// The end of time: later than any deadline.
    pub const MAX: Self = Self(Duration::MAX);

    /// The point `since_epoch` after the clock's epoch.
    pub const fn from_duration(since_epoch: Duration) -> Self {
        Self(since_epoch)
    }

    /// The point `seconds` after the clock's epoch.
    pub const fn from_secs(seconds: u64) -> Self {
        Self(Duration::from_secs(seconds))
    }

    /// The point `milliseconds` after the clock's epoch.
    pub const fn from_millis(milliseconds: u64) -> Self {
        Self(Duration::from_millis(milliseconds))
    }

    /// How long after the clock's epoch this point is.
    pub const fn since_epoch(self) -> Duration {
        self.0
    }

    /// How long after `earlier` this point is; zero if it is not later.
    pub fn saturating_duration_since(self, earlier: Self) -> Duration {
        self.0.saturating_sub(earlier.0)
    }

    /// The point `span` after this one, if it is before the end of time.
    pub fn checked_add(self, span: Duration) -> Option<Self> {
        self.0.checked_add(span).map(Self)
    }

    /// The point `span` after this one, or [`MAX`](Self::MAX).
    pub fn saturating_add(self, span: Duration) -> Self {
        Self(self.0.saturating_add(span))
    }

    /// The point `span` before this one, or the epoch.
    pub fn saturating_sub(self, span: Duration) -> Self {
        Self(self.0.saturating_sub(span))
    }
}

/// Saturating, as [`Instant::saturating_add`].
impl Add<Duration> for Instant {
    type Output = Self;

    fn add(self, span: Duration) -> Self {
        self.saturating_add(span)
    }
}

/// Saturating, as [`Instant::saturating_add`].
impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, span: Duration) {
        *self = self.saturating_add(span);
    }
}

/// The span from `earlier` to this point, saturating at zero, as
/// [`Instant::saturating_duration_since`].
impl Sub<Instant> for Instant {
    type Output = Duration;

    fn sub(self, earlier: Instant) -> Duration {
        self.saturating_duration_since(earlier)
    }
}

/// Saturating, as [`Instant::saturating_sub`].
impl Sub<Duration> for Instant {
    type Output = Self;

    fn sub(self, span: Duration) -> Self {
        self.saturating_sub(span)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates_and_spans_stay_spans() {
        let t = Instant::from_secs(10);
        assert_eq!(t + Duration::from_millis(500), Instant::from_millis(10_500));
        assert_eq!(Instant::MAX + Duration::from_secs(1), Instant::MAX);
        assert_eq!(t - Instant::from_secs(4), Duration::from_secs(6));
        assert_eq!(Instant::from_secs(4) - t, Duration::ZERO);
        assert_eq!(t - Duration::from_secs(20), Instant::ZERO);
        let mut u = Instant::ZERO;
        u += Duration::from_secs(3);
        assert_eq!(u.since_epoch(), Duration::from_secs(3));
        assert!(Instant::ZERO < t && t < Instant::MAX);
    }
}
