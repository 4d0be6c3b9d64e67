//! A durable store for a server's connect token history: the second restart
//! mitigation of STANDARD.md (*Nonce Reuse and Server Restarts*, "Persist
//! the connect token history").
//!
//! One file per server: a checksummed header, then one checksummed record
//! per used token, appended (the layout is in `format.rs`), and beside it a
//! lock file that keeps a second server off it (`lock.rs`); what can go
//! wrong is [`StoreError`] (`error.rs`).
//! [`HistoryStore::open`] takes the lock, reads the file back (refusing any
//! damage: a damaged file is replaced by a new one and the damage
//! reported), and compacts it (unexpired records only) before returning
//! the [`StoredHistory`] to start the server with. [`HistoryWriter`] runs a
//! store on a thread of its own, so that a server's loop never waits for
//! the disk, and commits the records that arrive together under one sync.
//!
//! # Wiring it into a server
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use netcode_std::history_store::{HistoryStore, HistoryWriter};
//! # let unix_now = netcode_std::unix_time();
//! # let path = std::path::Path::new("tokens.history");
//! // At start: restore (a damaged file is replaced, behind the restart rule).
//! let opened = HistoryStore::open(path, unix_now)?;
//! if let Some(damage) = &opened.replaced {
//!     eprintln!("token history: {damage}; started a new file");
//! }
//! let history = opened.history;
//! let mut writer = HistoryWriter::spawn(opened.store)?;
//! // core.start_restored(now, unix_now, max_clients, rng, &history.restored(), out)?;
//! // In the server's `Output`:
//! //   fn persist_used_token(&mut self, request: PersistRequest) {
//! //       self.writer.submit(request) // or, when full, report it failed
//! //   }
//! // and after each call into the core:
//! //   for (request, outcome) in writer.finished() {
//! //       core.token_persisted(now, request, outcome, out);
//! //   }
//! # let _ = (history, &mut writer);
//! # Ok(()) }
//! ```
//!
//! # Why a crash never lets a token repeat a nonce
//!
//! The server sends nothing under a new token's keys (no challenge, no
//! denial) before the store reports the token's record durable, and
//! [`HistoryStore::record_all`] reports that only after the records are
//! written and synced (`sync_data`). So at a crash, either the record is
//! durable, and the restarted server refuses the token from every address
//! until it expires, or it is not, and no packet was ever sent under the
//! token's keys, so a session after the restart is their first use. A
//! record torn by the crash is not durable by that argument; [`open`]
//! still refuses the file (a torn tail and a file cut short by other means
//! look alike) and starts a new one: its `recorded_since` is the new
//! start, so the restart rule covers every token the lost file held.
//! Compaction writes a new file beside the old one, syncs it and renames
//! it over the old one (then syncs the directory), so a crash during it
//! leaves one complete file or the other.
//!
//! The header keeps the latest second at which the file was written whole
//! (`latest_unix_seconds`): every record compaction left out had expired
//! by then, so a restarted server judges expiry against that second at
//! least, and a wall clock that stepped back cannot revive those tokens.
//!
//! This holds while the storage keeps what it synced, and while one server
//! alone writes the file, which the lock enforces.
//!
//! [`open`]: HistoryStore::open

mod error;
mod format;
mod lock;
mod writer;

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use netcode_proto::server::{RestoredHistory, UsedToken};

pub use error::StoreError;
pub(crate) use error::held_by;
use format::{HEADER_BYTES, Header, RECORD_BYTES};
use lock::StoreLock;
pub use writer::{HistoryWriter, WriterStats};

/// The history a store file held, for
/// [`Server::start_restored`](netcode_proto::server::Server::start_restored).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredHistory {
    /// Unix seconds since which the file holds every token recorded.
    pub recorded_since: u64,
    /// The latest unix second at which the file was written whole.
    pub latest_unix_seconds: u64,
    /// The unexpired tokens.
    pub tokens: Vec<UsedToken>,
}

impl StoredHistory {
    /// The history as the core server restores it.
    pub fn restored(&self) -> RestoredHistory<'_> {
        RestoredHistory {
            recorded_since: self.recorded_since,
            latest_unix_seconds: self.latest_unix_seconds,
            tokens: &self.tokens,
        }
    }
}

/// What [`HistoryStore::open`] found and made.
#[derive(Debug)]
pub struct Opened {
    /// The open store.
    pub store: HistoryStore,
    /// What it holds, to start the server with.
    pub history: StoredHistory,
    /// Why the file that was there was not trusted, when it was replaced by
    /// a new one (which begins now, so the restart rule covers what the old
    /// one held). Log it: a damaged file means lost records.
    pub replaced: Option<StoreError>,
}

/// An open store file, locked: records appended and synced in groups.
#[derive(Debug)]
pub struct HistoryStore {
    path: PathBuf,
    file: File,
    header: Header,
    /// The tokens of the file's records, in order: what compaction keeps.
    tokens: Vec<UsedToken>,
    /// A failed write that could not be undone: the next write rewrites
    /// the file whole first.
    damaged: bool,
    /// Held for as long as the store is open.
    _lock: StoreLock,
}

impl HistoryStore {
    /// Opens the store at `path`, or creates it (beginning at
    /// `unix_seconds`) if there is no file, after taking its lock
    /// ([`StoreError::Locked`] if another store holds it). An existing file
    /// is read whole and checked: a damaged one is moved aside (to the path
    /// with `.damaged` added, replacing an older one there) and replaced by
    /// a new store beginning at `unix_seconds` (see [`Opened::replaced`]);
    /// from a sound
    /// one, records of tokens expired at `unix_seconds` (or at the file's
    /// own latest second, if later) are dropped and the file is rewritten
    /// without them. Fails only on input and output errors and on the
    /// lock.
    pub fn open(path: impl AsRef<Path>, unix_seconds: u64) -> Result<Opened, StoreError> {
        let path = path.as_ref();
        let lock = StoreLock::acquire(path)?;
        let fresh = Header {
            recorded_since: unix_seconds,
            latest_unix_seconds: unix_seconds,
        };
        let mut bytes = Vec::new();
        let (header, tokens, replaced) = match File::open(path) {
            Ok(mut file) => {
                file.read_to_end(&mut bytes)?;
                match format::read_file(&bytes) {
                    Ok((header, tokens)) => (header, tokens, None),
                    Err(StoreError::Io(e)) => return Err(StoreError::Io(e)),
                    Err(damage) => {
                        // Kept aside as it was, for whoever wants to know
                        // what happened to it.
                        std::fs::rename(path, damaged_path(path))?;
                        (fresh, Vec::new(), Some(damage))
                    }
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => (fresh, Vec::new(), None),
            Err(e) => return Err(e.into()),
        };
        let (header, tokens) = compacted(header, tokens, unix_seconds);
        let file = write_file(path, &header, &tokens)?;
        let store = Self {
            path: path.to_path_buf(),
            file,
            header,
            tokens,
            damaged: false,
            _lock: lock,
        };
        let history = store.history();
        Ok(Opened {
            store,
            history,
            replaced,
        })
    }

    /// Appends a record of `token` and syncs it: [`record_all`](Self::record_all)
    /// for one token.
    pub fn record(&mut self, token: &UsedToken) -> io::Result<()> {
        self.record_all(std::slice::from_ref(token))
    }

    /// Appends a record of each of `tokens` and syncs them, with one write
    /// and one sync for all (a group commit): when this returns `Ok`, every
    /// one survives a crash. A failed write is undone if it can be; if not,
    /// the next call rewrites the file whole before appending.
    pub fn record_all(&mut self, tokens: &[UsedToken]) -> io::Result<()> {
        if self.damaged {
            self.rewrite()?;
        }
        let first = self.tokens.len() as u64;
        let mut bytes = Vec::with_capacity(tokens.len() * RECORD_BYTES);
        for (i, token) in tokens.iter().enumerate() {
            bytes.extend_from_slice(&format::record(token, first + i as u64));
        }
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
        self.tokens.extend_from_slice(tokens);
        Ok(())
    }

    /// Rewrites the file with the records of tokens unexpired at
    /// `unix_seconds` only, atomically, and notes `unix_seconds` as the
    /// latest second the file saw (if it is later than the one it has).
    pub fn compact(&mut self, unix_seconds: u64) -> io::Result<()> {
        let tokens = std::mem::take(&mut self.tokens);
        let (header, tokens) = compacted(self.header, tokens, unix_seconds);
        self.header = header;
        self.tokens = tokens;
        match write_file(&self.path, &self.header, &self.tokens) {
            Ok(file) => {
                self.file = file;
                self.damaged = false;
                Ok(())
            }
            Err(e) => {
                // The file at the path may now be the old one or the new
                // one: the next write rewrites it whole first.
                self.damaged = true;
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
        self.header.recorded_since
    }

    /// The latest unix second at which the file was written whole.
    pub fn latest_unix_seconds(&self) -> u64 {
        self.header.latest_unix_seconds
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
            recorded_since: self.header.recorded_since,
            latest_unix_seconds: self.header.latest_unix_seconds,
            tokens: self.tokens.clone(),
        }
    }

    /// Writes the file whole again, from what this store holds.
    fn rewrite(&mut self) -> io::Result<()> {
        self.compact(self.header.latest_unix_seconds)
    }
}

/// Where a damaged file at `path` is kept.
pub fn damaged_path(path: &Path) -> PathBuf {
    let mut damaged = path.as_os_str().to_owned();
    damaged.push(".damaged");
    PathBuf::from(damaged)
}

/// `tokens` under `header` without the records of tokens expired at
/// `unix_seconds` (or at the header's latest second, if later), one record
/// per token, and the header with its latest second brought forward.
fn compacted(
    header: Header,
    mut tokens: Vec<UsedToken>,
    unix_seconds: u64,
) -> (Header, Vec<UsedToken>) {
    let latest = header.latest_unix_seconds.max(unix_seconds);
    tokens.retain(|t| t.expire_timestamp > latest);
    tokens.sort_by_key(|t| t.mac);
    tokens.dedup_by_key(|t| t.mac);
    let header = Header {
        latest_unix_seconds: latest,
        ..header
    };
    (header, tokens)
}

/// Writes a whole file beside `path`, syncs it, renames it over `path`,
/// syncs the directory, and opens the result for appending.
fn write_file(path: &Path, header: &Header, tokens: &[UsedToken]) -> io::Result<File> {
    let mut bytes = Vec::with_capacity(HEADER_BYTES + tokens.len() * RECORD_BYTES);
    bytes.extend_from_slice(&format::header(header));
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
    OpenOptions::new().append(true).open(path)
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
