//! `wt-bench connect wt|udp`: connections per second, and the server's CPU
//! per connection (with `--token-history FILE`, the server keeps its
//! connect token history there: each token's record is synced before the
//! token is answered).
//!
//! The netcode server with WebTransport attached (`serve netcode`, as many
//! slots as clients) in its own process; here, `--clients` netcode clients
//! (500) connect to it, at most `--concurrency` (64) at a time, each from
//! nothing to `Connected`: for `wt` a `WebTransportClient` (a new client
//! endpoint, the QUIC and TLS handshake, the HTTP/3 session request, then
//! netcode's request, challenge and response as datagrams), for `udp` a
//! `netcode_tokio::Client` on a socket of its own (netcode's handshake
//! only). The window runs from the first connection attempt to the last
//! client connected; tokens are made inside it, on the client side.
//!
//! Clients stay connected and idle (not turned) until the end of the case,
//! so the server's keep-alives to the ones already connected (10 a second
//! each) fall in the window too. Its CPU is then read again after
//! `--hold-ms` (1000) with all of them connected and idle, which prices
//! those keep-alives per client-second; with the instant each client
//! connected, the client-seconds connected inside the window give their
//! estimated share (`keepalive_share`), and `server_us_net` is the CPU
//! per connection without it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use netcode_bench::cli::Options;
use netcode_bench::machine::{Cpu, load1, machine_busy, process_cpu, udp_counters};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::echo::{Peer, udp_client, web_client};
use crate::options::{ResultLine, client_runtime, server_cpu};
use crate::server::{ServerProcess, Target};

/// What the window measured.
struct Window {
    wall: f64,
    /// Seconds the clients were connected inside the window, summed.
    client_seconds: f64,
    server: Cpu,
    clients: Cpu,
    /// The server's CPU over the hold after the window.
    idle: Cpu,
    /// UDP datagrams sent on the machine in the window, and dropped for a
    /// full receive buffer.
    udp_out: u64,
    rcvbuf_errors: u64,
    /// The machine's busy time in the window (all processes), seconds.
    machine: f64,
}

pub(crate) fn run(kind: &str, mut options: Options) -> Result<(), String> {
    let round: u32 = options.get("round", 1)?;
    let clients: usize = options.get("clients", 500)?;
    let concurrency: usize = options.get("concurrency", 64)?;
    let hold = Duration::from_millis(options.get("hold-ms", 1000)?);
    let workers: usize = options.get("client-workers", 0)?;
    // A token history file for the server (`none`: without one).
    let history: String = options.get("token-history", "none".to_string())?;
    let pin = server_cpu(&mut options)?;
    options.finish()?;
    if kind != "wt" && kind != "udp" {
        return Err(format!("unknown kind {kind}: wt or udp"));
    }
    let load_before = load1();
    let mut server_args = vec!["--slots".to_string(), clients.to_string()];
    if history != "none" {
        // A fresh file each case: a used one holds the last case's tokens.
        let _ = std::fs::remove_file(&history);
        server_args.extend(["--token-history".to_string(), history.clone()]);
    }
    let mut server = ServerProcess::spawn("netcode", &server_args, pin)?;
    let runtime = client_runtime(workers)?;
    let target = server.target.clone();
    let web = kind == "wt";
    let (kept, failed, window) = runtime.block_on(async {
        let gate = Arc::new(Semaphore::new(concurrency.max(1)));
        let server_start = server.cpu()?;
        let client_start = process_cpu(None)?;
        let udp_start = udp_counters().unwrap_or_default();
        let machine_start = machine_busy();
        let started = Instant::now();
        let mut tasks = JoinSet::new();
        for i in 0..clients {
            let permit = Arc::clone(&gate)
                .acquire_owned()
                .await
                .map_err(|e| format!("{e}"))?;
            let target: Target = target.clone();
            tasks.spawn(async move {
                let id = i as u64 + 1;
                let kept = if web {
                    web_client(&target, id)
                        .await
                        .map(|c| Peer::Web(Box::new(c)))
                } else {
                    udp_client(&target, id)
                        .await
                        .map(|c| Peer::Udp(Box::new(c)))
                };
                drop(permit);
                kept.map(|client| (client, Instant::now()))
            });
        }
        let mut kept = Vec::with_capacity(clients);
        let mut connected_at = Vec::with_capacity(clients);
        let mut failed = Vec::new();
        while let Some(joined) = tasks.join_next().await {
            match joined {
                Ok(Ok((client, at))) => {
                    connected_at.push(at);
                    kept.push(client);
                }
                Ok(Err(e)) => failed.push(e),
                Err(e) => failed.push(format!("{e}")),
            }
        }
        let ended = Instant::now();
        let wall = (ended - started).as_secs_f64();
        let client_seconds: f64 = connected_at
            .iter()
            .map(|at| (ended - *at).as_secs_f64())
            .sum();
        let server_end = server.cpu()?;
        let client_end = process_cpu(None)?;
        let udp_end = udp_counters().unwrap_or_default();
        let machine = machine_busy() - machine_start;
        tokio::time::sleep(hold).await;
        let server_held = server.cpu()?;
        Ok::<_, String>((
            kept,
            failed,
            Window {
                wall,
                client_seconds,
                server: server_end - server_start,
                clients: client_end - client_start,
                idle: server_held - server_end,
                udp_out: udp_end.sent - udp_start.sent,
                rcvbuf_errors: udp_end.receive_buffer_errors - udp_start.receive_buffer_errors,
                machine,
            },
        ))
    })?;
    let stats = server.stats()?;
    let socket_drops = server.socket_drops();
    let connected = kept.len();
    drop(kept);
    drop(server);
    drop(runtime);
    if let Some(first) = failed.first() {
        eprintln!(
            "{} of {clients} connections failed; the first: {first}",
            failed.len()
        );
    }
    let Window {
        wall,
        client_seconds,
        server: server_cpu,
        clients: client_cpu,
        idle,
        udp_out,
        rcvbuf_errors,
        machine,
    } = window;
    let n = connected.max(1) as f64;
    let server_us = server_cpu.seconds * 1e6;
    // Idle cost per connected client per second, and its estimated part of
    // the window.
    let idle_per_client_second = idle.seconds * 1e6 / n / hold.as_secs_f64().max(1e-9);
    let keepalives_us = idle_per_client_second * client_seconds;
    ResultLine::new(round, &format!("connect-{kind}"), clients)
        .field("concurrency", concurrency)
        .field(
            "token_history",
            if history == "none" { "no" } else { "yes" },
        )
        .field("client_workers", workers)
        .field(
            "server_cpu",
            pin.map_or("any".to_string(), |c| c.to_string()),
        )
        .field("connected", connected)
        .field("failed", failed.len())
        .float("seconds", wall, 3)
        .float("connects_per_s", n / wall, 1)
        .float("server_us", server_us / n, 1)
        .float("server_us_net", (server_us - keepalives_us).max(0.0) / n, 1)
        .float("server_util", server_cpu.seconds / wall, 3)
        .float("server_kernel", server_cpu.kernel_share(), 3)
        .float("client_us", client_cpu.seconds * 1e6 / n, 1)
        .float(
            "others_util",
            (machine - server_cpu.seconds - client_cpu.seconds).max(0.0) / wall,
            3,
        )
        .float("idle_us_per_client_s", idle_per_client_second, 2)
        .float("client_seconds", client_seconds, 2)
        .float("udp_out_per_connect", udp_out as f64 / n, 1)
        .field("rcvbuf_errors", rcvbuf_errors)
        .field("server_socket_drops", socket_drops)
        .float("keepalive_share", keepalives_us / server_us.max(1e-9), 4)
        .field("load_before", load_before)
        .field("load_after", load1())
        .server_stats(&stats)
        .print();
    Ok(())
}
