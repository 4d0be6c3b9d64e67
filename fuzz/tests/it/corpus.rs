//! Replays every file of `corpus/<target>/` through the body of `<target>`
//! (`netcode_fuzz::targets`), on the stable toolchain and without libFuzzer:
//! the seeds must pass the same checks the fuzzer applies.
//!
//! The corpus, the targets and the `fuzz_targets/` binaries must match one
//! to one: a directory without a target, a target without a directory or a
//! binary (or the reverse), an empty directory, or a stray file next to the
//! directories fails the run, as does any input whose replay panics (all
//! are replayed first; the failures are listed at the end).
//!
//! How many files each target replayed is printed (shown with
//! `cargo test -- --nocapture`, and with the failures when it fails).

use std::collections::BTreeSet;
use std::fs;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use netcode_fuzz::targets;

#[test]
fn every_committed_input_replays_through_its_target() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let mut problems: Vec<String> = Vec::new();

    let mut directories = BTreeSet::new();
    for entry in read_dir(&root) {
        let name = entry
            .file_name()
            .and_then(|n| n.to_str())
            .map(str::to_owned)
            .unwrap_or_else(|| panic!("{}: not a UTF-8 name", entry.display()));
        if entry.is_dir() {
            directories.insert(name);
        } else {
            problems.push(format!(
                "{}: not a directory (corpus/ holds one directory per target)",
                entry.display()
            ));
        }
    }
    for (name, _) in &targets::ALL {
        if !directories.contains(*name) {
            problems.push(format!("target `{name}` has no corpus/{name}/ directory"));
        }
    }

    // The libFuzzer binaries and the table the replay goes by must agree.
    let harnesses = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz_targets");
    let mut binaries = BTreeSet::new();
    for file in read_dir(&harnesses) {
        if let Some(name) = file.file_stem().and_then(|n| n.to_str())
            && file.extension().is_some_and(|e| e == "rs")
        {
            binaries.insert(name.to_owned());
        }
    }
    for name in &binaries {
        if targets::by_name(name).is_none() {
            problems.push(format!(
                "fuzz_targets/{name}.rs has no entry in netcode_fuzz::targets::ALL"
            ));
        }
    }
    for (name, _) in &targets::ALL {
        if !binaries.contains(*name) {
            problems.push(format!("target `{name}` has no fuzz_targets/{name}.rs"));
        }
    }

    let mut total = 0usize;
    let mut replayed_targets = 0usize;
    for name in &directories {
        let Some(target) = targets::by_name(name) else {
            problems.push(format!(
                "corpus/{name}/ matches no target in netcode_fuzz::targets::ALL"
            ));
            continue;
        };
        let mut files = Vec::new();
        collect_files(&root.join(name), &mut files);
        files.sort();
        if files.is_empty() {
            problems.push(format!("corpus/{name}/ is empty"));
            continue;
        }
        for file in &files {
            let data = fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            if panic::catch_unwind(AssertUnwindSafe(|| target(&data))).is_err() {
                problems.push(format!(
                    "{}: the `{name}` target panicked (message above)",
                    file.display()
                ));
            }
        }
        println!("{name}: {} corpus files replayed", files.len());
        total += files.len();
        replayed_targets += 1;
    }
    println!("{total} corpus files replayed through {replayed_targets} targets");

    assert!(
        problems.is_empty(),
        "corpus replay FAILED:\n  {}",
        problems.join("\n  ")
    );
}

/// The entries of `dir`, which must be readable.
fn read_dir(dir: &Path) -> Vec<PathBuf> {
    fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            entry
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .path()
        })
        .collect()
}

/// Every file under `dir`, subdirectories included (libFuzzer reads a
/// corpus directory recursively too).
fn collect_files(dir: &Path, files: &mut Vec<PathBuf>) {
    for path in read_dir(dir) {
        if path.is_dir() {
            collect_files(&path, files);
        } else {
            files.push(path);
        }
    }
}
