//! The game loop's side: [`ServerMetrics`] records a snapshot of the server
//! whenever the loop says so and counts the connect and disconnect events
//! the loop hands it; the latest snapshot waits in a shared place for the
//! next scrape, which reads it through a [`SnapshotCollector`].

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use netcode_std::transport::Socket;
use netcode_std::{DisconnectReason, Server, ServerEvent};
use prometheus_client::registry::Registry;

use crate::collector::SnapshotCollector;
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
    fn latest(&self) -> MutexGuard<'_, Option<ServerSnapshot>> {
        // A panic elsewhere while holding the lock leaves a whole snapshot
        // (it is only ever swapped in), so a poisoned lock is still good.
        self.latest.lock().unwrap_or_else(PoisonError::into_inner)
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

/// A server's metrics as its game loop records them.
///
/// The loop stays in charge: it calls [`record`](Self::record) each tick
/// (or every few hundred milliseconds), which copies the server's figures
/// into a spare snapshot and swaps it with the published one under a lock
/// held only for the swap. A scrape encodes the latest published snapshot
/// through the [`SnapshotCollector`] of [`collector`](Self::collector) or
/// [`registry`](Self::registry), so a client's per-client series exist
/// exactly while the latest snapshot lists it: none are left behind after a
/// disconnect. Until the first recording, a scrape shows only the event
/// counters.
///
/// Connects and disconnects are not among the server's counters: hand each
/// polled event to [`count_event`](Self::count_event) to count them.
#[derive(Debug, Default)]
pub struct ServerMetrics {
    /// The snapshot being filled; it holds the one before the latest
    /// between recordings, so its memory is reused.
    spare: ServerSnapshot,
    shared: Arc<Shared>,
}

impl ServerMetrics {
    /// Metrics with nothing recorded yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `server`'s figures now (a netcode-std server, or a
    /// netcode-mio one, which is a netcode-std server on mio sockets).
    /// Allocates nothing once the client list has grown to the server's
    /// number of clients.
    pub fn record<S: Socket>(&mut self, server: &Server<S>) {
        self.spare.fill_from(server);
        self.publish_spare();
    }

    /// Records figures that `fill` writes into a cleared snapshot: for hosts
    /// this crate does not know (a netcode-tokio server, say). The snapshot
    /// handed to `fill` is all zeros and empty, but keeps its client list's
    /// memory from earlier recordings.
    pub fn record_with(&mut self, fill: impl FnOnce(&mut ServerSnapshot)) {
        let mut clients = std::mem::take(&mut self.spare.clients);
        clients.clear();
        self.spare = ServerSnapshot {
            clients,
            ..ServerSnapshot::default()
        };
        fill(&mut self.spare);
        self.publish_spare();
    }

    /// Publishes `snapshot` as it is (it is moved, not copied).
    pub fn publish(&mut self, snapshot: ServerSnapshot) {
        self.spare = snapshot;
        self.publish_spare();
    }

    /// Counts a connect or disconnect event the loop polled from the
    /// server.
    pub fn count_event(&self, event: &ServerEvent) {
        match *event {
            ServerEvent::ClientConnected { .. } => {
                self.shared.connects.fetch_add(1, Ordering::Relaxed);
            }
            ServerEvent::ClientDisconnected { reason, .. } => {
                let counted = DISCONNECT_REASONS.iter().position(|r| *r == reason);
                if let Some(count) = counted.and_then(|i| self.shared.disconnects.get(i)) {
                    count.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }

    /// Whether scrapes show the per-client gauges (those labelled by
    /// `client_index` and `client_id`); they do unless turned off here. A server with thousands of clients may want them off:
    /// each client adds eight series.
    pub fn set_client_series(&self, shown: bool) {
        self.shared.clients_hidden.store(!shown, Ordering::Relaxed);
    }

    /// A copy of the latest recorded snapshot, if any.
    pub fn latest(&self) -> Option<ServerSnapshot> {
        self.shared.latest().clone()
    }

    /// A collector that encodes the latest snapshot at each scrape, for a
    /// registry of the caller's (with labels of its own, say, when one
    /// process runs several servers:
    /// `registry.sub_registry_with_label(...)`).
    pub fn collector(&self) -> SnapshotCollector {
        SnapshotCollector::new(Arc::clone(&self.shared))
    }

    /// A registry holding only this server's [`collector`](Self::collector).
    pub fn registry(&self) -> Registry {
        let mut registry = Registry::default();
        registry.register_collector(Box::new(self.collector()));
        registry
    }

    /// Swaps the spare snapshot in as the latest; the old latest becomes
    /// the spare.
    fn publish_spare(&mut self) {
        let mut latest = self.shared.latest();
        match latest.as_mut() {
            Some(published) => std::mem::swap(published, &mut self.spare),
            None => *latest = Some(std::mem::take(&mut self.spare)),
        }
    }
}
