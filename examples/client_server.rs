//! A server and a client in one process, over real UDP on the loopback
//! interface (IPv6 `[::1]` where available, else 127.0.0.1; port 0, so it
//! never collides with anything): the client connects, ten payloads go each
//! way, the server disconnects the client, and the program exits 0. Like
//! the C reference's `client_server.c`.
//!
//! ```text
//! cargo run --release -p netcode-examples --example client_server
//! ```
//!
//! It takes no arguments; `--help` says what it prints and how it exits.

use std::net::UdpSocket;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use netcode_examples::{
    Frames, PRIVATE_KEY, PROTOCOL_ID, is_payload, no_arguments, payload, run_program,
};
use netcode_std::proto::Key;
use netcode_std::{
    Client, ClientEvent, ClientState, ConnectTokenBuilder, Server, ServerConfig, ServerEvent,
};

/// Payloads that reach each side before the server kicks the client.
const PAYLOADS: u64 = 10;
/// The run gives up after this long.
const DEADLINE: Duration = Duration::from_secs(10);

/// What `--help` prints.
const USAGE: &str = "\
client_server: a server and a client in one process, over loopback UDP

usage: cargo run --release -p netcode-examples --example client_server

The server listens on [::1] (or 127.0.0.1 where there is no IPv6) on a
free port; the client connects with a connect token for it; ten 1200-byte
payloads reach each side; the server disconnects the client. It prints
each client state change, the server's events and the time to connect,
and exits 0, or prints one `error:` line and exits 1 if any payload is
wrong or the run takes more than 10 s. It takes no arguments.

options:
  -h, --help   print this help
";

pub(crate) fn main() -> ExitCode {
    run_program(USAGE, no_arguments, |()| run())
}

fn run() -> Result<(), String> {
    let host = if UdpSocket::bind("[::1]:0").is_ok() {
        "[::1]:0"
    } else {
        "127.0.0.1:0"
    };
    let key = Key::from_bytes(PRIVATE_KEY);
    let mut server = Server::new(host, ServerConfig::new(PROTOCOL_ID, key.clone()))
        .map_err(|e| format!("failed to create server: {e}"))?;
    server.start(16).map_err(|e| e.to_string())?;
    let address = server.public_address();
    println!("server listening on {address}");

    let mut client = Client::new(host).map_err(|e| format!("failed to create client: {e}"))?;
    let token = ConnectTokenBuilder::new(PROTOCOL_ID, &key, 0x2a)
        .server_addresses([address])
        .generate()
        .map_err(|e| e.to_string())?;
    client.connect(&token).map_err(|e| e.to_string())?;
    let started = Instant::now();

    let payload = payload();
    let (mut to_server, mut to_client) = (0u64, 0u64);
    let mut frames = Frames::new();
    loop {
        if started.elapsed() > DEADLINE {
            return Err(format!(
                "gave up after {DEADLINE:?}: client {}, {to_server} payloads to the server, \
                 {to_client} to the client",
                client.state()
            ));
        }
        let now = frames.seconds();
        client.update(now);
        server.update(now);

        while let Some(ClientEvent::StateChanged { from, to }) = client.poll_event() {
            println!("client state: {from} -> {to}");
            if to == ClientState::Connected {
                println!(
                    "connected in {:.1} ms",
                    started.elapsed().as_secs_f64() * 1000.0
                );
            }
        }
        while let Some(event) = server.poll_event() {
            match event {
                ServerEvent::ClientConnected {
                    client_index,
                    client_id,
                    ..
                } => println!("server: client {client_index} connected (id {client_id:#x})"),
                ServerEvent::ClientDisconnected {
                    client_index,
                    reason,
                    ..
                } => println!("server: client {client_index} disconnected ({reason})"),
            }
        }

        while let Some(packet) = server.receive_packet(0) {
            if !is_payload(packet.data()) {
                return Err("the server received a wrong payload".into());
            }
            to_server += 1;
            server.free_packet(packet);
        }
        while let Some(packet) = client.receive_packet() {
            if !is_payload(packet.data()) {
                return Err("the client received a wrong payload".into());
            }
            to_client += 1;
            client.free_packet(packet);
        }

        // Each side sends until the other has received ten. A payload sent
        // in one frame is read in the next, before this point, so exactly
        // ten arrive each way, and one lost on the way is made up for.
        if client.state() == ClientState::Connected && to_server < PAYLOADS {
            client.send_packet(&payload).map_err(|e| e.to_string())?;
        }
        if server.client_connected(0) && to_client < PAYLOADS {
            server.send_packet(0, &payload).map_err(|e| e.to_string())?;
        }

        if to_server >= PAYLOADS && to_client >= PAYLOADS && server.client_connected(0) {
            println!("{to_server} payloads reached the server, {to_client} the client");
            println!("server: disconnecting client 0");
            server.disconnect_client(0);
        }
        if to_server >= PAYLOADS && to_client >= PAYLOADS && client.state().code() <= 0 {
            break;
        }
        frames.sleep();
    }
    println!("done: client {}", client.state());
    Ok(())
}
