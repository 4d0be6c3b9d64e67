//! Time as the host takes it: the wall clock, for connect token timestamps
//! and the restart rule; and the caller's times ([`HostTime`]), with what
//! can be wrong with one ([`TimeAnomaly`]), which `clock.rs` turns into the
//! core's instants and `logging.rs` reports.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch, truncated; 0 if the system clock is set
/// before 1970.
pub fn unix_time() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Sleeps until the wall clock has left the unix second `second`, if it
/// reads that second now (at most one second); returns at once otherwise.
pub(crate) fn wait_past(second: u64) {
    loop {
        let Ok(now) = SystemTime::now().duration_since(UNIX_EPOCH) else {
            return;
        };
        if now.as_secs() != second {
            return;
        }
        let rest =
            Duration::from_secs(1).saturating_sub(Duration::from_nanos(now.subsec_nanos().into()));
        std::thread::sleep(rest + Duration::from_millis(1));
    }
}

/// A time the caller hands the host: seconds on its own clock (the C
/// library's `double`, any epoch), or an instant of the system's monotonic
/// clock (`std::time::Instant`, or a runtime's, such as tokio's
/// `Instant::into_std`). Every method that takes the caller's time takes
/// either, through `impl Into<HostTime>`.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub enum HostTime {
    /// Seconds on the caller's clock, by the rule of
    /// [`MAX_TIME_STEP`](crate::MAX_TIME_STEP).
    Seconds(f64),
    /// An instant of the monotonic clock.
    Instant(std::time::Instant),
}

impl From<f64> for HostTime {
    fn from(seconds: f64) -> Self {
        Self::Seconds(seconds)
    }
}

impl From<std::time::Instant> for HostTime {
    fn from(instant: std::time::Instant) -> Self {
        Self::Instant(instant)
    }
}

/// What was wrong with a time handed to the host, if anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimeAnomaly {
    /// NaN or infinite: ignored.
    NotFinite,
    /// Earlier than the previous time: the protocol's clock stood still.
    Backward,
    /// A forward step longer than [`MAX_TIME_STEP`](crate::MAX_TIME_STEP):
    /// counted as that.
    Jump,
}
