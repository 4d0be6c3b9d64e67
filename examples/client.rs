//! A client that behaves like the C reference's `client.c`, so the two
//! implementations' examples talk to each other.
//!
//! `USAGE`, which `--help` prints, says what it does, what it takes and
//! how it exits.

use std::process::ExitCode;

use netcode_examples::{
    Args, CONNECT_TOKEN_EXPIRY, CONNECT_TOKEN_TIMEOUT, Frames, Interrupt, PRIVATE_KEY, PROTOCOL_ID,
    SERVER_ADDRESS, Tally, payload, run_program,
};
use netcode_std::proto::Key;
use netcode_std::{
    Client, ClientEvent, ClientState, ConnectTokenBuilder, parse_address, random_bytes,
};

/// What `--help` prints.
const USAGE: &str = "\
client: a client that behaves like the C reference's client.c

usage: cargo run --release -p netcode-examples --example client -- [SERVER_ADDRESS] [--seconds N]

Makes a connect token for SERVER_ADDRESS (default 127.0.0.1:40000) with
protocol id 0x1122334455667788, the reference's test key, 30 s expiry,
5 s timeout, a random client id and random user data, and connects from
0.0.0.0 and :: (IPv4 only where there is no IPv6). Every 1/60 s while
connected it sends the 1200-byte reference payload (byte i = i % 256)
and checks every payload it receives; it prints each state change, a
line when the first correct payload arrives, and a summary at the end. It stops when the connection ends, as client.c does,
and then exits 0 only if it connected and a correct payload went each
way, else prints one `error:` line and exits 1.

options:
  --seconds N  stop after N seconds at the latest, with the same verdict
               (default: run until the connection ends or it is stopped)
  -h, --help   print this help

Ctrl-C (SIGINT), SIGTERM or SIGHUP disconnects it at once, as client.c
does: the server gets disconnect packets rather than timing it out. An
interrupted run exits 0 unless a payload was wrong; with --seconds N the
verdict above holds.
";

pub(crate) fn main() -> ExitCode {
    run_program(USAGE, |parser| Args::parse(parser, 1), run)
}

fn run(args: Args) -> Result<(), String> {
    let text = args
        .positional
        .first()
        .map_or(SERVER_ADDRESS, String::as_str);
    let server_address =
        parse_address(text).map_err(|e| format!("server address {text:?}: {e}"))?;

    let mut client = Client::new_dual("0.0.0.0", "::")
        .or_else(|_| Client::new("0.0.0.0"))
        .map_err(|e| format!("failed to create client: {e}"))?;
    let interrupt = Interrupt::catch()?;
    println!("[client]");

    let mut id = [0u8; 8];
    let mut user_data = [0u8; 256];
    random_bytes(&mut id).map_err(|e| e.to_string())?;
    random_bytes(&mut user_data).map_err(|e| e.to_string())?;
    let client_id = u64::from_le_bytes(id);
    println!("client id is {client_id:016x}");

    let key = Key::from_bytes(PRIVATE_KEY);
    let token = ConnectTokenBuilder::new(PROTOCOL_ID, &key, client_id)
        .server_addresses([server_address])
        .expire_seconds(CONNECT_TOKEN_EXPIRY)
        .timeout_seconds(CONNECT_TOKEN_TIMEOUT)
        .user_data(&user_data)
        .generate()
        .map_err(|e| format!("failed to generate connect token: {e}"))?;
    println!("connecting to {server_address}");
    client
        .connect(&token)
        .map_err(|e| format!("failed to connect: {e}"))?;

    let payload = payload();
    let mut tally = Tally::default();
    let mut frames = Frames::new();
    let mut last_state = client.state();
    loop {
        let now = frames.seconds();
        client.update(now);

        while let Some(ClientEvent::StateChanged { from, to }) = client.poll_event() {
            println!("client state: {from} -> {to}");
            if to == ClientState::Connected {
                tally.connected = true;
                println!(
                    "connected as client {} of {}",
                    client.client_index(),
                    client.max_clients()
                );
            }
            last_state = to;
        }

        if client.state() == ClientState::Connected && client.send_packet(&payload).is_ok() {
            tally.sent += 1;
        }
        while let Some(packet) = client.receive_packet() {
            let first = tally.received == 0;
            tally.check(packet.data());
            if first && tally.received == 1 {
                println!("first payload received");
            }
            client.free_packet(packet);
        }

        if client.state().code() <= 0 {
            break;
        }
        if interrupt.requested() {
            println!("interrupted");
            break;
        }
        if args.seconds.is_some_and(|limit| now >= limit) {
            break;
        }
        frames.sleep();
    }

    println!("{}", tally.summary());
    // The server gets disconnect packets now, rather than timing the
    // client out.
    client.disconnect();
    while let Some(ClientEvent::StateChanged { from, to }) = client.poll_event() {
        println!("client state: {from} -> {to}");
    }
    args.verdict(&tally, interrupt.requested())
        .map_err(|reason| format!("{reason} (last state: {last_state})"))
}
