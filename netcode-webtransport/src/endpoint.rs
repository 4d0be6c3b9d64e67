//! The WebTransport endpoint: QUIC and HTTP/3 listening on a UDP port,
//! each session at the configured path turned into a virtual peer of the
//! relay (relay.rs), everything else refused and counted.

use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use netcode_std::proto::constants::MAX_PACKET_BYTES;
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep_until, timeout};
use wtransport::endpoint::IncomingSession;
use wtransport::endpoint::endpoint_side::Server as ServerSide;
use wtransport::{Connection, Endpoint, Identity, ServerConfig, VarInt};

use crate::config::{Certificate, WebTransportConfig, self_signed_identity};
use crate::relay::{Outbound, Relay, Shared, WebTransportStats, release, reserve};

/// The application error code a session is closed with when it stayed
/// silent; WebTransport hands it to the page.
pub const CLOSE_SILENT: u32 = 1;
/// The error code of streams refused (netcode carries datagrams only).
pub const STREAM_REFUSED: u32 = 2;

/// A WebTransport endpoint whose sessions are clients of a netcode server,
/// in the same slots as its UDP clients.
///
/// Bind it inside a tokio runtime, then [`attach`](Self::attach) it to a
/// `netcode_tokio::Server`; give browsers [`url`](Self::url) and, with a
/// self-signed certificate, [`certificate_hash`](Self::certificate_hash)
/// (beside their connect token). Dropping it stops accepting and closes
/// every session.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use netcode_webtransport::{WebTransport, WebTransportConfig};
/// use netcode_tokio::{Server, ServerConfig, proto::Key};
///
/// let key = Key::from_bytes([7; 32]);
/// let mut server = Server::new("127.0.0.1:40000", ServerConfig::new(0x1122, key)).await?;
/// let config = WebTransportConfig::self_signed("127.0.0.1:40001".parse()?, &["127.0.0.1"]);
/// let web = WebTransport::bind(config).await?;
/// web.attach(&mut server);
/// server.start(64).await?;
/// println!("{} {}", web.url("127.0.0.1"), web.certificate_hash_hex());
/// # Ok(()) }
/// ```
pub struct WebTransport {
    shared: Arc<Shared>,
    endpoint: Arc<Endpoint<ServerSide>>,
    identity: Arc<Mutex<Identity>>,
    local_address: SocketAddr,
    path: String,
    tasks: Vec<JoinHandle<()>>,
    hash_file: Option<PathBuf>,
}

impl std::fmt::Debug for WebTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebTransport")
            .field("local_address", &self.local_address)
            .field("path", &self.path)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

/// What each session's task needs of the configuration.
#[derive(Debug, Clone)]
struct Limits {
    path: String,
    max_sessions: usize,
    max_handshakes: usize,
    handshake_timeout: Duration,
    silence_timeout: Duration,
}

impl WebTransport {
    /// Listens as `config` says. Must be called inside a tokio runtime
    /// (with its timer and I/O); its tasks run there.
    pub async fn bind(config: WebTransportConfig) -> io::Result<Self> {
        let rotation = config.rotation_interval();
        let WebTransportConfig {
            bind,
            path,
            certificate,
            max_sessions,
            max_handshakes,
            handshake_timeout,
            silence_timeout,
            rotate_every: _,
            hash_file,
        } = config;
        let (identity, names) = match certificate {
            Certificate::SelfSigned(names) => (
                self_signed_identity(&names).map_err(io::Error::other)?,
                Some(names),
            ),
            Certificate::Identity(identity) => (identity, None),
        };
        let endpoint = Arc::new(Endpoint::server(server_config(bind, &identity))?);
        let local_address = endpoint.local_addr()?;
        if let Some(path) = &hash_file {
            write_hash_file(path, &identity)?;
        }
        let shared = Arc::new(Shared::new());
        let identity = Arc::new(Mutex::new(identity));
        let limits = Limits {
            path: path.clone(),
            max_sessions,
            max_handshakes,
            handshake_timeout,
            silence_timeout,
        };
        let mut tasks = vec![tokio::spawn(accept_loop(
            Arc::clone(&endpoint),
            Arc::clone(&shared),
            limits,
        ))];
        if let Some(names) = names {
            tasks.push(tokio::spawn(rotate_loop(
                Arc::clone(&endpoint),
                Arc::clone(&identity),
                names,
                rotation,
                local_address,
                hash_file.clone(),
            )));
        }
        Ok(Self {
            shared,
            endpoint,
            identity,
            local_address,
            path,
            tasks,
            hash_file,
        })
    }

    /// Attaches the sessions to `server` as its relay of virtual peers:
    /// from now on they are read in its turns beside its UDP sockets.
    pub fn attach(&self, server: &mut netcode_tokio::Server) {
        server.attach_relay(self.relay(), Arc::clone(&self.shared.ready));
    }

    /// The sessions as one socket of virtual peers, for a host other than
    /// [`attach`](Self::attach)'s (`netcode_std::Server::attach_relay`,
    /// whose `update` then reads it; [`ready`](Self::ready) says when
    /// datagrams wait).
    pub fn relay(&self) -> Relay {
        Relay {
            shared: Arc::clone(&self.shared),
        }
    }

    /// Notified whenever datagrams from sessions wait to be read.
    pub fn ready(&self) -> Arc<tokio::sync::Notify> {
        Arc::clone(&self.shared.ready)
    }

    /// The UDP address QUIC listens on (with the port given when the
    /// config asked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_address
    }

    /// The URL browsers open sessions at, for `host` (the name or address
    /// they reach this machine by, which the certificate must name):
    /// `https://host:port/path`.
    pub fn url(&self, host: &str) -> String {
        url("https", host, self.local_address.port(), &self.path)
    }

    /// The SHA-256 hash of the certificate presented now: what a page pins
    /// in `serverCertificateHashes` for a self-signed certificate. It
    /// changes when the certificate is rotated, so hand out the current
    /// one with each token.
    pub fn certificate_hash(&self) -> [u8; 32] {
        hash_of(&self.identity.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// [`certificate_hash`](Self::certificate_hash) as 64 lowercase hex
    /// digits.
    pub fn certificate_hash_hex(&self) -> String {
        hex(&self.certificate_hash())
    }

    /// Presents `identity` to new connections from now on (sessions open
    /// go on): how an operator's certificate is renewed.
    pub fn set_identity(&self, identity: Identity) -> io::Result<()> {
        if let Some(path) = &self.hash_file {
            write_hash_file(path, &identity)?;
        }
        install(&self.endpoint, &self.identity, identity, self.local_address)
    }

    /// What the endpoint has seen.
    pub fn stats(&self) -> WebTransportStats {
        self.shared.stats()
    }

    /// The largest payload a packet to browser client `peer` (its virtual
    /// address) can carry now: [`Relay::payload_limit_to`].
    pub fn payload_limit_to(&self, peer: SocketAddr) -> Option<usize> {
        self.relay().payload_limit_to(peer)
    }

    /// The relay's state, for a WebSocket endpoint bound beside this one.
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }
}

impl Drop for WebTransport {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
        self.endpoint.close(VarInt::from_u32(0), b"server closed");
    }
}

fn server_config(bind: SocketAddr, identity: &Identity) -> ServerConfig {
    ServerConfig::builder()
        .with_bind_address(bind)
        .with_identity(identity.clone_identity())
        // QUIC keeps a quiet connection for as long as netcode would keep
        // its client; the silence timeout closes it earlier.
        .max_idle_timeout(Some(Duration::from_secs(30)))
        .expect("30 s is a valid QUIC idle timeout")
        .build()
}

fn install(
    endpoint: &Endpoint<ServerSide>,
    current: &Mutex<Identity>,
    identity: Identity,
    bind: SocketAddr,
) -> io::Result<()> {
    let mut current = current.lock().unwrap_or_else(PoisonError::into_inner);
    endpoint.reload_config(server_config(bind, &identity), false)?;
    *current = identity;
    Ok(())
}

/// `scheme://host:port/path`, an IPv6 `host` in brackets.
pub(crate) fn url(scheme: &str, host: &str, port: u16, path: &str) -> String {
    match host.parse::<std::net::Ipv6Addr>() {
        Ok(v6) => format!("{scheme}://[{v6}]:{port}{path}"),
        Err(_) => format!("{scheme}://{host}:{port}{path}"),
    }
}

/// The SHA-256 hash of `identity`'s certificate.
fn hash_of(identity: &Identity) -> [u8; 32] {
    *identity.certificate_chain().as_slice()[0].hash().as_ref()
}

fn hex(hash: &[u8; 32]) -> String {
    hash.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Replaces `path` with `identity`'s hash in hex, atomically (a file
/// beside it, renamed over it).
fn write_hash_file(path: &Path, identity: &Identity) -> io::Result<()> {
    let mut fresh = path.as_os_str().to_owned();
    fresh.push(".new");
    std::fs::write(&fresh, format!("{}\n", hex(&hash_of(identity))))?;
    std::fs::rename(&fresh, path)
}

/// Replaces a self-signed certificate every `interval`. The hash file is
/// written before the endpoint presents the new certificate: a browser
/// may be handed a hash a moment early, never one no longer presented
/// for long (browsers can pin both: the page may keep the previous hash).
async fn rotate_loop(
    endpoint: Arc<Endpoint<ServerSide>>,
    identity: Arc<Mutex<Identity>>,
    names: Vec<String>,
    interval: Duration,
    bind: SocketAddr,
    hash_file: Option<PathBuf>,
) {
    loop {
        tokio::time::sleep(interval).await;
        match self_signed_identity(&names) {
            Ok(fresh) => {
                if let Some(path) = &hash_file
                    && let Err(e) = write_hash_file(path, &fresh)
                {
                    log::warn!(
                        "webtransport: the hash file {} was not written: {e}",
                        path.display()
                    );
                }
                if let Err(e) = install(&endpoint, &identity, fresh, bind) {
                    log::warn!("webtransport: the new certificate was not installed: {e}");
                }
            }
            Err(e) => log::warn!("webtransport: no new certificate: {e}"),
        }
    }
}

async fn accept_loop(endpoint: Arc<Endpoint<ServerSide>>, shared: Arc<Shared>, limits: Limits) {
    loop {
        let incoming = endpoint.accept().await;
        let counters = &shared.counters;
        let handshakes = counters.handshakes.fetch_add(1, Ordering::AcqRel);
        if handshakes >= limits.max_handshakes {
            counters.handshakes.fetch_sub(1, Ordering::AcqRel);
            counters.connections_refused.fetch_add(1, Ordering::Relaxed);
            incoming.refuse();
            continue;
        }
        let shared = Arc::clone(&shared);
        let limits = limits.clone();
        tokio::spawn(async move {
            let connection = handshake(incoming, &shared, &limits).await;
            shared.counters.handshakes.fetch_sub(1, Ordering::AcqRel);
            if let Some(connection) = connection {
                let peer = shared.open(Outbound::WebTransport(connection.clone()));
                serve(&connection, peer, &shared, &limits).await;
                shared.close(&peer);
            }
        });
    }
}

/// The QUIC handshake and the session request, within the handshake
/// timeout: the accepted session, in a place reserved for it, or nothing
/// (refused or failed, and counted).
async fn handshake(
    incoming: IncomingSession,
    shared: &Shared,
    limits: &Limits,
) -> Option<Connection> {
    let counters = &shared.counters;
    let request = match timeout(limits.handshake_timeout, incoming).await {
        Ok(Ok(request)) => request,
        Ok(Err(_)) | Err(_) => {
            counters.sessions_failed.fetch_add(1, Ordering::Relaxed);
            return None;
        }
    };
    if request.path() != limits.path {
        counters.sessions_wrong_path.fetch_add(1, Ordering::Relaxed);
        request.not_found().await;
        return None;
    }
    if !reserve(&counters.sessions_open, limits.max_sessions) {
        counters.sessions_over_cap.fetch_add(1, Ordering::Relaxed);
        request.too_many_requests().await;
        return None;
    }
    match timeout(limits.handshake_timeout, request.accept()).await {
        Ok(Ok(connection)) => Some(connection),
        Ok(Err(_)) | Err(_) => {
            release(&counters.sessions_open);
            counters.sessions_failed.fetch_add(1, Ordering::Relaxed);
            None
        }
    }
}

/// Relays the session's datagrams until it closes or stays silent.
async fn serve(connection: &Connection, peer: SocketAddr, shared: &Shared, limits: &Limits) {
    let counters = &shared.counters;
    let mut deadline = Instant::now() + limits.silence_timeout;
    loop {
        tokio::select! {
            datagram = connection.receive_datagram() => {
                let Ok(datagram) = datagram else { return };
                deadline = Instant::now() + limits.silence_timeout;
                if datagram.len() > MAX_PACKET_BYTES {
                    counters.datagrams_oversized.fetch_add(1, Ordering::Relaxed);
                } else {
                    shared.deliver_datagram(peer, datagram);
                }
            }
            stream = connection.accept_bi() => {
                let Ok((mut send, recv)) = stream else { return };
                counters.streams_refused.fetch_add(1, Ordering::Relaxed);
                let _ = send.reset(VarInt::from_u32(STREAM_REFUSED));
                recv.stop(VarInt::from_u32(STREAM_REFUSED));
            }
            stream = connection.accept_uni() => {
                let Ok(recv) = stream else { return };
                counters.streams_refused.fetch_add(1, Ordering::Relaxed);
                recv.stop(VarInt::from_u32(STREAM_REFUSED));
            }
            () = sleep_until(deadline) => {
                counters.sessions_silent.fetch_add(1, Ordering::Relaxed);
                connection.close(VarInt::from_u32(CLOSE_SILENT), b"no datagram");
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn urls_bracket_ipv6_hosts_only() {
        assert_eq!(
            super::url("https", "::1", 40001, "/netcode"),
            "https://[::1]:40001/netcode"
        );
        assert_eq!(
            super::url("wss", "eu1.example.com", 443, "/n"),
            "wss://eu1.example.com:443/n"
        );
        assert_eq!(
            super::url("ws", "127.0.0.1", 40002, "/netcode"),
            "ws://127.0.0.1:40002/netcode"
        );
    }
}
