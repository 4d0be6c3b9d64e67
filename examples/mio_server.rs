//! A dedicated server on a mio event loop that echoes every payload back to
//! its sender, and (with `--clients K`) K netcode-mio clients in the same
//! loop that talk to it.
//!
//! The loop has no frame rate: it sleeps in `Poll::poll` until a datagram
//! arrives or the earliest of the server's and clients' `poll_timeout`s
//! (their next keep-alive, send or timeout) and the clients' next send.
//!
//! `USAGE`, which `--help` prints, says what it does, what it takes and
//! how it exits.

use std::io::ErrorKind;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use lexopt::Parser;
use netcode_examples::metrics::serve_metrics;
use netcode_examples::{
    Args, CONNECT_TOKEN_EXPIRY, CONNECT_TOKEN_TIMEOUT, CommandLineError, Interrupt, PRIVATE_KEY,
    PROTOCOL_ID, SERVER_ADDRESS, Tally, describe, payload, print_listening, run_program, value,
};
use netcode_mio::Registered;
use netcode_mio::mio::{Events, Poll, Token, Waker};
use netcode_mio::proto::Key;
use netcode_mio::{
    Client, ClientConfig, ClientEvent, ClientState, ConnectTokenBuilder, MAX_CLIENTS, Server,
    ServerConfig, ServerEvent,
};

/// The server's sockets' token; client `i` has `Token(i + 1)`.
const SERVER: Token = Token(0);

/// The token of the waker that Ctrl-C sets off.
const WAKE: Token = Token(usize::MAX);

/// The reference server's slot count.
const SLOTS: usize = 256;

/// How often each connected client sends a payload.
const SEND_INTERVAL: Duration = Duration::from_millis(50);

/// How often, with `--metrics`, the server's figures are taken for the
/// next scrape (the loop also wakes for it).
const METRICS_INTERVAL: Duration = Duration::from_millis(100);

/// What `--help` prints.
const USAGE: &str = "\
mio_server: an echo server on a mio event loop, with clients of its own

usage: cargo run --release -p netcode-examples --example mio_server -- [ADDRESS [ADDRESS2]] [--seconds N] [--clients K] [--metrics ADDR]

Listens on ADDRESS (default 127.0.0.1:40000), and on ADDRESS2 too for
dual stack; port 0 picks a free port, which the `server listening on`
line shows. 256 slots (or K, if more), protocol id 0x1122334455667788 and
the reference's test key. It echoes every payload back to its sender,
checks that each is the 1200-byte reference payload (byte i = i % 256),
and sleeps until a datagram arrives or the next deadline. It prints
connects and disconnects (the first few, with many clients) and a
summary with its wake-ups at the end.

options:
  --clients K  also run K netcode-mio clients in the same loop, every
               other one on ADDRESS2; each sends the payload every 50 ms
               and checks the echoes (default 0)
  --seconds N  stop after N seconds, then exit 0 only if the server
               received and echoed correct payloads and each of the K
               clients connected and got correct echoes, else print one
               `error:` line and exit 1 (default: run until stopped)
  --metrics ADDR
               serve Prometheus metrics at http://ADDR/metrics, taken
               every 100 ms (port 0 picks a free port, which the
               `metrics on` line shows); off by default. It has no
               authentication: use a private address
  -h, --help   print this help

Ctrl-C (SIGINT), SIGTERM or SIGHUP wakes the loop and stops the server
at once: every client gets disconnect packets and the summary is
printed. An interrupted run exits 0 unless a payload was wrong; with
--seconds N the rule above holds.
";

pub(crate) fn main() -> ExitCode {
    run_program(USAGE, parse_args, run)
}

/// One of the in-process clients and what it saw.
struct Player {
    client: Client,
    tally: Tally,
}

fn run((args, options): (Args, Options)) -> Result<(), String> {
    let client_count = options.clients;
    let mut poll = Poll::new().map_err(|e| format!("failed to create the poll: {e}"))?;
    let mut events = Events::with_capacity(1024);
    // Ctrl-C wakes the loop, which may be asleep with no deadline at all;
    // caught before the `listening on` line, which tells a script that the
    // server is up and may be stopped.
    let waker = Waker::new(poll.registry(), WAKE)
        .map_err(|e| format!("failed to create the waker: {e}"))?;
    let interrupt = Interrupt::catch_then(move || {
        let _ = waker.wake();
    })?;

    let config = ServerConfig::new(PROTOCOL_ID, Key::from_bytes(PRIVATE_KEY));
    let registry = poll.registry();
    let server = match args.positional.as_slice() {
        [] => Server::new(SERVER_ADDRESS, config, registry, SERVER),
        [address] => Server::new(address, config, registry, SERVER),
        [address, address2, ..] => {
            Server::new_dual(address, address2, config, registry, SERVER, SERVER)
        }
    };
    let mut server = server.map_err(|e| format!("failed to create server: {e}"))?;
    // Started before the `listening on` line: `start` returns once every
    // token issued from then on is admitted (the restart rule).
    server
        .start(SLOTS.max(client_count).min(MAX_CLIENTS))
        .map_err(|e| format!("failed to start server: {e}"))?;
    // Served before the `listening on` line, so a script that reads it
    // can scrape at once.
    let mut metrics = serve_metrics(options.metrics)?;
    println!("[mio server]");
    print_listening(server.public_address(), server.secondary_address());

    // With two addresses, every other client goes to the second.
    let addresses = [server.public_address()]
        .into_iter()
        .chain(server.secondary_address())
        .collect::<Vec<_>>();
    let mut players = (0..client_count)
        .map(|i| player(&poll, i, addresses[i % addresses.len()]))
        .collect::<Result<Vec<_>, _>>()?;
    if client_count > 0 {
        println!("{client_count} clients connecting");
    }

    let payload = payload();
    let mut tally = Tally::default();
    let epoch = Instant::now();
    let seconds = || epoch.elapsed().as_secs_f64();
    let mut next_send = 0.0;
    let mut next_record = 0.0;
    let mut wakeups = 0u64;
    loop {
        if interrupt.requested() {
            println!("interrupted");
            break;
        }
        // Sleep until a datagram, Ctrl-C or the earliest deadline of
        // anyone here.
        let now = seconds();
        let until = |at: f64| Duration::from_secs_f64((at - now).max(0.0));
        let timeout = players
            .iter()
            .filter_map(|p| p.client.poll_timeout(now))
            .chain(server.poll_timeout(now))
            .chain((!players.is_empty()).then_some(until(next_send)))
            .chain(metrics.is_some().then_some(until(next_record)))
            .chain(args.seconds.map(until))
            .min();
        match poll.poll(&mut events, timeout) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("poll failed: {e}")),
        }
        wakeups += 1;

        let now = seconds();
        for event in events.iter() {
            let token = event.token();
            if token != WAKE
                && !server.handle_readable(token, now)
                && let Some(player) = token.0.checked_sub(1).and_then(|i| players.get_mut(i))
            {
                player.client.handle_readable(token, now);
            }
        }

        server.update(now);
        while let Some(event) = server.poll_event() {
            // With many clients, only the first few connects are shown.
            let shown = match event {
                ServerEvent::ClientConnected { client_index, .. } => {
                    tally.connected = true;
                    client_count <= 8 || client_index < 4
                }
                ServerEvent::ClientDisconnected { .. } => true,
            };
            if let Some((metrics, _)) = &metrics {
                metrics.count_event(&event);
            }
            if shown {
                println!("{}", describe(&event));
            }
        }
        // The echoes leave together when the batch ends.
        let mut batch = server.batch();
        while let Some((slot, packet)) = batch.receive_any() {
            tally.check(packet.data());
            if batch.send_packet(slot, packet.data()).is_ok() {
                tally.sent += 1;
            }
            batch.free_packet(packet);
        }
        drop(batch);
        if let Some((metrics, _)) = &mut metrics
            && now >= next_record
        {
            metrics.record(&server);
            next_record = now + METRICS_INTERVAL.as_secs_f64();
        }

        let send = now >= next_send;
        if send {
            next_send = now + SEND_INTERVAL.as_secs_f64();
        }
        for player in &mut players {
            player.step(now, send, &payload);
        }

        if args.seconds.is_some_and(|limit| now >= limit) {
            break;
        }
    }

    let elapsed = seconds();
    println!(
        "shutting down after {elapsed:.1} s and {wakeups} wake-ups: {}",
        tally.summary()
    );
    // Every client gets disconnect packets now.
    server.stop();
    let stopped: Vec<ServerEvent> = std::iter::from_fn(|| server.poll_event()).collect();
    if stopped.len() <= 8 {
        stopped
            .iter()
            .for_each(|event| println!("{}", describe(event)));
    } else {
        println!(
            "{} clients disconnected (server disconnected)",
            stopped.len()
        );
    }
    verdict(&tally, &players, args.judged_in_full(interrupt.requested()))
}

/// Client `index` with a token for `server`, connecting.
fn player(poll: &Poll, index: usize, server: SocketAddr) -> Result<Player, String> {
    let any = if server.is_ipv4() { "0.0.0.0" } else { "::" };
    let token = Token(index + 1);
    let mut client = Client::new(any, ClientConfig::default(), poll.registry(), token)
        .map_err(|e| format!("failed to create client {index}: {e}"))?;
    let key = Key::from_bytes(PRIVATE_KEY);
    let connect_token = ConnectTokenBuilder::new(PROTOCOL_ID, &key, index as u64 + 1)
        .server_addresses([server])
        .expire_seconds(CONNECT_TOKEN_EXPIRY)
        .timeout_seconds(CONNECT_TOKEN_TIMEOUT)
        .generate()
        .map_err(|e| format!("failed to generate a connect token: {e}"))?;
    client
        .connect(&connect_token)
        .map_err(|e| format!("client {index} failed to connect: {e}"))?;
    Ok(Player {
        client,
        tally: Tally::default(),
    })
}

impl Player {
    /// Updates the client, sends a payload when `send` says so, and checks
    /// what came back.
    fn step(&mut self, now: f64, send: bool, payload: &[u8]) {
        let client = &mut self.client;
        client.update(now);
        while let Some(ClientEvent::StateChanged { to, .. }) = client.poll_event() {
            self.tally.connected |= to == ClientState::Connected;
        }
        if send && client.state() == ClientState::Connected && client.send_packet(payload).is_ok() {
            self.tally.sent += 1;
        }
        while let Some(packet) = client.receive_packet() {
            self.tally.check(packet.data());
            client.free_packet(packet);
        }
    }
}

/// Success only if the server echoed correct payloads and every in-process
/// client connected and got correct echoes; for a run not judged
/// `in_full` (see [`Args::judged_in_full`]), only if no payload was wrong.
fn verdict(server: &Tally, players: &[Player], in_full: bool) -> Result<(), String> {
    let judge = |tally: &Tally| tally.judge(in_full);
    judge(server).map_err(|e| format!("server: {e}"))?;
    if players.is_empty() {
        return Ok(());
    }
    let good = players.iter().filter(|p| p.tally.verdict().is_ok()).count();
    println!(
        "{good} of {} clients connected and got correct echoes",
        players.len()
    );
    let failed = players.iter().filter(|p| judge(&p.tally).is_err()).count();
    match players.iter().enumerate().find_map(|(i, p)| {
        judge(&p.tally)
            .err()
            .map(|e| format!("client {i}: {e} ({})", p.tally.summary()))
    }) {
        None => Ok(()),
        Some(first) => Err(format!(
            "{failed} of {} clients failed; first, {first}",
            players.len()
        )),
    }
}

/// This example's own options.
#[derive(Debug, Default)]
struct Options {
    /// `--clients K`.
    clients: usize,
    /// `--metrics ADDR`.
    metrics: Option<SocketAddr>,
}

/// The shared arguments, plus this example's own `--clients K` and
/// `--metrics ADDR`.
fn parse_args(parser: &mut Parser) -> Result<(Args, Options), CommandLineError> {
    let mut options = Options::default();
    let args = Args::parse_with(parser, 2, |name, parser| {
        match name {
            "--clients" => {
                let clients = value(parser, name, "a count")?;
                if clients > MAX_CLIENTS {
                    return Err(format!("--clients: {clients} is more than {MAX_CLIENTS}").into());
                }
                options.clients = clients;
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
