//! Why a token history store file was not opened, or was not trusted.

use std::io;
use std::path::PathBuf;

/// Why a store file was not opened, or was not trusted. Every kind of
/// damage is refused, never read around.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Reading, writing or syncing failed.
    #[error("token history store: {0}")]
    Io(#[from] io::Error),
    /// Another open store holds the file's lock: another server (or
    /// another store in this process) uses it. One server per file.
    #[error("token history store is in use: {} is locked{}", .lock_file.display(), held_by(.holder))]
    Locked {
        /// The lock file beside the history file.
        lock_file: PathBuf,
        /// The process id of the holder, if it could be read.
        holder: Option<u32>,
    },
    /// The file does not start with the store's magic bytes.
    #[error("not a token history store")]
    NotAHistoryStore,
    /// The file is from another version of this format.
    #[error("token history store version {0} unknown")]
    UnsupportedVersion(u32),
    /// The header does not match its checksum.
    #[error("token history store header is corrupt")]
    CorruptHeader,
    /// Record `index` (from 0) does not match its checksum or holds no
    /// valid token.
    #[error("token history store record {index} is corrupt")]
    CorruptRecord {
        /// The record's index.
        index: u64,
    },
    /// The file ends inside the header or inside a record: cut short, or
    /// torn by a crash during a write.
    #[error("token history store is truncated at {length} bytes, after {records} records")]
    Truncated {
        /// The file's length in bytes.
        length: u64,
        /// Whole records before the cut.
        records: u64,
    },
}

/// Who holds a lock, as the end of a message: " by process 1234" when the
/// holder's process id could be read, nothing otherwise.
pub(crate) fn held_by(holder: &Option<u32>) -> HeldBy {
    HeldBy(*holder)
}

/// The [`Display`](std::fmt::Display) of [`held_by`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct HeldBy(Option<u32>);

impl std::fmt::Display for HeldBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(pid) => write!(f, " by process {pid}"),
            None => Ok(()),
        }
    }
}
