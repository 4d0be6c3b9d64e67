//! An echo server and its clients in one tokio program, over loopback UDP:
//! the server on a task of its own echoes every payload (each turn's echoes
//! leave together in one batch); each client, on its own task, connects
//! and then keeps sending payloads and checking the echoes.
//!
//! ```text
//! cargo run --release -p netcode-tokio --example echo -- [--clients K] [--seconds N]
//! ```
//!
//! Prints what each client saw and exits 0 only if every client connected
//! and every echo was right. It shuts down cleanly, at the end or on
//! Ctrl-C: the clients disconnect, then the server stops, so every peer
//! gets disconnect packets instead of waiting for a timeout.

use std::process::ExitCode;
use std::time::Duration;

use netcode_tokio::{Client, ConnectTokenBuilder, Server, ServerConfig, generate_key};
use tokio::sync::watch;
use tokio::time::Instant;

const PROTOCOL_ID: u64 = 0x1122_3344_5566_7788;

/// What one client saw.
#[derive(Debug, Default)]
struct Tally {
    echoes: u64,
    wrong: u64,
}

/// Echoes every payload, a turn at a time: wait for the sockets or the
/// protocol's deadline, then answer every queued payload in one batch.
/// Stops the server (its clients get disconnect packets) once `shutdown`
/// says so.
async fn serve(mut server: Server, mut shutdown: watch::Receiver<bool>) {
    loop {
        tokio::select! {
            () = server.turn() => {}
            _ = shutdown.wait_for(|stop| *stop) => break,
        }
        while let Some(event) = server.poll_event() {
            println!("server: {event:?}");
        }
        let mut batch = server.batch();
        while let Some((index, packet)) = batch.receive_any() {
            let _ = batch.send_packet(index, packet.data());
            batch.free_packet(packet);
        }
    }
    server.stop();
    println!("server: stopped");
}

/// Payload `n` of client `id`.
fn payload(id: u64, n: u64) -> Vec<u8> {
    let len = 1 + (n * 31 + id) as usize % 1200;
    (0..len).map(|i| (i as u64 + n + id) as u8).collect()
}

/// Connects with `token`, then sends a payload, awaits its echo and checks
/// it, until `seconds` have passed or `shutdown` says so; then disconnects.
async fn talk(
    id: u64,
    token: [u8; 2048],
    seconds: f64,
    mut shutdown: watch::Receiver<bool>,
) -> Result<Tally, String> {
    let mut client = Client::new("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    client.connect(&token).map_err(|e| e.to_string())?;
    client
        .connected()
        .await
        .map_err(|state| format!("client {id}: {state}"))?;
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let mut tally = Tally::default();
    let mut n = 0;
    while Instant::now() < deadline && !*shutdown.borrow() {
        let sent = payload(id, n);
        client.send_packet(&sent).map_err(|e| e.to_string())?;
        let echo = tokio::select! {
            echo = tokio::time::timeout(Duration::from_secs(1), client.recv()) => echo
                .map_err(|_| format!("client {id}: no echo within a second"))?
                .ok_or_else(|| format!("client {id}: {}", client.state()))?,
            _ = shutdown.wait_for(|stop| *stop) => break,
        };
        if echo.data() == &sent[..] {
            tally.echoes += 1;
        } else {
            tally.wrong += 1;
        }
        client.free_packet(echo);
        n += 1;
    }
    client.disconnect();
    Ok(tally)
}

const USAGE: &str = "usage: echo [--clients K] [--seconds N]";

/// `--clients K` and `--seconds N`; `None` for `--help`.
fn arguments() -> Result<Option<(u64, f64)>, String> {
    let (mut clients, mut seconds) = (4, 3.0);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--clients" => clients = value()?.parse().map_err(|e| format!("--clients: {e}"))?,
            "--seconds" => seconds = value()?.parse().map_err(|e| format!("--seconds: {e}"))?,
            "--help" | "-h" => return Ok(None),
            other => return Err(format!("unknown argument {other}\n{USAGE}")),
        }
    }
    Ok(Some((clients, seconds)))
}

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), String> {
    let Some((clients, seconds)) = arguments()? else {
        println!("{USAGE}");
        return Ok(());
    };
    let key = generate_key().map_err(|e| e.to_string())?;
    let slots = usize::try_from(clients.max(1)).map_err(|e| e.to_string())?;
    let mut server = Server::new("127.0.0.1:0", ServerConfig::new(PROTOCOL_ID, key.clone()))
        .await
        .map_err(|e| e.to_string())?;
    server.start(slots).await.map_err(|e| e.to_string())?;
    let address = server.public_address();
    println!("server on {address}, {clients} clients for {seconds} s");
    // Ctrl-C, or the clients being done, stops everyone cleanly.
    let (stop_clients, clients_stop) = watch::channel(false);
    let (stop_server, server_stops) = watch::channel(false);
    let echo = tokio::spawn(serve(server, server_stops));
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            let _ = stop_clients.send(true);
        }
    });

    let mut tasks = Vec::new();
    for id in 1..=clients {
        let token = ConnectTokenBuilder::new(PROTOCOL_ID, &key, id)
            .server_addresses([address])
            .generate()
            .map_err(|e| e.to_string())?;
        tasks.push(tokio::spawn(talk(id, token, seconds, clients_stop.clone())));
    }
    let mut failed = false;
    for (id, task) in (1..).zip(tasks) {
        match task.await.map_err(|e| e.to_string())? {
            Ok(tally) => {
                println!(
                    "client {id}: {} echoes, {} wrong",
                    tally.echoes, tally.wrong
                );
                failed |= tally.wrong > 0 || tally.echoes == 0;
            }
            Err(e) => {
                println!("client {id}: {e}");
                failed = true;
            }
        }
    }
    let _ = stop_server.send(true);
    echo.await.map_err(|e| e.to_string())?;
    if failed {
        return Err("not every client connected and got correct echoes".into());
    }
    Ok(())
}
