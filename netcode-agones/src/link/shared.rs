//! What the game loop and the SDK's tasks share: the current health
//! sender, what is known of the sidecar and the GameServer, and the
//! counters that make the link's behaviour visible ([`LinkStats`]).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use agones::GameServer;
use tokio::sync::mpsc;

use crate::TARGET;

/// The GameServer state Agones gives an allocated server.
pub(crate) const ALLOCATED: &str = "Allocated";

/// A snapshot of the link to the sidecar, for logs and metrics.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LinkStats {
    /// Whether the last exchange with the sidecar worked (a call, or the
    /// health stream being open).
    pub sidecar_up: bool,
    /// Health pings the game loop handed to an open health stream.
    pub health_pings: u64,
    /// Pings due while no health stream was open, or its buffer was full.
    pub health_pings_missed: u64,
    /// Health streams opened (the first one included).
    pub health_streams_opened: u64,
    /// Health streams found closed (the sidecar went away).
    pub health_streams_lost: u64,
    /// SDK calls that failed (player tracking, health re-opening checks).
    pub sdk_calls_failed: u64,
    /// Times the GameServer watch was started again after it ended.
    pub watch_restarts: u64,
    /// Players the sidecar has confirmed in the players list.
    pub players_tracked: usize,
    /// Player additions and removals not yet confirmed by the sidecar.
    pub players_pending: usize,
    /// Whether player tracking was turned off for good (no such list, or
    /// the call is not available).
    pub player_tracking_off: bool,
    /// The GameServer state last seen (`Ready`, `Allocated`, ...; empty
    /// before the first).
    pub gameserver_state: String,
}

/// The state behind a [`Link`](super::Link) and its tasks.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    /// The health stream's sender; `None` while none is open.
    pub(crate) health: Mutex<Option<mpsc::Sender<()>>>,
    sidecar_up: AtomicBool,
    pub(crate) health_pings: AtomicU64,
    pub(crate) health_pings_missed: AtomicU64,
    pub(crate) health_streams_opened: AtomicU64,
    pub(crate) health_streams_lost: AtomicU64,
    pub(crate) sdk_calls_failed: AtomicU64,
    pub(crate) watch_restarts: AtomicU64,
    pub(crate) players_tracked: AtomicUsize,
    pub(crate) players_pending: AtomicUsize,
    pub(crate) player_tracking_off: AtomicBool,
    gameserver_state: Mutex<String>,
    allocated_at: Mutex<Option<Instant>>,
}

/// Locks `mutex`, whatever a panicking holder left in it (the values here
/// are replaced whole, never left half-written).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    /// The state of a link whose sidecar just answered.
    pub(crate) fn connected() -> Self {
        Self {
            sidecar_up: AtomicBool::new(true),
            ..Self::default()
        }
    }

    /// Records a working exchange with the sidecar; logs its return.
    pub(crate) fn sidecar_answered(&self) {
        if !self.sidecar_up.swap(true, Ordering::SeqCst) {
            log::info!(target: TARGET, "the Agones sidecar answers again");
        }
    }

    /// Records that the sidecar could not be reached (`why`); logs the
    /// first time in a row. The match goes on meanwhile.
    pub(crate) fn sidecar_lost(&self, why: &str) {
        if self.sidecar_up.swap(false, Ordering::SeqCst) {
            log::warn!(
                target: TARGET,
                "lost the Agones sidecar ({why}); serving the players on, and retrying"
            );
        } else {
            log::debug!(target: TARGET, "the Agones sidecar is still away: {why}");
        }
    }

    /// Takes in a GameServer seen on the watch or read: its state, and
    /// the first time it is `Allocated`.
    pub(crate) fn observe(&self, gameserver: &GameServer) {
        let state = gameserver
            .status
            .as_ref()
            .map_or("", |status| status.state.as_str());
        {
            let mut last = lock(&self.gameserver_state);
            if *last != state {
                log::info!(target: TARGET, "GameServer state: {state}");
                state.clone_into(&mut last);
            }
        }
        if state == ALLOCATED {
            let mut allocated_at = lock(&self.allocated_at);
            if allocated_at.is_none() {
                *allocated_at = Some(Instant::now());
            }
        }
    }

    /// When the server was first seen `Allocated`.
    pub(crate) fn allocated_at(&self) -> Option<Instant> {
        *lock(&self.allocated_at)
    }

    /// The counters and states now.
    pub(crate) fn stats(&self) -> LinkStats {
        let get = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        LinkStats {
            sidecar_up: self.sidecar_up.load(Ordering::SeqCst),
            health_pings: get(&self.health_pings),
            health_pings_missed: get(&self.health_pings_missed),
            health_streams_opened: get(&self.health_streams_opened),
            health_streams_lost: get(&self.health_streams_lost),
            sdk_calls_failed: get(&self.sdk_calls_failed),
            watch_restarts: get(&self.watch_restarts),
            players_tracked: self.players_tracked.load(Ordering::Relaxed),
            players_pending: self.players_pending.load(Ordering::Relaxed),
            player_tracking_off: self.player_tracking_off.load(Ordering::Relaxed),
            gameserver_state: lock(&self.gameserver_state).clone(),
        }
    }
}
