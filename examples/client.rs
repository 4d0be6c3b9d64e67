//! A client that behaves like the C reference's `client.c`, so the two
//! implementations' examples talk to each other; or, with `--matcher`, a
//! client that gets its connect token from a `matcher` token service, as a
//! game client gets one from its backend.
//!
//! `USAGE`, which `--help` prints, says what it does, what it takes and
//! how it exits.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use lexopt::{Parser, ValueExt};
use netcode_examples::matcher::{fetch_token, read_secret_file};
use netcode_examples::{
    Args, CONNECT_TOKEN_EXPIRY, CONNECT_TOKEN_TIMEOUT, CommandLineError, Frames, Interrupt,
    PRIVATE_KEY, PROTOCOL_ID, SERVER_ADDRESS, Tally, explain_failed_connection, payload,
    run_program, value,
};
use netcode_std::proto::Key;
use netcode_std::{
    Backoff, CONNECT_TOKEN_BYTES, Client, ClientEvent, ClientState, ConnectTokenBuilder,
    ReconnectEvent, Reconnecting, parse_address, random_bytes, random_client_id,
};

/// What `--help` prints.
const USAGE: &str = "\
client: a client that behaves like the C reference's client.c

usage: cargo run --release -p netcode-examples --example client -- [SERVER_ADDRESS] [--seconds N] [--client-id N] [--issued-at UNIX]
       cargo run --release -p netcode-examples --example client -- --matcher URL --secret-file PATH [--seconds N] [--client-id N]

Makes a connect token for SERVER_ADDRESS (default 127.0.0.1:40000) with
protocol id 0x1122334455667788, the reference's test key, 30 s expiry,
5 s timeout, a random client id and random user data. With --matcher it
asks the matcher token service at URL for one instead (POST URL/token
with the bearer secret, giving up after 10 s) and prints the client id,
expiry, timeout and servers of the token it gets; if none comes it prints
why (matcher unreachable, wrong secret (401), rate limited (429) with
the wait asked for, another status with the matcher's error text, or a
malformed answer) and exits 1.

It connects from 0.0.0.0 and :: (IPv4 only where there is no IPv6).
Every 1/60 s while connected it sends the 1200-byte reference payload
(byte i = i % 256) and checks every payload it receives; it prints each
state change, a line when the first correct payload arrives, and a
summary at the end. It stops when the connection ends, as client.c does,
and then exits 0 only if it connected and a correct payload went each
way, else prints one `error:` line and exits 1; when no connection was
made, the lines under it say what that can mean (no server there, a
wrong key or protocol id, the restart rule...) and what to do.

options:
  --seconds N  stop after N seconds at the latest, with the same verdict
               (default: run until the connection ends or it is stopped)
  --client-id N
               the client id, decimal or 0x hex (default: random)
  --issued-at UNIX
               stamp the token it makes as issued at this unix second
               (default: now); its 30 s expiry counts from it. A server
               refuses a token issued in or before the second it started
               (the restart rule)
  --matcher URL
               get the token from the matcher at URL (http://HOST:PORT
               or https://HOST) instead of making one; the token names
               the servers, so no SERVER_ADDRESS goes with it
  --secret-file PATH
               the file holding the matcher's bearer secret (surrounding
               whitespace ignored); required with --matcher
  --reconnect  when the connection ends (the server restarted, timed the
               client out, was full), get a fresh token (from the matcher,
               or made anew) and connect again, with exponential backoff
               and jitter (250 ms doubling up to 8 s), printing each
               attempt; until --seconds, or an interrupt
  -h, --help   print this help

Ctrl-C (SIGINT), SIGTERM or SIGHUP disconnects it at once, as client.c
does: the server gets disconnect packets rather than timing it out. An
interrupted run exits 0 unless a payload was wrong; with --seconds N the
verdict above holds.
";

pub(crate) fn main() -> ExitCode {
    run_program(USAGE, parse_args, run)
}

/// Where the token comes from.
#[derive(Debug)]
enum TokenSource {
    /// Made here for this server address (text as given), with the
    /// reference's test key, issued now or at this unix second.
    Made {
        address: String,
        issued_at: Option<u64>,
    },
    /// Fetched from the matcher at this URL with the secret in this file.
    Matcher { url: String, secret_file: PathBuf },
}

/// What the command line asks for.
#[derive(Debug)]
struct Request {
    args: Args,
    source: TokenSource,
    client_id: Option<u64>,
    reconnect: bool,
}

/// The shared arguments, plus `--client-id N`, `--issued-at UNIX`,
/// `--matcher URL` and `--secret-file PATH`.
fn parse_args(parser: &mut Parser) -> Result<Request, CommandLineError> {
    let (mut matcher, mut secret_file, mut client_id, mut issued_at) = (None, None, None, None);
    let mut reconnect = false;
    let args = Args::parse_with(parser, 1, |name, parser| {
        match name {
            "--matcher" => matcher = Some(parser.value()?.string()?),
            "--secret-file" => secret_file = Some(PathBuf::from(parser.value()?)),
            "--client-id" => client_id = Some(id_value(parser, name)?),
            "--issued-at" => issued_at = Some(value(parser, name, "a unix second")?),
            "--reconnect" => reconnect = true,
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    if matcher.is_some() && issued_at.is_some() {
        return Err(
            "--issued-at does not go with --matcher: the matcher issues the token"
                .to_owned()
                .into(),
        );
    }
    let source = match (matcher, secret_file) {
        (Some(_), _) if !args.positional.is_empty() => {
            return Err(
                "a SERVER_ADDRESS does not go with --matcher: the token names the servers"
                    .to_owned()
                    .into(),
            );
        }
        (Some(url), Some(secret_file)) => TokenSource::Matcher { url, secret_file },
        (Some(_), None) => return Err("--matcher needs --secret-file PATH".to_owned().into()),
        (None, Some(_)) => return Err("--secret-file goes with --matcher URL".to_owned().into()),
        (None, None) => TokenSource::Made {
            address: args
                .positional
                .first()
                .map_or(SERVER_ADDRESS, String::as_str)
                .to_owned(),
            issued_at,
        },
    };
    Ok(Request {
        args,
        source,
        client_id,
        reconnect,
    })
}

/// The value of `option`: a 64-bit id, decimal or `0x` hex.
fn id_value(parser: &mut Parser, option: &str) -> Result<u64, CommandLineError> {
    let text = parser.value()?.string()?;
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    }
    .map_err(|_| format!("{option}: {text:?} is not a 64-bit id, decimal or 0x hex").into())
}

/// The connect token `source` gives for `client_id`, and the servers it
/// names, saying where it goes.
fn connect_token(
    source: &TokenSource,
    client_id: u64,
) -> Result<([u8; CONNECT_TOKEN_BYTES], Vec<SocketAddr>), String> {
    match source {
        TokenSource::Made { address, issued_at } => {
            let server_address =
                parse_address(address).map_err(|e| format!("server address {address:?}: {e}"))?;
            let mut user_data = [0u8; 256];
            random_bytes(&mut user_data).map_err(|e| e.to_string())?;
            let key = Key::from_bytes(PRIVATE_KEY);
            let mut builder = ConnectTokenBuilder::new(PROTOCOL_ID, &key, client_id)
                .server_addresses([server_address])
                .expire_seconds(CONNECT_TOKEN_EXPIRY)
                .timeout_seconds(CONNECT_TOKEN_TIMEOUT)
                .user_data(&user_data);
            if let Some(second) = *issued_at {
                builder = builder.issued_at(second);
                println!("the token is issued at unix second {second}");
            }
            let token = builder
                .generate()
                .map_err(|e| format!("failed to generate connect token: {e}"))?;
            println!("connecting to {server_address}");
            Ok((token, vec![server_address]))
        }
        TokenSource::Matcher { url, secret_file } => {
            let secret = read_secret_file(secret_file)?;
            println!("asking the matcher at {url} for a connect token");
            let fetched = fetch_token(url, &secret, PROTOCOL_ID, client_id)
                .map_err(|e| format!("no connect token: {e}"))?;
            let servers: Vec<String> = fetched.servers().iter().map(|a| a.to_string()).collect();
            println!(
                "got a connect token for client id {:016x}: expires in {} s, timeout {} s, servers {}",
                fetched.client_id,
                fetched.expire_seconds,
                fetched.public.timeout_seconds,
                servers.join(", ")
            );
            println!("connecting to {}", servers.join(" or "));
            Ok((fetched.bytes, fetched.servers().to_vec()))
        }
    }
}

fn run(request: Request) -> Result<(), String> {
    let Request {
        args,
        source,
        client_id,
        reconnect,
    } = request;
    // A wrong server address is a mistake to report before anything else.
    if let TokenSource::Made { address, .. } = &source {
        parse_address(address).map_err(|e| format!("server address {address:?}: {e}"))?;
    }

    let mut client = Client::new_dual("0.0.0.0", "::")
        .or_else(|_| Client::new("0.0.0.0"))
        .map_err(|e| format!("failed to create client: {e}"))?;
    let interrupt = Interrupt::catch()?;
    println!("[client]");

    let client_id = match client_id {
        Some(id) => id,
        None => random_client_id().map_err(|e| format!("no random client id: {e}"))?,
    };
    println!("client id is {client_id:016x}");

    let (token, servers) = connect_token(&source, client_id)?;
    client
        .connect(&token)
        .map_err(|e| format!("failed to connect: {e}"))?;
    // Without --reconnect, no attempt after the first: the run ends with
    // the connection.
    let backoff = if reconnect {
        Backoff::default()
    } else {
        Backoff {
            max_attempts: Some(0),
            ..Backoff::default()
        }
    };
    let fetch = || connect_token(&source, client_id).map(|(token, _)| token);
    let mut client = Reconnecting::new(client, backoff, fetch);

    let payload = payload();
    let mut tally = Tally::default();
    let mut frames = Frames::new();
    let mut last_state = client.client().state();
    loop {
        let now = frames.seconds();
        client.update(now);
        while let Some(event) = client.next_event() {
            if reconnect {
                println!("{}", describe_reconnect(&event));
            }
        }
        let connection = client.client_mut();
        while let Some(ClientEvent::StateChanged { from, to }) = connection.poll_event() {
            println!("client state: {from} -> {to}");
            if to == ClientState::Connected {
                tally.connected = true;
                println!(
                    "connected as client {} of {}",
                    connection.client_index(),
                    connection.max_clients()
                );
            }
            last_state = to;
        }

        if connection.state() == ClientState::Connected && connection.send_packet(&payload).is_ok()
        {
            tally.sent += 1;
        }
        while let Some(packet) = connection.receive_packet() {
            let first = tally.received == 0;
            tally.check(packet.data());
            if first && tally.received == 1 {
                println!("first payload received");
            }
            connection.free_packet(packet);
        }

        if connection.state().code() <= 0 && client.stopped() {
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
    client.stop();
    let client = client.client_mut();
    while let Some(ClientEvent::StateChanged { from, to }) = client.poll_event() {
        println!("client state: {from} -> {to}");
    }
    args.verdict(&tally, interrupt.requested())
        .map_err(
            |reason| match explain_failed_connection(last_state, &servers) {
                Some(meaning) if !tally.connected => {
                    format!("{reason} ({last_state}): {meaning}")
                }
                _ => format!("{reason} (last state: {last_state})"),
            },
        )
}

/// A line for what the reconnecting client did.
fn describe_reconnect(event: &ReconnectEvent) -> String {
    match event {
        ReconnectEvent::Lost { state, retry_in } => format!(
            "connection ended ({state}); next attempt in {} ms",
            retry_in.as_millis()
        ),
        ReconnectEvent::Attempt { attempt } => {
            format!("reconnect attempt {attempt}: a fresh token, connecting")
        }
        ReconnectEvent::FetchFailed { attempt, error } => {
            format!("reconnect attempt {attempt}: no token: {error}")
        }
        ReconnectEvent::Connected { attempts } => format!("connected after {attempts} attempt(s)"),
        ReconnectEvent::GaveUp { attempts } => format!("gave up after {attempts} attempt(s)"),
    }
}
