//! The platform-independent client: netcode-proto's sans-IO client with the
//! session's payload limit, bounded queues of payloads and events, and the
//! rules for a session that closes. `BrowserClient` (wasm32) puts the
//! browser's WebTransport session under it, netcode-webtransport's
//! `WebTransportClient` a native wtransport session; the native tests put
//! a plain vector and a netcode-proto server.

use core::net::{Ipv4Addr, SocketAddr};
use core::time::Duration;

use netcode_proto::Instant;
use netcode_proto::client::{Client, ClientEvent, ClientState};
use netcode_proto::io::Output;
use netcode_proto::session::SendError as CoreSendError;
use netcode_proto::token::TokenError;
use netcode_proto::traffic::ConnectionStats;

use crate::error::SendError;
use crate::payload_limit;
use crate::queue::{BoundedQueue, Inbox};

/// Received payloads a [`Driver`] holds until the game takes them with
/// [`Driver::receive`]; more are dropped and counted.
pub const RECEIVE_QUEUE_CAPACITY: usize = 1024;

/// Client events a [`Driver`] holds until the game takes them with
/// [`Driver::next_event`]; more are dropped and counted. A connection
/// makes a handful.
pub const EVENT_QUEUE_CAPACITY: usize = 64;

/// How long a client leaves its session open after handing it the
/// disconnect packets ([`Driver::disconnect`]) before closing it: closing
/// a QUIC connection drops the datagrams it has not sent yet, and the
/// server should see the client leave rather than time out.
pub const DISCONNECT_LINGER: Duration = Duration::from_millis(50);

/// Where a [`Driver`] writes its datagrams: the session's datagram writer,
/// or anything else that carries one datagram at a time to the server.
pub trait DatagramSink {
    /// Writes one datagram. The bytes are only valid during the call.
    fn write(&mut self, datagram: &[u8]);
}

/// Collects the datagrams, each as its own vector (for tests, and for
/// transports that send later).
impl DatagramSink for Vec<Vec<u8>> {
    fn write(&mut self, datagram: &[u8]) {
        self.push(datagram.to_vec());
    }
}

/// A sink that carries nothing: where a closed session's datagrams go.
struct Nowhere;

impl DatagramSink for Nowhere {
    fn write(&mut self, _datagram: &[u8]) {}
}

/// The core's [`Output`]: datagrams to the sink, events to the queue.
struct CoreOutput<'a, S: ?Sized> {
    sink: &'a mut S,
    events: &'a mut BoundedQueue<ClientEvent>,
}

impl<S: DatagramSink + ?Sized> Output<ClientEvent> for CoreOutput<'_, S> {
    fn send(&mut self, _to: SocketAddr, datagram: &[u8]) {
        // One session, one server: the address the core names is the
        // token's UDP address, which the session does not route by.
        self.sink.write(datagram);
    }

    fn event(&mut self, event: ClientEvent) {
        self.events.push(event);
    }
}

/// One netcode connection over one datagram session whose datagrams carry
/// at most `max_datagram_size` bytes each.
///
/// Time is the caller's monotonic [`Instant`] (a [`Clock`](crate::Clock)
/// over `performance.now()` in the browser). Every received datagram is
/// handed to the core as coming from the server the core is talking to:
/// the session carries nothing else. Payloads go into a queue of
/// [`RECEIVE_QUEUE_CAPACITY`], events into one of [`EVENT_QUEUE_CAPACITY`].
///
/// A session is used once: after it closed (or after
/// [`disconnect`](Self::disconnect)) the driver stays disconnected, and a
/// new connection takes a new session and a new driver.
#[derive(Debug, Clone)]
pub struct Driver {
    core: Client,
    max_datagram_size: usize,
    payloads: BoundedQueue<Vec<u8>>,
    events: BoundedQueue<ClientEvent>,
    closed: Option<String>,
}

impl Driver {
    /// A disconnected driver for a session whose datagrams carry at most
    /// `max_datagram_size` bytes.
    pub fn new(max_datagram_size: usize) -> Self {
        Self {
            core: Client::new(),
            max_datagram_size,
            payloads: BoundedQueue::new(RECEIVE_QUEUE_CAPACITY),
            events: BoundedQueue::new(EVENT_QUEUE_CAPACITY),
            closed: None,
        }
    }

    /// Starts connecting with a 2048-byte connect token; the first request
    /// goes out at the next [`update`](Self::update). An unreadable token
    /// leaves the client in [`ClientState::InvalidConnectToken`].
    pub fn connect(
        &mut self,
        now: Instant,
        connect_token: &[u8],
        sink: &mut impl DatagramSink,
    ) -> Result<(), TokenError> {
        let mut out = CoreOutput {
            sink,
            events: &mut self.events,
        };
        self.core.connect(now, connect_token, &mut out)
    }

    /// Hands one received datagram to the core (decrypting it in place);
    /// a payload it carried goes to the receive queue.
    pub fn handle(&mut self, now: Instant, datagram: &mut [u8], sink: &mut impl DatagramSink) {
        // The server being tried, as the core's sender check wants; while
        // idle, an address the core drops the datagram for (and counts).
        let from = self
            .core
            .server_address()
            .unwrap_or(SocketAddr::new(Ipv4Addr::UNSPECIFIED.into(), 0));
        let mut out = CoreOutput {
            sink,
            events: &mut self.events,
        };
        if let Some(payload) = self.core.handle(now, from, datagram, &mut out) {
            self.payloads.push(payload.data.to_vec());
        }
    }

    /// One turn: hands the core every datagram in `inbox`, advances it to
    /// `now` (sending what is due to `sink`), then, if the inbox says the
    /// session closed, takes the client out of the connection
    /// ([`session_closed`](Self::session_closed)).
    pub fn update(&mut self, now: Instant, inbox: &mut Inbox, sink: &mut impl DatagramSink) {
        while let Some(mut datagram) = inbox.pop() {
            self.handle(now, &mut datagram, sink);
        }
        let mut out = CoreOutput {
            sink: &mut *sink,
            events: &mut self.events,
        };
        self.core.update(now, &mut out);
        if let Some(reason) = inbox.closed() {
            self.session_closed(now, reason);
        }
    }

    /// The session closed (the server closed it, the network failed, or
    /// the page did): remembers `reason` (the first one given) and, if the
    /// client was connecting or connected, leaves the connection at once,
    /// to [`ClientState::Disconnected`], without sending anything. A
    /// server that disconnects cleanly sends netcode disconnect packets
    /// first; handed over before this, they apply as usual.
    pub fn session_closed(&mut self, now: Instant, reason: &str) {
        if self.closed.is_none() {
            self.closed = Some(reason.to_owned());
        }
        if self.core.state().is_active() {
            let mut out = CoreOutput {
                sink: &mut Nowhere,
                events: &mut self.events,
            };
            self.core.disconnect(now, &mut out);
        }
    }

    /// Sends one payload, right away. It must be 1 to
    /// [`payload_limit`](Self::payload_limit) bytes, the session open and
    /// the client connected.
    pub fn send(
        &mut self,
        now: Instant,
        payload: &[u8],
        sink: &mut impl DatagramSink,
    ) -> Result<(), SendError> {
        let limit = self.payload_limit();
        if payload.is_empty() {
            return Err(SendError::Empty);
        }
        if payload.len() > limit {
            return Err(SendError::TooLarge {
                len: payload.len(),
                limit,
            });
        }
        if self.closed.is_some() {
            return Err(SendError::SessionClosed);
        }
        let mut out = CoreOutput {
            sink,
            events: &mut self.events,
        };
        match self.core.send_payload(now, payload, &mut out) {
            Ok(_) => Ok(()),
            Err(CoreSendError::PayloadSize) => Err(SendError::TooLarge {
                len: payload.len(),
                limit,
            }),
            Err(_) => Err(SendError::NotConnected),
        }
    }

    /// Disconnects: while connecting or connected, writes the core's 10
    /// disconnect packets to `sink`; then the client is
    /// [`ClientState::Disconnected`] and the session counts as closed
    /// (the caller closes it once the writes are queued and
    /// [`DISCONNECT_LINGER`] has passed).
    pub fn disconnect(&mut self, now: Instant, sink: &mut impl DatagramSink) {
        let mut out = CoreOutput {
            sink,
            events: &mut self.events,
        };
        self.core.disconnect(now, &mut out);
        if self.closed.is_none() {
            self.closed = Some("disconnected by this client".to_owned());
        }
    }

    /// Takes the oldest received payload.
    pub fn receive(&mut self) -> Option<Vec<u8>> {
        self.payloads.pop()
    }

    /// Takes the oldest client event (state changes).
    pub fn next_event(&mut self) -> Option<ClientEvent> {
        self.events.pop()
    }

    /// The client's state, as the core names it.
    pub fn state(&self) -> ClientState {
        self.core.state()
    }

    /// The slot the server gave this client, while connected.
    pub fn client_index(&self) -> Option<u32> {
        (self.core.state() == ClientState::Connected).then(|| self.core.client_index())
    }

    /// The largest payload this session carries:
    /// [`payload_limit`](crate::payload_limit) of its datagram size.
    pub fn payload_limit(&self) -> usize {
        payload_limit(self.max_datagram_size)
    }

    /// The largest datagram the session carries (its `maxDatagramSize`).
    pub fn max_datagram_size(&self) -> usize {
        self.max_datagram_size
    }

    /// Takes a new `maxDatagramSize` of the session (a browser may change
    /// it during the session, as its path MTU estimate changes): the
    /// payload limit follows.
    pub fn set_max_datagram_size(&mut self, max_datagram_size: usize) {
        self.max_datagram_size = max_datagram_size;
    }

    /// What the connection carried, as of `now`.
    pub fn connection_stats(&self, now: Instant) -> ConnectionStats {
        self.core.connection_stats(now)
    }

    /// When the core next has something to do, or `None` while idle.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.core.next_deadline()
    }

    /// Why the session closed, once it has (including
    /// [`disconnect`](Self::disconnect)).
    pub fn closed(&self) -> Option<&str> {
        self.closed.as_deref()
    }

    /// Payloads dropped because the receive queue was full.
    pub fn dropped_payloads(&self) -> u64 {
        self.payloads.dropped()
    }

    /// Events dropped because the event queue was full.
    pub fn dropped_events(&self) -> u64 {
        self.events.dropped()
    }

    /// The core client itself, for its counters
    /// ([`Client::stats`]) and the rest of its accessors.
    pub fn core(&self) -> &Client {
        &self.core
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sends_are_checked_against_the_session_s_limit() {
        let mut driver = Driver::new(1211);
        let mut sent = Vec::new();
        let now = Instant::ZERO;
        assert_eq!(driver.payload_limit(), 1186);
        assert_eq!(driver.send(now, &[], &mut sent), Err(SendError::Empty));
        assert_eq!(
            driver.send(now, &[0; 1187], &mut sent),
            Err(SendError::TooLarge {
                len: 1187,
                limit: 1186
            })
        );
        assert_eq!(
            driver.send(now, &[0; 1186], &mut sent),
            Err(SendError::NotConnected)
        );
        driver.session_closed(now, "gone");
        assert_eq!(
            driver.send(now, &[0; 1186], &mut sent),
            Err(SendError::SessionClosed)
        );
        assert!(sent.is_empty());
    }

    #[test]
    fn the_limit_follows_the_session_s_datagram_size() {
        let mut driver = Driver::new(1024);
        assert_eq!(driver.payload_limit(), 999);
        driver.set_max_datagram_size(1211);
        assert_eq!(
            (driver.max_datagram_size(), driver.payload_limit()),
            (1211, 1186)
        );
    }

    #[test]
    fn an_invalid_token_is_an_error_and_a_state() {
        let mut driver = Driver::new(1211);
        let mut sent = Vec::new();
        assert_eq!(
            driver.connect(Instant::ZERO, &[0; 100], &mut sent),
            Err(TokenError::WrongSize)
        );
        assert_eq!(driver.state(), ClientState::InvalidConnectToken);
        assert_eq!(
            driver.next_event(),
            Some(ClientEvent::StateChanged {
                from: ClientState::Disconnected,
                to: ClientState::InvalidConnectToken
            })
        );
        assert_eq!(driver.client_index(), None);
    }

    #[test]
    fn datagrams_while_idle_are_dropped_and_counted() {
        let mut driver = Driver::new(1211);
        let mut inbox = Inbox::default();
        let mut sent = Vec::new();
        assert!(inbox.push(vec![0x55; 40]));
        driver.update(Instant::from_secs(1), &mut inbox, &mut sent);
        assert!(inbox.is_empty() && sent.is_empty());
        assert_eq!(driver.receive(), None);
        assert_eq!(driver.core().stats().dropped_total(), 1);
    }
}
