//! The clocks of the UDP run: the run's own, and the unix time renetcode's
//! clocks take.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Seconds since the run began.
#[derive(Clone, Copy)]
pub(super) struct Clock(Instant);

impl Clock {
    /// A clock starting now.
    pub(super) fn start() -> Self {
        Self(Instant::now())
    }

    /// Seconds since it started.
    pub(super) fn now(&self) -> f64 {
        self.0.elapsed().as_secs_f64()
    }
}

/// The unix time, for renetcode's clocks.
pub(super) fn unix_now() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}
