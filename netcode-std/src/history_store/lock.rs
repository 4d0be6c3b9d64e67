//! One server per history file: an exclusive advisory lock on a lock file
//! beside it, held for as long as the store is open (STANDARD.md: none;
//! the durable history's crash argument assumes a single writer).
//!
//! The lock is taken on `<file>.lock`, not on the history file itself,
//! because compaction renames a new file over the history file: a lock on
//! the old file would not cover the new one. The lock file is never
//! renamed or removed, so every server that opens the same history file
//! contends for the same lock.
//!
//! The lock is the operating system's (`flock` on Unix, `LockFileEx` on
//! Windows, through [`File::try_lock`]): it belongs to the open file, so
//! the kernel releases it when the process exits, `kill -9` included, and
//! no stale lock is ever left behind. The holder writes its process id
//! into the lock file, so a refused server can say who holds it. Advisory
//! locks on network file systems are only as good as the file system's
//! support for them: keep history files on local disks.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::error::StoreError;

/// The lock of one history file, held until dropped.
#[derive(Debug)]
pub(super) struct StoreLock {
    /// The open lock file: the lock lives as long as it does.
    _file: File,
}

/// The lock file of the history file at `path`.
pub(super) fn lock_path(path: &Path) -> PathBuf {
    let mut lock = path.as_os_str().to_owned();
    lock.push(".lock");
    PathBuf::from(lock)
}

impl StoreLock {
    /// Takes the lock of the history file at `path`, without waiting:
    /// [`StoreError::Locked`] if another open store (in this process or
    /// another) holds it.
    pub(super) fn acquire(path: &Path) -> Result<Self, StoreError> {
        let lock_path = lock_path(path);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(StoreError::Locked {
                    lock_file: lock_path,
                    holder: holder(&mut file),
                });
            }
            Err(TryLockError::Error(e)) => return Err(e.into()),
        }
        // Who holds it, for the next server refused; best effort, since
        // the lock itself is what excludes.
        let _ = file
            .set_len(0)
            .and_then(|()| file.seek(SeekFrom::Start(0)))
            .and_then(|_| writeln!(file, "{}", std::process::id()));
        Ok(Self { _file: file })
    }
}

/// The process id the holder of a lock wrote into its lock file, if it
/// can be read.
fn holder(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    file.take(32).read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}
