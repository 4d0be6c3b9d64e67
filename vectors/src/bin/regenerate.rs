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

use netcode_vectors::{data_dir, write_bin_files};

fn main() -> ExitCode {
    let dir = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(data_dir);
    match write_bin_files(&dir) {
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
