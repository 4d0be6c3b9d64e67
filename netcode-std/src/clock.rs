//! The caller's clock: seconds as `f64`, as in the C library, turned into
//! the `Duration`s the core works with, plus what `wait` needs to know how
//! far the caller's clock has moved since the last update.
//!
//! Only differences of the caller's times matter, so the core's time is
//! counted from the first update: a client may call `connect` before its
//! first `update` (the connect then happens at the first update's time)
//! with a clock of any epoch, and no connect attempt looks hours old.

use std::time::{Duration, Instant};

/// `seconds` as a `Duration`; negative or NaN is zero, too large saturates.
pub(crate) fn from_seconds(seconds: f64) -> Duration {
    if seconds.is_nan() || seconds <= 0.0 {
        return Duration::ZERO;
    }
    Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX)
}

/// The core's time at the last update, and when (in real time) it was given.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    /// The core's time at the last update (zero before the first).
    pub(crate) now: Duration,
    /// The caller's time at the first update.
    epoch: Option<Duration>,
    updated_at: Option<Instant>,
}

impl Clock {
    pub(crate) fn new() -> Self {
        Self {
            now: Duration::ZERO,
            epoch: None,
            updated_at: None,
        }
    }

    /// Records an update at the caller's time `seconds`; returns the core's
    /// time for it. Time never runs backwards for the core.
    pub(crate) fn update(&mut self, seconds: f64) -> Duration {
        self.epoch.get_or_insert(from_seconds(seconds));
        self.now = self.core_time(seconds);
        self.updated_at = Some(Instant::now());
        self.now
    }

    /// The core's time at the caller's time `seconds`, without recording
    /// it: never before the last update's (and, before the first update,
    /// zero).
    fn core_time(&self, seconds: f64) -> Duration {
        self.epoch.map_or(self.now, |epoch| {
            self.now.max(from_seconds(seconds).saturating_sub(epoch))
        })
    }

    /// How long from the caller's time `seconds` until the core needs an
    /// update again, for an event loop's poll timeout: zero while a socket
    /// has a `backlog` of datagrams, the time left until `deadline` (zero
    /// once due), or `None` when the core has no deadline.
    pub(crate) fn poll_timeout(
        &self,
        deadline: Option<Duration>,
        backlog: bool,
        seconds: f64,
    ) -> Option<Duration> {
        if backlog {
            return Some(Duration::ZERO);
        }
        deadline.map(|d| d.saturating_sub(self.core_time(seconds)))
    }

    /// How long from now until the core's clock reads `deadline`, assuming
    /// the caller's clock runs at the pace of real time since the last update.
    pub(crate) fn until(&self, deadline: Duration) -> Duration {
        let elapsed = self.updated_at.map_or(Duration::ZERO, |t| t.elapsed());
        deadline.saturating_sub(self.now).saturating_sub(elapsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_convert_and_clamp() {
        assert_eq!(from_seconds(1.5), Duration::from_millis(1500));
        assert_eq!(from_seconds(-3.0), Duration::ZERO);
        assert_eq!(from_seconds(f64::NAN), Duration::ZERO);
        assert_eq!(from_seconds(f64::INFINITY), Duration::MAX);
        assert_eq!(from_seconds(1e30), Duration::MAX);
    }

    #[test]
    fn core_time_counts_from_the_first_update_and_never_goes_back() {
        let mut clock = Clock::new();
        assert_eq!(clock.update(5000.0), Duration::ZERO);
        assert_eq!(clock.update(5001.5), Duration::from_millis(1500));
        assert_eq!(clock.update(4000.0), Duration::from_millis(1500));
    }

    #[test]
    fn poll_timeout_counts_on_the_callers_clock() {
        let mut clock = Clock::new();
        let deadline = Some(Duration::from_secs(1));
        // Before the first update the core's clock reads zero.
        assert_eq!(
            clock.poll_timeout(deadline, false, 7000.0),
            Some(Duration::from_secs(1))
        );
        clock.update(5000.0);
        assert_eq!(
            clock.poll_timeout(deadline, false, 5000.25),
            Some(Duration::from_millis(750))
        );
        assert_eq!(
            clock.poll_timeout(deadline, false, 5002.0),
            Some(Duration::ZERO)
        );
        assert_eq!(
            clock.poll_timeout(deadline, true, 5000.0),
            Some(Duration::ZERO)
        );
        assert_eq!(clock.poll_timeout(None, false, 5000.0), None);
    }

    #[test]
    fn until_counts_from_the_last_update() {
        let mut clock = Clock::new();
        clock.update(100.0);
        clock.update(110.0);
        let left = clock.until(Duration::from_secs(11));
        assert!(left <= Duration::from_secs(1) && left > Duration::from_millis(900));
        assert_eq!(clock.until(Duration::from_secs(9)), Duration::ZERO);
    }
}
