//! A native netcode client over WebTransport: `netcode-proto`'s client
//! driven by a wtransport session, on tokio. What a browser client does,
//! for native programs: tests and benchmarks of the server's WebTransport
//! path, and native clients on networks that let only HTTPS-like traffic
//! through.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Duration;

use netcode_std::proto::Instant;
use netcode_std::proto::client::{Client as Core, ClientEvent, ClientState};
use netcode_std::proto::constants::{MAX_PACKET_BYTES, max_payload_within};
use netcode_std::proto::io::Output;
use netcode_std::proto::session::SendError as CoreSendError;
use netcode_std::proto::token::TokenError;
use wtransport::endpoint::endpoint_side::Client as ClientSide;
use wtransport::tls::Sha256Digest;
use wtransport::{ClientConfig, Connection, Endpoint, VarInt};

/// How long [`WebTransportClient::disconnect`] leaves the session open for
/// the disconnect packets to go out.
pub const DISCONNECT_LINGER: Duration = Duration::from_millis(50);

/// Why [`WebTransportClient::connect`] failed.
#[derive(Debug)]
pub enum ConnectError {
    /// The session could not be opened (unreachable, refused, a
    /// certificate that matches no hash, another path).
    Session(String),
    /// The connect token could not be read.
    Token(TokenError),
}

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Session(e) => write!(f, "the WebTransport session did not open: {e}"),
            Self::Token(e) => write!(f, "the connect token is unreadable: {e:?}"),
        }
    }
}

impl std::error::Error for ConnectError {}

/// Why [`WebTransportClient::send`] refused a payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendError {
    /// Empty, or longer than the session's
    /// [`payload_limit`](WebTransportClient::payload_limit).
    Size {
        /// The payload's length.
        len: usize,
        /// The largest payload the session carries.
        limit: usize,
    },
    /// The client is not connected.
    NotConnected,
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Size { len, limit } => {
                write!(
                    f,
                    "a payload of {len} bytes (this session carries 1 to {limit})"
                )
            }
            Self::NotConnected => f.write_str("not connected"),
        }
    }
}

impl std::error::Error for SendError {}

/// A netcode client whose packets travel as the datagrams of one
/// WebTransport session.
pub struct WebTransportClient {
    core: Core,
    connection: Connection,
    _endpoint: Endpoint<ClientSide>,
    epoch: tokio::time::Instant,
    events: VecDeque<ClientEvent>,
    payloads: VecDeque<Vec<u8>>,
}

impl std::fmt::Debug for WebTransportClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebTransportClient")
            .field("state", &self.core.state())
            .finish_non_exhaustive()
    }
}

/// Where the core's output goes: datagrams into the session.
struct Session<'a> {
    connection: &'a Connection,
    events: &'a mut VecDeque<ClientEvent>,
}

impl Output<ClientEvent> for Session<'_> {
    fn send(&mut self, _to: SocketAddr, datagram: &[u8]) {
        // A datagram QUIC refuses is a lost datagram, which netcode
        // tolerates (the next keep-alive or request goes out anyway).
        let _ = self.connection.send_datagram(datagram);
    }

    fn event(&mut self, event: ClientEvent) {
        self.events.push_back(event);
    }
}

impl WebTransportClient {
    /// Opens a session at `url` (trusting only a certificate with one of
    /// `certificate_hashes`, or the system's roots when there are none) and
    /// starts connecting with `connect_token`.
    pub async fn connect(
        url: &str,
        certificate_hashes: &[[u8; 32]],
        connect_token: &[u8],
    ) -> Result<Self, ConnectError> {
        let session = |e: &dyn std::fmt::Display| ConnectError::Session(e.to_string());
        let builder = ClientConfig::builder().with_bind_default();
        let config = if certificate_hashes.is_empty() {
            builder.with_native_certs().build()
        } else {
            let hashes = certificate_hashes
                .iter()
                .map(|hash| Sha256Digest::new(*hash));
            builder.with_server_certificate_hashes(hashes).build()
        };
        let endpoint = Endpoint::client(config).map_err(|e| session(&e))?;
        let connection = endpoint.connect(url).await.map_err(|e| session(&e))?;
        let mut client = Self {
            core: Core::new(),
            connection,
            _endpoint: endpoint,
            epoch: tokio::time::Instant::now(),
            events: VecDeque::new(),
            payloads: VecDeque::new(),
        };
        let now = client.now();
        let mut out = Session {
            connection: &client.connection,
            events: &mut client.events,
        };
        client
            .core
            .connect(now, connect_token, &mut out)
            .map_err(ConnectError::Token)?;
        client.core.update(now, &mut out);
        Ok(client)
    }

    fn now(&self) -> Instant {
        Instant::from_duration(self.epoch.elapsed())
    }

    /// The client's state.
    pub fn state(&self) -> ClientState {
        self.core.state()
    }

    /// The next state change, oldest first.
    pub fn next_event(&mut self) -> Option<ClientEvent> {
        self.events.pop_front()
    }

    /// The largest payload this session carries: its largest datagram less
    /// a payload packet's overhead, at most 1200 bytes
    /// ([`max_payload_within`]).
    pub fn payload_limit(&self) -> usize {
        max_payload_within(self.connection.max_datagram_size().unwrap_or(0))
    }

    /// The session underneath (for its statistics, or to misbehave in
    /// tests).
    pub fn connection(&self) -> &Connection {
        &self.connection
    }

    /// Sends `payload` to the server now.
    pub fn send(&mut self, payload: &[u8]) -> Result<(), SendError> {
        let limit = self.payload_limit();
        if payload.is_empty() || payload.len() > limit {
            return Err(SendError::Size {
                len: payload.len(),
                limit,
            });
        }
        let now = self.now();
        let mut out = Session {
            connection: &self.connection,
            events: &mut self.events,
        };
        match self.core.send_payload(now, payload, &mut out) {
            Ok(_) => Ok(()),
            Err(CoreSendError::PayloadSize) => Err(SendError::Size {
                len: payload.len(),
                limit,
            }),
            Err(_) => Err(SendError::NotConnected),
        }
    }

    /// Waits for a datagram or the client's next deadline, whichever comes
    /// first, and handles it. Returns false once the session is closed.
    pub async fn turn(&mut self) -> bool {
        let deadline = self
            .core
            .next_deadline()
            .map(|at| at.saturating_duration_since(self.now()))
            .unwrap_or(Duration::from_millis(100));
        let received = tokio::select! {
            datagram = self.connection.receive_datagram() => Some(datagram),
            () = tokio::time::sleep(deadline) => None,
        };
        let now = self.now();
        let mut out = Session {
            connection: &self.connection,
            events: &mut self.events,
        };
        let open = match received {
            Some(Ok(datagram)) => {
                if datagram.len() <= MAX_PACKET_BYTES {
                    let mut buffer = datagram.to_vec();
                    let from = self.core.server_address();
                    if let Some(from) = from
                        && let Some(payload) = self.core.handle(now, from, &mut buffer, &mut out)
                    {
                        self.payloads.push_back(payload.data.to_vec());
                    }
                }
                true
            }
            Some(Err(_)) => false,
            None => true,
        };
        self.core.update(now, &mut out);
        open
    }

    /// Turns until the client is connected (`Ok`) or has failed (`Err`
    /// with the state it ended in).
    pub async fn connected(&mut self) -> Result<(), ClientState> {
        loop {
            match self.core.state() {
                ClientState::Connected => return Ok(()),
                state if !state.is_active() => return Err(state),
                _ => {}
            }
            if !self.turn().await {
                return Err(self.core.state());
            }
        }
    }

    /// Turns until a payload arrives; `None` once the client is no longer
    /// connecting or connected, or the session closed.
    pub async fn recv(&mut self) -> Option<Vec<u8>> {
        loop {
            if let Some(payload) = self.payloads.pop_front() {
                return Some(payload);
            }
            if !self.core.state().is_active() || !self.turn().await {
                return self.payloads.pop_front();
            }
        }
    }

    /// Disconnects the netcode way (the redundant disconnect packets, as
    /// datagrams), gives QUIC [`DISCONNECT_LINGER`] to send them (closing
    /// a QUIC connection drops what it has not sent), then closes the
    /// session.
    pub async fn disconnect(&mut self) {
        let now = self.now();
        let mut out = Session {
            connection: &self.connection,
            events: &mut self.events,
        };
        self.core.disconnect(now, &mut out);
        tokio::time::sleep(DISCONNECT_LINGER).await;
        self.connection.close(VarInt::from_u32(0), b"disconnected");
    }
}
