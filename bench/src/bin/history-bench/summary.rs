//! What both cases share besides `netcode_bench::cli`'s options and
//! medians and `netcode_bench::machine`'s load average: percentiles, and
//! the scratch history files (with their lock and compaction files)
//! removed after each run.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// The `q` quantile (0 to 1, nearest rank) of `durations`, in
/// milliseconds; 0 for none.
pub(crate) fn quantile_ms(durations: &mut [Duration], q: f64) -> f64 {
    if durations.is_empty() {
        return 0.0;
    }
    durations.sort_unstable();
    let rank = ((q * durations.len() as f64).ceil() as usize).clamp(1, durations.len());
    durations[rank - 1].as_secs_f64() * 1e3
}

/// A history file path of this process in `dir`, named for `what`, with
/// nothing left there from before.
pub(crate) fn scratch(dir: &Path, what: &str) -> PathBuf {
    let path = dir.join(format!(
        "history-bench-{}-{what}.history",
        std::process::id()
    ));
    remove(&path);
    path
}

/// Removes the history file at `path` and the files beside it (its lock,
/// a compaction's scratch file, a damaged file kept aside).
pub(crate) fn remove(path: &Path) {
    let _ = std::fs::remove_file(path);
    for suffix in [".lock", ".new", ".damaged"] {
        let mut other = path.as_os_str().to_owned();
        other.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(other));
    }
}
