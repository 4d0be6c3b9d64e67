//! A dedicated server that behaves like the C reference's `server.c`, so the
//! two implementations' examples talk to each other.
//!
//! Protocol id 0x1122334455667788 and the reference's test key; dual stack
//! on `127.0.0.1:40000` and `[::1]:40000` by default (IPv4 only where there is
//! no IPv6), or the one or two addresses given; 256 slots; a 60 Hz loop
//! that sends the 1200-byte reference payload (byte i = i % 256) to every
//! connected client each frame and checks every payload it receives.
//!
//! ```text
//! cargo run --release -p netcode-examples --example server [ADDRESS [ADDRESS2]] [--seconds N]
//! ```
//!
//! Without `--seconds` it runs until interrupted. With `--seconds N` it
//! stops after N seconds and exits 0 only if a client connected and at
//! least one correct payload went each way; otherwise it prints one
//! `error:` line and exits 1. Port 0 picks a free port; the
//! `listening on` line says which.

use std::process::ExitCode;

use netcode_examples::{
    Args, Frames, PRIVATE_KEY, PROTOCOL_ID, SERVER_ADDRESS, SERVER_ADDRESS6, Tally, describe,
    finish, payload, print_listening,
};
use netcode_std::proto::Key;
use netcode_std::{Server, ServerConfig, ServerEvent};

/// The reference server's slot count.
const MAX_CLIENTS: usize = 256;

pub(crate) fn main() -> ExitCode {
    finish(run())
}

fn run() -> Result<(), String> {
    let args = Args::parse(std::env::args().skip(1), 2)?;
    let config = ServerConfig::new(PROTOCOL_ID, Key::from_bytes(PRIVATE_KEY));
    let server = match args.positional.as_slice() {
        [] => Server::new_dual(SERVER_ADDRESS, SERVER_ADDRESS6, config.clone()).or_else(|e| {
            println!("no dual stack here ({e}); IPv4 only");
            Server::new(SERVER_ADDRESS, config)
        }),
        [address] => Server::new(address, config),
        [address, address2, ..] => Server::new_dual(address, address2, config),
    };
    let mut server = server.map_err(|e| format!("failed to create server: {e}"))?;

    println!("[server]");
    print_listening(server.public_address(), server.secondary_address());
    server
        .start(MAX_CLIENTS)
        .map_err(|e| format!("failed to start server: {e}"))?;

    let payload = payload();
    let mut tally = Tally::default();
    let mut frames = Frames::new();
    loop {
        let now = frames.seconds();
        server.update(now);

        while let Some(event) = server.poll_event() {
            tally.connected |= matches!(event, ServerEvent::ClientConnected { .. });
            println!("{}", describe(&event));
        }

        // This frame's payloads leave together when the batch ends: one
        // system call per 32 clients on Linux.
        let mut batch = server.batch();
        for client_index in 0..batch.max_clients() {
            if batch.client_connected(client_index)
                && batch.send_packet(client_index, &payload).is_ok()
            {
                tally.sent += 1;
            }
            while let Some(packet) = batch.receive_packet(client_index) {
                tally.check(packet.data());
                batch.free_packet(packet);
            }
        }
        drop(batch);

        if args.seconds.is_some_and(|limit| now >= limit) {
            break;
        }
        frames.sleep();
    }

    println!("shutting down: {}", tally.summary());
    server.stop();
    while let Some(event) = server.poll_event() {
        println!("{}", describe(&event));
    }
    tally.verdict()
}
