//! Counting the server thread's datagram system calls with `perf stat`
//! (Linux tracepoints `syscalls:sys_enter_*`), for every row alike: ours,
//! the peers and the floor.
//!
//! The bench spawns
//! `perf stat -e <the six events> -t <tid> -x, -o <file> -- sleep <seconds>`
//! and keeps the clients running until perf exits, so the whole count falls
//! in steady traffic; the datagrams it is divided by are the server's rate
//! over that span times the seconds perf slept. Where perf is missing or
//! fails, the figure is "n/a" with the reason.

use std::fs;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The system calls that move datagrams, one or many per call.
pub const EVENTS: [&str; 6] = [
    "syscalls:sys_enter_sendto",
    "syscalls:sys_enter_recvfrom",
    "syscalls:sys_enter_sendmmsg",
    "syscalls:sys_enter_recvmmsg",
    "syscalls:sys_enter_sendmsg",
    "syscalls:sys_enter_recvmsg",
];

/// How long past its window perf may take to start and exit before the
/// count is given up.
pub(super) const GRACE_SECONDS: f64 = 5.0;

/// Datagram system calls of the server thread over a window.
#[derive(Clone, Copy, Debug)]
pub struct SyscallCount {
    /// The calls perf counted (the six events together).
    pub calls: u64,
    /// The server's datagrams (in and out) over the same window.
    pub datagrams: f64,
}

impl SyscallCount {
    /// System calls per datagram.
    pub fn per_datagram(&self) -> f64 {
        self.calls as f64 / self.datagrams.max(1.0)
    }
}

/// The `perf` executable on the path, if there is one.
fn perf_path() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("perf"))
        .find(|candidate| candidate.is_file())
}

/// Whether `perf` is on the path.
pub fn perf_available() -> bool {
    perf_path().is_some()
}

/// A `perf stat` counting a thread's datagram system calls.
pub(super) struct Counting {
    child: Option<Child>,
    output: PathBuf,
}

impl Counting {
    /// Starts counting the system calls of thread `tid` for `window`.
    pub(super) fn start(tid: Option<&str>, window: Duration) -> Result<Self, String> {
        let tid = tid.ok_or("n/a: the server thread's id is unknown")?;
        let perf = perf_path().ok_or("n/a: perf is not on the path")?;
        let output = std::env::temp_dir().join(format!(
            "netcode-udp-bench-{}-{tid}.csv",
            std::process::id()
        ));
        let child = Command::new(perf)
            .args(["stat", "-e", &EVENTS.join(","), "-t", tid, "-x,", "-o"])
            .arg(&output)
            .args(["--", "sleep", &format!("{:.3}", window.as_secs_f64())])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("n/a: perf did not start: {e}"))?;
        Ok(Self {
            child: Some(child),
            output,
        })
    }

    /// Whether perf is still counting.
    pub(super) fn running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|child| matches!(child.try_wait(), Ok(None)))
    }

    /// Waits for perf (stopping it if it outlived its grace) and returns
    /// its count.
    pub(super) fn finish(mut self) -> Result<u64, String> {
        let mut child = self.child.take().ok_or("n/a: perf was already reaped")?;
        if matches!(child.try_wait(), Ok(None)) {
            let _ = child.kill();
            let _ = child.wait();
            return Err("n/a: perf did not finish in time".into());
        }
        let output = child
            .wait_with_output()
            .map_err(|e| format!("n/a: perf: {e}"))?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            return Err(format!("n/a: perf failed: {}", stderr.trim()));
        }
        let text = fs::read_to_string(&self.output)
            .map_err(|e| format!("n/a: perf's output {}: {e}", self.output.display()))?;
        parse(&text)
    }
}

impl Drop for Counting {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = fs::remove_file(&self.output);
    }
}

/// The sum of the six events in perf's CSV output (`value,unit,event,...`
/// per line, `#` comments), or why it holds no count for one of them.
fn parse(text: &str) -> Result<u64, String> {
    let mut total = 0;
    let mut seen = 0;
    for line in text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let fields: Vec<&str> = line.split(',').collect();
        let (Some(value), Some(event)) = (fields.first(), fields.get(2)) else {
            continue;
        };
        if !EVENTS.contains(event) {
            continue;
        }
        let count: u64 = value
            .trim()
            .parse()
            .map_err(|_| format!("n/a: perf could not count {event}: {value}"))?;
        total += count;
        seen += 1;
    }
    if seen == EVENTS.len() {
        Ok(total)
    } else {
        Err(format!(
            "n/a: perf reported {seen} of the {} events",
            EVENTS.len()
        ))
    }
}

#[cfg(test)]
mod tests {
    // The import lives in the test, which the bench target (built with
    // `cfg(test)` but no harness) leaves out.
    #[test]
    fn perf_csv_sums_the_six_events_and_refuses_a_missing_one() {
        use super::*;

        let mut text = String::from("# started on Tue\n\n");
        for (i, event) in EVENTS.iter().enumerate() {
            text.push_str(&format!("{},,{event},1000000,100.00,,\n", i * 10));
        }
        assert_eq!(parse(&text), Ok(150));
        let short: String = text.lines().take(5).map(|l| format!("{l}\n")).collect();
        assert!(parse(&short).is_err());
        let uncounted = text.replace("30,,", "<not counted>,,");
        assert!(parse(&uncounted).is_err());
    }
}
