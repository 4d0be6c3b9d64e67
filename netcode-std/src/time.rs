//! The wall clock, for connect token timestamps and the restart rule.

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
