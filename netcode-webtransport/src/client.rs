//! A native netcode client over WebTransport: netcode-browser's
//! target-independent [`Driver`] (the one the browser's client stands on)
//! under a wtransport session, on tokio. What a browser client does, with
//! the same rules and errors, for native programs: tests and benchmarks
//! of the server's WebTransport path, and native clients on networks that
//! let only HTTPS-like traffic through.

use std::time::Duration;

use netcode_browser::{ConnectError, DISCONNECT_LINGER, DatagramSink, Driver, Inbox, SendError};
use netcode_std::proto::Instant;
use netcode_std::proto::client::{ClientEvent, ClientState};
use netcode_std::proto::token::ConnectToken;
use wtransport::endpoint::endpoint_side::Client as ClientSide;
use wtransport::tls::Sha256Digest;
use wtransport::{ClientConfig, Connection, Endpoint, VarInt};

/// How long [`WebTransportClient::turn`] waits for a datagram while the
/// client has no deadline (it is idle or disconnected).
const IDLE_TURN: Duration = Duration::from_millis(100);

/// A netcode client whose packets travel as the datagrams of one
/// WebTransport session: the native twin of netcode-browser's
/// `BrowserClient`, on the same [`Driver`].
///
/// Made by [`connect`](Self::connect); then [`connected`](Self::connected)
/// until the handshake is over, [`send`](Self::send) payloads of up to
/// [`payload_limit`](Self::payload_limit) bytes, [`recv`](Self::recv) what
/// the server sends, and [`disconnect`](Self::disconnect) at the end, so
/// that the server sees the client leave rather than time out (a client
/// dropped without it just closes its session). The driver underneath
/// ([`driver`](Self::driver)) has the rest: the client's slot, its
/// connection statistics, why the session closed.
///
/// A session is used once: after it closed, connect again with a new
/// client (and usually a new token).
pub struct WebTransportClient {
    driver: Driver,
    /// Datagrams received (and the session's closing) for the driver's
    /// next update.
    inbox: Inbox,
    connection: Connection,
    _endpoint: Endpoint<ClientSide>,
    epoch: tokio::time::Instant,
    /// Datagrams QUIC refused to send.
    refused: u64,
}

impl std::fmt::Debug for WebTransportClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebTransportClient")
            .field("driver", &self.driver)
            .field("refused", &self.refused)
            .finish_non_exhaustive()
    }
}

/// The session as the driver's [`DatagramSink`]: each datagram goes out
/// at once; one QUIC refuses (larger than the path carries now, or the
/// session closed) is counted and lost, which netcode tolerates (the next
/// keep-alive or request goes out anyway).
struct SessionSink<'a> {
    connection: &'a Connection,
    refused: &'a mut u64,
}

impl DatagramSink for SessionSink<'_> {
    fn write(&mut self, datagram: &[u8]) {
        if self.connection.send_datagram(datagram).is_err() {
            *self.refused = self.refused.saturating_add(1);
        }
    }
}

impl WebTransportClient {
    /// Opens a session at `url` (`https://host:port/path`), trusting only
    /// a certificate with one of `certificate_hashes` (or the system's
    /// roots when there are none), and starts connecting with the
    /// 2048-byte `connect_token`; the first connection request goes out
    /// before this returns.
    ///
    /// An unreadable token fails with [`ConnectError::InvalidConnectToken`]
    /// before any network work; a session that does not open (unreachable,
    /// refused, a certificate that matches no hash, another path) with
    /// [`ConnectError::SessionFailed`] and wtransport's message.
    pub async fn connect(
        url: &str,
        certificate_hashes: &[[u8; 32]],
        connect_token: &[u8],
    ) -> Result<Self, ConnectError> {
        ConnectToken::read(connect_token)?;
        let builder = ClientConfig::builder().with_bind_default();
        let config = if certificate_hashes.is_empty() {
            builder.with_native_certs().build()
        } else {
            let hashes = certificate_hashes
                .iter()
                .map(|hash| Sha256Digest::new(*hash));
            builder.with_server_certificate_hashes(hashes).build()
        };
        let endpoint = Endpoint::client(config)
            .map_err(|e| ConnectError::SessionFailed(format!("no client endpoint: {e}")))?;
        let connection = endpoint
            .connect(url)
            .await
            .map_err(|e| ConnectError::SessionFailed(e.to_string()))?;
        let max_datagram_size = connection.max_datagram_size().unwrap_or(0);
        let mut client = Self {
            driver: Driver::new(max_datagram_size),
            inbox: Inbox::default(),
            connection,
            _endpoint: endpoint,
            epoch: tokio::time::Instant::now(),
            refused: 0,
        };
        let now = client.now();
        let mut sink = SessionSink {
            connection: &client.connection,
            refused: &mut client.refused,
        };
        if let Err(e) = client.driver.connect(now, connect_token, &mut sink) {
            client.close_session();
            return Err(e.into());
        }
        client.update();
        Ok(client)
    }

    fn now(&self) -> Instant {
        Instant::from_duration(self.epoch.elapsed())
    }

    /// Closes the session at once (QUIC drops what it has not sent).
    fn close_session(&self) {
        self.connection.close(VarInt::from_u32(0), b"disconnected");
    }

    /// The driver's turn: the session's current datagram size, then every
    /// datagram waiting in the inbox, what is due, and the session's
    /// closing if the inbox recorded it.
    fn update(&mut self) {
        let now = self.now();
        // The size QUIC allows now (path MTU discovery raises it); none
        // once the session is gone, when the last one known stays.
        if let Some(size) = self.connection.max_datagram_size() {
            self.driver.set_max_datagram_size(size);
        }
        let mut sink = SessionSink {
            connection: &self.connection,
            refused: &mut self.refused,
        };
        self.driver.update(now, &mut self.inbox, &mut sink);
    }

    /// The client's state. A session that closed leaves the client
    /// [`ClientState::Disconnected`] (or the error state the protocol
    /// reached first), with the driver's [`closed`](Driver::closed) saying
    /// why.
    pub fn state(&self) -> ClientState {
        self.driver.state()
    }

    /// Takes the oldest client event (state changes).
    pub fn next_event(&mut self) -> Option<ClientEvent> {
        self.driver.next_event()
    }

    /// The largest payload [`send`](Self::send) takes on this session:
    /// netcode-browser's [`payload_limit`](netcode_browser::payload_limit)
    /// of its largest datagram, as of the last turn (at most 1200 bytes).
    pub fn payload_limit(&self) -> usize {
        self.driver.payload_limit()
    }

    /// The driver underneath: the slot the server gave this client, its
    /// connection statistics, why the session closed, the core client's
    /// counters.
    pub fn driver(&self) -> &Driver {
        &self.driver
    }

    /// The session underneath (for its statistics, or to misbehave in
    /// tests).
    pub fn connection(&self) -> &Connection {
        &self.connection
    }

    /// Datagrams QUIC refused to send (larger than the path carried at
    /// the time, or the session closed under them).
    pub fn refused_datagrams(&self) -> u64 {
        self.refused
    }

    /// Sends one payload to the server, right away: 1 to
    /// [`payload_limit`](Self::payload_limit) bytes, while connected and
    /// the session is open.
    pub fn send(&mut self, payload: &[u8]) -> Result<(), SendError> {
        let now = self.now();
        let mut sink = SessionSink {
            connection: &self.connection,
            refused: &mut self.refused,
        };
        self.driver.send(now, payload, &mut sink)
    }

    /// Waits for a datagram or the client's next deadline, whichever comes
    /// first, and hands it to the driver. Returns false once the session
    /// is closed (by the server, the network, or
    /// [`disconnect`](Self::disconnect)).
    pub async fn turn(&mut self) -> bool {
        let wait = self
            .driver
            .next_deadline()
            .map_or(IDLE_TURN, |at| at.saturating_duration_since(self.now()));
        let received = tokio::select! {
            datagram = self.connection.receive_datagram() => Some(datagram),
            () = tokio::time::sleep(wait) => None,
        };
        match received {
            // A full inbox drops the datagram and counts it.
            Some(Ok(datagram)) => {
                self.inbox.push(datagram.to_vec());
            }
            Some(Err(e)) => self.inbox.close(format!("the session closed: {e}")),
            None => {}
        }
        self.update();
        self.driver.closed().is_none()
    }

    /// Turns until the client is connected (`Ok`) or has failed (`Err`
    /// with the state it ended in).
    pub async fn connected(&mut self) -> Result<(), ClientState> {
        loop {
            match self.driver.state() {
                ClientState::Connected => return Ok(()),
                state if !state.is_active() => return Err(state),
                _ => {}
            }
            if !self.turn().await {
                return Err(self.driver.state());
            }
        }
    }

    /// Turns until a payload arrives; `None` once the client is no longer
    /// connecting or connected, or the session closed, and nothing is
    /// left to take.
    pub async fn recv(&mut self) -> Option<Vec<u8>> {
        loop {
            if let Some(payload) = self.driver.receive() {
                return Some(payload);
            }
            if !self.driver.state().is_active() || !self.turn().await {
                return self.driver.receive();
            }
        }
    }

    /// Disconnects the netcode way: while connecting or connected, the
    /// core's 10 disconnect packets go out as datagrams; then, after
    /// [`DISCONNECT_LINGER`] for QUIC to send them (closing a QUIC
    /// connection drops what it has not sent), the session closes. The
    /// client is then [`ClientState::Disconnected`].
    pub async fn disconnect(&mut self) {
        let open = self.driver.closed().is_none();
        let now = self.now();
        let mut sink = SessionSink {
            connection: &self.connection,
            refused: &mut self.refused,
        };
        self.driver.disconnect(now, &mut sink);
        if open {
            tokio::time::sleep(DISCONNECT_LINGER).await;
        }
        self.close_session();
    }
}
