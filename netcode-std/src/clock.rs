//! The caller's clock: seconds as `f64`, as in the C library, or the
//! instants of a runtime's monotonic clock, turned into the core's
//! [`Instant`](netcode_proto::Instant)s by a rule that no value can break.
//!
//! The core's time only ever moves forward, by the steps of the caller's
//! clock:
//!
//! * the first time anchors the caller's clock; the core's time starts at
//!   its epoch there (so only differences matter, and a `connect` before
//!   the first update starts at the first update's time);
//! * each later time moves the core's time forward by its distance from the
//!   previous one; for seconds, by at most [`MAX_TIME_STEP`];
//! * a time earlier than the previous one moves nothing, and becomes the
//!   new reference (a clock that was reset, or a bogus value followed by
//!   good ones, resumes at once);
//! * a non-finite number of seconds (NaN, infinity) is ignored altogether;
//! * a change of kind (seconds after instants, or the reverse) anchors the
//!   new kind where the core's time stands.
//!
//! So `update(f64::INFINITY)`, `update(1e300)` or a jump of 10^6 s cost a
//! second of protocol time at most, and the sessions carry on: keep-alives
//! still go out, silent clients still time out. A clock that stays stuck
//! (a huge value that the next steps are too small to move) freezes the
//! protocol until it moves again; the host logs each kind of anomaly.
//! Instants come from a monotonic clock and cannot be bogus: their steps
//! count in full (a loop that stalled for ten seconds has lived them).

use std::time::Duration;

use netcode_proto::Instant;

use crate::logging::DropLog;
use crate::stats::TransportStats;
use crate::time::{HostTime, TimeAnomaly};

/// The longest step one call can move the protocol's clock with seconds:
/// a forward jump of the caller's clock beyond this counts as this much.
///
/// One second is far more than a frame and far less than any timeout, so
/// a single bogus time cannot time out every client at once, while a
/// stalled loop that resumes only delays timeouts by the stall beyond it.
pub const MAX_TIME_STEP: Duration = Duration::from_secs(1);

/// The core's time at the last update, the caller's time it came from,
/// and when (in real time) it was given.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    /// The core's time at the last update (its epoch before the first).
    pub(crate) now: Instant,
    /// The caller's last usable time.
    last: Option<HostTime>,
    updated_at: Option<std::time::Instant>,
}

impl Clock {
    pub(crate) fn new() -> Self {
        Self {
            now: Instant::ZERO,
            last: None,
            updated_at: None,
        }
    }

    /// Records an update at the caller's `time` by the module's rule;
    /// returns the core's time for it and what was wrong with `time`, if
    /// anything.
    pub(crate) fn update(&mut self, time: HostTime) -> (Instant, Option<TimeAnomaly>) {
        let (step, anomaly) = self.step(time);
        self.now = self.now.saturating_add(step);
        if anomaly != Some(TimeAnomaly::NotFinite) {
            self.last = Some(time);
        }
        self.updated_at = Some(std::time::Instant::now());
        (self.now, anomaly)
    }

    /// [`update`](Self::update), counting what was wrong with `time` in
    /// `stats` and logging it in `log`; returns the core's time.
    pub(crate) fn advance(
        &mut self,
        time: HostTime,
        stats: &mut TransportStats,
        log: &mut DropLog,
    ) -> Instant {
        let (now, anomaly) = self.update(time);
        if let Some(anomaly) = anomaly {
            match anomaly {
                TimeAnomaly::NotFinite => stats.times_not_finite += 1,
                TimeAnomaly::Backward => stats.times_backward += 1,
                TimeAnomaly::Jump => stats.time_jumps += 1,
            }
            log.clock(time, anomaly);
        }
        now
    }

    /// How far the rule moves the core's clock for the caller's `time`,
    /// without recording it.
    fn step(&self, time: HostTime) -> (Duration, Option<TimeAnomaly>) {
        match (self.last, time) {
            (_, HostTime::Seconds(seconds)) if !seconds.is_finite() => {
                (Duration::ZERO, Some(TimeAnomaly::NotFinite))
            }
            (Some(HostTime::Seconds(last)), HostTime::Seconds(seconds)) => {
                let delta = seconds - last;
                if delta < 0.0 {
                    (Duration::ZERO, Some(TimeAnomaly::Backward))
                } else if delta > MAX_TIME_STEP.as_secs_f64() {
                    (MAX_TIME_STEP, Some(TimeAnomaly::Jump))
                } else {
                    // Finite, non-negative and at most a second (a
                    // difference of two finite values can still overflow
                    // to infinity, which the branch above caught).
                    (Duration::from_secs_f64(delta), None)
                }
            }
            (Some(HostTime::Instant(last)), HostTime::Instant(instant)) => {
                match instant.checked_duration_since(last) {
                    Some(delta) => (delta, None),
                    None => (Duration::ZERO, Some(TimeAnomaly::Backward)),
                }
            }
            // The first time, or a change of kind: an anchor.
            _ => (Duration::ZERO, None),
        }
    }

    /// How long from the caller's `time` until the core needs an update
    /// again, for an event loop's poll timeout: zero while a socket has a
    /// `backlog` of datagrams, the time left until `deadline` (zero once
    /// due), or `None` when the core has no deadline.
    pub(crate) fn poll_timeout(
        &self,
        deadline: Option<Instant>,
        backlog: bool,
        time: HostTime,
    ) -> Option<Duration> {
        if backlog {
            return Some(Duration::ZERO);
        }
        let at = self.now.saturating_add(self.step(time).0);
        deadline.map(|d| d.saturating_duration_since(at))
    }

    /// How long from now until the core's clock reads `deadline`, assuming
    /// the caller's clock runs at the pace of real time since the last update.
    pub(crate) fn until(&self, deadline: Instant) -> Duration {
        let elapsed = self.updated_at.map_or(Duration::ZERO, |t| t.elapsed());
        deadline
            .saturating_duration_since(self.now)
            .saturating_sub(elapsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Clock {
        fn update_seconds(&mut self, seconds: f64) -> (Duration, Option<TimeAnomaly>) {
            let (now, anomaly) = self.update(HostTime::Seconds(seconds));
            (now.since_epoch(), anomaly)
        }
    }

    #[test]
    fn steps_follow_the_callers_clock_from_its_first_value() {
        let mut clock = Clock::new();
        assert_eq!(clock.update_seconds(5000.0), (Duration::ZERO, None));
        assert_eq!(
            clock.update_seconds(5000.25),
            (Duration::from_millis(250), None)
        );
        assert_eq!(
            clock.update_seconds(5000.75),
            (Duration::from_millis(750), None)
        );
    }

    #[test]
    fn bogus_times_cost_at_most_one_step() {
        let mut clock = Clock::new();
        clock.update_seconds(10.0);
        assert_eq!(
            clock.update_seconds(f64::NAN),
            (Duration::ZERO, Some(TimeAnomaly::NotFinite))
        );
        assert_eq!(
            clock.update_seconds(f64::INFINITY).1,
            Some(TimeAnomaly::NotFinite)
        );
        assert_eq!(
            clock.update_seconds(f64::NEG_INFINITY).1,
            Some(TimeAnomaly::NotFinite)
        );
        assert_eq!(
            clock.update_seconds(10.5),
            (Duration::from_millis(500), None)
        );
        assert_eq!(
            clock.update_seconds(1e300),
            (Duration::from_millis(1500), Some(TimeAnomaly::Jump))
        );
        // Back to the real clock: it stands still once, then moves again.
        assert_eq!(
            clock.update_seconds(10.6),
            (Duration::from_millis(1500), Some(TimeAnomaly::Backward))
        );
        assert_eq!(clock.update_seconds(10.7).0, Duration::from_millis(1600));
        // A huge difference of finite values (f64::MAX - -f64::MAX is
        // infinite) is a jump too.
        clock.update_seconds(-f64::MAX);
        assert_eq!(clock.update_seconds(f64::MAX).1, Some(TimeAnomaly::Jump));
    }

    #[test]
    fn poll_timeout_counts_on_the_callers_clock() {
        let mut clock = Clock::new();
        let deadline = Some(Instant::from_secs(1));
        // Before the first update the core's clock reads zero.
        assert_eq!(
            clock.poll_timeout(deadline, false, HostTime::Seconds(7000.0)),
            Some(Duration::from_secs(1))
        );
        clock.update_seconds(5000.0);
        assert_eq!(
            clock.poll_timeout(deadline, false, HostTime::Seconds(5000.25)),
            Some(Duration::from_millis(750))
        );
        assert_eq!(
            clock.poll_timeout(deadline, false, HostTime::Seconds(5002.0)),
            Some(Duration::ZERO)
        );
        assert_eq!(
            clock.poll_timeout(deadline, true, HostTime::Seconds(5000.0)),
            Some(Duration::ZERO)
        );
        assert_eq!(
            clock.poll_timeout(deadline, false, HostTime::Seconds(f64::NAN)),
            Some(Duration::from_secs(1))
        );
        assert_eq!(
            clock.poll_timeout(None, false, HostTime::Seconds(5000.0)),
            None
        );
    }

    #[test]
    fn instants_count_in_full_and_never_back() {
        let mut clock = Clock::new();
        let t0 = std::time::Instant::now();
        assert_eq!(clock.update(t0.into()), (Instant::ZERO, None));
        let later = t0 + Duration::from_secs(10);
        assert_eq!(clock.update(later.into()).0, Instant::from_secs(10));
        assert_eq!(
            clock.update(t0.into()),
            (Instant::from_secs(10), Some(TimeAnomaly::Backward))
        );
        // Seconds after instants anchor where the core's time stands.
        assert_eq!(
            clock.update(HostTime::Seconds(3.0)).0,
            Instant::from_secs(10)
        );
        assert_eq!(
            clock.update(HostTime::Seconds(3.5)).0,
            Instant::from_millis(10_500)
        );
    }

    #[test]
    fn until_counts_from_the_last_update() {
        let mut clock = Clock::new();
        clock.update_seconds(100.0);
        clock.update_seconds(100.5);
        let left = clock.until(Instant::from_secs(1));
        assert!(left <= Duration::from_millis(500) && left > Duration::from_millis(400));
        assert_eq!(clock.until(Instant::from_millis(100)), Duration::ZERO);
    }
}
