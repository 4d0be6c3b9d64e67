//! CPU time from `/proc` (Linux): a whole process's (the server's, read by
//! the client process, so reading costs the server nothing) and the
//! calling thread's (the AEAD loop); the whole machine's busy time
//! (`/proc/stat`), which says what other processes took during a window;
//! and the system's UDP counters (`/proc/net/snmp`), which say how many
//! datagrams an echo took.
//!
//! A process's time on a CPU is the sum of `schedstat`'s first field
//! (nanoseconds, user and kernel together) over its threads,
//! `/proc/<pid>/task/*/schedstat`; `/proc/<pid>/stat`'s utime and stime
//! (clock ticks, 100 a second, of live and exited threads) give the
//! user/kernel split. The servers here run on one thread (a current-thread
//! runtime) plus one that sleeps on stdin, and exit no thread during a
//! run, so the two agree to a tick.

use std::path::{Path, PathBuf};

/// Clock ticks a second (`getconf CLK_TCK`: 100 on Linux).
pub(crate) const TICKS_PER_SECOND: f64 = 100.0;

/// A process's CPU counters at one moment.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Cpu {
    /// Time on a CPU of all its threads (`schedstat`), in seconds.
    pub(crate) seconds: f64,
    /// Clock ticks in user mode (`stat`).
    pub(crate) user_ticks: u64,
    /// Clock ticks in the kernel (`stat`).
    pub(crate) kernel_ticks: u64,
}

impl std::ops::Sub for Cpu {
    type Output = Cpu;

    fn sub(self, earlier: Cpu) -> Cpu {
        Cpu {
            seconds: self.seconds - earlier.seconds,
            user_ticks: self.user_ticks.saturating_sub(earlier.user_ticks),
            kernel_ticks: self.kernel_ticks.saturating_sub(earlier.kernel_ticks),
        }
    }
}

impl Cpu {
    /// The kernel's share of the ticks (0 when none were counted).
    pub(crate) fn kernel_share(&self) -> f64 {
        let all = self.user_ticks + self.kernel_ticks;
        if all == 0 {
            0.0
        } else {
            self.kernel_ticks as f64 / all as f64
        }
    }
}

/// A process's counters now: `pid`'s, or this process's for `None`.
pub(crate) fn process(pid: Option<u32>) -> Result<Cpu, String> {
    let dir = match pid {
        Some(pid) => PathBuf::from(format!("/proc/{pid}")),
        None => PathBuf::from("/proc/self"),
    };
    let tasks = std::fs::read_dir(dir.join("task"))
        .map_err(|e| format!("{}: {e}", dir.join("task").display()))?;
    let mut nanoseconds = 0u64;
    for task in tasks.flatten() {
        // A thread that exited between the listing and the read is gone
        // from both the sum and (with its time) the process's stat.
        if let Ok(text) = std::fs::read_to_string(task.path().join("schedstat")) {
            nanoseconds += first_number(&text)?;
        }
    }
    let (user_ticks, kernel_ticks) = stat_ticks(&dir)?;
    Ok(Cpu {
        seconds: nanoseconds as f64 * 1e-9,
        user_ticks,
        kernel_ticks,
    })
}

/// The calling thread's time on a CPU, in seconds.
pub(crate) fn this_thread() -> Result<f64, String> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat")
        .map_err(|e| format!("/proc/thread-self/schedstat: {e}"))?;
    Ok(first_number(&text)? as f64 * 1e-9)
}

fn first_number(text: &str) -> Result<u64, String> {
    text.split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("unreadable schedstat {text:?}"))
}

/// utime and stime of the process at `dir`: fields 14 and 15 of `stat`,
/// counted after the command name in parentheses (field 2).
fn stat_ticks(dir: &Path) -> Result<(u64, u64), String> {
    let path = dir.join("stat");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let bad = || format!("unreadable {}", path.display());
    let after_name = text.rsplit_once(')').ok_or_else(bad)?.1;
    let mut fields = after_name.split_whitespace().skip(11);
    let user = fields.next().and_then(|f| f.parse().ok()).ok_or_else(bad)?;
    let kernel = fields.next().and_then(|f| f.parse().ok()).ok_or_else(bad)?;
    Ok((user, kernel))
}

/// The system's UDP counters: datagrams sent, datagrams dropped for a
/// full receive buffer.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Udp {
    pub(crate) sent: u64,
    pub(crate) receive_buffer_errors: u64,
}

/// The UDP counters now (zeros where `/proc/net/snmp` cannot be read).
pub(crate) fn udp() -> Udp {
    let text = std::fs::read_to_string("/proc/net/snmp").unwrap_or_default();
    let mut rows = text.lines().filter(|l| l.starts_with("Udp: "));
    let (Some(names), Some(values)) = (rows.next(), rows.next()) else {
        return Udp::default();
    };
    let get = |name: &str| {
        names
            .split_whitespace()
            .position(|n| n == name)
            .and_then(|i| values.split_whitespace().nth(i))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    Udp {
        sent: get("OutDatagrams"),
        receive_buffer_errors: get("RcvbufErrors"),
    }
}

/// The machine's busy time so far, all CPUs, in seconds: user, nice,
/// system, irq, softirq and steal ticks of `/proc/stat`'s first line (0
/// where it cannot be read).
pub(crate) fn machine_busy() -> f64 {
    let text = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let Some(line) = text.lines().next() else {
        return 0.0;
    };
    let ticks: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|t| t.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal
    let busy: u64 = [0, 1, 2, 5, 6, 7]
        .iter()
        .filter_map(|&i| ticks.get(i))
        .sum();
    busy as f64 / TICKS_PER_SECOND
}
