//! A history store on a thread of its own: records written off the
//! server's loop, in group commits (STANDARD.md: *Nonce Reuse and Server
//! Restarts*, "Persist the connect token history"; the exchange with the
//! core is described in netcode-proto's `server/persist.rs`).
//!
//! The server's loop hands each [`PersistRequest`] to
//! [`HistoryWriter::submit`], which only queues it, and later takes the
//! finished ones back with [`HistoryWriter::finished`], to hand to the core.
//! The writer thread takes everything queued when it is free, writes it
//! with one write and one sync ([`HistoryStore::record_all`]), and reports
//! every request of the group with the group's outcome; requests that
//! arrive during a sync wait for the next one. So the loop never waits for
//! the disk (its only waits are for a lock the thread holds while moving a
//! list), and under load the number of syncs per second stays what the
//! disk allows while the records per sync grow.
//!
//! At most [`MAX_IN_FLIGHT`](HistoryWriter::MAX_IN_FLIGHT) requests are
//! queued or being written at once: beyond that, `submit` hands the
//! request back, and the host reports it failed to the core, whose next
//! request for that token asks again. Clients retry their requests ten
//! times a second, so a disk that falls behind delays new connections and
//! nothing else.

use std::io;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use netcode_proto::server::{PersistOutcome, PersistRequest, UsedToken};

use super::{HistoryStore, StoredHistory};

/// Counters of a [`HistoryWriter`]'s work.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriterStats {
    /// Records made durable.
    pub records_durable: u64,
    /// Groups written and synced: one write and one sync each.
    pub syncs: u64,
    /// Records whose group failed to be written or synced.
    pub records_failed: u64,
    /// Requests handed back by `submit` because the writer was full.
    pub requests_refused: u64,
    /// Compactions done.
    pub compactions: u64,
    /// Compactions that failed.
    pub compactions_failed: u64,
}

/// A [`HistoryStore`] written by a thread of its own (see the module
/// documentation).
#[derive(Debug)]
pub struct HistoryWriter {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    /// Requests submitted and not yet taken back finished.
    in_flight: usize,
    /// Finished requests moved out of the shared state, handed out by
    /// `finished`.
    taken: Vec<(PersistRequest, PersistOutcome)>,
}

#[derive(Debug)]
struct Shared {
    work: Mutex<Work>,
    wake: Condvar,
    store: Mutex<HistoryStore>,
}

/// What the loop and the thread hand each other.
#[derive(Debug, Default)]
struct Work {
    queued: Vec<PersistRequest>,
    finished: Vec<(PersistRequest, PersistOutcome)>,
    compact_at: Option<u64>,
    shutdown: bool,
    stats: WriterStats,
    error: Option<io::Error>,
}

/// A lock, whether or not a thread panicked holding it: every state
/// behind these locks is whole between statements.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl HistoryWriter {
    /// Requests queued or being written at most: 4096 (about 1.6 MB of
    /// requests).
    pub const MAX_IN_FLIGHT: usize = 4096;

    /// Starts the thread that writes `store`.
    pub fn spawn(store: HistoryStore) -> io::Result<Self> {
        let shared = Arc::new(Shared {
            work: Mutex::new(Work::default()),
            wake: Condvar::new(),
            store: Mutex::new(store),
        });
        let thread = std::thread::Builder::new()
            .name("netcode-history".into())
            .spawn({
                let shared = Arc::clone(&shared);
                move || write_loop(&shared)
            })?;
        Ok(Self {
            shared,
            thread: Some(thread),
            in_flight: 0,
            taken: Vec::new(),
        })
    }

    /// Queues `request` to be written in the next group, or hands it back
    /// when [`MAX_IN_FLIGHT`](Self::MAX_IN_FLIGHT) requests are in flight
    /// (or the writer has stopped).
    #[allow(
        clippy::result_large_err,
        reason = "the request is handed back whole, as a channel's try_send does; boxing it would allocate per token"
    )]
    pub fn submit(&mut self, request: PersistRequest) -> Result<(), PersistRequest> {
        let mut work = lock(&self.shared.work);
        if self.in_flight >= Self::MAX_IN_FLIGHT || work.shutdown || self.thread.is_none() {
            work.stats.requests_refused += 1;
            return Err(request);
        }
        work.queued.push(request);
        drop(work);
        self.in_flight += 1;
        self.shared.wake.notify_one();
        Ok(())
    }

    /// The requests finished since the last call, durable or failed, in
    /// the order they were submitted.
    pub fn finished(&mut self) -> std::vec::Drain<'_, (PersistRequest, PersistOutcome)> {
        self.taken.clear();
        if self.in_flight > 0 {
            let mut work = lock(&self.shared.work);
            std::mem::swap(&mut work.finished, &mut self.taken);
        }
        self.in_flight -= self.taken.len().min(self.in_flight);
        self.taken.drain(..)
    }

    /// Requests submitted and not yet returned by
    /// [`finished`](Self::finished).
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Asks the thread to compact the file at `unix_seconds` (see
    /// [`HistoryStore::compact`]) after its current group.
    pub fn compact(&mut self, unix_seconds: u64) {
        lock(&self.shared.work).compact_at = Some(unix_seconds);
        self.shared.wake.notify_one();
    }

    /// What the file holds now, to start a server with. Waits for a group
    /// being written to finish.
    pub fn history(&self) -> StoredHistory {
        lock(&self.shared.store).history()
    }

    /// The file's path.
    pub fn path(&self) -> std::path::PathBuf {
        lock(&self.shared.store).path().to_path_buf()
    }

    /// The counters so far.
    pub fn stats(&self) -> WriterStats {
        lock(&self.shared.work).stats
    }

    /// The last write, sync or compaction error not yet taken, if any (for
    /// a host's log).
    pub fn take_error(&mut self) -> Option<io::Error> {
        lock(&self.shared.work).error.take()
    }
}

impl Drop for HistoryWriter {
    /// Writes what is queued, then stops the thread and closes the store
    /// (releasing its lock).
    fn drop(&mut self) {
        lock(&self.shared.work).shutdown = true;
        self.shared.wake.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The thread: waits for work, writes each group with one sync, compacts
/// when asked, and stops once shut down with nothing queued.
fn write_loop(shared: &Shared) {
    let mut tokens: Vec<UsedToken> = Vec::new();
    loop {
        let (group, compact_at) = {
            let mut work = lock(&shared.work);
            while work.queued.is_empty() && work.compact_at.is_none() && !work.shutdown {
                work = shared
                    .wake
                    .wait(work)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            if work.queued.is_empty() && work.compact_at.is_none() {
                return;
            }
            (std::mem::take(&mut work.queued), work.compact_at.take())
        };
        if !group.is_empty() {
            tokens.clear();
            tokens.extend(group.iter().map(|request| *request.token()));
            let written = lock(&shared.store).record_all(&tokens);
            let mut work = lock(&shared.work);
            let count = group.len() as u64;
            let outcome = match written {
                Ok(()) => {
                    work.stats.records_durable += count;
                    work.stats.syncs += 1;
                    PersistOutcome::Durable
                }
                Err(e) => {
                    work.stats.records_failed += count;
                    work.error = Some(e);
                    PersistOutcome::Failed
                }
            };
            work.finished
                .extend(group.into_iter().map(|request| (request, outcome)));
        }
        if let Some(unix_seconds) = compact_at {
            let compacted = lock(&shared.store).compact(unix_seconds);
            let mut work = lock(&shared.work);
            match compacted {
                Ok(()) => work.stats.compactions += 1,
                Err(e) => {
                    work.stats.compactions_failed += 1;
                    work.error = Some(e);
                }
            }
        }
    }
}
