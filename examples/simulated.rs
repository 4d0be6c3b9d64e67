//! A client and a server on a simulated lossy network, in one process and on
//! simulated time: a connect token is issued, the handshake runs, payloads
//! flow both ways, and the client disconnects. Prints what happens.
//!
//! Run: `cargo run --release -p netcode-examples --example simulated`
//! (no arguments; `--help` says what it prints and how it exits).

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use netcode_examples::{no_arguments, run_program};
use netcode_proto::Instant;
use netcode_proto::client::{ClientEvent, ClientState};
use netcode_proto::server::HeapStorage;
use netcode_proto::sim::{SimConfig, World};
use netcode_proto::token::ConnectToken;

const FRAME: Duration = Duration::from_millis(16);
const SLOTS: usize = 64;

/// What `--help` prints.
const USAGE: &str = "\
simulated: a client and a server on a simulated lossy network

usage: cargo run --release -p netcode-examples --example simulated

The sans-IO core alone, in one process on simulated time (it finishes
at once): a connect token is issued, the client connects over a network
with 40 ms latency, 20 ms jitter, 10% loss and 5% duplicates, payloads
go to the server and are echoed back, and the client disconnects. It
prints each state change and server event, the payload counts and what
was dropped and lost, and exits 0, or prints one `error:` line and exits
1 if a payload is corrupt or the session does not complete.
It takes no arguments.

options:
  -h, --help   print this help
";

pub(crate) fn main() -> ExitCode {
    run_program(USAGE, no_arguments, |()| run())
}

fn run() -> Result<(), String> {
    let server_address: SocketAddr = "127.0.0.1:40000".parse().map_err(|e| format!("{e}"))?;
    let network = SimConfig {
        latency: Duration::from_millis(40),
        jitter: Duration::from_millis(20),
        loss_percent: 10.0,
        duplicate_percent: 5.0,
        ..SimConfig::default()
    };
    // The world: the network, a server started with every slot open, and
    // the simulated clock (monotonic and unix time).
    let mut world = World::with_storage(network, 1, HeapStorage::new(SLOTS), SLOTS, server_address);
    let client = world.add_client("127.0.0.1:50000");
    let start = world.now;

    // What a web backend does: issue a token for an authenticated client
    // (the world's backend holds the servers' key).
    let token = world.token_for(0x2a, &[server_address], 30, 5);
    let parsed = ConnectToken::read(&token).map_err(|e| e.to_string())?;
    println!(
        "token: {} bytes, protocol id {:#x}, expires in {} s, servers {:?}",
        token.len(),
        parsed.protocol_id,
        parsed.lifetime_seconds(),
        &parsed.server_addresses[..]
    );
    println!("network: 40 ms latency, 20 ms jitter, 10% loss, 5% duplicates");
    world.connect(client, &token);

    let (mut to_server, mut to_client) = (0usize, 0usize);
    for frame in 0..600u32 {
        // Deliver what is due, then update the client and the server.
        world.step(FRAME);
        // The server echoes every payload it received this frame.
        for (index, _, data) in std::mem::take(&mut world.servers[0].received) {
            check(&data, frame)?;
            to_server += 1;
            let _ = world.with_server(0, |server, now, out| {
                server.send_payload(now, index, &data, out)
            });
        }
        for (_, data) in world.clients[client].received.drain(..) {
            check(&data, frame)?;
            to_client += 1;
        }
        if world.state(client) == ClientState::Connected && frame % 4 == 0 {
            let payload = pattern(1 + (frame as usize * 37) % 1200);
            let now = world.now;
            let node = &mut world.clients[client];
            let mut out = world.sim.output(now, node.address, &mut node.events);
            let _ = node.client.send_payload(now, &payload, &mut out);
        }
        print_events(&mut world, client, start);
        if to_server >= 50 && to_client >= 40 {
            break;
        }
    }
    println!("payloads: {to_server} reached the server, {to_client} echoed back, all intact");
    world.client_disconnect(client);
    world.clients[client].updating = false;
    for _ in 0..20 {
        world.step(FRAME);
    }
    world.clients[client].events.clear();
    print_events(&mut world, client, start);
    let sim = world.sim.stats();
    println!(
        "client dropped {} datagrams, server dropped {}; network lost {} and duplicated {}",
        world.clients[client].client.stats().dropped_total(),
        world.server(0).stats().dropped_total(),
        sim.lost,
        sim.duplicated
    );
    if to_server == 0 || to_client == 0 || world.server(0).num_connected_clients() != 0 {
        return Err("the session did not complete".into());
    }
    Ok(())
}

/// Prints and forgets the client's state changes and the server's events,
/// with the simulated time since `start`.
fn print_events(world: &mut World, client: usize, start: Instant) {
    let seconds = (world.now - start).as_secs_f64();
    for event in world.clients[client].events.drain(..) {
        let ClientEvent::StateChanged { from, to } = event;
        println!("[{seconds:>6.3} s] client: {from} -> {to}");
    }
    for event in world.servers[0].events.drain(..) {
        println!("[{seconds:>6.3} s] server: {event:?}");
    }
}

fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 256) as u8).collect()
}

fn check(payload: &[u8], frame: u32) -> Result<(), String> {
    if payload
        .iter()
        .enumerate()
        .all(|(i, b)| *b == (i % 256) as u8)
    {
        Ok(())
    } else {
        Err(format!("corrupt payload at frame {frame}"))
    }
}
