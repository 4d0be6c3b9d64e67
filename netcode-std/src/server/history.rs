//! The server's token history file (`ServerConfig::token_history_file`):
//! opening it, sizing the core's history to what it holds, handing the
//! core's records to the writer thread and the finished ones back, and
//! compacting it (STANDARD.md: *Nonce Reuse and Server Restarts*,
//! "Persist the connect token history"; the store is
//! [`history_store`](crate::history_store)).
//!
//! A server with a file always starts with its history restored and
//! records every token it admits: there is no mode in which it runs on
//! without recording. A file too large to restore, or locked by another
//! server, stops the server from being made, with a typed error.

use std::collections::VecDeque;
use std::path::Path;
use std::time::Duration;

use netcode_proto::server::{PersistOutcome, PersistRequest, TOKENS_PER_SLOT, TokenHistorySize};

use crate::error::CreateError;
use crate::history_store::{HistoryStore, HistoryWriter, StoreError};
use crate::logging::TARGET;
use crate::time::unix_time;

use super::config::MAX_CLIENTS;

/// The most unexpired tokens a history file may hold for a server to be
/// made with it: eight times the largest history a server of this crate
/// keeps ([`MAX_CLIENTS`] slots × 8 tokens), about 15 MB of history
/// entries. A file written by servers of this crate stays far below it;
/// beyond it, [`CreateError::TokenHistoryTooLarge`] says what to change.
pub const MAX_RESTORED_TOKENS: usize = 8 * MAX_CLIENTS * TOKENS_PER_SLOT;

/// Held requests answered in one host call at most: a group commit of
/// thousands of records is answered over several calls (each a few
/// milliseconds at most), not in one long one.
const ANSWERS_PER_CALL: usize = 256;

/// How often, in unix seconds, the token history file is compacted.
const COMPACTION_SECONDS: u64 = 60;

/// How soon an event loop should look again while records are being
/// written, so that a durable record's held request is answered promptly.
pub(crate) const RECORD_POLL: Duration = Duration::from_millis(2);

/// The server's side of its history file.
#[derive(Debug)]
pub(crate) struct HistoryFile {
    pub(crate) writer: HistoryWriter,
    /// Requests the writer could not take, to be reported failed.
    pub(crate) refused: Vec<PersistRequest>,
    /// Finished requests on their way back to the core, oldest first.
    settled: VecDeque<(PersistRequest, PersistOutcome)>,
    /// Unix time at which the file is next compacted.
    next_compaction: u64,
}

impl HistoryFile {
    /// Opens (or creates) the history file at `path` and starts its
    /// writer. A damaged file is replaced, with a warning; one holding more
    /// unexpired tokens than [`MAX_RESTORED_TOKENS`] is refused.
    pub(crate) fn open(path: &Path) -> Result<Self, CreateError> {
        let unix = unix_time();
        let failed = |source| CreateError::TokenHistory {
            path: path.to_path_buf(),
            source,
        };
        let opened = match HistoryStore::open(path, unix) {
            Ok(opened) => opened,
            Err(StoreError::Io(e)) => return Err(failed(e)),
            Err(StoreError::Locked { lock_file, holder }) => {
                return Err(CreateError::TokenHistoryLocked {
                    path: path.to_path_buf(),
                    lock_file,
                    holder,
                });
            }
            Err(other) => return Err(failed(std::io::Error::other(other.to_string()))),
        };
        if let Some(damage) = &opened.replaced {
            log::warn!(
                target: TARGET,
                "token history file {}: {damage}; started a new one (the restart rule covers what it held)",
                path.display()
            );
        }
        let unexpired = opened.history.restored().unexpired(unix);
        if unexpired > MAX_RESTORED_TOKENS {
            let last_expiry = opened
                .history
                .tokens
                .iter()
                .map(|t| t.expire_timestamp)
                .max()
                .unwrap_or(0);
            return Err(CreateError::TokenHistoryTooLarge {
                path: path.to_path_buf(),
                unexpired,
                limit: MAX_RESTORED_TOKENS,
                last_expiry,
            });
        }
        let writer = HistoryWriter::spawn(opened.store).map_err(failed)?;
        Ok(Self {
            writer,
            refused: Vec::new(),
            settled: VecDeque::new(),
            next_compaction: unix.saturating_add(COMPACTION_SECONDS),
        })
    }

    /// Moves every finished request (and every refused one, as failed) to
    /// `settled`, logging write failures and refusals at most once a
    /// second.
    pub(crate) fn collect(&mut self, log: &mut crate::logging::DropLog) {
        if let Some(e) = self.writer.take_error() {
            log.history_failure(&self.writer.path(), &e);
        }
        if !self.refused.is_empty() {
            let full = format_args!(
                "{} records waiting to be written: new tokens are refused until the disk catches up",
                HistoryWriter::MAX_IN_FLIGHT
            );
            log.history_failure(&self.writer.path(), &full);
        }
        self.settled.extend(self.writer.finished());
        self.settled.extend(
            self.refused
                .drain(..)
                .map(|request| (request, PersistOutcome::Failed)),
        );
    }

    /// The next finished request to hand to the core, if this call has not
    /// handed [`ANSWERS_PER_CALL`] already (`answered` counts them).
    pub(crate) fn next_settled(
        &mut self,
        answered: &mut usize,
    ) -> Option<(PersistRequest, PersistOutcome)> {
        if *answered >= ANSWERS_PER_CALL {
            return None;
        }
        *answered += 1;
        self.settled.pop_front()
    }

    /// Asks the writer to compact the file, once a minute of unix time.
    pub(crate) fn compact_when_due(&mut self, unix: u64) {
        if unix >= self.next_compaction {
            self.next_compaction = unix.saturating_add(COMPACTION_SECONDS);
            self.writer.compact(unix);
        }
    }

    /// Records handed to the writer whose requests are not answered yet.
    pub(crate) fn pending(&self) -> usize {
        self.writer.in_flight() + self.refused.len() + self.settled.len()
    }

    /// How soon an event loop should call the server again for the file's
    /// sake: at once while finished records wait to be answered, within
    /// [`RECORD_POLL`] while records are being written, or whenever.
    pub(crate) fn poll_limit(&self) -> Option<Duration> {
        if !self.settled.is_empty() || !self.refused.is_empty() {
            Some(Duration::ZERO)
        } else if self.writer.in_flight() > 0 {
            Some(RECORD_POLL)
        } else {
            None
        }
    }
}

/// The history size a server of `max_clients` slots needs when `restored`
/// entries are taken by a restored history's unexpired tokens: the usual
/// size, plus room for those.
pub(crate) fn history_size(max_clients: usize, restored: usize) -> TokenHistorySize {
    let usual = TokenHistorySize::REFERENCE;
    TokenHistorySize {
        minimum: usual.entries(max_clients).saturating_add(restored),
        ..usual
    }
}
