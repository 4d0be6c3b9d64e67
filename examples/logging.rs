//! The examples' log: what the libraries write to the `log` facade
//! (netcode-std's starts and stops, connects and disconnects with their
//! reasons, client state changes, each refused connection attempt with
//! the reason in words) goes to standard error through `env_logger`, at
//! `info` and above unless `RUST_LOG` says otherwise (`RUST_LOG=debug`
//! adds every dropped datagram, `RUST_LOG=off` silences it).

/// The level logged when `RUST_LOG` is unset.
pub const DEFAULT_LOG_LEVEL: &str = "info";

/// Installs the log once per process; a later call, or a logger some other
/// code installed first, leaves the existing one in place.
pub(crate) fn install() {
    let environment = env_logger::Env::default().default_filter_or(DEFAULT_LOG_LEVEL);
    // Err only when a logger is already installed, which is what was
    // asked for.
    let _ = env_logger::Builder::from_env(environment).try_init();
}
