//! Where the server's CPU goes: `perf record` (software `cpu-clock`
//! sampling, 1999 Hz, no call graphs) attached to the server process for
//! exactly the measured window of an echo or connect case (`--perf FILE`),
//! and `wt-bench profile FILE...`, which reads each recording with
//! `perf report --no-children --sort sym` and adds the samples' self time
//! up by the crate (or kernel) the symbol belongs to. With LTO many
//! functions are inlined into their callers, so a bucket holds what was
//! compiled into that crate's symbols: a first-order split, not an exact
//! one.

use std::path::Path;
use std::process::{Child, Command, Stdio};

/// A `perf record` attached to a process, ended with SIGINT.
pub(crate) struct Profiler(Child);

impl Profiler {
    /// Starts recording process `pid` into `file`.
    pub(crate) fn start(pid: u32, file: &Path) -> Result<Self, String> {
        Command::new("perf")
            .args(["record", "-q", "-F", "1999", "-o"])
            .arg(file)
            .args(["-p", &pid.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map(Self)
            .map_err(|e| format!("perf record: {e}"))
    }

    /// Stops it (SIGINT, as perf expects, to its own process id) and waits
    /// for the file to be written.
    pub(crate) fn stop(mut self) -> Result<(), String> {
        let pid = self.0.id().to_string();
        Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .map_err(|e| format!("kill -INT {pid}: {e}"))?;
        self.0.wait().map_err(|e| format!("perf record: {e}"))?;
        Ok(())
    }
}

/// The buckets, in the order they are tried: the first whose test holds
/// for a symbol takes its samples.
const BUCKETS: [(&str, &[&str]); 13] = [
    ("kernel", &["[k] "]),
    (
        "ring: AEAD, QUIC packet and header protection, handshake crypto",
        &[
            "ring::",
            "ring_core_",
            "aes_hw_",
            "aes_gcm",
            "gcm_",
            "chacha20",
            "poly1305",
            "ecp_nistz256",
            "x25519",
        ],
    ),
    (
        "netcode (netcode-proto, -std, -tokio, -webtransport)",
        &["netcode_"],
    ),
    ("wtransport (+ proto)", &["wtransport"]),
    ("quinn-proto (QUIC state machine)", &["quinn_proto::"]),
    (
        "quinn, quinn-udp (endpoint, connection driver, socket)",
        &["quinn::", "quinn_udp::"],
    ),
    ("rustls", &["rustls::", "webpki::", "rcgen::"]),
    ("tokio (scheduler, timers, sync, I/O driver)", &["tokio::"]),
    (
        "malloc / free",
        &["malloc", "free", "realloc", "_int_", "tcache", "alloc::"],
    ),
    (
        "memcpy / memset / memmove",
        &["memcpy", "memmove", "memset", "memcmp"],
    ),
    ("bytes", &["bytes::"]),
    (
        "std, core",
        &["std::", "core::", "<core::", "<std::", "hashbrown::"],
    ),
    ("other", &[""]),
];

/// `wt-bench profile FILE...`: the buckets of each recording.
pub(crate) fn run(files: &[String]) -> Result<(), String> {
    let mut columns = Vec::new();
    for file in files {
        let output = Command::new("perf")
            .args(["report", "--stdio", "--no-children", "--sort", "sym", "-i"])
            .arg(file)
            .output()
            .map_err(|e| format!("perf report: {e}"))?;
        let text = String::from_utf8_lossy(&output.stdout);
        let mut shares = vec![0.0; BUCKETS.len()];
        let mut unknown = Vec::new();
        for line in text.lines() {
            let line = line.trim();
            let Some((percent, symbol)) = line.split_once('%') else {
                continue;
            };
            let Ok(percent) = percent.trim().parse::<f64>() else {
                continue;
            };
            let symbol = symbol.trim();
            let bucket = BUCKETS
                .iter()
                .position(|(_, tests)| tests.iter().any(|t| symbol.contains(t)))
                .unwrap_or(BUCKETS.len() - 1);
            shares[bucket] += percent;
            if bucket == BUCKETS.len() - 1 && percent >= 0.5 {
                unknown.push(format!("{percent:.1}% {symbol}"));
            }
        }
        if !unknown.is_empty() {
            eprintln!("{file}: in \"other\": {}", unknown.join("; "));
        }
        columns.push(shares);
    }
    let names: Vec<&str> = files
        .iter()
        .map(|f| {
            Path::new(f)
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or(f)
        })
        .collect();
    println!(
        "| share of the server's CPU samples | {} |",
        names.join(" | ")
    );
    println!("|---|{}", "---:|".repeat(names.len()));
    for (i, (bucket, _)) in BUCKETS.iter().enumerate() {
        let cells: Vec<String> = columns.iter().map(|c| format!("{:.1} %", c[i])).collect();
        println!("| {bucket} | {} |", cells.join(" | "));
    }
    Ok(())
}
