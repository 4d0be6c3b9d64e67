//! # netcode-vectors
//!
//! Golden wire vectors for the netcode 1.02 protocol, made by the C reference
//! implementation, and the code that holds `netcode-proto` to them.
//!
//! A vector set is a directory with a `manifest.json` and one `.bin` file per
//! manifest entry. The manifest lists, for each file, every input that went
//! into it (ids, timestamps, addresses, keys, nonces, payloads, ...).
//!
//! * [`manifest`] parses `manifest.json` into typed values, refusing unknown
//!   kinds and unknown fields, and writes typed values back as JSON.
//! * [`encode`](mod@encode) rebuilds the bytes of an entry from its fields alone, with
//!   `netcode-proto`'s writers and AEADs.
//! * [`decode`](mod@decode) reads the bytes of an entry back with `netcode-proto`'s
//!   readers (decrypting where the entry is encrypted) and compares every
//!   field with the manifest.
//! * [`generate`] makes a second conforming set with other values, so that
//!   the tests can show they hold for any set, not only the reference one.
//! * [`hex`] is the small hex codec the manifest needs.
//!
//! This crate's `data/` directory holds our own copy of the set: the
//! manifest copied from the reference set, and every `.bin` file written by
//! `cargo run -p netcode-vectors --bin regenerate`, that is by our encoder.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

pub mod decode;
pub mod encode;
pub mod generate;
pub mod hex;
pub mod manifest;

pub use decode::verify;
pub use encode::encode;
pub use manifest::{Kind, Manifest, Vector};

/// Why a manifest could not be read, an entry could not be encoded, or a
/// vector does not match its manifest entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    message: String,
}

impl Error {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// The same error, with `context` in front of its message.
    pub fn context(self, context: impl fmt::Display) -> Self {
        Self {
            message: format!("{context}: {}", self.message),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// The result type of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// This crate's committed copy of the vector set: `<crate>/data`.
pub fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data")
}

/// The name of the manifest file in a vector set directory.
pub const MANIFEST_FILE: &str = "manifest.json";

/// Writes the `.bin` file of every entry of `<dir>/manifest.json`, encoded
/// from the entry's fields alone; returns how many it wrote.
///
/// Every entry is encoded before any file is written, so a failure leaves
/// the directory as it was. No `.bin` file is read.
pub fn write_bin_files(dir: &Path) -> Result<usize> {
    let path = dir.join(MANIFEST_FILE);
    let text = std::fs::read(&path)
        .map_err(|e| Error::new(format!("cannot read {}: {e}", path.display())))?;
    let manifest = Manifest::parse(&text)?;
    if manifest.vectors.len() != manifest.vector_count {
        return Err(Error::new(format!(
            "the manifest lists {} vectors but vector_count is {}",
            manifest.vectors.len(),
            manifest.vector_count
        )));
    }
    let mut outputs = Vec::with_capacity(manifest.vectors.len());
    for vector in &manifest.vectors {
        let bytes = encode(vector).map_err(|e| e.context(&vector.name))?;
        outputs.push((dir.join(&vector.file), bytes));
    }
    for (path, bytes) in &outputs {
        std::fs::write(path, bytes)
            .map_err(|e| Error::new(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(outputs.len())
}

/// A vector set on disk (its directory and its parsed manifest), or held
/// in memory ([`VectorSet::from_memory`]).
#[derive(Debug, Clone)]
pub struct VectorSet {
    /// The directory holding `manifest.json` and the `.bin` files (for a
    /// set in memory, only a name for messages).
    pub dir: PathBuf,
    /// The raw bytes of `manifest.json`.
    pub manifest_bytes: Vec<u8>,
    /// The parsed manifest.
    pub manifest: Manifest,
    /// The files of a set held in memory, by file name; `None` on disk.
    files: Option<BTreeMap<String, Vec<u8>>>,
}

impl VectorSet {
    /// Reads and parses `<dir>/manifest.json`.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Self> {
        let dir = dir.into();
        let path = dir.join(MANIFEST_FILE);
        let manifest_bytes = std::fs::read(&path)
            .map_err(|e| Error::new(format!("cannot read {}: {e}", path.display())))?;
        let manifest = Manifest::parse(&manifest_bytes)
            .map_err(|e| e.context(format!("manifest {}", path.display())))?;
        Ok(Self {
            dir,
            manifest_bytes,
            manifest,
            files: None,
        })
    }

    /// A set held in memory: the bytes of its `manifest.json` and its
    /// files by name, for targets without a file system (the browser tests
    /// of `netcode-browser` embed a set this way). `name` stands for the
    /// directory in messages. Reading an entry reads `files`; nothing
    /// touches the disk.
    pub fn from_memory(
        name: impl Into<PathBuf>,
        manifest_bytes: Vec<u8>,
        files: BTreeMap<String, Vec<u8>>,
    ) -> Result<Self> {
        let dir = name.into();
        let manifest = Manifest::parse(&manifest_bytes)
            .map_err(|e| e.context(format!("manifest of {}", dir.display())))?;
        Ok(Self {
            dir,
            manifest_bytes,
            manifest,
            files: Some(files),
        })
    }

    /// The path of an entry's file.
    pub fn path(&self, vector: &Vector) -> PathBuf {
        self.dir.join(&vector.file)
    }

    /// The bytes of an entry's file.
    pub fn read(&self, vector: &Vector) -> Result<Vec<u8>> {
        let path = self.path(vector);
        if let Some(files) = &self.files {
            return files
                .get(&vector.file)
                .cloned()
                .ok_or_else(|| Error::new(format!("no file {} in the set", path.display())));
        }
        std::fs::read(&path).map_err(|e| Error::new(format!("cannot read {}: {e}", path.display())))
    }

    /// The entry called `name` (the names `*_vector` fields refer to).
    pub fn vector(&self, name: &str) -> Result<&Vector> {
        self.manifest
            .vectors
            .iter()
            .find(|v| v.name == name)
            .ok_or_else(|| Error::new(format!("no vector named {name:?} in the manifest")))
    }

    /// The bytes of the file of the entry called `name`.
    pub fn read_named(&self, name: &str) -> Result<Vec<u8>> {
        self.read(self.vector(name)?)
    }

    /// The names of the `.bin` files present in the directory, sorted.
    pub fn bin_files(&self) -> Result<Vec<String>> {
        if let Some(files) = &self.files {
            // A BTreeMap's keys come sorted.
            return Ok(files
                .keys()
                .filter(|name| name.ends_with(".bin"))
                .cloned()
                .collect());
        }
        let entries = std::fs::read_dir(&self.dir)
            .map_err(|e| Error::new(format!("cannot list {}: {e}", self.dir.display())))?;
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry
                .map_err(|e| Error::new(format!("cannot list {}: {e}", self.dir.display())))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".bin") {
                names.push(name);
            }
        }
        names.sort();
        Ok(names)
    }
}
