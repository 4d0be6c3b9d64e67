//! The server's log, through `env_logger`: every `log` record at or above
//! the level of its target goes to stderr as one line, `LEVEL target:
//! message` (the container runtime adds the time). The level is `info`
//! unless `RUST_LOG` says otherwise (`RUST_LOG=debug`,
//! `RUST_LOG=netcode_agones=debug`, ...). The gRPC stack's own records
//! (h2, hyper, tower, tonic: one per HTTP/2 frame at `debug`) are kept to
//! warnings and errors whatever the level, unless `RUST_LOG` names them.

use std::io::Write;

use log::LevelFilter;

/// The crates of the gRPC stack whose records stop at `warn` unless
/// `RUST_LOG` names them.
const QUIET: &[&str] = &["h2", "hyper", "tower", "tonic"];

/// The logger's settings for the filters `rust_log` (the value of
/// `RUST_LOG`, if set) over the defaults.
fn builder(rust_log: Option<&str>) -> env_logger::Builder {
    let mut builder = env_logger::Builder::new();
    builder.filter_level(LevelFilter::Info);
    for module in QUIET {
        builder.filter_module(module, LevelFilter::Warn);
    }
    if let Some(filters) = rust_log {
        builder.parse_filters(filters);
    }
    builder.format(|out, record| {
        writeln!(
            out,
            "{:<5} {}: {}",
            record.level(),
            record.target(),
            record.args()
        )
    });
    builder
}

/// Installs the logger, with the filters of `RUST_LOG` when it is set
/// (an invalid directive is said on stderr and skipped).
pub(crate) fn init() {
    let rust_log = std::env::var("RUST_LOG").ok();
    // Another logger already installed keeps its place.
    let _ = builder(rust_log.as_deref()).try_init();
}

#[cfg(test)]
mod tests {
    use log::{Level, Log, Metadata};

    use super::*;

    fn enabled(logger: &env_logger::Logger, target: &str, level: Level) -> bool {
        logger.enabled(&Metadata::builder().target(target).level(level).build())
    }

    #[test]
    fn info_by_default_and_the_grpc_stack_at_warn() {
        let logger = builder(None).build();
        assert!(enabled(&logger, "netcode_agones", Level::Info));
        assert!(!enabled(&logger, "netcode_agones", Level::Debug));
        assert!(enabled(&logger, "h2", Level::Warn));
        assert!(!enabled(&logger, "h2::codec", Level::Info));
        assert!(!enabled(&logger, "hyper_util::client", Level::Info));
    }

    #[test]
    fn rust_log_overrides() {
        let logger = builder(Some("debug")).build();
        assert!(enabled(&logger, "netcode_agones_server", Level::Debug));
        assert!(!enabled(&logger, "netcode_agones_server", Level::Trace));
        assert!(!enabled(&logger, "tonic::transport", Level::Debug));
        let logger = builder(Some("warn,netcode=trace,h2=debug")).build();
        assert!(enabled(&logger, "netcode_std", Level::Trace));
        assert!(!enabled(&logger, "agones", Level::Info));
        assert!(enabled(&logger, "h2::frame", Level::Debug));
    }
}
