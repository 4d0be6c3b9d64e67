//! The caller's clock: seconds as `f64`, as in the C library, turned into
//! the `Duration`s the core works with, by a rule that no value can break.
//!
//! The core's time only ever moves forward, by the steps of the caller's
//! clock:
//!
//! * the first finite time anchors the caller's clock; the core's time
//!   starts at zero there (so only differences matter, and a `connect`
//!   before the first update starts at the first update's time);
//! * each later finite time moves the core's time forward by its distance
//!   from the previous one, but by at most [`MAX_TIME_STEP`];
//! * a time earlier than the previous one moves nothing, and becomes the
//!   new reference (a clock that was reset, or a bogus value followed by
//!   good ones, resumes at once);
//! * a non-finite time (NaN, infinity) is ignored altogether.
//!
//! So `update(f64::INFINITY)`, `update(1e300)` or a jump of 10^6 s cost a
//! second of protocol time at most, and the sessions carry on: keep-alives
//! still go out, silent clients still time out. A clock that stays stuck
//! (a huge value that the next steps are too small to move) freezes the
//! protocol until it moves again; the host logs each kind of anomaly.

use std::time::{Duration, Instant};

use crate::logging::DropLog;
use crate::stats::TransportStats;

/// The longest step one call can move the protocol's clock: a forward jump
/// of the caller's clock beyond this counts as this much.
///
/// One second is far more than a frame and far less than any timeout, so
/// a single bogus time cannot time out every client at once, while a
/// stalled loop that resumes only delays timeouts by the stall beyond it.
pub const MAX_TIME_STEP: Duration = Duration::from_secs(1);

/// What was wrong with a time handed to the host, if anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimeAnomaly {
    /// NaN or infinite: ignored.
    NotFinite,
    /// Earlier than the previous time: the protocol's clock stood still.
    Backward,
    /// A forward step longer than [`MAX_TIME_STEP`]: counted as that.
    Jump,
}

/// The core's time at the last update, the caller's time it came from,
/// and when (in real time) it was given.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    /// The core's time at the last update (zero before the first).
    pub(crate) now: Duration,
    /// The caller's last finite time.
    last: Option<f64>,
    updated_at: Option<Instant>,
}

impl Clock {
    pub(crate) fn new() -> Self {
        Self {
            now: Duration::ZERO,
            last: None,
            updated_at: None,
        }
    }

    /// Records an update at the caller's time `seconds` by the module's
    /// rule; returns the core's time for it and what was wrong with
    /// `seconds`, if anything.
    pub(crate) fn update(&mut self, seconds: f64) -> (Duration, Option<TimeAnomaly>) {
        let (step, anomaly) = self.step(seconds);
        self.now = self.now.saturating_add(step);
        if seconds.is_finite() {
            self.last = Some(seconds);
        }
        self.updated_at = Some(Instant::now());
        (self.now, anomaly)
    }

    /// [`update`](Self::update), counting what was wrong with `seconds` in
    /// `stats` and logging it in `log`; returns the core's time.
    pub(crate) fn advance(
        &mut self,
        seconds: f64,
        stats: &mut TransportStats,
        log: &mut DropLog,
    ) -> Duration {
        let (now, anomaly) = self.update(seconds);
        if let Some(anomaly) = anomaly {
            match anomaly {
                TimeAnomaly::NotFinite => stats.times_not_finite += 1,
                TimeAnomaly::Backward => stats.times_backward += 1,
                TimeAnomaly::Jump => stats.time_jumps += 1,
            }
            log.clock(seconds, anomaly);
        }
        now
    }

    /// How far the rule moves the core's clock for the caller's time
    /// `seconds`, without recording it.
    fn step(&self, seconds: f64) -> (Duration, Option<TimeAnomaly>) {
        if !seconds.is_finite() {
            return (Duration::ZERO, Some(TimeAnomaly::NotFinite));
        }
        let Some(last) = self.last else {
            return (Duration::ZERO, None);
        };
        let delta = seconds - last;
        if delta < 0.0 {
            (Duration::ZERO, Some(TimeAnomaly::Backward))
        } else if delta > MAX_TIME_STEP.as_secs_f64() {
            (MAX_TIME_STEP, Some(TimeAnomaly::Jump))
        } else {
            // Finite, non-negative and at most a second (a difference of
            // two finite values can still overflow to infinity, which the
            // branch above caught).
            (Duration::from_secs_f64(delta), None)
        }
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
        let at = self.now.saturating_add(self.step(seconds).0);
        deadline.map(|d| d.saturating_sub(at))
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
    fn steps_follow_the_callers_clock_from_its_first_value() {
        let mut clock = Clock::new();
        assert_eq!(clock.update(5000.0), (Duration::ZERO, None));
        assert_eq!(clock.update(5000.25), (Duration::from_millis(250), None));
        assert_eq!(clock.update(5000.75), (Duration::from_millis(750), None));
    }

    #[test]
    fn bogus_times_cost_at_most_one_step() {
        let mut clock = Clock::new();
        clock.update(10.0);
        assert_eq!(
            clock.update(f64::NAN),
            (Duration::ZERO, Some(TimeAnomaly::NotFinite))
        );
        assert_eq!(clock.update(f64::INFINITY).1, Some(TimeAnomaly::NotFinite));
        assert_eq!(
            clock.update(f64::NEG_INFINITY).1,
            Some(TimeAnomaly::NotFinite)
        );
        assert_eq!(clock.update(10.5), (Duration::from_millis(500), None));
        assert_eq!(
            clock.update(1e300),
            (Duration::from_millis(1500), Some(TimeAnomaly::Jump))
        );
        // Back to the real clock: it stands still once, then moves again.
        assert_eq!(
            clock.update(10.6),
            (Duration::from_millis(1500), Some(TimeAnomaly::Backward))
        );
        assert_eq!(clock.update(10.7).0, Duration::from_millis(1600));
        // A huge difference of finite values (f64::MAX - -f64::MAX is
        // infinite) is a jump too.
        clock.update(-f64::MAX);
        assert_eq!(clock.update(f64::MAX).1, Some(TimeAnomaly::Jump));
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
        assert_eq!(
            clock.poll_timeout(deadline, false, f64::NAN),
            Some(Duration::from_secs(1))
        );
        assert_eq!(clock.poll_timeout(None, false, 5000.0), None);
    }

    #[test]
    fn until_counts_from_the_last_update() {
        let mut clock = Clock::new();
        clock.update(100.0);
        clock.update(100.5);
        let left = clock.until(Duration::from_secs(1));
        assert!(left <= Duration::from_millis(500) && left > Duration::from_millis(400));
        assert_eq!(clock.until(Duration::from_millis(100)), Duration::ZERO);
    }
}
