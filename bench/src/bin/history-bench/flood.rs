//! `history-bench flood`: the longest `update` of a `netcode_std::Server`
//! with a token history file while a flood of valid connection requests,
//! each from a fresh token, asks for records, with three connected clients
//! exchanging payloads throughout.
//!
//! Each round: a server on `127.0.0.1` (an ephemeral port) with a new
//! history file in `--dir`, started with `--max-clients` slots (the token
//! history holds 8 per slot, at least 2048); once `start` returns, the
//! three clients' tokens and the flood's are minted (`--rate` ×
//! `--flood-seconds` tokens, each turned into its first connection request
//! by a `netcode_proto` client, before anything is timed). The clients run
//! on a thread of their own at 100 Hz, each sending a 100-byte payload per
//! tick, which the server echoes; once all three are connected and a
//! second has passed, a thread sends the flood from `--sources` sockets on
//! 127.0.0.1, paced at `--rate` per second, each request once. The server
//! loop updates at `--hz` (sleeping to the next tick, or going on at once
//! when late) for the flood and `--settle` seconds after it, timing every
//! `update` call with `Instant` around it.
//!
//! `--file off` runs the same flood against a server without a history
//! file, for comparison.
//!
//! A client is counted lost if its state left `Connected` or the server
//! reported it disconnected. The longest gap between two echoes a client
//! received says how long the game stalled as a player would see it.

use std::net::UdpSocket;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use netcode_bench::cli::{Options, Spread};
use netcode_bench::fixtures::{PRIVATE_KEY, PROTOCOL_ID, payload, request_bytes};
use netcode_bench::machine::load_average;
use netcode_proto::PacketType;
use netcode_proto::stats::DropReason;
use netcode_std::{
    BindMode, Client, ClientState, ConnectTokenBuilder, Key, Server, ServerConfig, ServerEvent,
};

use crate::summary::{quantile_ms, remove, scratch};

/// Clients connected through the flood.
const CLIENTS: usize = 3;

/// What one round measured.
struct Round {
    longest_ms: f64,
    /// Challenges the longest update sent, and the most any update sent.
    longest_challenges: u64,
    most_challenges: u64,
    p99_ms: f64,
    updates: usize,
    lost: usize,
    longest_gap_ms: f64,
    sent: usize,
    /// Challenges the server sent in the window (with a history file:
    /// requests answered once their records were durable).
    challenges: u64,
    /// Denials the server sent in the window (every slot taken).
    denials: u64,
    durable: u64,
    syncs: u64,
    refused: u64,
    history_full: u64,
    mapping_full: u64,
    most_pending: usize,
    /// Seconds from the flood's start until no record was pending, after
    /// its last request was sent (`None`: not within the round).
    settled_after: Option<f64>,
}

/// The round's settings.
struct Settings {
    rate: f64,
    flood: Duration,
    settle: Duration,
    tick: Duration,
    max_clients: usize,
    sources: usize,
    /// Whether the server has a history file (`--file off`: the same
    /// flood against a server without one, for comparison).
    file: bool,
}

/// Runs the case with `options`.
pub(crate) fn run(mut options: Options) -> Result<(), String> {
    let dir: std::path::PathBuf = options.get("dir", std::env::temp_dir())?;
    let rounds: usize = options.get("rounds", 3)?;
    let label: String = options.get("label", "run".to_string())?;
    let settings = Settings {
        rate: options.get("rate", 15_000.0)?,
        flood: Duration::from_secs_f64(options.get("flood-seconds", 1.0)?),
        settle: Duration::from_secs_f64(options.get("settle", 6.0)?),
        tick: Duration::from_secs_f64(1.0 / options.get("hz", 100.0)?),
        max_clients: options.get("max-clients", 64)?,
        sources: options.get("sources", 4)?,
        file: match options.get("file", "on".to_string())?.as_str() {
            "on" => true,
            "off" => false,
            other => return Err(format!("--file on|off, not {other}")),
        },
    };
    options.finish()?;
    println!(
        "flood [{label}]: dir {} | {} requests/s for {:.1} s, {} sources, then {:.1} s; update every {:.1} ms; {} slots; history file {} | load {}",
        dir.display(),
        settings.rate,
        settings.flood.as_secs_f64(),
        settings.sources,
        settings.settle.as_secs_f64(),
        settings.tick.as_secs_f64() * 1e3,
        settings.max_clients,
        if settings.file { "on" } else { "off" },
        load_average()
    );
    let mut results = Vec::new();
    for round in 1..=rounds {
        let path = scratch(&dir, &format!("flood-{round}"));
        let r = flood_round(&path, &settings);
        remove(&path);
        let settled = r
            .settled_after
            .map_or("not within the round".to_string(), |s| format!("{s:.2} s"));
        println!(
            "round {round} [{label}]: longest update {:.2} ms ({} challenges sent in it; at most {} in one update), p99 {:.3} ms ({} updates) | clients lost {}/{CLIENTS}, longest echo gap {:.1} ms | flood sent {}, answered with {} challenges and {} denials | flood records durable {} in {} syncs ({:.0}/sync), handed back {}; dropped: history full {}, mapping table full {} | most pending {}, none pending {} after the flood began | load {}",
            r.longest_ms,
            r.longest_challenges,
            r.most_challenges,
            r.p99_ms,
            r.updates,
            r.lost,
            r.longest_gap_ms,
            r.sent,
            r.challenges,
            r.denials,
            r.durable,
            r.syncs,
            r.durable as f64 / r.syncs.max(1) as f64,
            r.refused,
            r.history_full,
            r.mapping_full,
            r.most_pending,
            settled,
            load_average()
        );
        results.push(r);
    }
    let spread = |f: fn(&Round) -> f64, decimals| {
        Spread::show(&results.iter().map(f).collect::<Vec<_>>(), decimals)
    };
    println!("summary [{label}], median (min–max) over {rounds} rounds:");
    println!(
        "  longest update {} ms; p99 update {} ms; longest echo gap {} ms",
        spread(|r| r.longest_ms, 2),
        spread(|r| r.p99_ms, 3),
        spread(|r| r.longest_gap_ms, 1)
    );
    println!(
        "  challenges sent in the longest update {}; at most in one update {}",
        spread(|r| r.longest_challenges as f64, 0),
        spread(|r| r.most_challenges as f64, 0)
    );
    println!(
        "  clients lost (sum over rounds): {}/{}",
        results.iter().map(|r| r.lost).sum::<usize>(),
        CLIENTS * rounds
    );
    println!(
        "  flood records durable {}; syncs {}; records/sync {}; most pending {}",
        spread(|r| r.durable as f64, 0),
        spread(|r| r.syncs as f64, 0),
        spread(|r| r.durable as f64 / r.syncs.max(1) as f64, 0),
        spread(|r| r.most_pending as f64, 0)
    );
    let settled: Vec<f64> = results.iter().filter_map(|r| r.settled_after).collect();
    if !settled.is_empty() {
        println!(
            "  none pending after (s from the flood's start, {} of {rounds} rounds): {}",
            settled.len(),
            Spread::show(&settled, 2)
        );
    }
    Ok(())
}

/// One round (see the module documentation).
fn flood_round(path: &Path, settings: &Settings) -> Round {
    let key = Key::from_bytes(PRIVATE_KEY);
    let mut config = ServerConfig::new(PROTOCOL_ID, key.clone());
    config.token_history_file = settings.file.then(|| path.to_path_buf());
    config.bind_mode = BindMode::Exact;
    let mut server = Server::new("127.0.0.1:0", config).expect("a server");
    server
        .start(settings.max_clients)
        .expect("a started server");
    let address = server.public_address();

    // Minted after `start` returned: the restart rule admits them.
    let token = |client_id: u64| {
        ConnectTokenBuilder::new(PROTOCOL_ID, &key, client_id)
            .server_addresses([address])
            .generate()
            .expect("a token")
    };
    let client_tokens: Vec<_> = (0..CLIENTS as u64).map(token).collect();
    let count = (settings.rate * settings.flood.as_secs_f64()).round() as usize;
    let mut requests: Option<Vec<Vec<u8>>> = Some(
        (0..count)
            .map(|i| {
                let (bytes, len) = request_bytes(&token(1_000 + i as u64));
                bytes[..len].to_vec()
            })
            .collect(),
    );

    let stop = Arc::new(AtomicBool::new(false));
    let connected = Arc::new(AtomicUsize::new(0));
    let clients = std::thread::spawn({
        let (stop, connected) = (Arc::clone(&stop), Arc::clone(&connected));
        move || run_clients(&client_tokens, &stop, &connected)
    });

    let epoch = Instant::now();
    let mut next = Instant::now();
    let mut durations = Vec::new();
    let mut longest = (Duration::ZERO, 0);
    let mut most_challenges = 0;
    let mut slots = Vec::new();
    let mut disconnected = 0;
    let mut flood = None;
    let mut flood_start = None;
    let mut all_connected_at = None;
    let mut before = None;
    let mut before_stats = server.stats();
    let mut most_pending = 0;
    let mut settled_after = None;
    loop {
        let now = Instant::now();
        if all_connected_at.is_none() && connected.load(Ordering::Relaxed) == CLIENTS {
            all_connected_at = Some(now);
        }
        assert!(
            all_connected_at.is_some() || now - epoch < Duration::from_secs(10),
            "the clients did not connect"
        );
        let ready = all_connected_at.is_some_and(|t| now - t >= Duration::from_secs(1));
        if ready && let Some(requests) = requests.take() {
            before = server.token_history_stats();
            before_stats = server.stats();
            flood = Some(std::thread::spawn({
                let (rate, sources) = (settings.rate, settings.sources);
                move || send_flood(address, &requests, rate, sources)
            }));
            flood_start = Some(now);
        }
        if let Some(start) = flood_start {
            if now - start >= settings.flood + settings.settle {
                break;
            }
            let pending = server.token_records_pending();
            most_pending = most_pending.max(pending);
            let sending = flood.as_ref().is_some_and(|f| !f.is_finished());
            if settled_after.is_none() && !sending && pending == 0 && now - start > settings.flood {
                settled_after = Some((now - start).as_secs_f64());
            }
        }

        let challenged = server.stats().sent(PacketType::Challenge);
        let called = Instant::now();
        server.update(epoch.elapsed().as_secs_f64());
        let took = called.elapsed();
        if flood_start.is_some() {
            let sent = server.stats().sent(PacketType::Challenge) - challenged;
            durations.push(took);
            most_challenges = most_challenges.max(sent);
            if took >= longest.0 {
                longest = (took, sent);
            }
        }
        while let Some(event) = server.poll_event() {
            match event {
                ServerEvent::ClientConnected { client_index, .. } => slots.push(client_index),
                ServerEvent::ClientDisconnected { client_index, .. } => {
                    slots.retain(|&i| i != client_index);
                    disconnected += 1;
                }
            }
        }
        for &index in &slots {
            while let Some(packet) = server.receive_packet(index) {
                let _ = server.send_packet(index, packet.data());
                server.free_packet(packet);
            }
        }
        next += settings.tick;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        } else {
            next = now;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let (client_lost, longest_gap) = clients.join().expect("the clients' thread");
    let sent = flood
        .expect("the flood ran")
        .join()
        .expect("the flood's thread");
    let after = server.token_history_stats().unwrap_or_default();
    let before = before.unwrap_or_default();
    let stats = server.stats();
    let lost = client_lost.max(disconnected);
    let longest_ms = quantile_ms(&mut durations, 1.0);
    Round {
        longest_ms,
        longest_challenges: longest.1,
        most_challenges,
        p99_ms: quantile_ms(&mut durations, 0.99),
        updates: durations.len(),
        lost,
        longest_gap_ms: longest_gap.as_secs_f64() * 1e3,
        sent,
        challenges: stats.sent(PacketType::Challenge) - before_stats.sent(PacketType::Challenge),
        denials: stats.sent(PacketType::Denied) - before_stats.sent(PacketType::Denied),
        durable: after.records_durable - before.records_durable,
        syncs: after.syncs - before.syncs,
        refused: after.requests_refused - before.requests_refused,
        history_full: stats.dropped(DropReason::TokenHistoryFull)
            - before_stats.dropped(DropReason::TokenHistoryFull),
        mapping_full: stats.dropped(DropReason::MappingTableFull)
            - before_stats.dropped(DropReason::MappingTableFull),
        most_pending,
        settled_after,
    }
}

/// Sends each of `requests` once to `server`, from `sources` sockets in
/// turn, request `i` at `i / rate` seconds after the start; the number
/// the system took.
fn send_flood(
    server: std::net::SocketAddr,
    requests: &[Vec<u8>],
    rate: f64,
    sources: usize,
) -> usize {
    let sockets: Vec<UdpSocket> = (0..sources.max(1))
        .map(|_| UdpSocket::bind("127.0.0.1:0").expect("a source socket"))
        .collect();
    let start = Instant::now();
    let mut sent = 0;
    let mut next = 0;
    while next < requests.len() {
        let due = ((start.elapsed().as_secs_f64() * rate) as usize).min(requests.len());
        while next < due {
            if sockets[next % sockets.len()]
                .send_to(&requests[next], server)
                .is_ok()
            {
                sent += 1;
            }
            next += 1;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    sent
}

/// The three clients at 100 Hz until `stop`: each sends a payload per tick
/// once connected and takes the echoes. Returns how many were lost (left
/// `Connected` after reaching it) and the longest gap between two echoes
/// any of them received.
fn run_clients(
    tokens: &[[u8; 2048]],
    stop: &AtomicBool,
    connected: &AtomicUsize,
) -> (usize, Duration) {
    let data = payload(100);
    let mut clients: Vec<Client> = tokens
        .iter()
        .map(|token| {
            let mut client = Client::new("127.0.0.1:0").expect("a client");
            client.connect(token).expect("a valid token");
            client
        })
        .collect();
    let mut was_connected = vec![false; clients.len()];
    let mut lost = vec![false; clients.len()];
    let mut last_echo: Vec<Option<Instant>> = vec![None; clients.len()];
    let mut longest_gap = Duration::ZERO;
    let epoch = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        let time = epoch.elapsed().as_secs_f64();
        for (i, client) in clients.iter_mut().enumerate() {
            client.update(time);
            let now_connected = client.state() == ClientState::Connected;
            if was_connected[i] && !now_connected {
                lost[i] = true;
            }
            was_connected[i] |= now_connected;
            if now_connected {
                let _ = client.send_packet(&data);
            }
            while let Some(packet) = client.receive_packet() {
                let now = Instant::now();
                if let Some(last) = last_echo[i] {
                    longest_gap = longest_gap.max(now - last);
                }
                last_echo[i] = Some(now);
                client.free_packet(packet);
            }
        }
        let count = clients
            .iter()
            .filter(|c| c.state() == ClientState::Connected)
            .count();
        connected.store(count, Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(10));
    }
    (lost.iter().filter(|&&l| l).count(), longest_gap)
}
