//! Clocks and CPU counters of the UDP run: the run's own clock, the unix
//! time renetcode's clocks take, and a thread's time on a CPU from `/proc`
//! (Linux `schedstat` and `stat`).

use std::path::{Path, PathBuf};
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

/// A thread's CPU counters, from its directory in `/proc` (Linux).
pub(super) struct ThreadCpu(PathBuf);

/// A thread's CPU counters at one moment.
#[derive(Clone, Copy)]
pub(super) struct Cpu {
    /// Time on a CPU (`schedstat`, nanoseconds), in seconds.
    pub(super) seconds: f64,
    /// Clock ticks in user mode (`stat`, 10 ms each).
    pub(super) user_ticks: u64,
    /// Clock ticks in the kernel.
    pub(super) kernel_ticks: u64,
}

impl ThreadCpu {
    /// The calling thread's, where the OS has them.
    pub(super) fn this_thread() -> Option<Self> {
        let task = std::fs::read_link("/proc/thread-self").ok()?;
        let this = Self(Path::new("/proc").join(task));
        this.read().map(|_| this)
    }

    /// The thread's id (the last component of `/proc/thread-self`).
    pub(super) fn tid(&self) -> Option<&str> {
        self.0.file_name()?.to_str()
    }

    /// Its counters now.
    pub(super) fn read(&self) -> Option<Cpu> {
        let schedstat = std::fs::read_to_string(self.0.join("schedstat")).ok()?;
        let nanoseconds: u64 = schedstat.split_whitespace().next()?.parse().ok()?;
        // After the command name in parentheses: state is field 3, utime 14,
        // stime 15.
        let stat = std::fs::read_to_string(self.0.join("stat")).ok()?;
        let mut fields = stat.rsplit_once(')')?.1.split_whitespace().skip(11);
        Some(Cpu {
            seconds: nanoseconds as f64 * 1e-9,
            user_ticks: fields.next()?.parse().ok()?,
            kernel_ticks: fields.next()?.parse().ok()?,
        })
    }
}
