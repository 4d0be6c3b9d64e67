//! Soak: 256 clients connecting, exchanging, disconnecting and reconnecting
//! for a long stretch of simulated time (one hour by default) over a lossy,
//! jittery, duplicating simulated network. Every payload that arrives is
//! checked, every datagram is accounted for, and at the end a full house of
//! fresh clients must connect (nothing leaked).
//!
//! Run: `cargo run --release -p netcode-examples --example soak -- [--minutes N] [--seed S]`
//! (`--help` says what it takes, prints and how it exits).

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use lexopt::{Arg, Parser};
use netcode_examples::{CommandLineError, run_program, unexpected, value};
use netcode_proto::client::ClientState;
use netcode_proto::seeded::SeededRng;
use netcode_proto::server::{HeapStorage, ServerEvent};
use netcode_proto::sim::{SimConfig, World};

const CLIENTS: usize = 256;
const FRAME: Duration = Duration::from_millis(100);

/// The world (network, server, clients, clock) and what the soak counted.
struct Soak {
    world: World,
    /// The world's time when the soak began.
    start: netcode_proto::Instant,
    server_address: SocketAddr,
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
        let storage = HeapStorage::new(CLIENTS);
        let mut world = World::with_storage(network, seed, storage, CLIENTS, server_address);
        for i in 0..CLIENTS {
            world.add_client(&format!("10.1.{}.{}:5000", i / 250, i % 250 + 1));
        }
        Ok(Self {
            start: world.now,
            world,
            server_address,
            next_id: 1,
            connections: 0,
            payloads_checked: 0,
        })
    }

    /// Simulated seconds since the soak began.
    fn seconds(&self) -> u64 {
        (self.world.now - self.start).as_secs()
    }

    fn connect(&mut self, c: usize) -> Result<(), String> {
        let token = self
            .world
            .token_for(self.next_id, &[self.server_address], 30, 5);
        self.next_id += 1;
        self.world.connect(c, &token);
        match self.world.state(c) {
            ClientState::InvalidConnectToken => Err(format!("client {c} refused its token")),
            _ => Ok(()),
        }
    }

    /// One frame: the world delivers what is due and updates everyone;
    /// then every payload that arrived is checked and every event counted.
    fn step(&mut self) -> Result<(), String> {
        self.world.step(FRAME);
        let now = self.world.now;
        let server = &mut self.world.servers[0];
        for (_, _, data) in server.received.drain(..) {
            if !intact(&data) {
                return Err(format!("corrupt payload at the server at {now:?}"));
            }
            self.payloads_checked += 1;
        }
        self.connections += server
            .events
            .drain(..)
            .filter(|e| matches!(e, ServerEvent::ClientConnected { .. }))
            .count() as u64;
        for (c, node) in self.world.clients.iter_mut().enumerate() {
            for (_, data) in node.received.drain(..) {
                if !intact(&data) {
                    return Err(format!("corrupt payload at client {c} at {now:?}"));
                }
                self.payloads_checked += 1;
            }
            node.events.clear();
        }
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
            match soak.world.state(c) {
                ClientState::Connected if roll(300) == 0 => soak.world.client_disconnect(c),
                ClientState::Connected if roll(2) == 0 => {
                    let data = payload(1 + roll(1200) as usize, roll(256) as u8);
                    let now = soak.world.now;
                    let node = &mut soak.world.clients[c];
                    let mut out = soak.world.sim.output(now, node.address, &mut node.events);
                    let _ = node.client.send_payload(now, &data, &mut out);
                }
                s if !s.is_active() && roll(20) == 0 => soak.connect(c)?,
                _ => {}
            }
        }
        for index in 0..CLIENTS {
            if soak.world.server(0).client_connected(index) && roll(3) == 0 {
                let data = payload(1 + roll(1200) as usize, roll(256) as u8);
                let _ = soak.world.with_server(0, |server, now, out| {
                    server.send_payload(now, index, &data, out)
                });
            }
        }
        soak.step()?;
        if frame % 6000 == 0 {
            println!(
                "[{:>5} s simulated] {} connected, {} connections so far, {} payloads checked",
                soak.seconds(),
                soak.world.server(0).num_connected_clients(),
                soak.connections,
                soak.payloads_checked
            );
        }
    }

    // Accounting: every datagram sent entered the network and every one
    // delivered was processed or dropped with a reason.
    let sim = soak.world.sim.stats();
    let server_stats = soak.world.server(0).stats();
    let clients = &soak.world.clients;
    let sent = server_stats.sent.iter().sum::<u64>()
        + clients
            .iter()
            .map(|c| c.client.stats().sent.iter().sum::<u64>())
            .sum::<u64>();
    let handled = server_stats.received.iter().sum::<u64>()
        + server_stats.dropped_total()
        + clients
            .iter()
            .map(|c| {
                let stats = c.client.stats();
                stats.received.iter().sum::<u64>() + stats.dropped_total()
            })
            .sum::<u64>();
    if sent != sim.sent || handled != sim.delivered {
        return Err(format!(
            "accounting: sent {sent} vs {}, handled {handled} vs {}",
            sim.sent, sim.delivered
        ));
    }

    // Leaks: after everyone leaves and every token expires, a full house connects.
    for c in 0..CLIENTS {
        soak.world.client_disconnect(c);
    }
    for _ in 0..400 {
        soak.step()?;
    }
    soak.world.sim.set_config(SimConfig::default());
    for c in 0..CLIENTS {
        soak.connect(c)?;
    }
    for _ in 0..30 {
        soak.step()?;
    }
    let connected = soak.world.server(0).num_connected_clients();
    if connected != CLIENTS {
        return Err(format!(
            "only {connected} of {CLIENTS} fresh clients connected"
        ));
    }
    println!(
        "soak passed: {} simulated s, {} connections, {} payloads checked, {} datagrams sent, {} lost, {} duplicated, in {:.1} s",
        soak.seconds(),
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
