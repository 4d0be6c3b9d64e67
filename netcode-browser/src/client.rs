//! [`BrowserClient`] (wasm32 only): a netcode client on one WebTransport
//! session. It opens the session, reads its datagrams on a background task
//! into a bounded inbox, and on each `update` hands them to the
//! [`Driver`], which writes what the protocol sends to the session's
//! datagram writer.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::Uint8Array;
use netcode_proto::Instant;
use netcode_proto::client::{ClientEvent, ClientState};
use netcode_proto::token::ConnectToken;
use netcode_proto::traffic::ConnectionStats;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::{JsFuture, spawn_local};
use web_sys::{
    Performance, ReadableStreamDefaultReader, WebTransport, WebTransportDatagramDuplexStream,
    WebTransportHash, WebTransportOptions,
};

use crate::driver::{DISCONNECT_LINGER, Driver};
use crate::error::{ConnectError, SendError};
use crate::queue::Inbox;
use crate::time::Clock;
use crate::web::{self, Writer};

/// A netcode client connected (or connecting) over one WebTransport
/// session, for games compiled to `wasm32-unknown-unknown`, in a window or
/// a worker.
///
/// Made by [`connect`](Self::connect); then, once per frame, call
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
    transport: WebTransport,
    datagrams: WebTransportDatagramDuplexStream,
    driver: Driver,
    inbox: Rc<RefCell<Inbox>>,
    writer: Writer,
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
        if let Err(e) = JsFuture::from(transport.ready()).await {
            return Err(ConnectError::SessionFailed(web::js_message(&e)));
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
        let reader: ReadableStreamDefaultReader =
            datagrams.readable().get_reader().unchecked_into();
        let inbox = Rc::new(RefCell::new(Inbox::default()));
        spawn_local(web::read_datagrams(reader, closed, Rc::clone(&inbox)));

        let performance = web::performance();
        let mut clock = Clock::new();
        let now = clock.tick(web::now_millis(performance.as_ref()));
        let mut client = Self {
            transport,
            datagrams,
            driver: Driver::new(max_datagram_size),
            inbox,
            writer: Writer::new(writer),
            performance,
            clock,
            closing: false,
        };
        if let Err(e) = client
            .driver
            .connect(now, connect_token, &mut client.writer)
        {
            client.close_session();
            return Err(e.into());
        }
        // The first connection request goes out now, not a frame later.
        client.update();
        Ok(client)
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
        self.driver
            .set_max_datagram_size(read_max_datagram_size(&self.datagrams));
        let Ok(mut inbox) = self.inbox.try_borrow_mut() else {
            return;
        };
        self.driver.update(now, &mut inbox, &mut self.writer);
    }

    /// Sends one payload to the server, right away: 1 to
    /// [`payload_limit`](Self::payload_limit) bytes, while connected.
    pub fn send(&mut self, payload: &[u8]) -> Result<(), SendError> {
        let now = self.now();
        self.driver.send(now, payload, &mut self.writer)
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
    /// them).
    pub fn rejected_writes(&self) -> u64 {
        self.writer.rejected()
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
        self.driver.disconnect(now, &mut self.writer);
        self.close_session();
    }

    /// Closes the session once the last queued write has settled and
    /// [`DISCONNECT_LINGER`] more has passed: closing a QUIC connection
    /// drops the datagrams it has not sent yet.
    fn close_session(&mut self) {
        self.closing = true;
        let last = self.writer.take_last();
        let transport = self.transport.clone();
        spawn_local(async move {
            if let Some(last) = last {
                // Resolved or rejected, the earlier writes were handed over.
                let _ = JsFuture::from(last).await;
            }
            let linger = i32::try_from(DISCONNECT_LINGER.as_millis()).unwrap_or(i32::MAX);
            let _ = JsFuture::from(web::delay(linger)).await;
            web::close(&transport);
        });
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
