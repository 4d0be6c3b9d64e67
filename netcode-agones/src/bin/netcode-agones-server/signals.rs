//! SIGTERM (what Kubernetes sends a pod it stops), SIGINT and SIGHUP,
//! through the ctrlc crate: the first asks the server to stop, seen by the
//! game loop at its next frame or by the start-up while it waits for the
//! sidecar; a second ends the process at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

/// The exit code after a second signal: 128 + SIGINT, as shells report.
const FORCED_EXIT: i32 = 130;

/// Whether a stop was requested.
#[derive(Debug, Clone)]
pub(crate) struct Interrupt {
    requested: Arc<AtomicBool>,
    notify: Arc<Notify>,
}

impl Interrupt {
    /// Catches the signals from now on. Once per process.
    pub(crate) fn catch() -> Result<Self, String> {
        let requested = Arc::new(AtomicBool::new(false));
        let notify = Arc::new(Notify::new());
        let (flag, wake) = (requested.clone(), notify.clone());
        ctrlc::set_handler(move || {
            if flag.swap(true, Ordering::SeqCst) {
                std::process::exit(FORCED_EXIT);
            }
            wake.notify_one();
        })
        .map_err(|e| format!("cannot catch SIGTERM and SIGINT: {e}"))?;
        Ok(Self { requested, notify })
    }

    /// Whether a stop was requested.
    pub(crate) fn requested(&self) -> bool {
        self.requested.load(Ordering::SeqCst)
    }

    /// Returns once a stop is requested (at once if it already was).
    pub(crate) async fn wait(&self) {
        while !self.requested() {
            self.notify.notified().await;
        }
    }
}
