//! Durable storage for a world server's token history, simulated, and the
//! [`Output`] through which a world server reaches it and the network
//! (STANDARD.md: *Nonce Reuse and Server Restarts*, "Persist the connect
//! token history"; the exchange itself is described in `server/persist.rs`).
//!
//! A record handed to the store becomes durable after the store's
//! [`write_delay`](SimStore::write_delay) of simulated time, or fails then
//! if the store is not writable; a crash loses records still being written,
//! as a real one loses what was not yet synced.

use crate::time::Instant;
use alloc::vec::Vec;
use core::net::SocketAddr;
use core::time::Duration;

use super::NetworkSimulator;
use crate::io::Output;
use crate::server::{PersistOutcome, PersistRequest, RestoredHistory, ServerEvent, UsedToken};

/// Durable storage for a server's token history, simulated: what a crash
/// of the server leaves behind.
#[derive(Debug, Clone, Default)]
pub struct SimStore {
    /// Unix seconds since which it holds every token the server used.
    pub recorded_since: u64,
    /// The latest unix second at which a record was written.
    pub latest_unix_seconds: u64,
    /// The tokens made durable, in order.
    pub tokens: Vec<UsedToken>,
    /// Whether a write succeeds now (false: as if the disk were failing).
    pub writable: bool,
    /// How long a record takes to become durable (zero: within the call
    /// that handed it over).
    pub write_delay: Duration,
    /// Records being written, with the time each is done.
    in_flight: Vec<(Instant, PersistRequest)>,
}

impl SimStore {
    /// An empty, writable store that began at unix time `recorded_since`
    /// and writes at once.
    pub fn new(recorded_since: u64) -> Self {
        Self {
            recorded_since,
            latest_unix_seconds: recorded_since,
            tokens: Vec::new(),
            writable: true,
            write_delay: Duration::ZERO,
            in_flight: Vec::new(),
        }
    }

    /// What a restarted server restores from it.
    pub fn restored(&self) -> RestoredHistory<'_> {
        RestoredHistory {
            recorded_since: self.recorded_since,
            latest_unix_seconds: self.latest_unix_seconds,
            tokens: &self.tokens,
        }
    }

    /// Records being written.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// When the next record being written is done.
    pub fn next_write_done(&self) -> Option<Instant> {
        self.in_flight.iter().map(|(at, _)| *at).min()
    }

    /// Takes a record to write, done `write_delay` after `now`.
    fn begin_write(&mut self, now: Instant, request: PersistRequest) {
        let done = now.saturating_add(self.write_delay);
        self.in_flight.push((done, request));
    }

    /// The records done by `now` (unix second `unix`), in the order they
    /// were handed over: written if the store is writable, failed if not.
    pub(super) fn finish_writes(
        &mut self,
        now: Instant,
        unix: u64,
    ) -> Vec<(PersistRequest, PersistOutcome)> {
        let mut done = Vec::new();
        let mut i = 0;
        while i < self.in_flight.len() {
            if self.in_flight[i].0 > now {
                i += 1;
                continue;
            }
            let (_, request) = self.in_flight.remove(i);
            let outcome = if self.writable {
                self.tokens.push(*request.token());
                self.latest_unix_seconds = self.latest_unix_seconds.max(unix);
                PersistOutcome::Durable
            } else {
                PersistOutcome::Failed
            };
            done.push((request, outcome));
        }
        done
    }

    /// A crash: the records being written are lost.
    pub(super) fn lose_in_flight(&mut self) {
        self.in_flight.clear();
    }
}

/// The [`Output`] of a server in the world: datagrams into the simulator,
/// events into the server's list, used tokens into its store. Handed out by
/// [`World::with_server`](super::World::with_server).
pub struct ServerOutput<'a> {
    sim: &'a mut NetworkSimulator,
    from: SocketAddr,
    now: Instant,
    events: &'a mut Vec<ServerEvent>,
    store: Option<&'a mut SimStore>,
}

impl<'a> ServerOutput<'a> {
    /// The output of the server at `from`, at `now`.
    pub(super) fn new(
        sim: &'a mut NetworkSimulator,
        from: SocketAddr,
        now: Instant,
        events: &'a mut Vec<ServerEvent>,
        store: Option<&'a mut SimStore>,
    ) -> Self {
        Self {
            sim,
            from,
            now,
            events,
            store,
        }
    }
}

impl Output<ServerEvent> for ServerOutput<'_> {
    fn send(&mut self, to: SocketAddr, datagram: &[u8]) {
        self.sim.send(self.now, self.from, to, datagram);
    }

    fn event(&mut self, event: ServerEvent) {
        self.events.push(event);
    }

    /// Into the store, if the server has one; dropped (never durable)
    /// otherwise.
    fn persist_used_token(&mut self, request: PersistRequest) {
        if let Some(store) = self.store.as_deref_mut() {
            store.begin_write(self.now, request);
        }
    }
}
