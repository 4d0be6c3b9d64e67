//! What the machine says about a run, from Linux's `/proc`: a thread's or
//! a process's time on a CPU, the whole machine's busy time, the system's
//! UDP counters and the load average. Where `/proc` cannot be read (another
//! OS), each says so: `None`, `Err` or `unknown`.
//!
//! A thread's time on a CPU is the first field of its `schedstat`
//! (nanoseconds, user and kernel together); its `stat`'s utime and stime
//! (clock ticks, [`TICKS_PER_SECOND`]) give the user/kernel split. A
//! process's is the sum of its threads' `schedstat`, with its own `stat`'s
//! ticks (of live and exited threads).

use std::ops::Sub;
use std::path::{Path, PathBuf};

/// Clock ticks a second (`getconf CLK_TCK`: 100 on Linux).
pub const TICKS_PER_SECOND: f64 = 100.0;

/// CPU counters of a thread or a process at one moment.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cpu {
    /// Time on a CPU (`schedstat`), in seconds.
    pub seconds: f64,
    /// Clock ticks in user mode (`stat`).
    pub user_ticks: u64,
    /// Clock ticks in the kernel (`stat`).
    pub kernel_ticks: u64,
}

impl Sub for Cpu {
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
    pub fn kernel_share(&self) -> f64 {
        let all = self.user_ticks + self.kernel_ticks;
        if all == 0 {
            0.0
        } else {
            self.kernel_ticks as f64 / all as f64
        }
    }
}

/// One thread's counters, read from its directory in `/proc`.
#[derive(Debug)]
pub struct ThreadCpu(PathBuf);

impl ThreadCpu {
    /// The calling thread's, where the OS has them.
    pub fn this_thread() -> Option<Self> {
        let task = std::fs::read_link("/proc/thread-self").ok()?;
        let this = Self(Path::new("/proc").join(task));
        this.read().map(|_| this)
    }

    /// The thread's id (the last component of `/proc/thread-self`).
    pub fn tid(&self) -> Option<&str> {
        self.0.file_name()?.to_str()
    }

    /// Its counters now.
    pub fn read(&self) -> Option<Cpu> {
        let seconds = first_number(&std::fs::read_to_string(self.0.join("schedstat")).ok()?)?;
        let (user_ticks, kernel_ticks) = stat_ticks(&self.0)?;
        Some(Cpu {
            seconds: seconds as f64 * 1e-9,
            user_ticks,
            kernel_ticks,
        })
    }
}

/// A process's counters now: `pid`'s, or this process's for `None`.
pub fn process_cpu(pid: Option<u32>) -> Result<Cpu, String> {
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
            nanoseconds += first_number(&text).ok_or_else(|| format!("unreadable {text:?}"))?;
        }
    }
    let (user_ticks, kernel_ticks) =
        stat_ticks(&dir).ok_or_else(|| format!("unreadable {}/stat", dir.display()))?;
    Ok(Cpu {
        seconds: nanoseconds as f64 * 1e-9,
        user_ticks,
        kernel_ticks,
    })
}

fn first_number(text: &str) -> Option<u64> {
    text.split_whitespace().next()?.parse().ok()
}

/// utime and stime of the thread or process at `dir`: fields 14 and 15 of
/// `stat`, counted after the command name in parentheses (field 2).
fn stat_ticks(dir: &Path) -> Option<(u64, u64)> {
    let text = std::fs::read_to_string(dir.join("stat")).ok()?;
    let mut fields = text.rsplit_once(')')?.1.split_whitespace().skip(11);
    Some((fields.next()?.parse().ok()?, fields.next()?.parse().ok()?))
}

/// The machine's busy time so far, all CPUs, in seconds: user, nice,
/// system, irq, softirq and steal ticks of `/proc/stat`'s first line (0
/// where it cannot be read).
pub fn machine_busy() -> f64 {
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

/// The system's UDP counters (all sockets of the machine).
#[derive(Clone, Copy, Debug, Default)]
pub struct UdpCounters {
    /// Datagrams sent (`OutDatagrams`).
    pub sent: u64,
    /// Datagrams dropped for a full socket receive buffer (`RcvbufErrors`).
    pub receive_buffer_errors: u64,
}

/// The UDP counters now (`/proc/net/snmp`), where the OS says.
pub fn udp_counters() -> Option<UdpCounters> {
    let text = std::fs::read_to_string("/proc/net/snmp").ok()?;
    let mut rows = text.lines().filter(|l| l.starts_with("Udp: "));
    let (names, values) = (rows.next()?, rows.next()?);
    let get = |name: &str| {
        let column = names.split_whitespace().position(|n| n == name)?;
        values.split_whitespace().nth(column)?.parse().ok()
    };
    Some(UdpCounters {
        sent: get("OutDatagrams")?,
        receive_buffer_errors: get("RcvbufErrors")?,
    })
}

/// The 1, 5 and 15 minute load averages, as `/proc/loadavg` has them, or
/// `unknown`.
pub fn load_average() -> String {
    load_fields(3)
}

/// The 1-minute load average, or `unknown`.
pub fn load1() -> String {
    load_fields(1)
}

fn load_fields(n: usize) -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| {
            text.split_whitespace()
                .take(n)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|_| "unknown".into())
}
