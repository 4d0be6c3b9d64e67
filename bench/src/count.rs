//! Instruction counts and times per operation, the same way for every
//! implementation: a counting program (`netcode-count` for the Rust ones,
//! the C reference's own build of `bench/c/netcode_c_bench.c`) runs one case
//! N times, each operation inside [`measured_once`] (in C, a function whose
//! name holds `measured_once`), with all preparation outside it, and prints
//! the wall time per operation of the measured loop. Under
//! `valgrind --tool=callgrind --toggle-collect=*measured_once*` only those
//! calls are counted; the instructions of one operation are the difference
//! between a run of [`LONG`] and one of [`SHORT`] operations, divided by
//! the difference, so nothing fixed per run (the first call's cache and
//! lazy set-up) is left in it.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The one function whose instructions are collected: one operation,
/// called through a trait object so that it is never inlined into the loop.
#[inline(never)]
pub fn measured_once(operation: &mut dyn FnMut()) {
    operation()
}

/// Runs `operation` once per input inside [`measured_once`] and returns the
/// time the loop took (nothing but the operations and the loop).
pub fn measure<T>(inputs: &mut [T], mut operation: impl FnMut(&mut T)) -> Duration {
    let start = Instant::now();
    for input in inputs.iter_mut() {
        measured_once(&mut || operation(input));
    }
    start.elapsed()
}

/// Runs `n` operations in batches of at most `batch` (`run` is given each
/// batch's size and returns the time it measured); the total.
pub fn in_batches(n: usize, batch: usize, mut run: impl FnMut(usize) -> Duration) -> Duration {
    let mut total = Duration::ZERO;
    let mut left = n;
    while left > 0 {
        let k = left.min(batch);
        left -= k;
        total += run(k);
    }
    total
}

/// What a counting program prints for a run of `n` operations that took
/// `elapsed`: one line, `ns_per_op <float>`.
pub fn report(n: usize, elapsed: Duration) {
    println!(
        "ns_per_op {:.1}",
        elapsed.as_secs_f64() * 1e9 / n.max(1) as f64
    );
}

/// Every case, in the order of the tables (`src/bin/netcode-count/main.rs`
/// says what each is).
pub const CASES: [&str; 14] = [
    "send-100",
    "send-1200",
    "receive-100",
    "receive-1200",
    "request",
    "garbage",
    "handshake",
    "token",
    "tick-16",
    "tick-256",
    "tick-1024",
    "tick-4096",
    "loopback-100",
    "loopback-1200",
];

/// The number a case's name ends in after `prefix`: the payload size of
/// the `send-`, `receive-` and `loopback-` cases, the client count of the
/// `tick-` cases.
pub fn sized(case: &str, prefix: &str) -> Option<usize> {
    case.strip_prefix(prefix)?.parse().ok()
}

/// Operations in the shorter and the longer callgrind run of a case.
pub const SHORT: usize = 500;
/// See [`SHORT`].
pub const LONG: usize = 1500;

/// Operations in a timed run (outside valgrind).
pub const TIMED: usize = 20_000;

/// The shorter and longer callgrind runs and the timed run of `case`: a
/// `tick-` case counts whole ticks, each thousands of operations, so it
/// runs fewer; 12 ticks apart, two whole periods of the servers' 10 Hz
/// keep-alives at 60 ticks a second, so both runs' difference holds the
/// same share of keep-alives for every implementation.
pub fn runs(case: &str) -> (usize, usize, usize) {
    if case.starts_with("tick-") {
        (6, 18, 60)
    } else {
        (SHORT, LONG, TIMED)
    }
}

/// The symbol pattern that selects the measured calls.
pub const TOGGLE: &str = "*measured_once*";

/// A counting program and the arguments that come before the case:
/// `netcode-count ours`, or the C bench binary alone.
pub struct Program<'a> {
    /// The executable.
    pub exe: &'a Path,
    /// Its leading arguments.
    pub args: &'a [&'a str],
}

impl Program<'_> {
    fn command(&self, case: &str, n: usize) -> Command {
        let mut command = Command::new(self.exe);
        command.args(self.args).arg(case).arg(n.to_string());
        command
    }

    /// Nanoseconds per operation of a timed run of `n`; the program's
    /// error (an unknown case says `not offered`) otherwise.
    pub fn time(&self, case: &str, n: usize) -> Result<f64, String> {
        let output = self
            .command(case, n)
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", self.exe.display()))?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() {
            return Err(failure(&output.stderr, output.status));
        }
        stdout
            .lines()
            .find_map(|line| line.strip_prefix("ns_per_op "))
            .and_then(|v| v.trim().parse().ok())
            .ok_or_else(|| format!("no ns_per_op line from {case}"))
    }

    /// Instructions collected in a run of `n` under callgrind.
    pub fn collected(&self, case: &str, n: usize) -> Result<u64, String> {
        let mut command = Command::new("valgrind");
        command
            .arg("--tool=callgrind")
            .arg(format!("--toggle-collect={TOGGLE}"))
            .arg("--callgrind-out-file=/dev/null")
            .arg(self.exe)
            .args(self.args)
            .arg(case)
            .arg(n.to_string());
        let output = command
            .stdout(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run valgrind: {e}"))?;
        if !output.status.success() {
            return Err(failure(&output.stderr, output.status));
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        stderr
            .lines()
            .find_map(|line| line.split("Collected :").nth(1))
            .and_then(|v| v.trim().parse().ok())
            .ok_or_else(|| format!("no `Collected` line from callgrind for {case}"))
    }

    /// Instructions of one operation: the difference of a longer and a
    /// shorter run (see [`runs`]), over the difference of their counts.
    pub fn instructions(&self, case: &str) -> Result<f64, String> {
        let (short, long, _) = runs(case);
        let fewer = self.collected(case, short)?;
        let more = self.collected(case, long)?;
        Ok(more.saturating_sub(fewer) as f64 / (long - short) as f64)
    }
}

/// The last line a failed program wrote, or its exit status.
fn failure(stderr: &[u8], status: std::process::ExitStatus) -> String {
    String::from_utf8_lossy(stderr)
        .lines()
        .rfind(|l| !l.trim().is_empty() && !l.starts_with("=="))
        .map_or_else(|| status.to_string(), str::to_string)
}

/// Whether `valgrind` runs here.
pub fn valgrind_available() -> bool {
    Command::new("valgrind")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
