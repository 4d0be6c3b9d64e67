//! The store's own tests: what is recorded comes back, expired records go,
//! and every kind of damage is refused with its typed error.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use netcode_proto::client::Client;
use netcode_proto::io::Output;
use netcode_proto::server::{HeapStorage, Server, ServerConfig, ServerEvent, UsedToken};
use netcode_proto::stats::DropReason;
use netcode_proto::token::{ConnectTokenParams, generate_connect_token};
use netcode_proto::{Key, io::SendFn};

use super::format::{HEADER_BYTES, RECORD_BYTES};
use super::{HistoryStore, StoreError};

const NOW: u64 = 1_800_000_000;

/// A fresh path in the system's temporary directory, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = format!("netcode-history-{}-{n}", std::process::id());
        Self(std::env::temp_dir().join(name))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn token(i: u8, expire: u64) -> UsedToken {
    UsedToken {
        mac: [i; 16],
        address: if i.is_multiple_of(2) {
            SocketAddr::from(([10, 0, 0, i], 5000))
        } else {
            SocketAddr::from(([0x2001, 0xdb8, 0, 0, 0, 0, 0, u16::from(i)], 6000))
        },
        expire_timestamp: expire,
    }
}

/// A store file with `count` records, all unexpired at [`NOW`].
fn written(scratch: &Scratch, count: u8) -> Vec<u8> {
    let (mut store, history) = HistoryStore::open(&scratch.0, NOW - 100).unwrap();
    assert!(history.tokens.is_empty());
    for i in 0..count {
        store.record(&token(i, NOW + 30)).unwrap();
    }
    std::fs::read(&scratch.0).unwrap()
}

#[test]
fn what_is_recorded_comes_back_and_expired_records_go() {
    let scratch = Scratch::new();
    let (mut store, history) = HistoryStore::open(&scratch.0, NOW).unwrap();
    assert_eq!((history.recorded_since, history.tokens.len()), (NOW, 0));
    for i in 0..6 {
        let expire = if i < 2 { NOW + 5 } else { NOW + 60 };
        store.record(&token(i, expire)).unwrap();
    }
    store.record(&token(3, NOW + 60)).unwrap();
    assert_eq!(store.len(), 7);
    drop(store);
    let length = std::fs::metadata(&scratch.0).unwrap().len() as usize;
    assert_eq!(length, HEADER_BYTES + 7 * RECORD_BYTES);

    // Ten seconds later, the two short tokens have expired; the duplicate
    // merges. The file is compacted to what is left.
    let (mut store, history) = HistoryStore::open(&scratch.0, NOW + 10).unwrap();
    assert_eq!(history.recorded_since, NOW, "kept across compaction");
    let mut macs: Vec<u8> = history.tokens.iter().map(|t| t.mac[0]).collect();
    macs.sort_unstable();
    assert_eq!(macs, [2, 3, 4, 5]);
    assert!(history.tokens.contains(&token(5, NOW + 60)));
    let length = std::fs::metadata(&scratch.0).unwrap().len() as usize;
    assert_eq!(length, HEADER_BYTES + 4 * RECORD_BYTES);

    // Appends after compaction land at the right index.
    store.record(&token(9, NOW + 60)).unwrap();
    store.compact(NOW + 100).unwrap();
    assert!(store.is_empty());
    store.record(&token(10, NOW + 200)).unwrap();
    drop(store);
    let (_, history) = HistoryStore::open(&scratch.0, NOW + 100).unwrap();
    assert_eq!(history.tokens, [token(10, NOW + 200)]);
    assert_eq!(history.restored().recorded_since, NOW);
}

#[test]
fn a_cut_file_is_refused_unless_it_ends_between_records() {
    let scratch = Scratch::new();
    let whole = written(&scratch, 3);
    for length in 0..whole.len() {
        std::fs::write(&scratch.0, &whole[..length]).unwrap();
        let opened = HistoryStore::open(&scratch.0, NOW);
        let after_header = length.checked_sub(HEADER_BYTES);
        match after_header {
            // A cut between records leaves a shorter valid file: nothing
            // can tell it from one that had fewer records.
            Some(rest) if rest.is_multiple_of(RECORD_BYTES) => {
                let (_, history) = opened.unwrap();
                assert_eq!(history.tokens.len(), rest / RECORD_BYTES);
            }
            _ => assert!(
                matches!(
                    opened,
                    Err(StoreError::Truncated { length: l, records })
                        if l == length as u64
                            && records == after_header.unwrap_or(0) as u64 / RECORD_BYTES as u64
                ),
                "cut at {length}: {opened:?}"
            ),
        }
    }
}

#[test]
fn every_flipped_bit_is_refused() {
    let scratch = Scratch::new();
    let whole = written(&scratch, 2);
    for bit in 0..whole.len() * 8 {
        let mut damaged = whole.clone();
        damaged[bit / 8] ^= 1 << (bit % 8);
        std::fs::write(&scratch.0, &damaged).unwrap();
        let opened = HistoryStore::open(&scratch.0, NOW);
        let byte = bit / 8;
        let expected = match byte {
            0..8 => matches!(opened, Err(StoreError::NotAHistoryStore)),
            8..HEADER_BYTES => matches!(opened, Err(StoreError::CorruptHeader)),
            _ => matches!(
                opened,
                Err(StoreError::CorruptRecord { index })
                    if index == ((byte - HEADER_BYTES) / RECORD_BYTES) as u64
            ),
        };
        assert!(expected, "bit {bit}: {opened:?}");
        // Refused files are left as they were.
        assert_eq!(std::fs::read(&scratch.0).unwrap(), damaged);
    }
}

#[test]
fn moved_records_and_other_files_are_refused() {
    let scratch = Scratch::new();
    let whole = written(&scratch, 2);
    let mut swapped = whole.clone();
    let (first, second) = swapped[HEADER_BYTES..].split_at_mut(RECORD_BYTES);
    first.swap_with_slice(second);
    std::fs::write(&scratch.0, &swapped).unwrap();
    assert!(matches!(
        HistoryStore::open(&scratch.0, NOW),
        Err(StoreError::CorruptRecord { index: 0 })
    ));
    let mut doubled = whole.clone();
    doubled.extend_from_slice(&whole[HEADER_BYTES..HEADER_BYTES + RECORD_BYTES]);
    std::fs::write(&scratch.0, &doubled).unwrap();
    assert!(matches!(
        HistoryStore::open(&scratch.0, NOW),
        Err(StoreError::CorruptRecord { index: 2 })
    ));
    std::fs::write(
        &scratch.0,
        b"something else entirely, and long enough for a header",
    )
    .unwrap();
    let refused = HistoryStore::open(&scratch.0, NOW);
    assert!(matches!(refused, Err(StoreError::NotAHistoryStore)));
    assert_eq!(
        refused.unwrap_err().to_string(),
        "not a token history store"
    );

    // The host's way out: a new store, begun now.
    let (store, history) = HistoryStore::create(&scratch.0, NOW).unwrap();
    assert_eq!((store.recorded_since(), store.len()), (NOW, 0));
    assert_eq!((history.recorded_since, history.tokens.len()), (NOW, 0));
    assert_eq!(store.path(), scratch.0.as_path());
}

/// A server's output that makes tokens durable in a store: the wiring a
/// host writes.
struct Persisting<'a> {
    store: &'a mut HistoryStore,
    sent: Vec<Vec<u8>>,
}

impl Output<ServerEvent> for Persisting<'_> {
    fn send(&mut self, _to: SocketAddr, datagram: &[u8]) {
        self.sent.push(datagram.to_vec());
    }

    fn event(&mut self, _event: ServerEvent) {}

    fn persist_used_token(&mut self, token: &UsedToken) -> bool {
        self.store.record(token).is_ok()
    }
}

#[test]
fn a_server_records_each_new_token_before_its_challenge_and_refuses_it_after_a_restart() {
    let scratch = Scratch::new();
    let address: SocketAddr = "127.0.0.1:40000".parse().unwrap();
    let key = Key::from_bytes([7; 32]);
    let config = ServerConfig::new(1, key.clone(), address);
    let mut rng = crate::os_random();
    let params = ConnectTokenParams {
        protocol_id: 1,
        private_key: &key,
        client_id: 1,
        public_addresses: &[address],
        internal_addresses: None,
        create_timestamp: NOW,
        expire_seconds: 30,
        timeout_seconds: 5,
        user_data: &[0; 256],
    };
    let token = generate_connect_token(&params, &mut rng)
        .unwrap()
        .write()
        .unwrap();
    let mut requests = Vec::new();
    let mut client = Client::new();
    let mut to_server = SendFn(|_, d: &[u8]| requests.push(d.to_vec()));
    client
        .connect(Duration::ZERO, &token, &mut to_server)
        .unwrap();
    client.update(Duration::ZERO, &mut to_server);
    let request = requests.pop().unwrap();
    let from: SocketAddr = "10.0.0.1:5000".parse().unwrap();

    for run in 0..2 {
        let (mut store, history) = HistoryStore::open(&scratch.0, NOW).unwrap();
        let mut server = Server::new(config.clone(), HeapStorage::new(1)).unwrap();
        let mut out = Persisting {
            store: &mut store,
            sent: Vec::new(),
        };
        server
            .start_restored(
                Duration::ZERO,
                NOW,
                1,
                &mut rng,
                &history.restored(),
                &mut out,
            )
            .unwrap();
        server.handle(Duration::ZERO, from, &mut request.clone(), &mut out);
        if run == 0 {
            assert_eq!(out.sent.len(), 1, "a challenge, after the record");
            assert_eq!(out.store.len(), 1);
        } else {
            assert!(out.sent.is_empty(), "refused after the restart");
            assert_eq!(server.stats().dropped(DropReason::TokenAlreadyUsed), 1);
        }
    }
}
