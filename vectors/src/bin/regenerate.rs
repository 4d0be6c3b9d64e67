//! Writes every `.bin` file of this crate's vector set from its manifest.
//!
//! ```text
//! cargo run -p netcode-vectors --bin regenerate [DIR]
//! ```
//!
//! Reads `DIR/manifest.json` (default: this crate's `data/` directory) and,
//! for each entry, encodes the bytes from the entry's fields alone with
//! `netcode-proto` and writes them to `DIR/<file>`. No `.bin` file is ever
//! read or copied: the output is our implementation's, and the tests then
//! compare it with the reference set.

use std::path::PathBuf;
use std::process::ExitCode;

use netcode_vectors::{MANIFEST_FILE, Manifest, data_dir, encode};

fn main() -> ExitCode {
    let dir = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(data_dir);
    match run(&dir) {
        Ok(count) => {
            println!("wrote {count} vectors to {}", dir.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("regenerate: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(dir: &std::path::Path) -> Result<usize, String> {
    let manifest_path = dir.join(MANIFEST_FILE);
    let text = std::fs::read(&manifest_path)
        .map_err(|e| format!("cannot read {}: {e}", manifest_path.display()))?;
    let manifest = Manifest::parse(&text).map_err(|e| e.to_string())?;
    if manifest.vectors.len() != manifest.vector_count {
        return Err(format!(
            "the manifest lists {} vectors but vector_count is {}",
            manifest.vectors.len(),
            manifest.vector_count
        ));
    }
    // Encode everything first, so a failure leaves the directory untouched.
    let mut outputs = Vec::with_capacity(manifest.vectors.len());
    for vector in &manifest.vectors {
        let bytes = encode(vector).map_err(|e| format!("{}: {e}", vector.name))?;
        outputs.push((dir.join(&vector.file), bytes));
    }
    for (path, bytes) in &outputs {
        std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(outputs.len())
}
