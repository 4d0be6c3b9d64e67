//! The suite of `golden` over a third set, one that no reference
//! made: `netcode_vectors::generate` writes it into a fresh temporary
//! directory for each test, with other keys, ids, sequences, address lists
//! and timestamps (0, just below and just above the suite's `TEST_NOW`,
//! `u64::MAX`). The suite passing here shows it holds for a set whose
//! values it was not written against; the checks below show the set really
//! is that different.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::ops::Deref;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::suite;
use crate::suite::negative::TEST_NOW;
use netcode_vectors::generate::{another_set, write_set};
use netcode_vectors::manifest::{Body, PacketContent};
use netcode_vectors::{VectorSet, data_dir};

/// A generated set in its own temporary directory, removed on drop.
struct GeneratedSet {
    set: VectorSet,
}

impl Deref for GeneratedSet {
    type Target = VectorSet;

    fn deref(&self) -> &VectorSet {
        &self.set
    }
}

impl Drop for GeneratedSet {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.set.dir);
    }
}

/// A fresh directory under the system's temporary directory: one per test
/// and per run (the tests of one binary run in parallel).
fn fresh_dir() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "netcode-vectors-generated-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    dir
}

fn generated_set() -> GeneratedSet {
    let dir = fresh_dir();
    let manifest = another_set(TEST_NOW).expect("the generated set must build");
    let written = write_set(&dir, &manifest).expect("the generated set must be written");
    assert_eq!(written, manifest.vectors.len());
    let set = VectorSet::open(&dir).expect("the generated manifest must parse");
    GeneratedSet { set }
}

mod generated_set {
    crate::suite::suite_tests! {
        open: super::generated_set()
    }
}

#[test]
fn the_generated_manifest_reads_back_as_built() {
    let set = generated_set();
    assert_eq!(set.manifest, another_set(TEST_NOW).unwrap());
}

/// No file, name or key of the generated set is one of the committed copy's.
#[test]
fn the_generated_set_differs_from_the_committed_copy() {
    let generated = generated_set();
    let committed = VectorSet::open(data_dir()).unwrap();
    let committed_files: BTreeSet<Vec<u8>> = suite::entries(&committed)
        .iter()
        .map(|v| committed.read(v).unwrap())
        .collect();
    for vector in suite::entries(&generated) {
        assert!(
            !committed_files.contains(&generated.read(vector).unwrap()),
            "{}: the same bytes as a committed vector",
            vector.name
        );
        assert!(
            committed.vector(&vector.name).is_err(),
            "{}: a committed vector's name",
            vector.name
        );
    }
    for (name, key) in &generated.manifest.named_keys {
        assert!(
            committed
                .manifest
                .named_keys
                .values()
                .all(|k| k.key != key.key),
            "{name}: one of the committed set's keys"
        );
    }
}

/// The generated set has what it is meant to exercise: every kind, requests
/// and tokens expiring at 0, around `TEST_NOW` and at `u64::MAX`, a full
/// and an IPv6-only address list, a connect token whose public addresses
/// differ from its private ones, sequences 0 and `u64::MAX`, protocol ids 0
/// and `u64::MAX`, payloads of 1 and 1200 bytes.
#[test]
fn the_generated_set_has_the_edge_values() {
    let set = generated_set();
    suite::covers_every_kind(&set);
    let mut request_expiries = BTreeSet::new();
    let mut connect_expiries = BTreeSet::new();
    let mut address_lists: Vec<Vec<SocketAddr>> = Vec::new();
    let mut differing_public_addresses = false;
    let mut sequences = BTreeSet::new();
    let mut protocol_ids = BTreeSet::new();
    let mut payload_lengths = BTreeSet::new();
    for vector in suite::entries(&set) {
        match &vector.body {
            Body::PrivateTokenPlaintext(fields) => address_lists.push(
                fields
                    .server_addresses
                    .iter()
                    .map(|a| a.socket_addr())
                    .collect(),
            ),
            Body::ConnectToken(fields) => {
                connect_expiries.insert(fields.expire_timestamp);
                differing_public_addresses |= !fields.public_addresses_equal_private;
            }
            Body::Packet(fields) => {
                protocol_ids.insert(fields.protocol_id);
                if let Some(framing) = &fields.framing {
                    sequences.insert(framing.sequence);
                }
                match &fields.content {
                    PacketContent::Request(request) => {
                        request_expiries.insert(request.expire_timestamp);
                    }
                    PacketContent::Payload { payload, .. } => {
                        payload_lengths.insert(payload.len());
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    let edges = BTreeSet::from([0, TEST_NOW - 1, TEST_NOW + 1, u64::MAX]);
    assert_eq!(request_expiries, edges);
    assert_eq!(connect_expiries, edges);
    assert!(address_lists.iter().any(|list| list.len() == 32));
    assert!(
        address_lists
            .iter()
            .any(|l| l.iter().all(SocketAddr::is_ipv6))
    );
    assert!(
        address_lists
            .iter()
            .any(|l| l.iter().any(SocketAddr::is_ipv4) && l.iter().any(SocketAddr::is_ipv6))
    );
    assert!(differing_public_addresses);
    assert!(sequences.contains(&0) && sequences.contains(&u64::MAX));
    assert!(protocol_ids.contains(&0) && protocol_ids.contains(&u64::MAX));
    assert!(payload_lengths.contains(&1) && payload_lengths.contains(&1200));
}
