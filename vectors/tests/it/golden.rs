//! Holds `netcode-proto` to the golden wire vectors of the C reference.
//!
//! The same suite (`suite/`) runs over two sets here:
//!
//! * `reference_set::*`: the C reference's set, in the directory
//!   `NETCODE_REFERENCE_VECTORS` names (an absolute path; `.ci/run` sets it).
//!   When the variable is set the directory must exist and parse, or every
//!   one of these tests fails saying so. When it is unset they are compiled
//!   as ignored (see `build.rs`), so the summary counts them as ignored and
//!   not as passed, and Cargo prints a SKIPPED warning.
//! * `committed_copy::*`: our copy in `vectors/data`, whose `.bin` files our
//!   own encoder wrote (`--bin regenerate`); always checked.
//!
//! `generated` runs the suite over a third set made by
//! `netcode_vectors::generate`.

use std::path::Path;

use netcode_vectors::{VectorSet, data_dir};

use crate::suite;

/// The number of entries in our committed copy: a check on our own file
/// (that it was not cut short), never an expectation about another set.
const COMMITTED_VECTORS: usize = 61;

/// The SHA-256 of the reference manifest our copy was taken from, which
/// `vectors/data/manifest.json` must still be. A reference set with this
/// manifest is that set, and our copy must then equal it file for file.
const COPIED_MANIFEST_SHA256: &str =
    "5f5ad855eb0552b0e01b548575078b45dbc73551e2619c762935d1f0da50a2e3";

/// The reference set `NETCODE_REFERENCE_VECTORS` names, read when this test
/// binary was built (Cargo rebuilds it when the variable changes).
fn reference_set() -> VectorSet {
    let Some(dir) = option_env!("NETCODE_REFERENCE_VECTORS") else {
        panic!(
            "NETCODE_REFERENCE_VECTORS is unset: set it to the directory of the C reference's \
             vector set (manifest.json and .bin files) to run the tests over it"
        );
    };
    let path = Path::new(dir);
    assert!(
        path.is_absolute(),
        "NETCODE_REFERENCE_VECTORS={dir:?} must be an absolute path (tests run in vectors/)"
    );
    assert!(
        path.is_dir(),
        "NETCODE_REFERENCE_VECTORS={dir:?} is not a directory: the reference vector set is missing"
    );
    VectorSet::open(path).unwrap_or_else(|e| {
        panic!("NETCODE_REFERENCE_VECTORS={dir:?}: the reference vector set does not parse: {e}")
    })
}

fn committed_set() -> VectorSet {
    VectorSet::open(data_dir()).expect("vectors/data/manifest.json must parse")
}

mod reference_set {
    crate::suite::suite_tests! {
        #[cfg_attr(
            not(netcode_reference_vectors),
            ignore = "SKIPPED (NETCODE_REFERENCE_VECTORS unset): no reference vector set named"
        )]
        open: super::reference_set()
    }
}

mod committed_copy {
    crate::suite::suite_tests! {
        open: super::committed_set()
    }
}

#[test]
fn committed_copy_has_the_committed_count() {
    assert_eq!(committed_set().manifest.vector_count, COMMITTED_VECTORS);
}

#[test]
fn committed_copy_has_the_copied_manifest() {
    assert_eq!(
        suite::sha256_hex(&committed_set().manifest_bytes),
        COPIED_MANIFEST_SHA256,
        "vectors/data/manifest.json is no longer the reference manifest it was copied from"
    );
}

#[test]
fn committed_copy_covers_every_kind() {
    suite::covers_every_kind(&committed_set());
}

/// Our copy against the reference set. When the reference manifest is the
/// one our copy was taken from, the copy must hold the same manifest and
/// exactly the same `.bin` files. Whatever the set, every entry both
/// manifests give with the same inputs must have the same bytes in both
/// (another conforming set may share none; what was compared is printed).
#[test]
#[cfg_attr(
    not(netcode_reference_vectors),
    ignore = "SKIPPED (NETCODE_REFERENCE_VECTORS unset): no reference vector set named"
)]
fn committed_copy_matches_the_reference_set() {
    let reference = reference_set();
    let ours = committed_set();
    let mut same_inputs = 0;
    for theirs in suite::entries(&reference) {
        let Ok(mine) = ours.vector(&theirs.name) else {
            continue;
        };
        if mine != theirs {
            continue;
        }
        same_inputs += 1;
        assert!(
            ours.read(mine).unwrap() == reference.read(theirs).unwrap(),
            "{}: same inputs, but our copy's file differs from the reference's",
            theirs.name
        );
    }
    let copied_from_it = suite::sha256_hex(&reference.manifest_bytes) == COPIED_MANIFEST_SHA256;
    if copied_from_it {
        assert!(
            ours.manifest_bytes == reference.manifest_bytes,
            "vectors/data/manifest.json must be a copy of the reference manifest"
        );
        assert_eq!(
            ours.bin_files().unwrap(),
            reference.bin_files().unwrap(),
            "the .bin file names differ"
        );
        assert_eq!(same_inputs, reference.manifest.vectors.len());
    }
    println!(
        "{same_inputs} of {} reference entries have the same inputs in vectors/data, and the same bytes; \
         manifest.json is {}",
        reference.manifest.vectors.len(),
        if copied_from_it {
            "the one vectors/data was copied from, and vectors/data is a complete copy"
        } else {
            "another set's"
        }
    );
}

/// The suite runs against the AEAD backend the features chose (CI runs it
/// under both): this says which one, and that the `ring` pass-through works.
/// Without the feature here another workspace member may still have enabled
/// it (cargo unifies features), so only its presence is asserted.
#[test]
fn runs_on_the_selected_aead_backend() {
    println!("AEAD backend: {}", netcode_proto::crypto::BACKEND);
    if cfg!(feature = "ring") {
        assert_eq!(netcode_proto::crypto::BACKEND, "ring");
    }
}
