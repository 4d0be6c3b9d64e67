//! `history-bench commit`: durable connect-token records per second, one
//! write and one `fdatasync` per token ([`HistoryStore::record`]) against
//! group commit ([`HistoryWriter`] fed as fast as it accepts), the two
//! alternating in each round so that their ratio comes from the same
//! minutes of the same disk.
//!
//! * **One sync per token**: `store.record(&token)` in a loop for the
//!   round's seconds; each call's wall time is kept (its median and 99th
//!   percentile are the disk's sync latency as a server would see it).
//! * **Group commit**: the writer's queue is filled until `submit` hands
//!   a request back (4096 in flight), the finished ones are drained and
//!   submitted again, and the loop sleeps `--poll-us` between turns (a
//!   host loop; 1 ms by default). Durable records per second and records
//!   per sync come from the writer's own counters, read at the deadline.
//!
//! The requests are real: connect tokens minted with the real unix time,
//! turned into connection requests by a client, and handed by a core
//! server started restored to its output, as a server with a history file
//! does; the pool is recycled (a finished request is submitted again), so
//! the file holds each token many times, which the writer does not look
//! at. Each run's file is new and removed afterwards.

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use netcode_bench::cli::{Options, Spread};
use netcode_bench::fixtures::{PRIVATE_KEY, PROTOCOL_ID, SERVER, USER_DATA, request_bytes};
use netcode_bench::machine::load_average;
use netcode_proto::Key;
use netcode_proto::io::Output;
use netcode_proto::server::{
    HeapStorage, PersistOutcome, PersistRequest, RestoredHistory, Server, ServerConfig,
    ServerEvent, UsedToken,
};
use netcode_proto::token::{ConnectTokenParams, generate_connect_token};
use netcode_std::history_store::{HistoryStore, HistoryWriter};

use crate::summary::{quantile_ms, remove, scratch};

/// Requests in the pool: the writer's bound and a quarter more, so that
/// the writer is never short of requests to take.
const POOL: usize = HistoryWriter::MAX_IN_FLIGHT + HistoryWriter::MAX_IN_FLIGHT / 4;

/// One round's figures.
struct Round {
    one_per_second: f64,
    sync_p50_ms: f64,
    sync_p99_ms: f64,
    group_per_second: f64,
    syncs_per_second: f64,
    records_per_sync: f64,
}

/// Runs the case with `options`.
pub(crate) fn run(mut options: Options) -> Result<(), String> {
    let dir: std::path::PathBuf = options.get("dir", std::env::temp_dir())?;
    let seconds: f64 = options.get("seconds", 3.0)?;
    let rounds: usize = options.get("rounds", 3)?;
    let poll = Duration::from_micros(options.get("poll-us", 1000)?);
    let label: String = options.get("label", "run".to_string())?;
    options.finish()?;
    let period = Duration::from_secs_f64(seconds);

    let unix = netcode_std::unix_time();
    let mut pool = persist_requests(POOL, unix);
    let tokens: Vec<UsedToken> = pool.iter().map(|r| *r.token()).collect();
    println!(
        "commit [{label}]: dir {} | {seconds} s per mode, {rounds} rounds, poll {} µs | load {}",
        dir.display(),
        poll.as_micros(),
        load_average()
    );
    let mut results = Vec::new();
    for round in 1..=rounds {
        let path = scratch(&dir, &format!("commit-{round}"));
        let (one, mut latencies) = one_sync_per_token(&path, &tokens, period);
        remove(&path);
        let group = group_commit(&path, &mut pool, period, poll);
        remove(&path);
        let r = Round {
            one_per_second: one,
            sync_p50_ms: quantile_ms(&mut latencies, 0.5),
            sync_p99_ms: quantile_ms(&mut latencies, 0.99),
            group_per_second: group.0,
            syncs_per_second: group.1,
            records_per_sync: group.0 / group.1.max(f64::MIN_POSITIVE),
        };
        println!(
            "round {round} [{label}]: one sync per token {:.0} tokens/s (record p50 {:.2} ms, p99 {:.2} ms) | group commit {:.0} durable records/s, {:.0} syncs/s, {:.0} records/sync | ratio {:.1}x | load {}",
            r.one_per_second,
            r.sync_p50_ms,
            r.sync_p99_ms,
            r.group_per_second,
            r.syncs_per_second,
            r.records_per_sync,
            r.group_per_second / r.one_per_second,
            load_average()
        );
        results.push(r);
    }
    let spread = |f: fn(&Round) -> f64, decimals| {
        Spread::show(&results.iter().map(f).collect::<Vec<_>>(), decimals)
    };
    println!("summary [{label}], median (min–max) over {rounds} rounds:");
    println!(
        "  one sync per token: {} tokens/s; record p50 {} ms, p99 {} ms",
        spread(|r| r.one_per_second, 0),
        spread(|r| r.sync_p50_ms, 2),
        spread(|r| r.sync_p99_ms, 2)
    );
    println!(
        "  group commit: {} durable records/s; {} syncs/s; {} records/sync",
        spread(|r| r.group_per_second, 0),
        spread(|r| r.syncs_per_second, 0),
        spread(|r| r.records_per_sync, 0)
    );
    println!(
        "  ratio group / one sync per token (per round): {}x",
        spread(|r| r.group_per_second / r.one_per_second, 1)
    );
    Ok(())
}

/// Tokens made durable per second by `record` in a loop for `period`, and
/// each call's wall time.
fn one_sync_per_token(path: &Path, tokens: &[UsedToken], period: Duration) -> (f64, Vec<Duration>) {
    let mut store = HistoryStore::open(path, netcode_std::unix_time())
        .expect("a new history file")
        .store;
    let mut latencies = Vec::with_capacity(16 * 1024);
    let start = Instant::now();
    let mut next = tokens.iter().cycle();
    loop {
        let before = Instant::now();
        if before - start >= period {
            break;
        }
        let token = next.next().expect("a token");
        store.record(token).expect("a durable record");
        latencies.push(before.elapsed());
    }
    let elapsed = start.elapsed().as_secs_f64();
    (latencies.len() as f64 / elapsed, latencies)
}

/// Durable records per second and syncs per second of a writer kept full
/// for `period` from `pool`, checked every `poll`. Every request is back
/// in `pool` afterwards.
fn group_commit(
    path: &Path,
    pool: &mut Vec<PersistRequest>,
    period: Duration,
    poll: Duration,
) -> (f64, f64) {
    let store = HistoryStore::open(path, netcode_std::unix_time())
        .expect("a new history file")
        .store;
    let mut writer = HistoryWriter::spawn(store).expect("a writer thread");
    let start = Instant::now();
    let stats = loop {
        while let Some(request) = pool.pop() {
            if let Err(request) = writer.submit(request) {
                pool.push(request);
                break;
            }
        }
        for (request, outcome) in writer.finished() {
            assert_eq!(outcome, PersistOutcome::Durable, "a record failed");
            pool.push(request);
        }
        if start.elapsed() >= period {
            break writer.stats();
        }
        std::thread::sleep(poll);
    };
    let elapsed = start.elapsed().as_secs_f64();
    while writer.in_flight() > 0 {
        pool.extend(writer.finished().map(|(request, _)| request));
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(stats.records_failed, 0, "no record failed");
    (
        stats.records_durable as f64 / elapsed,
        stats.syncs as f64 / elapsed,
    )
}

/// `count` persist requests from as many fresh tokens issued at `unix`,
/// each from its own address, as a core server started restored hands
/// them to its output.
fn persist_requests(count: usize, unix: u64) -> Vec<PersistRequest> {
    let key = Key::from_bytes(PRIVATE_KEY);
    let storage = HeapStorage::new(count.div_ceil(8));
    let mut server = Server::new(ServerConfig::new(PROTOCOL_ID, key.clone(), SERVER), storage)
        .expect("a server");
    let mut rng = netcode_std::os_random();
    let empty = RestoredHistory {
        recorded_since: unix - 100,
        latest_unix_seconds: unix,
        tokens: &[],
    };
    let mut requests = Vec::with_capacity(count);
    server
        .start_restored(
            netcode_proto::Instant::ZERO,
            unix,
            16,
            &mut rng,
            &empty,
            &mut Collect(&mut requests),
        )
        .expect("a started server");
    for i in 0..count {
        let params = ConnectTokenParams {
            protocol_id: PROTOCOL_ID,
            private_key: &key,
            client_id: i as u64,
            public_addresses: &[SERVER],
            internal_addresses: None,
            create_timestamp: unix,
            expire_seconds: 30,
            timeout_seconds: 5,
            user_data: &USER_DATA,
        };
        let token = generate_connect_token(&params, &mut rng)
            .expect("a token")
            .write()
            .expect("token bytes");
        let (mut bytes, len) = request_bytes(&token);
        let from = SocketAddr::from(([10, (i >> 16) as u8, (i >> 8) as u8, i as u8], 5000));
        server.handle(
            netcode_proto::Instant::ZERO,
            from,
            &mut bytes[..len],
            &mut Collect(&mut requests),
        );
    }
    assert_eq!(requests.len(), count, "one persist request per new token");
    requests
}

/// An output that keeps the persist requests and nothing else.
struct Collect<'a>(&'a mut Vec<PersistRequest>);

impl Output<ServerEvent> for Collect<'_> {
    fn send(&mut self, _to: SocketAddr, _datagram: &[u8]) {}

    fn event(&mut self, _event: ServerEvent) {}

    fn persist_used_token(&mut self, request: PersistRequest) {
        self.0.push(request);
    }
}
