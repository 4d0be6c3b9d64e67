//! Embeds a golden vector set for the browser tests (tests/it/web.rs), which
//! have no file system to read one from.
//!
//! The set is the directory `NETCODE_REFERENCE_VECTORS` names (an absolute
//! path: the C reference's set in CI), or else the workspace's own copy,
//! `vectors/data`. Its `manifest.json` and every `.bin` file in it go into
//! `$OUT_DIR/embedded_vectors.rs` as `include_bytes!`; the tests iterate
//! the manifest, so nothing here knows the names or the number of entries.
//!
//! A named directory that is missing or has no manifest fails the build,
//! loudly. When the variable is unset and `vectors/data` is not there (a
//! packaged crate), an empty set is embedded and the vector test fails
//! saying so; the library itself never uses the set.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=NETCODE_REFERENCE_VECTORS");
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let manifest_dir = PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    );
    let source = match std::env::var_os("NETCODE_REFERENCE_VECTORS") {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            assert!(
                dir.is_absolute(),
                "NETCODE_REFERENCE_VECTORS={} must be an absolute path",
                dir.display()
            );
            assert!(
                dir.join("manifest.json").is_file(),
                "NETCODE_REFERENCE_VECTORS={}: no manifest.json there (the vector set is missing)",
                dir.display()
            );
            Some(dir)
        }
        None => {
            let dir = manifest_dir.join("../vectors/data");
            dir.join("manifest.json").is_file().then_some(dir)
        }
    };
    let code = match source {
        Some(dir) => embed(&dir),
        None => {
            "/// No vector set was found to embed.\npub(crate) const DIR: Option<&str> = None;\n\
             /// No manifest.\npub(crate) const MANIFEST: &[u8] = &[];\n\
             /// No files.\npub(crate) const FILES: &[(&str, &[u8])] = &[];\n"
                .to_owned()
        }
    };
    std::fs::write(out_dir.join("embedded_vectors.rs"), code)
        .expect("cannot write embedded_vectors.rs");
}

/// The Rust source embedding the set in `dir`.
fn embed(dir: &Path) -> String {
    let dir = dir
        .canonicalize()
        .unwrap_or_else(|e| panic!("cannot resolve {}: {e}", dir.display()));
    println!("cargo::rerun-if-changed={}", dir.display());
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|entry| {
            let entry = entry.unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
            entry.file_name().to_string_lossy().into_owned()
        })
        .filter(|name| name.ends_with(".bin"))
        .collect();
    names.sort();
    let manifest = dir.join("manifest.json");
    println!("cargo::rerun-if-changed={}", manifest.display());
    let mut code = String::new();
    let _ = writeln!(code, "/// The directory the set was embedded from.");
    let _ = writeln!(
        code,
        "pub(crate) const DIR: Option<&str> = Some({:?});",
        path_str(&dir)
    );
    let _ = writeln!(code, "/// The bytes of its manifest.json.");
    let _ = writeln!(
        code,
        "pub(crate) const MANIFEST: &[u8] = include_bytes!({:?});",
        path_str(&manifest)
    );
    let _ = writeln!(code, "/// Every .bin file of the directory, by name.");
    let _ = writeln!(code, "pub(crate) const FILES: &[(&str, &[u8])] = &[");
    for name in &names {
        let path = dir.join(name);
        println!("cargo::rerun-if-changed={}", path.display());
        let _ = writeln!(
            code,
            "    ({name:?}, include_bytes!({:?})),",
            path_str(&path)
        );
    }
    let _ = writeln!(code, "];");
    code
}

/// A path as UTF-8, which `include_bytes!` needs.
fn path_str(path: &Path) -> &str {
    path.to_str()
        .unwrap_or_else(|| panic!("{} is not valid UTF-8", path.display()))
}
