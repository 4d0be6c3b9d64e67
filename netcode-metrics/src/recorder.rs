//! The game loop's side: [`ServerMetrics`] records a snapshot of the server
//! whenever the loop says so and counts the connect and disconnect events
//! the loop hands it; the latest snapshot waits in a shared place for the
//! next scrape, which reads it through a [`SnapshotCollector`].

use std::sync::Arc;

use netcode_std::transport::Socket;
use netcode_std::{Server, ServerEvent};
use prometheus_client::registry::Registry;

use crate::collector::SnapshotCollector;
use crate::shared::Shared;
use crate::snapshot::ServerSnapshot;

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
            ServerEvent::ClientConnected { .. } => self.shared.count_connect(),
            ServerEvent::ClientDisconnected { reason, .. } => self.shared.count_disconnect(reason),
        }
    }

    /// Whether scrapes show the per-client gauges (those labelled by
    /// `client_index` and `client_id`); they do unless turned off here. A
    /// server with thousands of clients may want them off: each client adds
    /// eight series.
    pub fn set_client_series(&self, shown: bool) {
        self.shared.show_client_series(shown);
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
