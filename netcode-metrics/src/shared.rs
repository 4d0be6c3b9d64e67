//! What the game loop's [`ServerMetrics`](crate::ServerMetrics) and the
//! scrapes' [`SnapshotCollector`](crate::SnapshotCollector) share: the
//! latest snapshot, the connect and disconnect counts, and whether
//! per-client series are shown; and the copy of it a scrape encodes.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use netcode_std::DisconnectReason;

use crate::snapshot::ServerSnapshot;

/// Disconnect reasons counted apart, in this order (a disconnect event
/// never has [`DisconnectReason::None`]).
pub(crate) const DISCONNECT_REASONS: [DisconnectReason; 3] = [
    DisconnectReason::TimedOut,
    DisconnectReason::ClientDisconnect,
    DisconnectReason::ServerDisconnect,
];

/// What the loop and the scrapes share.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    /// Whether per-client series are left out of scrapes.
    clients_hidden: AtomicBool,
    /// The latest snapshot, `None` until the first recording.
    latest: Mutex<Option<ServerSnapshot>>,
    /// Clients that connected, as counted from events.
    connects: AtomicU64,
    /// Clients that left, by reason as in [`DISCONNECT_REASONS`].
    disconnects: [AtomicU64; DISCONNECT_REASONS.len()],
}

/// What a scrape reads: a copy of the latest snapshot and the event counts.
#[derive(Debug, Clone, Default)]
pub(crate) struct ScrapeView {
    /// The latest snapshot, if one was recorded.
    pub(crate) snapshot: Option<ServerSnapshot>,
    /// Clients that connected.
    pub(crate) connects: u64,
    /// Clients that left, by reason as in [`DISCONNECT_REASONS`].
    pub(crate) disconnects: [u64; DISCONNECT_REASONS.len()],
    /// Whether per-client series are shown.
    pub(crate) client_series: bool,
}

impl Shared {
    /// The latest snapshot, locked. A panic elsewhere while holding the
    /// lock leaves a whole snapshot (it is only ever swapped in), so a
    /// poisoned lock is still good.
    pub(crate) fn latest(&self) -> MutexGuard<'_, Option<ServerSnapshot>> {
        self.latest.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts a client that connected.
    pub(crate) fn count_connect(&self) {
        self.connects.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a client that left for `reason` (reasons outside
    /// [`DISCONNECT_REASONS`] are not counted).
    pub(crate) fn count_disconnect(&self, reason: DisconnectReason) {
        let counted = DISCONNECT_REASONS.iter().position(|r| *r == reason);
        if let Some(count) = counted.and_then(|i| self.disconnects.get(i)) {
            count.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Shows or hides the per-client series in the scrapes to come.
    pub(crate) fn show_client_series(&self, shown: bool) {
        self.clients_hidden.store(!shown, Ordering::Relaxed);
    }

    /// Copies what a scrape encodes; the lock is held only for the copy.
    pub(crate) fn view(&self) -> ScrapeView {
        let snapshot = self.latest().clone();
        ScrapeView {
            snapshot,
            connects: self.connects.load(Ordering::Relaxed),
            disconnects: self
                .disconnects
                .each_ref()
                .map(|count| count.load(Ordering::Relaxed)),
            client_series: !self.clients_hidden.load(Ordering::Relaxed),
        }
    }
}
