//! What both cases share: options, medians and ranges over rounds,
//! percentiles, the load average, and the scratch history files (with
//! their lock and compaction files) removed after each run.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `--name value` options, each at most once.
pub(crate) struct Options(HashMap<String, String>);

impl Options {
    /// Reads `args` (after the case's name); `Err` names what is wrong.
    pub(crate) fn parse(args: &[String]) -> Result<Self, String> {
        let mut map = HashMap::new();
        let mut rest = args.iter();
        while let Some(name) = rest.next() {
            let Some(key) = name.strip_prefix("--") else {
                return Err(format!("expected an --option, found {name}"));
            };
            let Some(value) = rest.next() else {
                return Err(format!("{name} needs a value"));
            };
            if map.insert(key.to_string(), value.clone()).is_some() {
                return Err(format!("{name} given twice"));
            }
        }
        Ok(Self(map))
    }

    /// The option `name` parsed, or `default` when absent.
    pub(crate) fn get<T: std::str::FromStr>(&mut self, name: &str, default: T) -> T {
        match self.0.remove(name) {
            None => default,
            Some(text) => text.parse().unwrap_or_else(|_| {
                eprintln!("--{name}: cannot read {text:?}");
                std::process::exit(1)
            }),
        }
    }

    /// Exits naming any option no case asked for.
    pub(crate) fn finish(self) {
        if let Some(name) = self.0.keys().next() {
            eprintln!("unknown option --{name}");
            std::process::exit(1);
        }
    }
}

/// The median and range of one figure over the rounds.
pub(crate) struct Spread {
    pub(crate) median: f64,
    pub(crate) min: f64,
    pub(crate) max: f64,
}

impl Spread {
    /// Of `values` (at least one).
    pub(crate) fn of(values: &[f64]) -> Self {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        Self {
            median,
            min: sorted[0],
            max: sorted[n - 1],
        }
    }

    /// `median (min–max)` with `decimals` decimals.
    pub(crate) fn show(&self, decimals: usize) -> String {
        format!(
            "{:.d$} ({:.d$}–{:.d$})",
            self.median,
            self.min,
            self.max,
            d = decimals
        )
    }
}

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

/// The 1, 5 and 15 minute load averages, as `/proc/loadavg` has them.
pub(crate) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|_| "unknown".into())
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
