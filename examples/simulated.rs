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
use netcode_proto::client::{Client, ClientEvent, ClientState};
use netcode_proto::constants::USER_DATA_BYTES;
use netcode_proto::server::{HeapStorage, Server, ServerConfig, ServerEvent};
use netcode_proto::sim::{NetworkSimulator, SimConfig};
use netcode_proto::token::ConnectToken;
use netcode_std::{TokenRequest, generate_connect_token, generate_key, os_random, unix_time};

const PROTOCOL_ID: u64 = 0x1122_3344_5566_7788;
const FRAME: Duration = Duration::from_millis(16);

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
    let client_address: SocketAddr = "127.0.0.1:50000".parse().map_err(|e| format!("{e}"))?;
    let private_key = generate_key().map_err(|e| e.to_string())?;

    // What a web backend does: issue a token for an authenticated client.
    let user_data = [7u8; USER_DATA_BYTES];
    let token = generate_connect_token(&TokenRequest {
        protocol_id: PROTOCOL_ID,
        private_key: &private_key,
        client_id: 0x2a,
        public_addresses: &[server_address],
        internal_addresses: None,
        expire_seconds: 30,
        timeout_seconds: 5,
        user_data: Some(&user_data),
    })
    .map_err(|e| e.to_string())?;
    let parsed = ConnectToken::read(&token).map_err(|e| e.to_string())?;
    println!(
        "token: {} bytes, protocol id {:#x}, expires in {} s, servers {:?}",
        token.len(),
        parsed.protocol_id,
        parsed.lifetime_seconds(),
        &parsed.server_addresses[..]
    );

    let network = SimConfig {
        latency: Duration::from_millis(40),
        jitter: Duration::from_millis(20),
        loss_percent: 10.0,
        duplicate_percent: 5.0,
        ..SimConfig::default()
    };
    println!("network: 40 ms latency, 20 ms jitter, 10% loss, 5% duplicates");
    let mut sim = NetworkSimulator::new(network, 1);
    let config = ServerConfig::new(PROTOCOL_ID, private_key, server_address);
    let mut server = Server::new(config, HeapStorage::new(64)).map_err(|e| e.to_string())?;
    let mut client = Client::new();
    let mut server_events: Vec<ServerEvent> = Vec::new();
    let mut client_events: Vec<ClientEvent> = Vec::new();

    let mut now = Duration::ZERO;
    let unix = unix_time();
    server
        .start(
            now,
            unix,
            64,
            &mut os_random(),
            &mut sim.output(now, server_address, &mut server_events),
        )
        .map_err(|e| e.to_string())?;
    client
        .connect(
            now,
            &token,
            &mut sim.output(now, client_address, &mut client_events),
        )
        .map_err(|e| e.to_string())?;

    let (mut to_server, mut to_client) = (0usize, 0usize);
    for frame in 0..600u32 {
        now += FRAME;
        let unix_now = unix + now.as_secs();
        while let Some(mut datagram) = sim.receive_any(now) {
            if datagram.to == server_address {
                let mut out = sim.output(now, server_address, &mut server_events);
                if let Some((index, payload)) =
                    server.handle(now, datagram.from, &mut datagram.bytes, &mut out)
                {
                    check(payload.data, frame)?;
                    to_server += 1;
                    let _ = server.send_payload(now, index, payload.data, &mut out);
                }
            } else {
                let mut out = sim.output(now, client_address, &mut client_events);
                if let Some(payload) =
                    client.handle(now, datagram.from, &mut datagram.bytes, &mut out)
                {
                    check(payload.data, frame)?;
                    to_client += 1;
                }
            }
        }
        client.update(
            now,
            &mut sim.output(now, client_address, &mut client_events),
        );
        server.update(
            now,
            unix_now,
            &mut sim.output(now, server_address, &mut server_events),
        );
        if client.state() == ClientState::Connected && frame % 4 == 0 {
            let payload = pattern(1 + (frame as usize * 37) % 1200);
            let _ = client.send_payload(
                now,
                &payload,
                &mut sim.output(now, client_address, &mut client_events),
            );
        }
        for event in client_events.drain(..) {
            let ClientEvent::StateChanged { from, to } = event;
            println!("[{:>6.3} s] client: {from} -> {to}", now.as_secs_f64());
        }
        for event in server_events.drain(..) {
            println!("[{:>6.3} s] server: {event:?}", now.as_secs_f64());
        }
        if to_server >= 50 && to_client >= 40 {
            break;
        }
    }
    println!("payloads: {to_server} reached the server, {to_client} echoed back, all intact");
    client.disconnect(
        now,
        &mut sim.output(now, client_address, &mut client_events),
    );
    for _ in 0..20 {
        now += FRAME;
        while let Some(mut datagram) = sim.receive_any(now) {
            if datagram.to == server_address {
                let mut out = sim.output(now, server_address, &mut server_events);
                let _ = server.handle(now, datagram.from, &mut datagram.bytes, &mut out);
            }
        }
        server.update(
            now,
            unix + now.as_secs(),
            &mut sim.output(now, server_address, &mut server_events),
        );
    }
    for event in server_events.drain(..) {
        println!("[{:>6.3} s] server: {event:?}", now.as_secs_f64());
    }
    println!(
        "client dropped {} datagrams, server dropped {}; network lost {} and duplicated {}",
        client.stats().dropped_total(),
        server.stats().dropped_total(),
        sim.stats().lost,
        sim.stats().duplicated
    );
    if to_server == 0 || to_client == 0 || server.num_connected_clients() != 0 {
        return Err("the session did not complete".into());
    }
    Ok(())
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
