//! [`BrowserClient`] (wasm32 only): a netcode client on one session,
//! WebTransport or its WebSocket fallback ([`Endpoints`]). It opens the
//! session, gathers what arrives into a bounded inbox (a reading task for
//! WebTransport, the socket's message handler for a WebSocket), and on
//! each `update` hands it to the [`Driver`], which writes what the
//! protocol sends to the session.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::Uint8Array;
use netcode_proto::Instant;
use netcode_proto::client::{ClientEvent, ClientState};
use netcode_proto::constants::MAX_PACKET_BYTES;
use netcode_proto::token::ConnectToken;
use netcode_proto::traffic::ConnectionStats;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::{JsFuture, spawn_local};
use web_sys::{
    Performance, ReadableStreamDefaultReader, WebTransport, WebTransportDatagramDuplexStream,
    WebTransportHash, WebTransportOptions,
};

use crate::driver::{DISCONNECT_LINGER, DatagramSink, Driver};
use crate::error::{ConnectError, SendError};
use crate::queue::Inbox;
use crate::socket::{self, SocketWriter};
use crate::time::Clock;
use crate::web::{self, Settled, Writer};

/// How long [`BrowserClient::connect_any`] waits for a WebTransport
/// session to open before it tries the WebSocket, by default: QUIC on a
/// network that drops UDP never answers, and a browser takes its own
/// handshake timeout (tens of seconds) to say so.
pub const DEFAULT_FALLBACK_AFTER_MS: u32 = 3000;

/// Which transport a client's session runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// A WebTransport session: datagrams, nothing held up by a loss.
    WebTransport,
    /// A WebSocket (the fallback): messages over TCP, where one lost
    /// segment holds up everything behind it.
    WebSocket,
}

impl Transport {
    /// `"webtransport"` or `"websocket"`.
    pub fn name(self) -> &'static str {
        match self {
            Transport::WebTransport => "webtransport",
            Transport::WebSocket => "websocket",
        }
    }
}

/// Where [`BrowserClient::connect_any`] may open its session, in order of
/// preference: WebTransport where the browser has it and the session opens
/// within [`fallback_after_ms`](Self::fallback_after_ms), else the
/// WebSocket. Either may be absent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoints {
    /// The WebTransport URL (`https://host:port/path`).
    pub webtransport: Option<String>,
    /// The WebTransport certificate's SHA-256 hashes to pin (empty: a
    /// certificate the browser trusts).
    pub certificate_hashes: Vec<[u8; 32]>,
    /// The WebSocket URL (`wss://host:port/path`, or `ws://` from a page
    /// served over `http://`).
    pub websocket: Option<String>,
    /// How long the WebTransport session may take to open before the
    /// WebSocket is tried (and the WebSocket to open, after). Default
    /// [`DEFAULT_FALLBACK_AFTER_MS`].
    pub fallback_after_ms: u32,
}

impl Default for Endpoints {
    fn default() -> Self {
        Self {
            webtransport: None,
            certificate_hashes: Vec::new(),
            websocket: None,
            fallback_after_ms: DEFAULT_FALLBACK_AFTER_MS,
        }
    }
}

/// A client's session and its writer.
#[derive(Debug)]
enum Session {
    WebTransport {
        transport: WebTransport,
        datagrams: WebTransportDatagramDuplexStream,
        writer: Writer,
    },
    WebSocket(SocketWriter),
}

impl DatagramSink for Session {
    fn write(&mut self, datagram: &[u8]) {
        match self {
            Session::WebTransport { writer, .. } => writer.write(datagram),
            Session::WebSocket(writer) => writer.write(datagram),
        }
    }
}

/// A netcode client connected (or connecting) over one WebTransport
/// session, or over a WebSocket where WebTransport cannot be had, for games
/// compiled to `wasm32-unknown-unknown`, in a window or a worker.
///
/// Made by [`connect`](Self::connect) (WebTransport) or
/// [`connect_any`](Self::connect_any) (WebTransport, else the WebSocket
/// fallback; [`transport`](Self::transport) says which); then, once per frame, call
/// [`update`](Self::update), take what arrived with
/// [`receive`](Self::receive) and [`next_event`](Self::next_event), and
/// [`send`](Self::send) payloads of up to
/// [`payload_limit`](Self::payload_limit) bytes. At the end call
/// [`disconnect`](Self::disconnect) (dropping the client does the same),
/// so that the server sees the client leave rather than time out.
///
/// A session is used once: after it closed, connect again with a new
/// client (and usually a new token).
#[derive(Debug)]
pub struct BrowserClient {
    session: Session,
    driver: Driver,
    inbox: Rc<RefCell<Inbox>>,
    performance: Option<Performance>,
    clock: Clock,
    /// Set once the session is being closed by this client.
    closing: bool,
}

impl BrowserClient {
    /// Opens a WebTransport session to `url` (`https://host:port/path`) and
    /// starts connecting with the 2048-byte `connect_token`.
    ///
    /// `certificate_hashes` pins the server's certificate by its SHA-256
    /// (WebTransport's `serverCertificateHashes`: the certificate must then
    /// be ECDSA and valid for at most 14 days); empty, the certificate must
    /// be one the browser trusts.
    ///
    /// Returns once the session is ready, its `maxDatagramSize` read and
    /// the reader started; the netcode handshake then runs through
    /// [`update`](Self::update) until [`state`](Self::state) is
    /// [`ClientState::Connected`] (or an error state).
    pub async fn connect(
        url: &str,
        certificate_hashes: &[[u8; 32]],
        connect_token: &[u8],
    ) -> Result<Self, ConnectError> {
        // An unreadable token fails before any network work.
        ConnectToken::read(connect_token)?;
        if !web::global_has("WebTransport") {
            return Err(ConnectError::WebTransportUnavailable);
        }
        let inbox = Rc::new(RefCell::new(Inbox::default()));
        let (session, max_datagram_size) =
            open_webtransport(url, certificate_hashes, &inbox, None).await?;
        Self::start(session, max_datagram_size, inbox, connect_token)
    }

    /// Opens a session as `endpoints` say and starts connecting with the
    /// 2048-byte `connect_token`: WebTransport where the browser has it
    /// and the session opens within `fallback_after_ms`, else a WebSocket
    /// (which must open within as long again). The token is the same
    /// either way: the server's two doors lead to the same slots.
    ///
    /// Fails with [`ConnectError::SocketFailed`] (saying why WebTransport
    /// was not used) when the WebSocket does not open either, or with the
    /// WebTransport error when there is no WebSocket to fall back on.
    pub async fn connect_any(
        endpoints: &Endpoints,
        connect_token: &[u8],
    ) -> Result<Self, ConnectError> {
        ConnectToken::read(connect_token)?;
        let bound = i32::try_from(endpoints.fallback_after_ms).unwrap_or(i32::MAX);
        let inbox = Rc::new(RefCell::new(Inbox::default()));
        let webtransport_failure = match &endpoints.webtransport {
            Some(url) if web::global_has("WebTransport") => {
                match open_webtransport(url, &endpoints.certificate_hashes, &inbox, Some(bound))
                    .await
                {
                    Ok((session, max_datagram_size)) => {
                        return Self::start(session, max_datagram_size, inbox, connect_token);
                    }
                    Err(e) => e,
                }
            }
            Some(_) => ConnectError::WebTransportUnavailable,
            None => ConnectError::SessionFailed("no WebTransport URL given".to_owned()),
        };
        let Some(url) = &endpoints.websocket else {
            return Err(webtransport_failure);
        };
        // A fresh inbox: the abandoned session may still record its end.
        let inbox = Rc::new(RefCell::new(Inbox::default()));
        let socket = socket::open(url, &inbox, bound).await.map_err(|e| {
            ConnectError::SocketFailed(format!("{e} (and before it: {webtransport_failure})"))
        })?;
        let session = Session::WebSocket(SocketWriter { socket, dropped: 0 });
        Self::start(session, MAX_PACKET_BYTES, inbox, connect_token)
    }

    /// The client on an open `session`, its first connection request sent.
    fn start(
        session: Session,
        max_datagram_size: usize,
        inbox: Rc<RefCell<Inbox>>,
        connect_token: &[u8],
    ) -> Result<Self, ConnectError> {
        let performance = web::performance();
        let mut clock = Clock::new();
        let now = clock.tick(web::now_millis(performance.as_ref()));
        let mut client = Self {
            session,
            driver: Driver::new(max_datagram_size),
            inbox,
            performance,
            clock,
            closing: false,
        };
        if let Err(e) = client
            .driver
            .connect(now, connect_token, &mut client.session)
        {
            client.close_session();
            return Err(e.into());
        }
        // The first connection request goes out now, not a frame later.
        client.update();
        Ok(client)
    }

    /// The transport this client's session runs on.
    pub fn transport(&self) -> Transport {
        match self.session {
            Session::WebTransport { .. } => Transport::WebTransport,
            Session::WebSocket(_) => Transport::WebSocket,
        }
    }

    fn now(&mut self) -> Instant {
        self.clock.tick(web::now_millis(self.performance.as_ref()))
    }

    /// One turn, once per frame (or at [`next_deadline`](Self::next_deadline)):
    /// hands the core every datagram that arrived (payloads go to the
    /// receive queue), sends what is due, and takes the client out of the
    /// connection if the session closed.
    pub fn update(&mut self) {
        let now = self.now();
        if let Session::WebTransport { datagrams, .. } = &self.session {
            self.driver
                .set_max_datagram_size(read_max_datagram_size(datagrams));
        }
        let Ok(mut inbox) = self.inbox.try_borrow_mut() else {
            return;
        };
        self.driver.update(now, &mut inbox, &mut self.session);
    }

    /// Sends one payload to the server, right away: 1 to
    /// [`payload_limit`](Self::payload_limit) bytes, while connected.
    pub fn send(&mut self, payload: &[u8]) -> Result<(), SendError> {
        let now = self.now();
        self.driver.send(now, payload, &mut self.session)
    }

    /// Takes the oldest payload received from the server.
    pub fn receive(&mut self) -> Option<Vec<u8>> {
        self.driver.receive()
    }

    /// Takes the oldest client event (state changes).
    pub fn next_event(&mut self) -> Option<ClientEvent> {
        self.driver.next_event()
    }

    /// The client's state. A session that closed leaves the client
    /// [`ClientState::Disconnected`] (or the error state the protocol
    /// reached first), with [`closed`](Self::closed) saying why.
    pub fn state(&self) -> ClientState {
        self.driver.state()
    }

    /// The slot the server gave this client, while connected.
    pub fn client_index(&self) -> Option<u32> {
        self.driver.client_index()
    }

    /// The largest payload [`send`](Self::send) takes on this session:
    /// [`payload_limit`](crate::payload_limit) of its `maxDatagramSize`
    /// (1186 for Chromium's 1211), as of the last [`update`](Self::update).
    pub fn payload_limit(&self) -> usize {
        self.driver.payload_limit()
    }

    /// The session's `maxDatagramSize`, as of the last
    /// [`update`](Self::update) (read first when the session opened).
    pub fn max_datagram_size(&self) -> usize {
        self.driver.max_datagram_size()
    }

    /// What the connection carried: packets and bytes each way, losses,
    /// duplicates, the handshake's round trip, the time since the server
    /// was last heard.
    pub fn connection_stats(&self) -> ConnectionStats {
        let now = self.clock.peek(web::now_millis(self.performance.as_ref()));
        self.driver.connection_stats(now)
    }

    /// When the protocol next needs an [`update`](Self::update), on the
    /// `performance.now()` clock, or `None` while idle.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.driver.next_deadline()
    }

    /// Why the session closed, once the client has learned it has (at an
    /// [`update`](Self::update), or at [`disconnect`](Self::disconnect)).
    pub fn closed(&self) -> Option<&str> {
        self.driver.closed()
    }

    /// Datagrams dropped because more arrived between two updates than the
    /// inbox holds ([`INBOX_CAPACITY`](crate::INBOX_CAPACITY)).
    pub fn dropped_datagrams(&self) -> u64 {
        self.inbox.try_borrow().map_or(0, |inbox| inbox.dropped())
    }

    /// Payloads dropped because the game did not take them
    /// ([`RECEIVE_QUEUE_CAPACITY`](crate::RECEIVE_QUEUE_CAPACITY)).
    pub fn dropped_payloads(&self) -> u64 {
        self.driver.dropped_payloads()
    }

    /// Datagram writes the browser rejected (the session closed under
    /// them), or, on a WebSocket, packets dropped because the browser held
    /// too much unsent (a stalled TCP connection) or refused them.
    pub fn rejected_writes(&self) -> u64 {
        match &self.session {
            Session::WebTransport { writer, .. } => writer.rejected(),
            Session::WebSocket(writer) => writer.dropped,
        }
    }

    /// The platform-independent driver underneath, for the core client's
    /// counters ([`Driver::core`]).
    pub fn driver(&self) -> &Driver {
        &self.driver
    }

    /// Disconnects: while connecting or connected, writes the core's 10
    /// disconnect packets, then closes the session once the writer has
    /// taken them and [`DISCONNECT_LINGER`] has passed, so that the server
    /// sees a netcode disconnect, not a timeout. The client is then
    /// [`ClientState::Disconnected`]. Does nothing the second time.
    pub fn disconnect(&mut self) {
        if self.closing {
            return;
        }
        let now = self.now();
        self.driver.disconnect(now, &mut self.session);
        self.close_session();
    }

    /// Closes the session. A WebTransport session waits for the last
    /// queued write to settle and [`DISCONNECT_LINGER`] more (closing a QUIC
    /// connection drops the datagrams it has not sent yet); a WebSocket
    /// closes at once (the browser sends what it holds first).
    fn close_session(&mut self) {
        self.closing = true;
        match &mut self.session {
            Session::WebTransport {
                transport, writer, ..
            } => {
                let last = writer.take_last();
                let transport = transport.clone();
                spawn_local(async move {
                    if let Some(last) = last {
                        // Resolved or rejected, the earlier writes were
                        // handed over.
                        let _ = JsFuture::from(last).await;
                    }
                    let linger = i32::try_from(DISCONNECT_LINGER.as_millis()).unwrap_or(i32::MAX);
                    let _ = JsFuture::from(web::delay(linger)).await;
                    web::close(&transport);
                });
            }
            Session::WebSocket(writer) => socket::close(&writer.socket),
        }
    }
}

impl Drop for BrowserClient {
    /// Disconnects (see [`BrowserClient::disconnect`]) if that was not done.
    fn drop(&mut self) {
        self.disconnect();
    }
}

/// The session's `maxDatagramSize` now.
fn read_max_datagram_size(datagrams: &WebTransportDatagramDuplexStream) -> usize {
    usize::try_from(datagrams.max_datagram_size()).unwrap_or(0)
}

/// Opens a WebTransport session to `url`, within `bound_ms` if given, and
/// starts reading its datagrams into `inbox`: the session and its
/// `maxDatagramSize`.
async fn open_webtransport(
    url: &str,
    certificate_hashes: &[[u8; 32]],
    inbox: &Rc<RefCell<Inbox>>,
    bound_ms: Option<i32>,
) -> Result<(Session, usize), ConnectError> {
    let options = WebTransportOptions::new();
    if !certificate_hashes.is_empty() {
        let hashes: Vec<WebTransportHash> = certificate_hashes
            .iter()
            .map(|hash| {
                let entry = WebTransportHash::new();
                entry.set_algorithm("sha-256");
                entry.set_value_u8_array(&Uint8Array::from(&hash[..]));
                entry
            })
            .collect();
        options.set_server_certificate_hashes(&hashes);
    }
    let transport = WebTransport::new_with_options(url, &options)
        .map_err(|e| ConnectError::SessionFailed(web::js_message(&e)))?;
    let closed = web::watch_closed(&transport);
    let settled = match bound_ms {
        None => match JsFuture::from(transport.ready()).await {
            Ok(_) => Settled::Fulfilled,
            Err(reason) => Settled::Rejected(reason),
        },
        Some(bound) => web::settle_within(transport.ready().unchecked_ref(), bound).await,
    };
    match settled {
        Settled::Fulfilled => {}
        Settled::TimedOut => {
            web::close(&transport);
            return Err(ConnectError::SessionFailed(format!(
                "not open after {} ms",
                bound_ms.unwrap_or(0)
            )));
        }
        Settled::Rejected(reason) => {
            return Err(ConnectError::SessionFailed(web::js_message(&reason)));
        }
    }

    let datagrams = transport.datagrams();
    let max_datagram_size = read_max_datagram_size(&datagrams);
    let writer = match web::datagram_writer(&datagrams) {
        Ok(writer) => writer,
        Err(e) => {
            web::close(&transport);
            return Err(ConnectError::SessionFailed(format!(
                "cannot write datagrams: {}",
                web::js_message(&e)
            )));
        }
    };
    // `getReader()` is typed as a plain object: it is a default reader.
    let reader: ReadableStreamDefaultReader = datagrams.readable().get_reader().unchecked_into();
    spawn_local(web::read_datagrams(reader, closed, Rc::clone(inbox)));
    let session = Session::WebTransport {
        transport,
        datagrams,
        writer: Writer::new(writer),
    };
    Ok((session, max_datagram_size))
}
