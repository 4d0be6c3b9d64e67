//! The wall clock, for connect token timestamps.

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch, truncated; 0 if the system clock is set
/// before 1970.
pub fn unix_time() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
