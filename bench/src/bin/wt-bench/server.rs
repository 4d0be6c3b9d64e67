//! The server process (`wt-bench serve KIND`) and the client process's
//! handle on it.
//!
//! Every server runs on a current-thread tokio runtime on the process's
//! main thread (QUIC, the sessions and the netcode server all on it), with
//! a second thread that only sleeps on stdin: `stats` there prints the
//! endpoint's counters, end of input ends the process. Kinds:
//!
//! * `netcode`: a `netcode_tokio::Server` (netcode-proto on the backend the
//!   build chose: ring by default) on 127.0.0.1 UDP, with a
//!   `netcode_webtransport::WebTransport` endpoint attached (self-signed,
//!   default limits), echoing every payload to its sender: `server.next()`
//!   and `send_packet` (`--echo next`), or a `turn()` then one `batch()`
//!   per turn as the UDP bench's tokio row (`--echo batch`).
//! * `bare`: a bare wtransport echo on the same crate, version and QUIC
//!   config as the endpoint (`max_idle_timeout` 30 s, a self-signed
//!   certificate made the same way): a task per session that sends each
//!   datagram back as it comes (`--style plain`), or inside the same
//!   `select!` netcode-webtransport's session loop runs (datagrams,
//!   refused streams, the silence deadline reset per datagram:
//!   `--style select`), to price that loop alone; or (`--style batch`)
//!   taking every datagram already waiting (polled once with a no-op
//!   waker) before sending their echoes, so that QUIC packs the echoes of
//!   one wake-up into as few packets as it can, as it does for the relay,
//!   whose server sends a turn's replies together.
//! * `relay`: netcode-webtransport's endpoint and relay with no netcode
//!   server: a task waits on the relay's `ready` and sends every queued
//!   datagram back through the relay (`recv_from` / `send_to`), so the
//!   difference from `bare` is the crate's session loop and queue, and the
//!   difference from `netcode`'s sessions is netcode itself.

use std::future::Future;
use std::io::{BufRead, BufReader, Lines, Write};
use std::net::SocketAddr;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use netcode_bench::cli::Options;
use netcode_bench::machine::{Cpu, process_cpu};
use netcode_tokio::netcode_std::transport::Socket;
use netcode_tokio::{Incoming, Server};
use netcode_webtransport::wtransport::endpoint::IncomingSession;
use netcode_webtransport::wtransport::{Connection, Endpoint, ServerConfig, VarInt};
use netcode_webtransport::{
    WebSocket, WebSocketConfig, WebTransport, WebTransportConfig, self_signed_identity,
};

use crate::announce::ready;
use crate::options::{server_config, unhex};

/// Datagrams the bare and relay echoes sent back, and those QUIC refused.
static ECHOED: AtomicU64 = AtomicU64::new(0);
static NOT_SENT: AtomicU64 = AtomicU64::new(0);

/// Runs the server `kind` until stdin ends.
pub(crate) fn serve(kind: &str, mut options: Options) -> Result<(), String> {
    let slots: usize = options.get("slots", 64)?;
    let echo: String = options.get("echo", "next".to_string())?;
    let style: String = options.get("style", "plain".to_string())?;
    let history: String = options.get("token-history", "none".to_string())?;
    let tick = Duration::from_millis(options.get("tick-ms", 1)?);
    options.finish()?;
    if matches!(kind, "netcode-std" | "renetcode" | "netcode-official") {
        return crate::peer_servers::serve(kind, slots, tick);
    }
    let history = (history != "none").then(|| std::path::PathBuf::from(history));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))?;
    runtime.block_on(async {
        match kind {
            "netcode" => serve_netcode(slots, &echo, history).await,
            "bare" => serve_bare(&style).await,
            "relay" => serve_relay().await,
            other => Err(format!(
                "unknown server {other}: netcode, bare, relay, netcode-std, renetcode or netcode-official"
            )),
        }
    })
}

fn web_config() -> Result<WebTransportConfig, String> {
    let bind = "127.0.0.1:0".parse().map_err(|e| format!("{e}"))?;
    Ok(WebTransportConfig::self_signed(bind, &["127.0.0.1"]))
}

fn web_stats(web: &WebTransport) -> String {
    let s = web.stats();
    format!(
        "sessions={} received={} dropped_full={} oversized={} sent={} not_sent={} silent={} failed={}",
        s.sessions_accepted,
        s.datagrams_received,
        s.datagrams_dropped_full,
        s.datagrams_oversized,
        s.datagrams_sent,
        s.datagrams_not_sent,
        s.sessions_silent,
        s.sessions_failed
    )
}

async fn serve_netcode(
    slots: usize,
    echo: &str,
    history: Option<std::path::PathBuf>,
) -> Result<(), String> {
    let batch = match echo {
        "next" => false,
        "batch" => true,
        other => return Err(format!("--echo {other}: next or batch")),
    };
    let mut config = server_config();
    config.token_history_file = history;
    let mut server = Server::new("127.0.0.1:0", config)
        .await
        .map_err(|e| format!("netcode server: {e}"))?;
    let web = Arc::new(
        WebTransport::bind(web_config()?)
            .await
            .map_err(|e| format!("WebTransport: {e}"))?,
    );
    // The WebSocket fallback beside it, into the same relay.
    let websocket = WebSocket::bind_beside(
        WebSocketConfig::new("127.0.0.1:0".parse().map_err(|e| format!("{e}"))?),
        &web,
    )
    .await
    .map_err(|e| format!("WebSocket: {e}"))?;
    web.attach(&mut server);
    server
        .start(slots)
        .await
        .map_err(|e| format!("netcode server: {e}"))?;
    let stats = Arc::clone(&web);
    ready(
        Some(server.public_address()),
        &web.url("127.0.0.1"),
        &web.certificate_hash_hex(),
        Some(&websocket.url("127.0.0.1")),
        move || web_stats(&stats),
    );
    if batch {
        loop {
            server.turn().await;
            let mut batch = server.batch();
            while batch.poll_event().is_some() {}
            while let Some((slot, packet)) = batch.receive_any() {
                let _ = batch.send_packet(slot, packet.data());
                batch.free_packet(packet);
            }
        }
    }
    loop {
        match server.next().await {
            Incoming::Payload {
                client_index,
                packet,
            } => {
                let _ = server.send_packet(client_index, packet.data());
                server.free_packet(packet);
            }
            Incoming::Event(_) => {}
        }
    }
}

/// The endpoint's QUIC config, as netcode-webtransport builds it
/// (endpoint.rs, `server_config`).
fn bare_config(bind: SocketAddr) -> Result<(ServerConfig, String), String> {
    let identity = self_signed_identity(&["127.0.0.1".to_string()]).map_err(|e| format!("{e}"))?;
    let hash: String = identity.certificate_chain().as_slice()[0]
        .hash()
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let config = ServerConfig::builder()
        .with_bind_address(bind)
        .with_identity(identity)
        .max_idle_timeout(Some(Duration::from_secs(30)))
        .map_err(|e| format!("{e}"))?
        .build();
    Ok((config, hash))
}

fn count_sent(sent: Result<(), impl Sized>) {
    match sent {
        Ok(()) => ECHOED.fetch_add(1, Ordering::Relaxed),
        Err(_) => NOT_SENT.fetch_add(1, Ordering::Relaxed),
    };
}

fn echo_stats() -> String {
    format!(
        "sent={} not_sent={}",
        ECHOED.load(Ordering::Relaxed),
        NOT_SENT.load(Ordering::Relaxed)
    )
}

async fn serve_bare(style: &str) -> Result<(), String> {
    if !matches!(style, "plain" | "select" | "batch") {
        return Err(format!("--style {style}: plain, select or batch"));
    }
    let style = style.to_string();
    let bind = "127.0.0.1:0".parse().map_err(|e| format!("{e}"))?;
    let (config, hash) = bare_config(bind)?;
    let endpoint = Endpoint::server(config).map_err(|e| format!("wtransport: {e}"))?;
    let port = endpoint
        .local_addr()
        .map_err(|e| format!("wtransport: {e}"))?
        .port();
    ready(
        None,
        &format!("https://127.0.0.1:{port}/netcode"),
        &hash,
        None,
        echo_stats,
    );
    loop {
        let incoming = endpoint.accept().await;
        let style = style.clone();
        tokio::spawn(async move {
            if let Some(connection) = accept(incoming).await {
                match style.as_str() {
                    "select" => echo_select(&connection).await,
                    "batch" => echo_batched(&connection).await,
                    _ => {
                        while let Ok(datagram) = connection.receive_datagram().await {
                            count_sent(connection.send_datagram(datagram.payload()));
                        }
                    }
                }
            }
        });
    }
}

async fn accept(incoming: IncomingSession) -> Option<Connection> {
    incoming.await.ok()?.accept().await.ok()
}

/// Waits for a datagram, takes every other one already waiting, then
/// sends all their echoes.
async fn echo_batched(connection: &Connection) {
    let mut waiting = Vec::new();
    loop {
        let Ok(first) = connection.receive_datagram().await else {
            return;
        };
        waiting.push(first);
        // The other tasks (QUIC's drivers, wtransport's worker) run first
        // and bring what else has arrived.
        tokio::task::yield_now().await;
        loop {
            let mut next = std::pin::pin!(connection.receive_datagram());
            let polled = next.as_mut().poll(&mut Context::from_waker(Waker::noop()));
            match polled {
                Poll::Ready(Ok(datagram)) => waiting.push(datagram),
                Poll::Ready(Err(_)) => return,
                Poll::Pending => break,
            }
        }
        for datagram in waiting.drain(..) {
            count_sent(connection.send_datagram(datagram.payload()));
        }
    }
}

/// netcode-webtransport's session loop (endpoint.rs, `serve`), echoing
/// instead of queueing: the same four branches, the deadline reset per
/// datagram.
async fn echo_select(connection: &Connection) {
    let silence = Duration::from_secs(10);
    let mut deadline = tokio::time::Instant::now() + silence;
    loop {
        tokio::select! {
            datagram = connection.receive_datagram() => {
                let Ok(datagram) = datagram else { return };
                deadline = tokio::time::Instant::now() + silence;
                count_sent(connection.send_datagram(datagram.payload()));
            }
            stream = connection.accept_bi() => {
                let Ok((mut send, recv)) = stream else { return };
                let _ = send.reset(VarInt::from_u32(2));
                recv.stop(VarInt::from_u32(2));
            }
            stream = connection.accept_uni() => {
                let Ok(recv) = stream else { return };
                recv.stop(VarInt::from_u32(2));
            }
            () = tokio::time::sleep_until(deadline) => {
                connection.close(VarInt::from_u32(1), b"no datagram");
                return;
            }
        }
    }
}

async fn serve_relay() -> Result<(), String> {
    let web = Arc::new(
        WebTransport::bind(web_config()?)
            .await
            .map_err(|e| format!("WebTransport: {e}"))?,
    );
    let stats = Arc::clone(&web);
    ready(
        None,
        &web.url("127.0.0.1"),
        &web.certificate_hash_hex(),
        None,
        move || web_stats(&stats),
    );
    let relay = web.relay();
    let wake = web.ready();
    let mut buffer = [0u8; 2048];
    loop {
        wake.notified().await;
        while let Ok((n, from)) = relay.recv_from(&mut buffer) {
            let _ = relay.send_to(&buffer[..n], from);
        }
    }
}

/// Where a server process listens.
#[derive(Clone, Debug)]
pub(crate) struct Target {
    /// Its UDP address (netcode servers only).
    pub(crate) udp: Option<SocketAddr>,
    /// Its WebTransport URL.
    pub(crate) url: String,
    /// The SHA-256 hash of its certificate.
    pub(crate) hash: [u8; 32],
    /// Its WebSocket URL (netcode servers only).
    pub(crate) websocket: Option<String>,
}

/// A server process started by this one, ended (stdin closed, then
/// killed by its own id) when dropped.
pub(crate) struct ServerProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
    /// Where it listens.
    pub(crate) target: Target,
}

impl ServerProcess {
    /// Starts `wt-bench serve KIND ARGS...` (on CPU `pin` alone when
    /// given: `taskset -c`, which runs the program in its own process) and
    /// waits for its `READY` line.
    pub(crate) fn spawn(kind: &str, args: &[String], pin: Option<usize>) -> Result<Self, String> {
        let exe = std::env::current_exe().map_err(|e| format!("this program's path: {e}"))?;
        let mut all = vec!["serve".to_string(), kind.to_string()];
        all.extend_from_slice(args);
        Self::spawn_program(&exe, &all, pin)
    }

    /// Starts the server program `exe` with `args` (pinned as `spawn`
    /// does), which says `READY` as `serve` does, and waits for that line.
    pub(crate) fn spawn_program(
        exe: &std::path::Path,
        args: &[String],
        pin: Option<usize>,
    ) -> Result<Self, String> {
        let mut command = match pin {
            Some(cpu) => {
                let mut taskset = Command::new("taskset");
                taskset.arg("-c").arg(cpu.to_string()).arg(exe);
                taskset
            }
            None => Command::new(exe),
        };
        let mut child = command
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("starting the server: {e}"))?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().ok_or("the server's stdout")?;
        let mut process = Self {
            child,
            stdin,
            lines: BufReader::new(stdout).lines(),
            target: Target {
                udp: None,
                url: String::new(),
                hash: [0; 32],
                websocket: None,
            },
        };
        let line = process.line()?;
        let fields = line
            .strip_prefix("READY ")
            .ok_or_else(|| format!("the server said {line:?}"))?;
        for field in fields.split_whitespace() {
            match field.split_once('=') {
                Some(("udp", "-")) => {}
                Some(("udp", a)) => {
                    process.target.udp = Some(a.parse().map_err(|e| format!("{a}: {e}"))?)
                }
                Some(("url", url)) => process.target.url = url.to_string(),
                Some(("hash", hex)) => process.target.hash = unhex(hex)?,
                Some(("ws", "-")) => {}
                Some(("ws", url)) => process.target.websocket = Some(url.to_string()),
                _ => return Err(format!("the server said {line:?}")),
            }
        }
        Ok(process)
    }

    fn line(&mut self) -> Result<String, String> {
        match self.lines.next() {
            Some(Ok(line)) => Ok(line),
            Some(Err(e)) => Err(format!("reading the server: {e}")),
            None => Err("the server ended".into()),
        }
    }

    /// Datagrams its WebTransport socket dropped for a full receive buffer
    /// so far: the `drops` column of its line in `/proc/net/udp` (0 if
    /// there is none).
    pub(crate) fn socket_drops(&self) -> u64 {
        let Some(port) = self
            .target
            .url
            .rsplit_once(':')
            .and_then(|(_, rest)| rest.split('/').next())
            .and_then(|p| p.parse::<u16>().ok())
        else {
            return 0;
        };
        let wanted = format!(":{port:04X}");
        let mut drops = 0;
        for table in ["/proc/net/udp", "/proc/net/udp6"] {
            let text = std::fs::read_to_string(table).unwrap_or_default();
            for line in text.lines().skip(1) {
                let fields: Vec<&str> = line.split_whitespace().collect();
                if fields.get(1).is_some_and(|local| local.ends_with(&wanted)) {
                    drops += fields
                        .last()
                        .and_then(|d| d.parse::<u64>().ok())
                        .unwrap_or(0);
                }
            }
        }
        drops
    }

    /// Its CPU counters now.
    pub(crate) fn cpu(&self) -> Result<Cpu, String> {
        process_cpu(Some(self.child.id()))
    }

    /// Its endpoint's counters, as `key=value` fields.
    pub(crate) fn stats(&mut self) -> Result<String, String> {
        let stdin = self.stdin.as_mut().ok_or("no stdin")?;
        writeln!(stdin, "stats").map_err(|e| format!("asking the server: {e}"))?;
        stdin
            .flush()
            .map_err(|e| format!("asking the server: {e}"))?;
        let line = self.line()?;
        line.strip_prefix("STATS ")
            .map(str::to_string)
            .ok_or_else(|| format!("the server said {line:?}"))
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
