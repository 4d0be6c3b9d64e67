//! Ctrl-C in the long-running examples, through the ctrlc crate: SIGINT,
//! and on Unix SIGTERM and SIGHUP too (its `termination` feature), or
//! Ctrl-C, Ctrl-Break and closing the console on Windows, ask the program
//! to stop. Its loop sees the request at its next turn and stops the way
//! the C reference's programs do on SIGINT: a server stops, so every
//! client gets disconnect packets, and a client disconnects, so its server
//! hears of it at once rather than timing it out. A second request ends
//! the program at once, for a program that does not get to its next turn.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The exit code of a program ended by a second interrupt: 128 + SIGINT,
/// as shells report a program that SIGINT killed.
pub const FORCED_EXIT: i32 = 130;

/// Whether the user asked the program to stop.
#[derive(Debug, Clone)]
pub struct Interrupt {
    requested: Arc<AtomicBool>,
}

impl Interrupt {
    /// Catches Ctrl-C (and SIGTERM and SIGHUP) from now on. Once per
    /// process.
    pub fn catch() -> Result<Self, String> {
        Self::catch_then(|| {})
    }

    /// As [`Interrupt::catch`], and calls `wake` on each request (on the
    /// signal-handling thread, not in a signal handler), for a loop that
    /// sleeps until an event, such as a mio loop with a `Waker`.
    pub fn catch_then(wake: impl Fn() + Send + 'static) -> Result<Self, String> {
        let requested = Arc::new(AtomicBool::new(false));
        let flag = requested.clone();
        ctrlc::set_handler(move || {
            if flag.swap(true, Ordering::SeqCst) {
                std::process::exit(FORCED_EXIT);
            }
            wake();
        })
        .map_err(|e| format!("cannot catch Ctrl-C: {e}"))?;
        Ok(Self { requested })
    }

    /// Whether a stop was asked for.
    pub fn requested(&self) -> bool {
        self.requested.load(Ordering::SeqCst)
    }
}
