//! The server's log: every `log` record at or above the level that
//! `NETCODE_AGONES_LOG` names (default `info`) goes to stderr as one line,
//! `LEVEL target: message`; the container runtime adds the time. The
//! gRPC stack's own records (h2, tower, hyper: one per HTTP/2 frame at
//! `debug`) are kept to warnings and errors, whatever the level.

use std::io::Write;

use log::{Level, LevelFilter, Log, Metadata, Record};

/// Writes records to stderr.
struct Stderr;

static LOGGER: Stderr = Stderr;

impl Log for Stderr {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        let ours = metadata.target().starts_with("netcode");
        metadata.level() <= log::max_level() && (ours || metadata.level() <= Level::Warn)
    }

    fn log(&self, record: &Record<'_>) {
        if self.enabled(record.metadata()) {
            // A log line that cannot be written is dropped.
            let _ = writeln!(
                std::io::stderr().lock(),
                "{:<5} {}: {}",
                record.level(),
                record.target(),
                record.args()
            );
        }
    }

    fn flush(&self) {
        let _ = std::io::stderr().flush();
    }
}

/// Installs the logger at the level `NETCODE_AGONES_LOG` names; an
/// unknown level is said on stderr and `info` used.
pub(crate) fn init() {
    let level = match std::env::var("NETCODE_AGONES_LOG") {
        Ok(text) => text.parse().unwrap_or_else(|_| {
            eprintln!("NETCODE_AGONES_LOG={text:?} is not a log level; using info");
            LevelFilter::Info
        }),
        Err(_) => LevelFilter::Info,
    };
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(level);
    }
}
