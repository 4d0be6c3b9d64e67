//! The store's own tests: what is recorded comes back, expired records go
//! (also after the clock steps back), every kind of damage is refused with
//! its typed error, one store per file, and the writer thread's group
//! commits.

use netcode_proto::Instant;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use netcode_proto::client::Client;
use netcode_proto::io::Output;
use netcode_proto::server::{
    HeapStorage, PersistOutcome, PersistRequest, Server, ServerConfig, ServerEvent, UsedToken,
};
use netcode_proto::stats::DropReason;
use netcode_proto::token::{ConnectTokenParams, generate_connect_token};
use netcode_proto::{Key, io::SendFn};

use super::format::{HEADER_BYTES, RECORD_BYTES};
use super::{HistoryStore, HistoryWriter, StoreError, StoredHistory};

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
        let _ = std::fs::remove_file(super::lock::lock_path(&self.0));
        let _ = std::fs::remove_file(super::damaged_path(&self.0));
    }
}

/// Opens the store at `scratch` at `unix`, which must be sound.
fn open(scratch: &Scratch, unix: u64) -> (HistoryStore, StoredHistory) {
    let opened = HistoryStore::open(&scratch.0, unix).unwrap();
    assert!(opened.replaced.is_none(), "{:?}", opened.replaced);
    (opened.store, opened.history)
}

/// Opens the store at `scratch`, which must be damaged: the damage, and
/// the file as it was, kept aside.
fn open_damaged(scratch: &Scratch) -> (StoreError, Vec<u8>) {
    let opened = HistoryStore::open(&scratch.0, NOW).unwrap();
    let damage = opened.replaced.expect("the file was replaced");
    assert!(opened.history.tokens.is_empty());
    assert_eq!(opened.history.recorded_since, NOW, "a new store, begun now");
    let kept = std::fs::read(super::damaged_path(&scratch.0)).unwrap();
    (damage, kept)
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
    let (mut store, history) = open(scratch, NOW - 100);
    assert!(history.tokens.is_empty());
    for i in 0..count {
        store.record(&token(i, NOW + 30)).unwrap();
    }
    std::fs::read(&scratch.0).unwrap()
}

#[test]
fn what_is_recorded_comes_back_and_expired_records_go() {
    let scratch = Scratch::new();
    let (mut store, history) = open(&scratch, NOW);
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
    let (mut store, history) = open(&scratch, NOW + 10);
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
    let (_, history) = open(&scratch, NOW + 100);
    assert_eq!(history.tokens, [token(10, NOW + 200)]);
    assert_eq!(history.restored().recorded_since, NOW);
}

#[test]
fn a_cut_file_is_refused_unless_it_ends_between_records() {
    let scratch = Scratch::new();
    let whole = written(&scratch, 3);
    for length in 0..whole.len() {
        std::fs::write(&scratch.0, &whole[..length]).unwrap();
        let after_header = length.checked_sub(HEADER_BYTES);
        match after_header {
            // A cut between records leaves a shorter valid file: nothing
            // can tell it from one that had fewer records.
            Some(rest) if rest.is_multiple_of(RECORD_BYTES) => {
                let (_, history) = open(&scratch, NOW);
                assert_eq!(history.tokens.len(), rest / RECORD_BYTES);
            }
            _ => {
                let (damage, kept) = open_damaged(&scratch);
                assert!(
                    matches!(
                        damage,
                        StoreError::Truncated { length: l, records }
                            if l == length as u64
                                && records == after_header.unwrap_or(0) as u64 / RECORD_BYTES as u64
                    ),
                    "cut at {length}: {damage:?}"
                );
                assert_eq!(kept, whole[..length]);
            }
        }
    }
}

#[test]
fn every_flipped_bit_is_refused_and_the_file_kept_aside() {
    let scratch = Scratch::new();
    let whole = written(&scratch, 2);
    for bit in 0..whole.len() * 8 {
        let mut damaged = whole.clone();
        damaged[bit / 8] ^= 1 << (bit % 8);
        std::fs::write(&scratch.0, &damaged).unwrap();
        let (damage, kept) = open_damaged(&scratch);
        let byte = bit / 8;
        let expected = match byte {
            0..8 => matches!(damage, StoreError::NotAHistoryStore),
            // A flipped version number says another version.
            8..12 => matches!(damage, StoreError::UnsupportedVersion(v) if v != 2),
            12..HEADER_BYTES => matches!(damage, StoreError::CorruptHeader),
            _ => matches!(
                damage,
                StoreError::CorruptRecord { index }
                    if index == ((byte - HEADER_BYTES) / RECORD_BYTES) as u64
            ),
        };
        assert!(expected, "bit {bit}: {damage:?}");
        assert_eq!(kept, damaged, "kept aside as it was");
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
        open_damaged(&scratch).0,
        StoreError::CorruptRecord { index: 0 }
    ));
    let mut doubled = whole.clone();
    doubled.extend_from_slice(&whole[HEADER_BYTES..HEADER_BYTES + RECORD_BYTES]);
    std::fs::write(&scratch.0, &doubled).unwrap();
    assert!(matches!(
        open_damaged(&scratch).0,
        StoreError::CorruptRecord { index: 2 }
    ));
    std::fs::write(
        &scratch.0,
        b"something else entirely, and long enough for a header",
    )
    .unwrap();
    let (damage, _) = open_damaged(&scratch);
    assert!(matches!(damage, StoreError::NotAHistoryStore));
    assert_eq!(damage.to_string(), "not a token history store");
    // What was left in its place is a sound, empty store.
    let (store, history) = open(&scratch, NOW);
    assert_eq!((store.recorded_since(), store.len()), (NOW, 0));
    assert_eq!((history.recorded_since, history.tokens.len()), (NOW, 0));
    assert_eq!(store.path(), scratch.0.as_path());
}

#[test]
fn one_store_per_file_and_the_lock_names_its_holder() {
    let scratch = Scratch::new();
    let (first, _) = open(&scratch, NOW);
    let second = HistoryStore::open(&scratch.0, NOW);
    match second {
        Err(StoreError::Locked { lock_file, holder }) => {
            assert_eq!(lock_file, super::lock::lock_path(&scratch.0));
            assert_eq!(holder, Some(std::process::id()));
            let text = StoreError::Locked { lock_file, holder }.to_string();
            assert!(text.contains("is in use") && text.contains(&std::process::id().to_string()));
        }
        other => panic!("a second store opened the file: {other:?}"),
    }
    // Compaction renames a new file over the old one; the lock still
    // holds, being on the lock file.
    let mut first = first;
    first.compact(NOW).unwrap();
    assert!(matches!(
        HistoryStore::open(&scratch.0, NOW),
        Err(StoreError::Locked { .. })
    ));
    drop(first);
    let (_, history) = open(&scratch, NOW);
    assert_eq!(history.recorded_since, NOW);
}

#[test]
fn tokens_expired_by_the_latest_second_stay_gone_when_the_clock_steps_back() {
    let scratch = Scratch::new();
    let (mut store, _) = open(&scratch, NOW);
    store.record(&token(1, NOW + 20)).unwrap();
    store.record(&token(2, NOW + 200)).unwrap();
    // Compacted at NOW + 50: token 1 expired then and is dropped.
    store.compact(NOW + 50).unwrap();
    assert_eq!(store.latest_unix_seconds(), NOW + 50);
    drop(store);
    // The wall clock now reads 40 s earlier than then.
    let (store, history) = open(&scratch, NOW + 10);
    assert_eq!(history.latest_unix_seconds, NOW + 50, "never moves back");
    assert_eq!(history.tokens, [token(2, NOW + 200)]);
    assert_eq!(store.latest_unix_seconds(), NOW + 50);
    // The core judges expiry against that second: token 1, which the file
    // no longer holds, counts as expired though the clock says otherwise.
    assert_eq!(history.restored().unexpired(NOW + 10), 1);
}

#[test]
fn a_group_is_written_with_one_write_and_one_sync() {
    let scratch = Scratch::new();
    let (mut store, _) = open(&scratch, NOW);
    let group: Vec<UsedToken> = (0..5).map(|i| token(i, NOW + 30)).collect();
    store.record_all(&group).unwrap();
    store.record(&token(9, NOW + 30)).unwrap();
    drop(store);
    let length = std::fs::metadata(&scratch.0).unwrap().len() as usize;
    assert_eq!(length, HEADER_BYTES + 6 * RECORD_BYTES);
    let (_, history) = open(&scratch, NOW);
    assert_eq!(history.tokens.len(), 6, "each record verifies at its index");
}

/// The first connection request a client sends with a fresh token for
/// `client_id` at `server`, minted at [`NOW`] under `key` (protocol id 1).
fn first_request(key: &Key, server: SocketAddr, client_id: u64) -> Vec<u8> {
    let params = ConnectTokenParams {
        protocol_id: 1,
        private_key: key,
        client_id,
        public_addresses: &[server],
        internal_addresses: None,
        create_timestamp: NOW,
        expire_seconds: 30,
        timeout_seconds: 5,
        user_data: &[0; 256],
    };
    let token = generate_connect_token(&params, &mut crate::os_random())
        .unwrap()
        .write()
        .unwrap();
    let mut requests = Vec::new();
    let mut client = Client::new();
    let mut to_server = SendFn(|_, d: &[u8]| requests.push(d.to_vec()));
    client
        .connect(Instant::ZERO, &token, &mut to_server)
        .unwrap();
    client.update(Instant::ZERO, &mut to_server);
    requests.pop().unwrap()
}

/// A server's output that hands new tokens to a history writer: the wiring
/// a host writes.
struct Persisting<'a> {
    writer: &'a mut HistoryWriter,
    sent: Vec<Vec<u8>>,
}

impl Output<ServerEvent> for Persisting<'_> {
    fn send(&mut self, _to: SocketAddr, datagram: &[u8]) {
        self.sent.push(datagram.to_vec());
    }

    fn event(&mut self, _event: ServerEvent) {}

    fn persist_used_token(&mut self, request: PersistRequest) {
        self.writer.submit(request).unwrap();
    }
}

#[test]
fn a_server_records_each_new_token_before_its_challenge_and_refuses_it_after_a_restart() {
    let scratch = Scratch::new();
    let address: SocketAddr = "127.0.0.1:40000".parse().unwrap();
    let key = Key::from_bytes([7; 32]);
    let config = ServerConfig::new(1, key.clone(), address);
    let mut rng = crate::os_random();
    let request = first_request(&key, address, 1);
    let from: SocketAddr = "10.0.0.1:5000".parse().unwrap();

    for run in 0..2 {
        // The file began before the token was minted.
        let (store, history) = open(&scratch, NOW - 100);
        let mut writer = HistoryWriter::spawn(store).unwrap();
        let mut server = Server::new(config.clone(), HeapStorage::new(1)).unwrap();
        let mut out = Persisting {
            writer: &mut writer,
            sent: Vec::new(),
        };
        server
            .start_restored(
                Instant::ZERO,
                NOW,
                1,
                &mut rng,
                &history.restored(),
                &mut out,
            )
            .unwrap();
        server.handle(Instant::ZERO, from, &mut request.clone(), &mut out);
        assert!(out.sent.is_empty(), "nothing before the record is durable");
        if run == 1 {
            assert_eq!(server.stats().dropped(DropReason::TokenAlreadyUsed), 1);
            assert_eq!(writer.in_flight(), 0);
            continue;
        }
        assert_eq!(writer.in_flight(), 1);
        // A retry meanwhile is held too, and asks nothing more.
        let mut out = Persisting {
            writer: &mut writer,
            sent: Vec::new(),
        };
        server.handle(Instant::ZERO, from, &mut request.clone(), &mut out);
        assert!(out.sent.is_empty());
        assert_eq!(writer.in_flight(), 1);
        let finished = loop {
            let done: Vec<_> = writer.finished().collect();
            if !done.is_empty() {
                break done;
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        assert_eq!(finished.len(), 1);
        let mut out = Persisting {
            writer: &mut writer,
            sent: Vec::new(),
        };
        for (request, outcome) in finished {
            assert_eq!(outcome, PersistOutcome::Durable);
            server.token_persisted(Instant::ZERO, request, outcome, &mut out);
        }
        assert_eq!(out.sent.len(), 1, "the challenge, once durable");
        assert_eq!(writer.stats().records_durable, 1);
        assert_eq!(writer.stats().syncs, 1);
    }
}

#[test]
fn records_that_arrive_together_share_a_sync_and_a_full_writer_hands_back() {
    let scratch = Scratch::new();
    let (store, _) = open(&scratch, NOW);
    let mut writer = HistoryWriter::spawn(store).unwrap();
    let address: SocketAddr = "127.0.0.1:40000".parse().unwrap();
    let key = Key::from_bytes([7; 32]);
    let mut server = Server::new(
        ServerConfig::new(1, key.clone(), address),
        HeapStorage::new(4096),
    )
    .unwrap();
    let mut rng = crate::os_random();
    let empty = StoredHistory {
        recorded_since: NOW - 100,
        latest_unix_seconds: NOW,
        tokens: Vec::new(),
    };
    let mut requests = Vec::new();
    let mut out = Collect(&mut requests);
    server
        .start_restored(
            Instant::ZERO,
            NOW,
            16,
            &mut rng,
            &empty.restored(),
            &mut out,
        )
        .unwrap();
    let count = HistoryWriter::MAX_IN_FLIGHT + 10;
    for i in 0..count {
        let mut request = first_request(&key, address, i as u64);
        let from = SocketAddr::from(([10, 0, (i >> 8) as u8, i as u8], 5000));
        let mut out = Collect(&mut requests);
        server.handle(Instant::ZERO, from, &mut request, &mut out);
    }
    assert_eq!(requests.len(), count, "one request per new token");
    let mut handed_back = 0;
    for request in requests.drain(..) {
        if writer.submit(request).is_err() {
            handed_back += 1;
        }
    }
    assert!(handed_back >= 10, "beyond the bound: {handed_back}");
    assert!(writer.in_flight() <= HistoryWriter::MAX_IN_FLIGHT);
    let mut durable = 0;
    while writer.in_flight() > 0 {
        durable += writer
            .finished()
            .filter(|(_, outcome)| *outcome == PersistOutcome::Durable)
            .count();
        std::thread::sleep(Duration::from_millis(1));
    }
    let stats = writer.stats();
    assert_eq!(stats.records_durable as usize, durable);
    assert_eq!(durable, count - handed_back);
    assert!(
        stats.syncs < stats.records_durable,
        "records that arrived together shared syncs: {stats:?}"
    );
    assert_eq!(stats.requests_refused as usize, handed_back);
}

/// An output that keeps the persist requests.
struct Collect<'a>(&'a mut Vec<PersistRequest>);

impl Output<ServerEvent> for Collect<'_> {
    fn send(&mut self, _to: SocketAddr, _datagram: &[u8]) {}

    fn event(&mut self, _event: ServerEvent) {}

    fn persist_used_token(&mut self, request: PersistRequest) {
        self.0.push(request);
    }
}
