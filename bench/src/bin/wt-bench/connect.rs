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
//!
//! `--server` picks the server for `udp`: `ours` (above: netcode-tokio,
//! woken by each datagram), or a server in a fixed-tick loop, every
//! `--tick-ms` (1): `netcode-std` (ours), `renetcode` or
//! `netcode-official` (`wt-bench serve KIND`, `peer_servers.rs`), or
//! `c-reference`: the program `NETCODE_C_BENCH_SERVER` names, built from
//! `bench/c/netcode_c_server.c` against the C reference (the command is in
//! that file; nothing here builds it; unset, the case prints a SKIPPED line
//! and measures nothing), or `c-api`: the same C program built against this
//! project's netcode-c, named by `NETCODE_C_API_BENCH_SERVER`
//! (`bench/scripts/connect.sh` builds it), so that the reference and ours
//! run one program. Their slots are capped at what each library
//! allows (256 for netcode-official and the reference, 1024 for
//! renetcode), so `--churn true` has each client disconnect (and go) as
//! soon as it is connected, freeing its slot: each connection then also
//! costs the server its disconnect packets, for every server alike, and
//! `server_us_net` leaves out the server's idle cost over the window
//! instead of keep-alives (its CPU in the hold, when nobody is connected,
//! per second: a tick loop wakes every tick).

use std::sync::Arc;
use std::time::{Duration, Instant};

use netcode_bench::cli::Options;
use netcode_bench::machine::{Cpu, load1, machine_busy, process_cpu, udp_counters};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::echo::{Peer, udp_client, web_client};
use crate::options::{ResultLine, client_runtime, server_cpu};
use crate::server::{ServerProcess, Target};
use netcode_tokio::netcode_std::MAX_CLIENTS;

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
    let server_kind: String = options.get("server", "ours".to_string())?;
    let churn: bool = options.get("churn", false)?;
    let tick_ms: u64 = options.get("tick-ms", 1)?;
    let pin = server_cpu(&mut options)?;
    options.finish()?;
    if kind != "wt" && kind != "udp" {
        return Err(format!("unknown kind {kind}: wt or udp"));
    }
    if server_kind != "ours" && (kind != "udp" || history != "none") {
        return Err("--server other than ours: udp only, without --token-history".into());
    }
    let load_before = load1();
    let Some(mut server) = start_server(&server_kind, clients, &history, tick_ms, pin)? else {
        println!(
            "SKIPPED connect-udp on {server_kind}: {} unset (see bench/c/netcode_c_server.c)",
            c_program_variable(&server_kind)
        );
        return Ok(());
    };
    let runtime = client_runtime(workers)?;
    let target = server.target.clone();
    let web = kind == "wt";
    let (kept, connections, failed, window) = runtime.block_on(async {
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
                        .map(|c| Some(Peer::Web(Box::new(c))))
                } else {
                    udp_client(&target, id).await.map(|mut c| {
                        if churn {
                            // Its disconnect packets leave now; the slot
                            // is free once the server reads one.
                            c.disconnect();
                            None
                        } else {
                            Some(Peer::Udp(Box::new(c)))
                        }
                    })
                };
                drop(permit);
                kept.map(|client| (client, Instant::now()))
            });
        }
        let mut kept = Vec::with_capacity(clients);
        let mut connected_at = Vec::with_capacity(clients);
        let mut failed = Vec::new();
        let mut connections = 0usize;
        while let Some(joined) = tasks.join_next().await {
            match joined {
                Ok(Ok((client, at))) => {
                    // A client that left at once (`--churn`) was connected
                    // for no time inside the window.
                    if let Some(client) = client {
                        connected_at.push(at);
                        kept.push(client);
                    }
                    connections += 1;
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
            connections,
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
    let n = connections.max(1) as f64;
    let server_us = server_cpu.seconds * 1e6;
    // Idle cost per connected client per second, and its estimated part of
    // the window.
    let idle_per_client_second = idle.seconds * 1e6 / n / hold.as_secs_f64().max(1e-9);
    // What the window holds beside the connections: with clients kept, the
    // keep-alives to them; with `--churn` (nobody left connected in the
    // hold), the server loop's own idle cost over the window.
    let keepalives_us = if churn {
        idle.seconds * 1e6 / hold.as_secs_f64().max(1e-9) * wall
    } else {
        idle_per_client_second * client_seconds
    };
    ResultLine::new(round, &format!("connect-{kind}"), clients)
        .field("server", &server_kind)
        .field("churn", if churn { "yes" } else { "no" })
        .field(
            "tick_ms",
            if server_kind == "ours" {
                "-".to_string()
            } else {
                tick_ms.to_string()
            },
        )
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
        .field("connected", connections)
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

/// Starts the server of `kind` with slots for `clients` (at most what the
/// library allows), or `None` for a C program whose variable is unset
/// ([`c_program_variable`]).
fn start_server(
    kind: &str,
    clients: usize,
    history: &str,
    tick_ms: u64,
    pin: Option<usize>,
) -> Result<Option<ServerProcess>, String> {
    let slots = |cap: usize| clients.min(cap).to_string();
    let tick = tick_ms.to_string();
    let tick_loop = |cap: usize| {
        let args = [
            "--slots".into(),
            slots(cap),
            "--tick-ms".into(),
            tick.clone(),
        ];
        ServerProcess::spawn(kind, &args, pin)
    };
    let process = match kind {
        "ours" => {
            let mut args = vec!["--slots".to_string(), clients.to_string()];
            if history != "none" {
                // A fresh file each case: a used one holds the last case's
                // tokens.
                let _ = std::fs::remove_file(history);
                args.extend(["--token-history".to_string(), history.to_string()]);
            }
            ServerProcess::spawn("netcode", &args, pin)?
        }
        "netcode-std" => tick_loop(MAX_CLIENTS)?,
        "renetcode" => tick_loop(1024)?,
        "netcode-official" => tick_loop(256)?,
        "c-reference" | "c-api" => {
            let Some(exe) = std::env::var_os(c_program_variable(kind)) else {
                return Ok(None);
            };
            // A port free a moment ago: the program binds it itself.
            let port = std::net::UdpSocket::bind("127.0.0.1:0")
                .and_then(|s| s.local_addr())
                .map_err(|e| format!("a free port: {e}"))?
                .port();
            let args = [slots(256), port.to_string(), tick.clone()];
            ServerProcess::spawn_program(std::path::Path::new(&exe), &args, pin)?
        }
        other => {
            return Err(format!(
                "unknown --server {other}: ours, netcode-std, renetcode, netcode-official, c-reference or c-api"
            ));
        }
    };
    Ok(Some(process))
}

/// The variable naming the C program of server `kind` (`c-reference` or
/// `c-api`).
fn c_program_variable(kind: &str) -> &'static str {
    if kind == "c-api" {
        "NETCODE_C_API_BENCH_SERVER"
    } else {
        "NETCODE_C_BENCH_SERVER"
    }
}
