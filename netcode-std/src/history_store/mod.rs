//! A durable store for a server's connect token history: the second restart
//! mitigation of STANDARD.md (*Nonce Reuse and Server Restarts*, "Persist
//! the connect token history").
//!
//! One file per server: a checksummed header, then one checksummed record
//! per used token, appended (the layout is in `format.rs`). [`open`]
//! creates it, or reads it back, refusing any damage with a typed
//! [`StoreError`], and compacts it (unexpired records only) before
//! returning the [`StoredHistory`] to start the server with.
//!
//! # Wiring it into a server
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use netcode_std::history_store::{HistoryStore, StoreError};
//! # let unix_now = netcode_std::unix_time();
//! # let path = std::path::Path::new("tokens.history");
//! // At start: restore, or start fresh behind the restart rule.
//! let (store, history) = match HistoryStore::open(path, unix_now) {
//!     Ok(opened) => opened,
//!     // Damaged: never trusted. A new store begins now, which keeps the
//!     // restart rule in force for one token lifetime.
//!     Err(StoreError::Io(e)) => return Err(e.into()),
//!     Err(_) => HistoryStore::create(path, unix_now)?,
//! };
//! // core.start_restored(now, unix_now, max_clients, rng, &history.restored(), out)?;
//! // and in the server's `Output`:
//! //   fn persist_used_token(&mut self, token: &UsedToken) -> bool {
//! //       self.store.record(token).is_ok()
//! //   }
//! // and now and then (for example once a minute): store.compact(unix_now).
//! # let _ = (store, history);
//! # Ok(()) }
//! ```
//!
//! # Why a crash never lets a token repeat a nonce
//!
//! The server sends nothing under a new token's keys (no challenge, no
//! denial) before [`HistoryStore::record`] has returned `Ok`, and `record`
//! returns only after the record is written and synced (`sync_data`). So
//! at a crash, either the record is durable, and the restarted server
//! refuses the token from every address until it expires, or it is not, and
//! no packet was ever sent under the token's keys, so a session after the
//! restart is their first use. A record torn by the crash is not durable by
//! that argument; [`open`] still refuses the file (a torn tail and a file cut
//! short by other means look alike), and the host starts a new store
//! ([`HistoryStore::create`]): its `recorded_since` is the new start, so the
//! restart rule covers every token the lost file held. Compaction writes a
//! new file beside the old one, syncs it and renames it over the old one
//! (then syncs the directory), so a crash during it leaves one complete
//! file or the other.
//!
//! This holds while the storage keeps what it synced, and while one server
//! alone writes the file.
//!
//! [`open`]: HistoryStore::open

mod format;

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use netcode_proto::server::{RestoredHistory, UsedToken};

use format::{HEADER_BYTES, RECORD_BYTES};

/// Why a store file was not opened. Every kind of damage is refused, never
/// read around.
#[derive(Debug)]
pub enum StoreError {
    /// Reading, writing or syncing failed.
    Io(io::Error),
    /// The file does not start with the store's magic bytes.
    NotAHistoryStore,
    /// The file is from another version of this format.
    UnsupportedVersion(u32),
    /// The header does not match its checksum.
    CorruptHeader,
    /// Record `index` (from 0) does not match its checksum or holds no
    /// valid token.
    CorruptRecord {
        /// The record's index.
        index: u64,
    },
    /// The file ends inside the header or inside a record: cut short, or
    /// torn by a crash during a write.
    Truncated {
        /// The file's length in bytes.
        length: u64,
        /// Whole records before the cut.
        records: u64,
    },
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Io(e) => write!(f, "token history store: {e}"),
            Self::NotAHistoryStore => f.write_str("not a token history store"),
            Self::UnsupportedVersion(v) => write!(f, "token history store version {v} unknown"),
            Self::CorruptHeader => f.write_str("token history store header is corrupt"),
            Self::CorruptRecord { index } => {
                write!(f, "token history store record {index} is corrupt")
            }
            Self::Truncated { length, records } => write!(
                f,
                "token history store is truncated at {length} bytes, after {records} records"
            ),
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for StoreError {
    fn from(e: io::Error) -> Self {
        Self::Io(e)
    }
}

/// The history a store file held, for
/// [`Server::start_restored`](netcode_proto::server::Server::start_restored).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredHistory {
    /// Unix seconds since which the file holds every token recorded.
    pub recorded_since: u64,
    /// The unexpired tokens.
    pub tokens: Vec<UsedToken>,
}

impl StoredHistory {
    /// The history as the core server restores it.
    pub fn restored(&self) -> RestoredHistory<'_> {
        RestoredHistory {
            recorded_since: self.recorded_since,
            tokens: &self.tokens,
        }
    }
}

/// An open store file: records appended and synced one by one.
#[derive(Debug)]
pub struct HistoryStore {
    path: PathBuf,
    file: File,
    recorded_since: u64,
    /// The tokens of the file's records, in order: what compaction keeps.
    tokens: Vec<UsedToken>,
    /// A failed write that could not be undone: every later record fails.
    damaged: bool,
}

impl HistoryStore {
    /// Opens the store at `path`, or creates it (beginning at
    /// `unix_seconds`) if there is no file. An existing file is read whole
    /// and checked; records of tokens expired at `unix_seconds` are dropped
    /// and the file is rewritten without them.
    pub fn open(
        path: impl AsRef<Path>,
        unix_seconds: u64,
    ) -> Result<(Self, StoredHistory), StoreError> {
        let path = path.as_ref();
        let mut bytes = Vec::new();
        match File::open(path) {
            Ok(mut file) => file.read_to_end(&mut bytes)?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Ok(Self::create(path, unix_seconds)?);
            }
            Err(e) => return Err(e.into()),
        };
        let (recorded_since, mut tokens) = format::read_file(&bytes)?;
        tokens.retain(|t| t.expire_timestamp > unix_seconds);
        tokens.sort_by_key(|t| t.mac);
        tokens.dedup_by_key(|t| t.mac);
        let store = Self::write_new(path, recorded_since, tokens)?;
        let history = store.history();
        Ok((store, history))
    }

    /// Creates an empty store at `path` that begins at `unix_seconds`,
    /// replacing any file there (for a file [`open`](Self::open) refused),
    /// and its empty history.
    pub fn create(path: impl AsRef<Path>, unix_seconds: u64) -> io::Result<(Self, StoredHistory)> {
        let store = Self::write_new(path.as_ref(), unix_seconds, Vec::new())?;
        let history = store.history();
        Ok((store, history))
    }

    /// Appends a record of `token` and syncs it: when this returns `Ok`,
    /// the record survives a crash. A failed write is undone if it can be;
    /// if not, this and every later call fail, and the store must be opened
    /// again.
    pub fn record(&mut self, token: &UsedToken) -> io::Result<()> {
        if self.damaged {
            return Err(io::Error::other(
                "token history store damaged by a failed write",
            ));
        }
        let bytes = format::record(token, self.tokens.len() as u64);
        let written = self
            .file
            .write_all(&bytes)
            .and_then(|()| self.file.sync_data());
        if let Err(e) = written {
            let length = (HEADER_BYTES + self.tokens.len() * RECORD_BYTES) as u64;
            if self.file.set_len(length).is_err() {
                self.damaged = true;
            }
            return Err(e);
        }
        self.tokens.push(*token);
        Ok(())
    }

    /// Rewrites the file with the records of tokens unexpired at
    /// `unix_seconds` only, atomically.
    pub fn compact(&mut self, unix_seconds: u64) -> io::Result<()> {
        let mut tokens = std::mem::take(&mut self.tokens);
        tokens.retain(|t| t.expire_timestamp > unix_seconds);
        let result = Self::write_new(&self.path, self.recorded_since, tokens.clone());
        match result {
            Ok(fresh) => {
                *self = fresh;
                Ok(())
            }
            Err(e) => {
                self.tokens = tokens;
                Err(e)
            }
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Unix seconds since which the file holds every token recorded.
    pub fn recorded_since(&self) -> u64 {
        self.recorded_since
    }

    /// Records in the file.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Whether the file holds no record.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// What the file holds now, to start (or restart) a server with.
    pub fn history(&self) -> StoredHistory {
        StoredHistory {
            recorded_since: self.recorded_since,
            tokens: self.tokens.clone(),
        }
    }

    /// Writes a whole file beside `path`, syncs it, renames it over `path`,
    /// syncs the directory, and opens the result for appending.
    fn write_new(path: &Path, recorded_since: u64, tokens: Vec<UsedToken>) -> io::Result<Self> {
        let mut bytes = Vec::with_capacity(HEADER_BYTES + tokens.len() * RECORD_BYTES);
        bytes.extend_from_slice(&format::header(recorded_since));
        for (i, token) in tokens.iter().enumerate() {
            bytes.extend_from_slice(&format::record(token, i as u64));
        }
        let mut scratch = path.as_os_str().to_owned();
        scratch.push(".new");
        let scratch = PathBuf::from(scratch);
        {
            let mut file = File::create(&scratch)?;
            file.write_all(&bytes)?;
            file.sync_all()?;
        }
        std::fs::rename(&scratch, path)?;
        sync_directory(path)?;
        let file = OpenOptions::new().append(true).open(path)?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
            recorded_since,
            tokens,
            damaged: false,
        })
    }
}

/// Syncs the directory holding `path`, so a rename into it is durable.
#[cfg(unix)]
fn sync_directory(path: &Path) -> io::Result<()> {
    let directory = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    File::open(directory)?.sync_all()
}

/// Directories cannot be opened for syncing here; the rename is as durable
/// as the platform makes it.
#[cfg(not(unix))]
fn sync_directory(_path: &Path) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests;
