//! A native netcode client over the WebSocket fallback: netcode-browser's
//! [`Driver`] (the one the browser's client stands on) under a WebSocket
//! on tokio, each netcode packet one binary message. For tests and
//! benchmarks of the server's WebSocket door; plain `ws://` only.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use netcode_browser::{ConnectError, Driver, Inbox, SendError};
use netcode_std::proto::Instant;
use netcode_std::proto::client::ClientState;
use netcode_std::proto::constants::MAX_PACKET_BYTES;
use netcode_std::proto::token::ConnectToken;
use tokio::net::TcpStream;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;

/// How long [`WebSocketClient::turn`] waits for a message while the client
/// has no deadline.
const IDLE_TURN: Duration = Duration::from_millis(100);

/// A netcode client whose packets travel as the binary messages of one
/// WebSocket: the native twin of the browser client's fallback, on the
/// same [`Driver`], used as [`WebTransportClient`](crate::WebTransportClient)
/// is. A WebSocket has no datagram size of its own: the payload limit is
/// netcode's 1200 bytes.
pub struct WebSocketClient {
    driver: Driver,
    inbox: Inbox,
    socket: WebSocketStream<TcpStream>,
    /// What the driver wrote since the last flush.
    outgoing: Vec<Vec<u8>>,
    epoch: tokio::time::Instant,
}

impl std::fmt::Debug for WebSocketClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSocketClient")
            .field("driver", &self.driver)
            .finish_non_exhaustive()
    }
}

impl WebSocketClient {
    /// Opens a WebSocket at `url` (`ws://host:port/path`) and starts
    /// connecting with the 2048-byte `connect_token`; the first connection
    /// request goes out before this returns. An unreadable token fails
    /// with [`ConnectError::InvalidConnectToken`] before any network work;
    /// a socket that does not open, with [`ConnectError::SocketFailed`].
    pub async fn connect(url: &str, connect_token: &[u8]) -> Result<Self, ConnectError> {
        ConnectToken::read(connect_token)?;
        let failed = |what: &str, e: &dyn std::fmt::Display| {
            ConnectError::SocketFailed(format!("{what}: {e}"))
        };
        let authority = url
            .strip_prefix("ws://")
            .and_then(|rest| rest.split('/').next())
            .ok_or_else(|| failed("not a ws:// URL", &url))?;
        let stream = TcpStream::connect(authority)
            .await
            .map_err(|e| failed("no connection", &e))?;
        let _ = stream.set_nodelay(true);
        let (socket, _) = tokio_tungstenite::client_async(url, stream)
            .await
            .map_err(|e| failed("no upgrade", &e))?;
        let mut client = Self {
            driver: Driver::new(MAX_PACKET_BYTES),
            inbox: Inbox::default(),
            socket,
            outgoing: Vec::new(),
            epoch: tokio::time::Instant::now(),
        };
        let now = client.now();
        client
            .driver
            .connect(now, connect_token, &mut client.outgoing)?;
        client.update();
        client.flush().await;
        Ok(client)
    }

    fn now(&self) -> Instant {
        Instant::from_duration(self.epoch.elapsed())
    }

    fn update(&mut self) {
        let now = self.now();
        self.driver.update(now, &mut self.inbox, &mut self.outgoing);
    }

    /// Sends what the driver wrote; a socket that fails closes the
    /// session for the driver.
    async fn flush(&mut self) {
        for datagram in std::mem::take(&mut self.outgoing) {
            if let Err(e) = self.socket.send(Message::Binary(datagram.into())).await {
                self.inbox.close(format!("the socket failed: {e}"));
                return;
            }
        }
    }

    /// The client's state.
    pub fn state(&self) -> ClientState {
        self.driver.state()
    }

    /// The driver underneath: the slot, statistics, why the session closed.
    pub fn driver(&self) -> &Driver {
        &self.driver
    }

    /// The largest payload [`send`](Self::send) takes: 1200 bytes.
    pub fn payload_limit(&self) -> usize {
        self.driver.payload_limit()
    }

    /// Sends one payload to the server, right away.
    pub async fn send(&mut self, payload: &[u8]) -> Result<(), SendError> {
        let now = self.now();
        self.driver.send(now, payload, &mut self.outgoing)?;
        self.flush().await;
        Ok(())
    }

    /// Waits for a message or the client's next deadline, whichever comes
    /// first, and hands it to the driver. Returns false once the session
    /// is closed.
    pub async fn turn(&mut self) -> bool {
        let wait = self
            .driver
            .next_deadline()
            .map_or(IDLE_TURN, |at| at.saturating_duration_since(self.now()));
        tokio::select! {
            message = self.socket.next() => match message {
                Some(Ok(Message::Binary(bytes))) => {
                    self.inbox.push(bytes.to_vec());
                }
                Some(Ok(Message::Close(frame))) => {
                    let why = frame.map_or_else(String::new, |f| format!(" (code {}: {})", f.code, f.reason));
                    self.inbox.close(format!("the socket closed{why}"));
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => self.inbox.close(format!("the socket failed: {e}")),
                None => self.inbox.close("the socket closed"),
            },
            () = tokio::time::sleep(wait) => {}
        }
        self.update();
        self.flush().await;
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
    /// connecting or connected and nothing is left to take.
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

    /// Disconnects the netcode way (the core's disconnect packets as
    /// messages), then closes the socket: TCP delivers them before the
    /// close, so no linger is needed.
    pub async fn disconnect(&mut self) {
        let now = self.now();
        self.driver.disconnect(now, &mut self.outgoing);
        self.flush().await;
        let _ = self.socket.close(None).await;
    }
}
