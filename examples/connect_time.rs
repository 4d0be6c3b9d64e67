//! Measures how long a connection takes on the loopback interface: from
//! `connect` to `Connected`, over 50 connects (or the count given), with a
//! server thread and a client that both sleep in `wait` between updates.
//! Prints the median, minimum and maximum.
//!
//! ```text
//! cargo run --release -p netcode-examples --example connect_time -- [COUNT]
//! ```
//!
//! The handshake is request, challenge, response, keep-alive. As in the
//! reference, a client sends at most one packet per 100 ms while
//! connecting, so the response leaves 100 ms after the request and a
//! connection takes a little over 100 ms however fast the network is.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use lexopt::{Arg, Parser, ValueExt};
use netcode_examples::{CommandLineError, PRIVATE_KEY, PROTOCOL_ID, run_program, unexpected};
use netcode_std::proto::Key;
use netcode_std::{Client, ClientState, ConnectTokenBuilder, Server, ServerConfig};

/// Connects when no COUNT is given.
const DEFAULT_COUNT: usize = 50;

/// Each connect gives up after this long.
const DEADLINE: Duration = Duration::from_secs(10);

/// What `--help` prints.
const USAGE: &str = "\
connect_time: how long a connection takes on the loopback interface

usage: cargo run --release -p netcode-examples --example connect_time -- [COUNT]

Connects a client to a server thread on 127.0.0.1 COUNT times (default
50), one after another, and prints the median, minimum and maximum time
from `connect` to connected: a little over 100 ms, since a connecting
client sends at most one packet per 100 ms, as in the reference. Exits 0,
or prints one `error:` line and exits 1 if a connect fails or takes more
than 10 s.

arguments:
  COUNT        how many connects, at least 1 (default 50)

options:
  -h, --help   print this help
";

pub(crate) fn main() -> ExitCode {
    run_program(USAGE, parse, run)
}

/// The count of connects.
fn parse(parser: &mut Parser) -> Result<usize, CommandLineError> {
    let mut count = None;
    while let Some(arg) = parser.next()? {
        match arg {
            Arg::Value(text) if count.is_none() => {
                let text = text.string()?;
                count = Some(
                    text.parse()
                        .ok()
                        .filter(|n| *n > 0)
                        .ok_or_else(|| format!("COUNT: {text:?} is not a count of 1 or more"))?,
                );
            }
            other => return Err(unexpected(other)),
        }
    }
    Ok(count.unwrap_or(DEFAULT_COUNT))
}

fn run(count: usize) -> Result<(), String> {
    let key = Key::from_bytes(PRIVATE_KEY);
    let mut server = Server::new("127.0.0.1:0", ServerConfig::new(PROTOCOL_ID, key.clone()))
        .map_err(|e| e.to_string())?;
    server.start(4).map_err(|e| e.to_string())?;
    let address = server.public_address();
    let epoch = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let server_thread = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                server.update(epoch.elapsed().as_secs_f64());
                while server.poll_event().is_some() {}
                server.wait(Duration::from_millis(20));
            }
        })
    };

    let mut client = Client::new("127.0.0.1:0").map_err(|e| e.to_string())?;
    let mut times = Vec::with_capacity(count);
    for i in 0..count {
        let token = ConnectTokenBuilder::new(PROTOCOL_ID, &key, i as u64 + 1)
            .server_addresses([address])
            .generate()
            .map_err(|e| e.to_string())?;
        client.update(epoch.elapsed().as_secs_f64());
        let start = Instant::now();
        client.connect(&token).map_err(|e| e.to_string())?;
        loop {
            client.update(epoch.elapsed().as_secs_f64());
            match client.state() {
                ClientState::Connected => break,
                state if state.code() <= 0 => {
                    return Err(format!("connect {} ended in state {state}", i + 1));
                }
                _ if start.elapsed() > DEADLINE => {
                    return Err(format!("connect {} took longer than {DEADLINE:?}", i + 1));
                }
                _ => {
                    client.wait(Duration::from_millis(50));
                }
            }
        }
        times.push(start.elapsed());
        client.disconnect();
    }
    stop.store(true, Ordering::Relaxed);
    let _ = server_thread.join();

    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let median = if !count.is_multiple_of(2) {
        ms(times[count / 2])
    } else {
        (ms(times[count / 2 - 1]) + ms(times[count / 2])) / 2.0
    };
    println!(
        "connect to Connected on loopback, {count} connects: median {median:.2} ms, \
         min {:.2} ms, max {:.2} ms",
        ms(times[0]),
        ms(times[count - 1])
    );
    Ok(())
}
