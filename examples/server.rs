//! A dedicated server that behaves like the C reference's `server.c`, so the
//! two implementations' examples talk to each other.
//!
//! `USAGE`, which `--help` prints, says what it does, what it takes and
//! how it exits.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use lexopt::Parser;
use netcode_examples::metrics::serve_metrics;
use netcode_examples::{
    Args, CommandLineError, Frames, Interrupt, PRIVATE_KEY, PROTOCOL_ID, SERVER_ADDRESS,
    SERVER_ADDRESS6, Tally, describe, payload, print_listening, run_program, value,
};
use netcode_std::proto::Key;
use netcode_std::{CreateError, Server, ServerConfig, ServerEvent};

/// The reference server's slot count.
const MAX_CLIENTS: usize = 256;

/// What `--help` prints.
const USAGE: &str = "\
server: a dedicated server that behaves like the C reference's server.c

usage: cargo run --release -p netcode-examples --example server -- [ADDRESS [ADDRESS2]] [--seconds N] [--token-history FILE] [--metrics ADDR]

Listens on ADDRESS, and on ADDRESS2 too for dual stack (default:
127.0.0.1:40000 and [::1]:40000, or IPv4 only where there is no IPv6);
port 0 picks a free port, which the `server listening on` line shows.
256 slots, protocol id 0x1122334455667788 and the reference's test key.
Every 1/60 s it sends the 1200-byte reference payload (byte i = i % 256)
to every connected client and checks every payload it receives; it
prints each client's connect and disconnect, and a summary at the end.

It first prints the unix second from which the connect tokens it admits
may have been issued: by the restart rule it refuses any token issued in
or before the second it started (or its --token-history file began),
until that token expires. It waits for that second to come before
printing its `server listening on` line, so a client started after that
line, with a token issued then, is admitted. The log (on standard error,
RUST_LOG to choose its level) says why each refused request was refused.

options:
  --seconds N  stop after N seconds, then exit 0 only if a client
               connected and a correct payload went each way, else print
               one `error:` line and exit 1 (default: run until stopped)
  --token-history FILE
               record every connect token the server admits in FILE
               (created if missing), and refuse the tokens it holds
               after a restart, even one within the same second; one
               server per file: a second one fails (FILE.lock is held)
  --metrics ADDR
               serve Prometheus metrics at http://ADDR/metrics, taken
               every frame (port 0 picks a free port, which the
               `metrics on` line shows); off by default. It has no
               authentication: use a private address
  -h, --help   print this help

Ctrl-C (SIGINT), SIGTERM or SIGHUP stops it at once, as server.c does:
every client gets disconnect packets and the summary is printed. An
interrupted run exits 0 unless a payload was wrong; with --seconds N the
rule above holds.
";

pub(crate) fn main() -> ExitCode {
    run_program(USAGE, parse_args, run)
}

/// This example's own options.
#[derive(Debug, Default)]
struct Options {
    /// `--token-history FILE`.
    token_history: Option<PathBuf>,
    /// `--metrics ADDR`.
    metrics: Option<SocketAddr>,
}

/// The shared arguments, plus this example's own `--token-history FILE`
/// and `--metrics ADDR`.
fn parse_args(parser: &mut Parser) -> Result<(Args, Options), CommandLineError> {
    let mut options = Options::default();
    let args = Args::parse_with(parser, 2, |name, parser| {
        match name {
            "--token-history" => {
                let file = PathBuf::from(parser.value()?);
                if file.as_os_str().is_empty() {
                    return Err(format!("{name}: the file name is empty").into());
                }
                options.token_history = Some(file);
            }
            "--metrics" => {
                options.metrics = Some(value(parser, name, "an address such as 127.0.0.1:9100")?);
            }
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    Ok((args, options))
}

/// Sleeps until the wall clock reads unix second `second`, if that is at
/// most a second away, as `Server::start` does: right after a start it is
/// the next second. A second further away (a wall clock stepped back since
/// the token history file began) is not waited for; one already past
/// needs no wait.
fn wait_for_second(second: u64) {
    let Ok(now) = SystemTime::now().duration_since(UNIX_EPOCH) else {
        return;
    };
    if let Some(rest) = Duration::from_secs(second).checked_sub(now)
        && rest <= Duration::from_secs(1)
    {
        // A millisecond more, for clocks that round.
        std::thread::sleep(rest + Duration::from_millis(1));
    }
}

/// Whether `error` is about the token history file, not the sockets (so
/// that trying IPv4 alone would fail the same way).
fn history_error(error: &CreateError) -> bool {
    matches!(
        error,
        CreateError::TokenHistory { .. }
            | CreateError::TokenHistoryLocked { .. }
            | CreateError::TokenHistoryTooLarge { .. }
    )
}

fn run((args, options): (Args, Options)) -> Result<(), String> {
    let mut config = ServerConfig::new(PROTOCOL_ID, Key::from_bytes(PRIVATE_KEY));
    config.token_history_file = options.token_history;
    let server = match args.positional.as_slice() {
        [] => Server::new_dual(SERVER_ADDRESS, SERVER_ADDRESS6, config.clone()).or_else(|e| {
            if history_error(&e) {
                return Err(e);
            }
            println!("no dual stack here ({e}); IPv4 only");
            Server::new(SERVER_ADDRESS, config)
        }),
        [address] => Server::new(address, config),
        [address, address2, ..] => Server::new_dual(address, address2, config),
    };
    let mut server = server.map_err(|e| format!("failed to create server: {e}"))?;

    // Caught before the `listening on` line, which tells a script that
    // the server is up and may be stopped.
    let interrupt = Interrupt::catch()?;
    // Started before the `listening on` line, and without waiting, so
    // that the second from which tokens are admitted (the restart rule)
    // can be printed; the wait is below.
    let admitted_from = server
        .start_nowait(MAX_CLIENTS)
        .map_err(|e| format!("failed to start server: {e}"))?;
    // Served before the `listening on` line, so a script that reads it
    // can scrape at once.
    let mut metrics = serve_metrics(options.metrics)?;
    println!("[server]");
    println!(
        "admitting connect tokens issued from unix second {admitted_from} on (the restart rule)"
    );
    // As `start` would: once that second has come, every token issued
    // from then on is admitted, so a client launched on the `listening on`
    // line connects.
    wait_for_second(admitted_from);
    print_listening(server.public_address(), server.secondary_address());

    let payload = payload();
    let mut tally = Tally::default();
    let mut frames = Frames::new();
    loop {
        let now = frames.seconds();
        server.update(now);

        while let Some(event) = server.poll_event() {
            tally.connected |= matches!(event, ServerEvent::ClientConnected { .. });
            if let Some((metrics, _)) = &metrics {
                metrics.count_event(&event);
            }
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
        // The frame's figures, for the next scrape.
        if let Some((metrics, _)) = &mut metrics {
            metrics.record(&server);
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

    println!("shutting down: {}", tally.summary());
    // Every client gets disconnect packets now, as the reference's
    // destroy sends them.
    server.stop();
    while let Some(event) = server.poll_event() {
        println!("{}", describe(&event));
    }
    args.verdict(&tally, interrupt.requested())
}
