//! Soak: 256 clients connecting, exchanging, disconnecting and reconnecting
//! for a long stretch of simulated time (one hour by default) over a lossy,
//! jittery, duplicating simulated network. Every payload that arrives is
//! checked, every datagram is accounted for, and at the end a full house of
//! fresh clients must connect (nothing leaked).
//!
//! Run: `cargo run --release -p netcode-examples --example soak -- [--minutes N] [--seed S]`
//! (`--help` says what it takes, prints and how it exits).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use lexopt::{Arg, Parser};
use netcode_examples::{CommandLineError, run_program, unexpected, value};
use netcode_proto::Key;
use netcode_proto::client::{Client, ClientEvent, ClientState};
use netcode_proto::seeded::SeededRng;
use netcode_proto::server::{HeapStorage, Server, ServerConfig, ServerEvent};
use netcode_proto::sim::{NetworkSimulator, SimConfig};
use netcode_proto::token::{ConnectTokenParams, generate_connect_token};

const CLIENTS: usize = 256;
const PROTOCOL_ID: u64 = 0x1122_3344_5566_7788;
const FRAME: Duration = Duration::from_millis(100);
const UNIX_START: u64 = 1_800_000_000;

struct Soak {
    sim: NetworkSimulator,
    now: Duration,
    server_address: SocketAddr,
    server: Server<HeapStorage>,
    server_events: Vec<ServerEvent>,
    clients: Vec<(SocketAddr, Client, Vec<ClientEvent>)>,
    by_address: HashMap<SocketAddr, usize>,
    rng: SeededRng,
    key: Key,
    next_id: u64,
    connections: u64,
    payloads_checked: u64,
}

/// Byte i of a payload is its first byte plus i: self-checking.
fn payload(len: usize, first: u8) -> Vec<u8> {
    (0..len).map(|i| first.wrapping_add(i as u8)).collect()
}

fn intact(data: &[u8]) -> bool {
    data.iter()
        .enumerate()
        .all(|(i, b)| *b == data[0].wrapping_add(i as u8))
}

impl Soak {
    fn new(seed: u64) -> Result<Self, String> {
        let network = SimConfig {
            latency: Duration::from_millis(50),
            jitter: Duration::from_millis(30),
            loss_percent: 5.0,
            duplicate_percent: 5.0,
            ..SimConfig::default()
        };
        let server_address: SocketAddr = "10.0.0.1:40000".parse().map_err(|e| format!("{e}"))?;
        let key = Key::from_bytes([0x42; 32]);
        let config = ServerConfig::new(PROTOCOL_ID, key.clone(), server_address);
        let server = Server::new(config, HeapStorage::new(CLIENTS)).map_err(|e| e.to_string())?;
        let mut soak = Self {
            sim: NetworkSimulator::new(network, seed),
            now: Duration::ZERO,
            server_address,
            server,
            server_events: Vec::new(),
            clients: Vec::new(),
            by_address: HashMap::new(),
            rng: SeededRng::new(seed),
            key,
            next_id: 1,
            connections: 0,
            payloads_checked: 0,
        };
        let mut out = soak
            .sim
            .output(soak.now, server_address, &mut soak.server_events);
        soak.server
            .start(soak.now, UNIX_START, CLIENTS, &mut soak.rng, &mut out)
            .map_err(|e| e.to_string())?;
        for i in 0..CLIENTS {
            let address: SocketAddr = format!("10.1.{}.{}:5000", i / 250, i % 250 + 1)
                .parse()
                .map_err(|e| format!("{e}"))?;
            soak.by_address.insert(address, i);
            soak.clients.push((address, Client::new(), Vec::new()));
        }
        Ok(soak)
    }

    fn unix(&self) -> u64 {
        UNIX_START + self.now.as_secs()
    }

    fn connect(&mut self, c: usize) -> Result<(), String> {
        let user_data = [0u8; 256];
        let params = ConnectTokenParams {
            protocol_id: PROTOCOL_ID,
            private_key: &self.key,
            client_id: self.next_id,
            public_addresses: &[self.server_address],
            internal_addresses: None,
            create_timestamp: self.unix(),
            expire_seconds: 30,
            timeout_seconds: 5,
            user_data: &user_data,
        };
        self.next_id += 1;
        let token = generate_connect_token(&params, &mut self.rng).map_err(|e| e.to_string())?;
        let token = token.write().map_err(|e| e.to_string())?;
        let (address, client, events) = &mut self.clients[c];
        let mut out = self.sim.output(self.now, *address, events);
        client
            .connect(self.now, &token, &mut out)
            .map_err(|e| e.to_string())
    }

    fn step(&mut self) -> Result<(), String> {
        self.now += FRAME;
        let now = self.now;
        while let Some(mut d) = self.sim.receive_any(now) {
            if d.to == self.server_address {
                let mut out = self
                    .sim
                    .output(now, self.server_address, &mut self.server_events);
                if let Some((_, p)) = self.server.handle(now, d.from, &mut d.bytes, &mut out) {
                    if !intact(p.data) {
                        return Err(format!("corrupt payload at the server at {now:?}"));
                    }
                    self.payloads_checked += 1;
                }
            } else if let Some(&c) = self.by_address.get(&d.to) {
                let (address, client, events) = &mut self.clients[c];
                let mut out = self.sim.output(now, *address, events);
                if let Some(p) = client.handle(now, d.from, &mut d.bytes, &mut out) {
                    if !intact(p.data) {
                        return Err(format!("corrupt payload at client {c} at {now:?}"));
                    }
                    self.payloads_checked += 1;
                }
            }
        }
        for (address, client, events) in &mut self.clients {
            let mut out = self.sim.output(now, *address, events);
            client.update(now, &mut out);
            events.clear();
        }
        let unix = self.unix();
        let mut out = self
            .sim
            .output(now, self.server_address, &mut self.server_events);
        self.server.update(now, unix, &mut out);
        self.connections += self
            .server_events
            .drain(..)
            .filter(|e| matches!(e, ServerEvent::ClientConnected { .. }))
            .count() as u64;
        Ok(())
    }
}

fn run(minutes: u64, seed: u64) -> Result<(), String> {
    let mut soak = Soak::new(seed)?;
    let mut dice = SeededRng::new(seed ^ 0xd1ce);
    let mut roll = move |n: u64| rand_next(&mut dice) % n;
    let started = Instant::now();
    let frames = minutes * 60 * 10;
    for frame in 0..frames {
        for c in 0..CLIENTS {
            let now = soak.now;
            match soak.clients[c].1.state() {
                ClientState::Connected if roll(300) == 0 => {
                    let (address, client, events) = &mut soak.clients[c];
                    client.disconnect(now, &mut soak.sim.output(now, *address, events));
                }
                ClientState::Connected if roll(2) == 0 => {
                    let data = payload(1 + roll(1200) as usize, roll(256) as u8);
                    let (address, client, events) = &mut soak.clients[c];
                    let _ = client.send_payload(
                        now,
                        &data,
                        &mut soak.sim.output(now, *address, events),
                    );
                }
                s if !s.is_active() && roll(20) == 0 => soak.connect(c)?,
                _ => {}
            }
        }
        for index in 0..CLIENTS {
            if soak.server.client_connected(index) && roll(3) == 0 {
                let data = payload(1 + roll(1200) as usize, roll(256) as u8);
                let now = soak.now;
                let mut out = soak
                    .sim
                    .output(now, soak.server_address, &mut soak.server_events);
                let _ = soak.server.send_payload(now, index, &data, &mut out);
            }
        }
        soak.step()?;
        if frame % 6000 == 0 {
            println!(
                "[{:>5} s simulated] {} connected, {} connections so far, {} payloads checked",
                soak.now.as_secs(),
                soak.server.num_connected_clients(),
                soak.connections,
                soak.payloads_checked
            );
        }
    }

    // Accounting: every datagram sent entered the network and every one
    // delivered was processed or dropped with a reason.
    let sim = soak.sim.stats();
    let sent = soak.server.stats().sent.iter().sum::<u64>()
        + soak
            .clients
            .iter()
            .map(|c| c.1.stats().sent.iter().sum::<u64>())
            .sum::<u64>();
    let handled = soak.server.stats().received.iter().sum::<u64>()
        + soak.server.stats().dropped_total()
        + soak
            .clients
            .iter()
            .map(|c| c.1.stats().received.iter().sum::<u64>() + c.1.stats().dropped_total())
            .sum::<u64>();
    if sent != sim.sent || handled != sim.delivered {
        return Err(format!(
            "accounting: sent {sent} vs {}, handled {handled} vs {}",
            sim.sent, sim.delivered
        ));
    }

    // Leaks: after everyone leaves and every token expires, a full house connects.
    for c in 0..CLIENTS {
        let now = soak.now;
        let (address, client, events) = &mut soak.clients[c];
        client.disconnect(now, &mut soak.sim.output(now, *address, events));
    }
    for _ in 0..400 {
        soak.step()?;
    }
    soak.sim.set_config(SimConfig::default());
    for c in 0..CLIENTS {
        soak.connect(c)?;
    }
    for _ in 0..30 {
        soak.step()?;
    }
    if soak.server.num_connected_clients() != CLIENTS {
        return Err(format!(
            "only {} of {CLIENTS} fresh clients connected",
            soak.server.num_connected_clients()
        ));
    }
    println!(
        "soak passed: {} simulated s, {} connections, {} payloads checked, {} datagrams sent, {} lost, {} duplicated, in {:.1} s",
        soak.now.as_secs(),
        soak.connections,
        soak.payloads_checked,
        sim.sent,
        sim.lost,
        sim.duplicated,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn rand_next(rng: &mut SeededRng) -> u64 {
    use netcode_proto::rand_core::Rng;
    rng.next_u64()
}

/// What `--help` prints.
const USAGE: &str = "\
soak: 256 clients churning on a lossy simulated network for a long time

usage: cargo run --release -p netcode-examples --example soak -- [--minutes N] [--seed S]

The sans-IO core alone, in one process on simulated time: 256 clients
connect, exchange self-checking payloads, disconnect and reconnect over
a network with 50 ms latency, 30 ms jitter, 5% loss and 5% duplicates.
Every payload that arrives is checked and every datagram accounted for;
at the end every client leaves and a full house of fresh clients must
connect (nothing leaked). It prints progress every 10 simulated minutes
and a summary, and exits 0, or prints one `error:` line and exits 1.

options:
  --minutes N  simulated minutes to run (default 60)
  --seed S     seed of the network and of the clients' choices (default 1)
  -h, --help   print this help
";

pub(crate) fn main() -> ExitCode {
    run_program(USAGE, parse, |(minutes, seed)| run(minutes, seed))
}

/// The simulated minutes and the seed.
fn parse(parser: &mut Parser) -> Result<(u64, u64), CommandLineError> {
    let (mut minutes, mut seed) = (60, 1);
    while let Some(arg) = parser.next()? {
        match arg {
            Arg::Long("minutes") => minutes = value(parser, "--minutes", "a whole number")?,
            Arg::Long("seed") => seed = value(parser, "--seed", "a whole number")?,
            other => return Err(unexpected(other)),
        }
    }
    Ok((minutes, seed))
}
