//! `wt-bench rtt udp|webtransport|websocket`: one netcode client of a
//! netcode server (its own process, UDP, WebTransport and the WebSocket
//! fallback attached) sends a payload, waits for its echo, and again, at
//! a fixed pace: the round trip of each (p50, p99, the worst), the pings
//! that never came back (after 1 s), and the server's CPU per echo
//! (schedstat, as `echo` reads it). Run under loss (a network namespace
//! with an nftables rule, `bench/scripts/transports.sh`), it shows what
//! each transport does with a lost packet: netcode over UDP and
//! WebTransport loses that ping and no other; over the WebSocket, TCP
//! resends it and holds up every ping behind it.

use std::time::{Duration, Instant};

use netcode_bench::cli::Options;
use netcode_bench::machine::load1;
use netcode_tokio::Client;
use netcode_webtransport::{WebSocketClient, WebTransportClient};

use crate::echo::{udp_client, web_client};
use crate::options::{ResultLine, client_runtime, server_cpu, token};
use crate::server::{ServerProcess, Target};

/// How long a ping may take before it counts as lost.
const LOST_AFTER: Duration = Duration::from_secs(1);

/// The client of one transport.
enum Pinger {
    Udp(Box<Client>),
    Web(Box<WebTransportClient>),
    Socket(Box<WebSocketClient>),
}

impl Pinger {
    async fn connect(kind: &str, server: &Target) -> Result<Self, String> {
        Ok(match kind {
            "udp" => Pinger::Udp(Box::new(udp_client(server, 1).await?)),
            "webtransport" => Pinger::Web(Box::new(web_client(server, 1).await?)),
            "websocket" => {
                let url = server
                    .websocket
                    .as_deref()
                    .ok_or("the server has no WebSocket")?;
                let udp = server.udp.ok_or("the server has no UDP address")?;
                let mut client = WebSocketClient::connect(url, &token(1, udp)?)
                    .await
                    .map_err(|e| format!("websocket client: {e}"))?;
                client
                    .connected()
                    .await
                    .map_err(|state| format!("websocket client ended {state:?}"))?;
                Pinger::Socket(Box::new(client))
            }
            other => {
                return Err(format!(
                    "unknown transport {other}: udp, webtransport or websocket"
                ));
            }
        })
    }

    async fn send(&mut self, payload: &[u8]) -> bool {
        match self {
            Pinger::Udp(client) => client.send_packet(payload).is_ok(),
            Pinger::Web(client) => client.send(payload).is_ok(),
            Pinger::Socket(client) => client.send(payload).await.is_ok(),
        }
    }

    /// The next payload's first 8 bytes (the ping's number), or `None`
    /// when the connection is over.
    async fn recv(&mut self) -> Option<u64> {
        let number = |data: &[u8]| {
            data.get(..8)
                .and_then(|b| b.try_into().ok())
                .map_or(u64::MAX, u64::from_le_bytes)
        };
        match self {
            Pinger::Udp(client) => {
                let packet = client.recv().await?;
                let n = number(packet.data());
                client.free_packet(packet);
                Some(n)
            }
            Pinger::Web(client) => client.recv().await.map(|p| number(&p)),
            Pinger::Socket(client) => client.recv().await.map(|p| number(&p)),
        }
    }
}

/// The `q` quantile (0 to 1) of sorted `values`.
fn quantile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let at = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

pub(crate) fn run(kind: &str, mut options: Options) -> Result<(), String> {
    let round: u32 = options.get("round", 1)?;
    let pings: u64 = options.get("pings", 2000)?;
    let interval_ms: u64 = options.get("interval-ms", 5)?;
    let payload_bytes: usize = options.get("payload", 100)?;
    let condition: String = options.get("condition", "clean".to_string())?;
    let pin = server_cpu(&mut options)?;
    options.finish()?;
    let load_before = load1();
    let args = vec!["--slots".to_string(), "4".into()];
    let mut server = ServerProcess::spawn("netcode", &args, pin)?;
    let runtime = client_runtime(0)?;
    let (times, lost, cpu) = runtime.block_on(async {
        let mut pinger = Pinger::connect(kind, &server.target).await?;
        let cpu_before = server.cpu()?;
        let mut times = Vec::with_capacity(pings as usize);
        let mut lost = 0u64;
        let mut payload = vec![0u8; payload_bytes.max(8)];
        for n in 0..pings {
            payload[..8].copy_from_slice(&n.to_le_bytes());
            let sent = Instant::now();
            if !pinger.send(&payload).await {
                return Err(format!("ping {n} was not sent"));
            }
            // The echo of this ping; echoes of pings given up on are
            // passed over.
            let echo = tokio::time::timeout(LOST_AFTER, async {
                loop {
                    match pinger.recv().await {
                        Some(m) if m == n => return true,
                        Some(_) => {}
                        None => return false,
                    }
                }
            })
            .await;
            match echo {
                Ok(true) => times.push(sent.elapsed()),
                Ok(false) => return Err("the connection ended".to_string()),
                Err(_) => lost += 1,
            }
            tokio::time::sleep(Duration::from_millis(interval_ms)).await;
        }
        let cpu = server.cpu()? - cpu_before;
        Ok::<_, String>((times, lost, cpu))
    })?;
    drop(runtime);
    let _ = server.stats();
    drop(server);
    let mut sorted = times.clone();
    sorted.sort();
    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    let echoed = times.len().max(1) as f64;
    ResultLine::new(round, kind, 1)
        .field("condition", condition)
        .field("payload", payload_bytes)
        .field("pings", pings)
        .field("lost", lost)
        .float("rtt_p50_us", micros(quantile(&sorted, 0.5)), 0)
        .float("rtt_p99_us", micros(quantile(&sorted, 0.99)), 0)
        .float(
            "rtt_max_us",
            micros(sorted.last().copied().unwrap_or_default()),
            0,
        )
        .float("server_us", cpu.seconds * 1e6 / echoed, 2)
        .field("load_before", load_before)
        .field("load_after", load1())
        .print();
    Ok(())
}
