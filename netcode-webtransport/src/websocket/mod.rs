//! The WebSocket fallback: a second door into the same relay as the
//! WebTransport endpoint, for browsers without WebTransport and networks
//! that drop UDP (and with it QUIC). Each binary message is one netcode
//! datagram from a virtual peer, byte for byte what UDP would carry; the
//! server above sees one more peer of the relay, same key, same tokens,
//! same slots. What the endpoint refuses and counts is in
//! [`WebSocketStats`]; the sessions themselves are in `session.rs`.
//!
//! WebSocket runs over TCP: a lost segment holds up everything behind it
//! (head-of-line blocking), which netcode's own loss handling cannot undo.
//! It is the way in when the better one is closed, not a replacement.

mod client;
mod session;
pub(crate) mod stats;

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;
use wtransport::Identity;

use crate::WebTransport;
use crate::relay::{Relay, Shared};

pub use client::WebSocketClient;
pub use stats::WebSocketStats;

/// The close code of a session that sent no message for the silence
/// timeout (in the range RFC 6455 leaves to applications).
pub const WEBSOCKET_CLOSE_SILENT: u16 = 4001;
/// Messages a session may send in one second, of any kind, before it is
/// closed as a flood (with close code 1008, policy violation), by default.
/// A netcode client sends 10 keep-alives a second and its game's payloads.
pub const DEFAULT_MAX_MESSAGES_PER_SECOND: u32 = 1000;
/// The longest message read at all: longer ones end the session (close
/// code 1009). Messages longer than a netcode packet and at most this are
/// dropped and counted, and the session goes on.
pub const MAX_MESSAGE_BYTES: usize = 4096;

/// How a [`WebSocket`] endpoint listens.
#[derive(Debug)]
pub struct WebSocketConfig {
    /// The TCP address to listen on, such as `127.0.0.1:0` (port 0 takes
    /// any free port) or `[::]:443`.
    pub bind: SocketAddr,
    /// The path upgrades must ask for, such as `"/netcode"`; requests for
    /// any other path are answered 404 and counted.
    pub path: String,
    /// The operator's certificate chain and key for `wss://` (for example
    /// from [`wtransport::Identity::load_pemfiles`]); browsers check it
    /// against their trust store, as WebSocket has no pinning by hash.
    /// `None` serves plain `ws://`, which pages served over `http://`
    /// (local tries) may use and pages over `https://` may not.
    pub tls: Option<Identity>,
    /// Sessions open at most (upgraded or being upgraded); upgrades beyond
    /// are answered 429 and counted. Default 1024.
    pub max_sessions: usize,
    /// TCP connections not yet upgraded at most; connections beyond are
    /// closed at once and counted. Default 256.
    pub max_upgrades: usize,
    /// How long a connection may take from its accept to its upgrade (TLS
    /// included). Default 5 s.
    pub upgrade_timeout: Duration,
    /// How long a session may stay without sending a message before it is
    /// closed and counted silent. Default 10 s, twice netcode's default
    /// timeout.
    pub silence_timeout: Duration,
    /// Messages (binary, text, pings, pongs) a session may send in one
    /// second before it is closed and counted a flood. Default
    /// [`DEFAULT_MAX_MESSAGES_PER_SECOND`].
    pub max_messages_per_second: u32,
}

impl WebSocketConfig {
    /// Plain `ws://` sessions at `/netcode` on `bind`, with the default
    /// limits.
    pub fn new(bind: SocketAddr) -> Self {
        Self {
            bind,
            path: "/netcode".to_owned(),
            tls: None,
            max_sessions: 1024,
            max_upgrades: 256,
            upgrade_timeout: Duration::from_secs(5),
            silence_timeout: Duration::from_secs(10),
            max_messages_per_second: DEFAULT_MAX_MESSAGES_PER_SECOND,
        }
    }

    /// `wss://` sessions with the operator's certificate.
    pub fn with_tls(mut self, identity: Identity) -> Self {
        self.tls = Some(identity);
        self
    }
}

/// What each session's task needs of the configuration.
#[derive(Debug, Clone)]
pub(crate) struct Limits {
    pub(crate) path: String,
    pub(crate) max_sessions: usize,
    pub(crate) max_upgrades: usize,
    pub(crate) upgrade_timeout: Duration,
    pub(crate) silence_timeout: Duration,
    pub(crate) max_messages_per_second: u32,
}

/// A WebSocket endpoint whose sessions are clients of a netcode server,
/// in the same slots as its UDP and WebTransport clients: the fallback
/// for browsers and networks WebTransport cannot reach.
///
/// Bind it [`beside`](Self::bind_beside) a [`WebTransport`] endpoint (then
/// attaching either attaches both: they share one relay), or on its own
/// with [`bind`](Self::bind) and [`attach`](Self::attach) it. Give
/// browsers [`url`](Self::url) with their token. Dropping it stops
/// accepting; sessions open go on until they close.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use netcode_webtransport::{WebSocket, WebSocketConfig, WebTransport, WebTransportConfig};
/// use netcode_tokio::{Server, ServerConfig, proto::Key};
///
/// let key = Key::from_bytes([7; 32]);
/// let mut server = Server::new("127.0.0.1:40000", ServerConfig::new(0x1122, key)).await?;
/// let web = WebTransport::bind(WebTransportConfig::self_signed(
///     "127.0.0.1:40001".parse()?,
///     &["127.0.0.1"],
/// ))
/// .await?;
/// let fallback = WebSocket::bind_beside(WebSocketConfig::new("127.0.0.1:40002".parse()?), &web).await?;
/// web.attach(&mut server);
/// server.start(64).await?;
/// println!("{} {}", web.url("127.0.0.1"), fallback.url("127.0.0.1"));
/// # Ok(()) }
/// ```
pub struct WebSocket {
    shared: Arc<Shared>,
    local_address: SocketAddr,
    path: String,
    secure: bool,
    accept: JoinHandle<()>,
}

impl std::fmt::Debug for WebSocket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSocket")
            .field("local_address", &self.local_address)
            .field("path", &self.path)
            .field("secure", &self.secure)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl WebSocket {
    /// Listens as `config` says, with a relay of its own. Must be called
    /// inside a tokio runtime.
    pub async fn bind(config: WebSocketConfig) -> io::Result<Self> {
        Self::listen(config, Arc::new(Shared::new())).await
    }

    /// Listens as `config` says, its sessions peers of `web`'s relay: one
    /// set of virtual peers for both doors, attached to the server by
    /// either's `attach`.
    pub async fn bind_beside(config: WebSocketConfig, web: &WebTransport) -> io::Result<Self> {
        Self::listen(config, Arc::clone(web.shared())).await
    }

    async fn listen(config: WebSocketConfig, shared: Arc<Shared>) -> io::Result<Self> {
        let WebSocketConfig {
            bind,
            path,
            tls,
            max_sessions,
            max_upgrades,
            upgrade_timeout,
            silence_timeout,
            max_messages_per_second,
        } = config;
        let tls = tls.as_ref().map(tls_acceptor).transpose()?;
        let listener = TcpListener::bind(bind).await?;
        let local_address = listener.local_addr()?;
        let limits = Limits {
            path: path.clone(),
            max_sessions,
            max_upgrades,
            upgrade_timeout,
            silence_timeout,
            max_messages_per_second,
        };
        let secure = tls.is_some();
        let accept = tokio::spawn(accept_loop(listener, Arc::clone(&shared), limits, tls));
        Ok(Self {
            shared,
            local_address,
            path,
            secure,
            accept,
        })
    }

    /// Attaches the sessions to `server` as its relay of virtual peers
    /// (the same relay as the WebTransport endpoint's, if bound beside
    /// one: attach either, once).
    pub fn attach(&self, server: &mut netcode_tokio::Server) {
        server.attach_relay(self.relay(), Arc::clone(&self.shared.ready));
    }

    /// The sessions as one socket of virtual peers, for a host other than
    /// [`attach`](Self::attach)'s.
    pub fn relay(&self) -> Relay {
        Relay {
            shared: Arc::clone(&self.shared),
        }
    }

    /// The TCP address the endpoint listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_address
    }

    /// The URL browsers open sessions at, for `host` (the name or address
    /// they reach this machine by): `ws://host:port/path`, or `wss://`
    /// with a certificate.
    pub fn url(&self, host: &str) -> String {
        let scheme = if self.secure { "wss" } else { "ws" };
        crate::endpoint::url(scheme, host, self.local_address.port(), &self.path)
    }

    /// What the endpoint has seen.
    pub fn stats(&self) -> WebSocketStats {
        self.shared.websocket_stats()
    }
}

impl Drop for WebSocket {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// A TLS acceptor presenting `identity` (TLS 1.3 and 1.2, on ring).
fn tls_acceptor(identity: &Identity) -> io::Result<TlsAcceptor> {
    let chain = identity
        .certificate_chain()
        .as_slice()
        .iter()
        .map(|certificate| rustls::pki_types::CertificateDer::from(certificate.der().to_vec()))
        .collect();
    let key = rustls::pki_types::PrivateKeyDer::try_from(identity.private_key().secret_der())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?
        .clone_key();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(io::Error::other)?
    .with_no_client_auth()
    .with_single_cert(chain, key)
    .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// Accepts TCP connections for as long as the endpoint lives, each
/// upgraded and served on a task of its own, within the upgrade cap.
async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    limits: Limits,
    tls: Option<TlsAcceptor>,
) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of file descriptors, most likely: give the sessions
                // that end a moment to free some.
                log::warn!("websocket: accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let counters = &shared.websocket;
        if counters.upgrades.fetch_add(1, Ordering::AcqRel) >= limits.max_upgrades {
            counters.upgrades.fetch_sub(1, Ordering::AcqRel);
            counters.connections_refused.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        let _ = stream.set_nodelay(true);
        let shared = Arc::clone(&shared);
        let limits = limits.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            session::run(stream, tls, &shared, &limits).await;
        });
    }
}
