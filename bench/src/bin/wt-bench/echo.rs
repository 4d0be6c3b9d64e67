//! `wt-bench echo CASE`: server CPU per echoed payload.
//!
//! The server runs in a process of its own (`server.rs`); this process
//! runs K clients on one tokio runtime (current-thread unless
//! `--client-workers` says otherwise). Every client keeps a window of
//! payloads in flight: it sends `--window` of them, then one more for each
//! echo it receives; after 200 ms without an echo it counts a refill and
//! sends a whole window again (datagrams can be lost, even on loopback).
//! At the end the clients stop sending and wait for what is still in
//! flight, so `lost` is exact: payloads sent and never echoed.
//! Once the clients together have received `--warmup` echoes, the window
//! opens: the server's CPU counters, this process's and the clock are
//! read, and read again once `--echoes` more have come back. The server's
//! CPU per echo is its CPU time over the window divided by the echoes
//! received in it (both read at the same instant, within the 1 ms the
//! watching task sleeps between looks).
//!
//! Cases:
//!
//! * `netcode-wt`: the netcode server with WebTransport attached
//!   (`serve netcode`), clients `netcode_webtransport::WebTransportClient`
//!   (netcode's client over a native wtransport session, what a browser
//!   does), `--payload` bytes each (100);
//! * `netcode-udp`: the same server, clients `netcode_tokio::Client` over
//!   127.0.0.1 UDP, the same payloads;
//! * `bare-wt`: the bare wtransport echo (`serve bare`), clients raw
//!   wtransport sessions sending datagrams of `--datagram` bytes, by
//!   default the size of the netcode payload packet that carries a
//!   `--payload`-byte payload with a two-byte sequence (payload + 19:
//!   prefix 1, sequence 2, tag 16), so both paths carry the same bytes;
//! * `bare-wt-select`: the same with the echo inside netcode-webtransport's
//!   session `select!` (`serve bare --style select`);
//! * `bare-wt-batch`: the same taking every waiting datagram before
//!   echoing them (`serve bare --style batch`);
//! * `relay-wt`: netcode-webtransport's endpoint and relay echoing without
//!   a netcode server (`serve relay`), the bare clients.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use netcode_bench::cli::Options;
use netcode_bench::machine::{
    Cpu, TICKS_PER_SECOND, UdpCounters, load1, machine_busy, process_cpu, udp_counters,
};
use netcode_tokio::Client;
use netcode_webtransport::WebTransportClient;
use netcode_webtransport::wtransport::endpoint::endpoint_side::Client as ClientSide;
use netcode_webtransport::wtransport::tls::Sha256Digest;
use netcode_webtransport::wtransport::{ClientConfig, Connection, Endpoint};

use crate::options::{ResultLine, client_runtime, server_cpu, token};
use crate::server::{ServerProcess, Target};

/// How long a client waits for an echo before sending a new window.
const QUIET: Duration = Duration::from_millis(200);
/// How long a case may take before it is given up.
const GIVE_UP: Duration = Duration::from_secs(300);
/// Bytes a netcode payload packet adds to its payload with a two-byte
/// sequence: the prefix byte, the sequence, the 16-byte tag.
const PACKET_OVERHEAD: usize = 1 + 2 + 16;

/// What every client adds to.
#[derive(Default)]
struct Tally {
    /// Set at the end of the window: clients send nothing more and return
    /// once their echoes stop coming.
    stopping: AtomicBool,
    echoed: AtomicU64,
    sent: AtomicU64,
    refills: AtomicU64,
    wrong_length: AtomicU64,
}

/// One client of any case (and of `connect.rs`, which keeps them until
/// the end).
pub(crate) enum Peer {
    Web(Box<WebTransportClient>),
    Udp(Box<Client>),
    Bare {
        connection: Connection,
        _endpoint: Endpoint<ClientSide>,
    },
}

impl Peer {
    /// Sends `payload`; whether it went.
    fn send(&mut self, payload: &[u8]) -> bool {
        match self {
            Peer::Web(client) => client.send(payload).is_ok(),
            Peer::Udp(client) => client.send_packet(payload).is_ok(),
            Peer::Bare { connection, .. } => connection.send_datagram(payload).is_ok(),
        }
    }

    /// The length of the next echo; `None` once the connection is over.
    async fn recv(&mut self) -> Option<usize> {
        match self {
            Peer::Web(client) => client.recv().await.map(|payload| payload.len()),
            Peer::Udp(client) => {
                let packet = client.recv().await?;
                let len = packet.data().len();
                client.free_packet(packet);
                Some(len)
            }
            Peer::Bare { connection, .. } => {
                connection.receive_datagram().await.ok().map(|d| d.len())
            }
        }
    }
}

/// Keeps `window` payloads of `peer` in flight for ever.
async fn keep_window(mut peer: Peer, window: usize, payload: Vec<u8>, tally: Arc<Tally>) {
    loop {
        for _ in 0..window {
            if peer.send(&payload) {
                tally.sent.fetch_add(1, Ordering::Relaxed);
            }
        }
        loop {
            match tokio::time::timeout(QUIET, peer.recv()).await {
                Ok(Some(len)) => {
                    if len != payload.len() {
                        tally.wrong_length.fetch_add(1, Ordering::Relaxed);
                    }
                    tally.echoed.fetch_add(1, Ordering::Relaxed);
                    if !tally.stopping.load(Ordering::Relaxed) && peer.send(&payload) {
                        tally.sent.fetch_add(1, Ordering::Relaxed);
                    }
                }
                Ok(None) => return,
                Err(_) if tally.stopping.load(Ordering::Relaxed) => return,
                Err(_) => {
                    tally.refills.fetch_add(1, Ordering::Relaxed);
                    break;
                }
            }
        }
    }
}

/// A raw wtransport session to `server`, trusting its certificate hash.
async fn bare_session(server: &Target) -> Result<Peer, String> {
    let config = ClientConfig::builder()
        .with_bind_default()
        .with_server_certificate_hashes([Sha256Digest::new(server.hash)])
        .build();
    let endpoint = Endpoint::client(config).map_err(|e| format!("client endpoint: {e}"))?;
    let connection = endpoint
        .connect(&server.url)
        .await
        .map_err(|e| format!("session: {e}"))?;
    Ok(Peer::Bare {
        connection,
        _endpoint: endpoint,
    })
}

/// A netcode client of `server` over WebTransport, connected.
pub(crate) async fn web_client(server: &Target, id: u64) -> Result<WebTransportClient, String> {
    let udp = server.udp.ok_or("the server has no UDP address")?;
    let token = token(id, udp)?;
    let mut client = WebTransportClient::connect(&server.url, &[server.hash], &token)
        .await
        .map_err(|e| format!("client {id}: {e}"))?;
    client
        .connected()
        .await
        .map_err(|state| format!("client {id} ended {state:?}"))?;
    Ok(client)
}

/// A netcode client of `server` over UDP, connected.
pub(crate) async fn udp_client(server: &Target, id: u64) -> Result<Client, String> {
    let udp = server.udp.ok_or("the server has no UDP address")?;
    let token = token(id, udp)?;
    let mut client = Client::new("127.0.0.1:0")
        .await
        .map_err(|e| format!("client {id}: {e}"))?;
    client
        .connect(&token)
        .map_err(|e| format!("client {id}: {e}"))?;
    client
        .connected()
        .await
        .map_err(|state| format!("client {id} ended {state:?}"))?;
    Ok(client)
}

/// The counters at one edge of the window.
struct Mark {
    at: Instant,
    echoed: u64,
    server: Cpu,
    clients: Cpu,
    udp: UdpCounters,
    machine: f64,
}

fn mark(tally: &Tally, server: &ServerProcess) -> Result<Mark, String> {
    Ok(Mark {
        at: Instant::now(),
        echoed: tally.echoed.load(Ordering::Relaxed),
        server: server.cpu()?,
        clients: process_cpu(None)?,
        udp: udp_counters().unwrap_or_default(),
        machine: machine_busy(),
    })
}

/// The run's settings.
struct Settings {
    clients: usize,
    window: usize,
    bytes: usize,
    warmup: u64,
    echoes: u64,
}

pub(crate) fn run(case: &str, mut options: Options) -> Result<(), String> {
    let round: u32 = options.get("round", 1)?;
    let clients: usize = options.get("clients", 1)?;
    let window: usize = options.get("window", 64)?;
    let payload: usize = options.get("payload", 100)?;
    let datagram: usize = options.get("datagram", payload + PACKET_OVERHEAD)?;
    let warmup: u64 = options.get("warmup", 20_000)?;
    let echoes: u64 = options.get("echoes", 200_000)?;
    let echo: String = options.get("echo", "next".to_string())?;
    let workers: usize = options.get("client-workers", 0)?;
    let pin = server_cpu(&mut options)?;
    options.finish()?;
    let netcode_args = vec![
        "--slots".to_string(),
        clients.max(1).to_string(),
        "--echo".into(),
        echo.clone(),
    ];
    let (kind, args, bytes) = match case {
        "netcode-wt" | "netcode-udp" => ("netcode", netcode_args, payload),
        "bare-wt" => ("bare", vec![], datagram),
        "bare-wt-select" => (
            "bare",
            vec!["--style".to_string(), "select".into()],
            datagram,
        ),
        "bare-wt-batch" => (
            "bare",
            vec!["--style".to_string(), "batch".into()],
            datagram,
        ),
        "relay-wt" => ("relay", vec![], datagram),
        other => {
            return Err(format!(
                "unknown case {other}: netcode-wt, netcode-udp, bare-wt, bare-wt-batch, bare-wt-select or relay-wt"
            ));
        }
    };
    let load_before = load1();
    let mut server = ServerProcess::spawn(kind, &args, pin)?;
    let runtime = client_runtime(workers)?;
    let settings = Settings {
        clients,
        window,
        bytes,
        warmup,
        echoes,
    };
    let (start, end, tally) = runtime.block_on(measure(case, &server, &settings))?;
    let stats = server.stats()?;
    let socket_drops = server.socket_drops();
    drop(server);
    drop(runtime);
    let n = (end.echoed - start.echoed).max(1) as f64;
    let wall = (end.at - start.at).as_secs_f64();
    let server_cpu = end.server - start.server;
    let client_cpu = end.clients - start.clients;
    let sent = tally.sent.load(Ordering::Relaxed);
    let echoed = tally.echoed.load(Ordering::Relaxed);
    let lost = sent.saturating_sub(echoed);
    ResultLine::new(round, case, clients)
        .field("window", window)
        .field("bytes", bytes)
        .field(
            "echo",
            if kind == "netcode" {
                echo.as_str()
            } else {
                "-"
            },
        )
        .field("client_workers", workers)
        .field(
            "server_cpu",
            pin.map_or("any".to_string(), |c| c.to_string()),
        )
        .field("echoes", end.echoed - start.echoed)
        .float("seconds", wall, 3)
        .float("echoes_per_s", n / wall, 0)
        .float("server_us", server_cpu.seconds * 1e6 / n, 3)
        .float("server_util", server_cpu.seconds / wall, 3)
        .float("server_kernel", server_cpu.kernel_share(), 3)
        .float(
            "server_tick_us",
            (server_cpu.user_ticks + server_cpu.kernel_ticks) as f64 * 1e6 / TICKS_PER_SECOND / n,
            3,
        )
        .float("client_us", client_cpu.seconds * 1e6 / n, 3)
        .float("client_util", client_cpu.seconds / wall, 3)
        .float(
            "others_util",
            (end.machine - start.machine - server_cpu.seconds - client_cpu.seconds).max(0.0) / wall,
            3,
        )
        .float(
            "udp_out_per_echo",
            (end.udp.sent - start.udp.sent) as f64 / n,
            3,
        )
        .field(
            "rcvbuf_errors",
            end.udp.receive_buffer_errors - start.udp.receive_buffer_errors,
        )
        .field("server_socket_drops", socket_drops)
        .field("lost", lost)
        .field("refills", tally.refills.load(Ordering::Relaxed))
        .field("wrong_length", tally.wrong_length.load(Ordering::Relaxed))
        .field("load_before", load_before)
        .field("load_after", load1())
        .server_stats(&stats)
        .print();
    Ok(())
}

async fn measure(
    case: &str,
    server: &ServerProcess,
    s: &Settings,
) -> Result<(Mark, Mark, Arc<Tally>), String> {
    let mut peers = Vec::with_capacity(s.clients);
    for i in 0..s.clients {
        let id = i as u64 + 1;
        peers.push(match case {
            "netcode-wt" => Peer::Web(Box::new(web_client(&server.target, id).await?)),
            "netcode-udp" => Peer::Udp(Box::new(udp_client(&server.target, id).await?)),
            _ => bare_session(&server.target).await?,
        });
    }
    let tally = Arc::new(Tally::default());
    let payload = netcode_bench::fixtures::payload(s.bytes);
    let tasks: Vec<_> = peers
        .into_iter()
        .map(|peer| {
            tokio::spawn(keep_window(
                peer,
                s.window,
                payload.clone(),
                Arc::clone(&tally),
            ))
        })
        .collect();
    let began = Instant::now();
    let mut start = None;
    let result = loop {
        tokio::time::sleep(Duration::from_millis(1)).await;
        let echoed = tally.echoed.load(Ordering::Relaxed);
        match &start {
            None if echoed >= s.warmup => {
                start = Some(mark(&tally, server)?);
            }
            Some(first) if echoed >= first.echoed + s.echoes => {
                break mark(&tally, server);
            }
            _ => {}
        }
        if began.elapsed() > GIVE_UP {
            break Err(format!("{echoed} echoes after {GIVE_UP:?}: given up"));
        }
        if tasks.iter().all(|t| t.is_finished()) {
            break Err(format!("every client ended after {echoed} echoes"));
        }
    };
    // The echoes still in flight come back (or are lost): then every
    // payload sent is either echoed or lost.
    tally.stopping.store(true, Ordering::Relaxed);
    tokio::time::sleep(QUIET * 2).await;
    for task in &tasks {
        task.abort();
    }
    let end = result?;
    let start = start.ok_or("no start")?;
    Ok((start, end, tally))
}
