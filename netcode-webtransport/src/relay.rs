//! The server's side of the sessions: the relay a netcode server reads its
//! browser peers' datagrams from and sends theirs through, as one more
//! socket (`netcode_std::transport`'s relay of virtual peers), whichever
//! door they came in by: WebTransport (endpoint.rs) or its WebSocket
//! fallback (websocket/).
//!
//! Each open session is a virtual peer: an address in `100::/64` of its
//! own, numbered by one counter for both doors, the session's QUIC
//! connection or WebSocket behind it. Datagrams the sessions receive wait
//! in one bounded queue until the server's next read; the server's replies
//! go straight to the session's `send_datagram` (which only queues them for
//! QUIC) or into the WebSocket task's bounded queue, on the server's own
//! thread, never waiting.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::Bytes;
use netcode_std::proto::constants::MAX_PAYLOAD_BYTES;
use netcode_std::transport::{Socket, virtual_address};
use tokio::sync::{Notify, mpsc};
use wtransport::Connection;
use wtransport::datagram::Datagram;
use wtransport::error::SendDatagramError;

use crate::websocket::stats::{WebSocketCounters, WebSocketStats};

/// Datagrams from sessions that wait for the server at most; beyond this
/// the newest are dropped (and counted) until the server reads.
pub const INBOUND_LIMIT: usize = 4096;

/// A datagram from a session, as its door delivered it.
#[derive(Debug)]
pub(crate) enum Inbound {
    /// A WebTransport datagram.
    Datagram(Datagram),
    /// A WebSocket binary message.
    Message(Bytes),
}

impl Inbound {
    fn bytes(&self) -> &[u8] {
        match self {
            Inbound::Datagram(datagram) => datagram,
            Inbound::Message(message) => message,
        }
    }
}

/// How the server's datagrams reach an open session.
#[derive(Debug)]
pub(crate) enum Outbound {
    /// A WebTransport session's connection.
    WebTransport(Connection),
    /// A WebSocket session's task, through its bounded queue.
    WebSocket(mpsc::Sender<Bytes>),
}

/// What the sessions of both doors and the relay share.
#[derive(Debug)]
pub(crate) struct Shared {
    inbound: Mutex<VecDeque<(SocketAddr, Inbound)>>,
    sessions: Mutex<HashMap<SocketAddr, Outbound>>,
    /// The next virtual peer's number: never reused while the relay lives.
    next_peer: AtomicU64,
    /// Notified when datagrams wait: the server's driver wakes for it.
    pub(crate) ready: Arc<Notify>,
    /// The WebTransport door's counters.
    pub(crate) counters: Counters,
    /// The WebSocket door's counters.
    pub(crate) websocket: WebSocketCounters,
}

/// Counters of the sessions and their datagrams, as
/// [`WebTransportStats`] reports them.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) sessions_accepted: AtomicU64,
    pub(crate) sessions_open: AtomicUsize,
    pub(crate) sessions_over_cap: AtomicU64,
    pub(crate) sessions_wrong_path: AtomicU64,
    pub(crate) sessions_silent: AtomicU64,
    pub(crate) sessions_failed: AtomicU64,
    pub(crate) handshakes: AtomicUsize,
    pub(crate) connections_refused: AtomicU64,
    pub(crate) streams_refused: AtomicU64,
    pub(crate) datagrams_received: AtomicU64,
    pub(crate) datagrams_oversized: AtomicU64,
    pub(crate) datagrams_dropped_full: AtomicU64,
    pub(crate) datagrams_sent: AtomicU64,
    pub(crate) datagrams_not_sent: AtomicU64,
}

/// What a [`WebTransport`](crate::WebTransport) endpoint has seen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WebTransportStats {
    /// Sessions accepted.
    pub sessions_accepted: u64,
    /// Sessions open now (and being accepted).
    pub sessions_open: usize,
    /// Session requests refused because the cap was reached.
    pub sessions_over_cap: u64,
    /// Session requests for another path, refused.
    pub sessions_wrong_path: u64,
    /// Sessions closed because they sent no datagram for the silence
    /// timeout.
    pub sessions_silent: u64,
    /// Connections whose handshake or session request failed or took too
    /// long.
    pub sessions_failed: u64,
    /// Connection attempts refused because too many handshakes were under
    /// way.
    pub connections_refused: u64,
    /// Streams opened by peers, refused (netcode uses datagrams only).
    pub streams_refused: u64,
    /// Datagrams received from sessions and queued for the server.
    pub datagrams_received: u64,
    /// Datagrams longer than any netcode packet, dropped.
    pub datagrams_oversized: u64,
    /// Datagrams dropped because the server's queue was full.
    pub datagrams_dropped_full: u64,
    /// Datagrams the server sent to sessions.
    pub datagrams_sent: u64,
    /// Datagrams the server addressed to no open session, or that QUIC
    /// refused (too large for the path, the session gone).
    pub datagrams_not_sent: u64,
}

/// Takes one of `max` places counted by `open` for a session about to be
/// accepted; false when all are taken. Given back by [`release`] (or by
/// [`Shared::close`] once opened).
pub(crate) fn reserve(open: &AtomicUsize, max: usize) -> bool {
    open.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
        (n < max).then_some(n + 1)
    })
    .is_ok()
}

/// Gives back a place taken by [`reserve`].
pub(crate) fn release(open: &AtomicUsize) {
    open.fetch_sub(1, Ordering::AcqRel);
}

/// A lock, whether or not a task panicked holding it: the queue and the
/// map are whole between statements.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    pub(crate) fn new() -> Self {
        Self {
            inbound: Mutex::new(VecDeque::new()),
            sessions: Mutex::new(HashMap::new()),
            next_peer: AtomicU64::new(1),
            ready: Arc::new(Notify::new()),
            counters: Counters::default(),
            websocket: WebSocketCounters::default(),
        }
    }

    /// Opens a session in a place reserved for it (`reserve`): its fresh
    /// virtual address, from now on the server's way to it.
    pub(crate) fn open(&self, outbound: Outbound) -> SocketAddr {
        let address = virtual_address(self.next_peer.fetch_add(1, Ordering::Relaxed));
        let accepted = match &outbound {
            Outbound::WebTransport(_) => &self.counters.sessions_accepted,
            Outbound::WebSocket(_) => &self.websocket.sessions_accepted,
        };
        accepted.fetch_add(1, Ordering::Relaxed);
        lock(&self.sessions).insert(address, outbound);
        address
    }

    /// Closes the session of virtual peer `address` and gives back its
    /// place (`release`): its datagrams still queued are read as usual; the
    /// netcode slot it may hold is left to the protocol (the client's
    /// disconnect packets, or its timeout), so nothing is freed early.
    pub(crate) fn close(&self, address: &SocketAddr) {
        match lock(&self.sessions).remove(address) {
            Some(Outbound::WebTransport(_)) => release(&self.counters.sessions_open),
            Some(Outbound::WebSocket(_)) => release(&self.websocket.sessions_open),
            None => {}
        }
    }

    /// Queues a datagram from virtual peer `from` for the server; false
    /// (and nothing queued) when the queue is full.
    pub(crate) fn deliver(&self, from: SocketAddr, datagram: Inbound) -> bool {
        {
            let mut inbound = lock(&self.inbound);
            if inbound.len() >= INBOUND_LIMIT {
                return false;
            }
            inbound.push_back((from, datagram));
        }
        self.ready.notify_one();
        true
    }

    /// Queues a WebTransport datagram from virtual peer `from`, counted.
    pub(crate) fn deliver_datagram(&self, from: SocketAddr, datagram: Datagram) {
        let counter = if self.deliver(from, Inbound::Datagram(datagram)) {
            &self.counters.datagrams_received
        } else {
            &self.counters.datagrams_dropped_full
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// What the WebSocket door has seen.
    pub(crate) fn websocket_stats(&self) -> WebSocketStats {
        self.websocket.stats()
    }

    pub(crate) fn stats(&self) -> WebTransportStats {
        let c = &self.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        WebTransportStats {
            sessions_accepted: get(&c.sessions_accepted),
            sessions_open: c.sessions_open.load(Ordering::Relaxed),
            sessions_over_cap: get(&c.sessions_over_cap),
            sessions_wrong_path: get(&c.sessions_wrong_path),
            sessions_silent: get(&c.sessions_silent),
            sessions_failed: get(&c.sessions_failed),
            connections_refused: get(&c.connections_refused),
            streams_refused: get(&c.streams_refused),
            datagrams_received: get(&c.datagrams_received),
            datagrams_oversized: get(&c.datagrams_oversized),
            datagrams_dropped_full: get(&c.datagrams_dropped_full),
            datagrams_sent: get(&c.datagrams_sent),
            datagrams_not_sent: get(&c.datagrams_not_sent),
        }
    }
}

/// The sessions of a [`WebTransport`](crate::WebTransport) endpoint as one
/// socket of a netcode server: attach it with
/// `netcode_tokio::Server::attach_relay` (what
/// [`WebTransport::attach`](crate::WebTransport::attach) does).
#[derive(Debug, Clone)]
pub struct Relay {
    pub(crate) shared: Arc<Shared>,
}

/// The door a browser client came in by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BrowserTransport {
    /// A WebTransport session.
    WebTransport,
    /// A WebSocket (the fallback).
    WebSocket,
}

impl BrowserTransport {
    /// `"webtransport"` or `"websocket"`.
    pub fn name(self) -> &'static str {
        match self {
            BrowserTransport::WebTransport => "webtransport",
            BrowserTransport::WebSocket => "websocket",
        }
    }
}

impl Relay {
    /// The door virtual peer `peer` came in by, while its session is open.
    pub fn transport_of(&self, peer: SocketAddr) -> Option<BrowserTransport> {
        match lock(&self.shared.sessions).get(&peer)? {
            Outbound::WebTransport(_) => Some(BrowserTransport::WebTransport),
            Outbound::WebSocket(_) => Some(BrowserTransport::WebSocket),
        }
    }

    /// The largest payload a server's packet to virtual peer `peer` can
    /// carry now, or `None` if `peer` has no open session. Toward a
    /// WebTransport session it follows the datagram size QUIC allows on
    /// that path, which a browser may keep below netcode's (Firefox 140
    /// ESR: 1190-byte datagrams, so payloads of at most 1165 bytes), and a
    /// packet too large for it is not sent (counted in
    /// [`WebTransportStats::datagrams_not_sent`]); toward a WebSocket it is
    /// netcode's 1200 bytes.
    pub fn payload_limit_to(&self, peer: SocketAddr) -> Option<usize> {
        match lock(&self.shared.sessions).get(&peer)? {
            Outbound::WebTransport(connection) => connection
                .max_datagram_size()
                .map(netcode_browser::payload_limit),
            Outbound::WebSocket(_) => Some(MAX_PAYLOAD_BYTES),
        }
    }
}

impl Socket for Relay {
    /// Hands `datagram` to the session of virtual peer `to`, without
    /// waiting: QUIC queues it.
    fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<usize> {
        let shared = &self.shared;
        let (sent, counted) = match lock(&shared.sessions).get(&to) {
            Some(Outbound::WebTransport(connection)) => (
                connection.send_datagram(datagram).map_err(|e| match e {
                    SendDatagramError::TooLarge => io::Error::new(io::ErrorKind::InvalidInput, e),
                    _ => io::Error::new(io::ErrorKind::NotConnected, e),
                }),
                (
                    &shared.counters.datagrams_sent,
                    &shared.counters.datagrams_not_sent,
                ),
            ),
            Some(Outbound::WebSocket(queue)) => (
                queue
                    .try_send(Bytes::copy_from_slice(datagram))
                    .map_err(|e| match e {
                        mpsc::error::TrySendError::Full(_) => io::ErrorKind::WouldBlock.into(),
                        mpsc::error::TrySendError::Closed(_) => io::ErrorKind::NotConnected.into(),
                    }),
                (
                    &shared.websocket.messages_sent,
                    &shared.websocket.messages_not_sent,
                ),
            ),
            None => (
                Err(io::ErrorKind::NotConnected.into()),
                (
                    &shared.counters.datagrams_sent,
                    &shared.counters.datagrams_not_sent,
                ),
            ),
        };
        let (sent_counter, not_sent_counter) = counted;
        match sent {
            Ok(()) => {
                sent_counter.fetch_add(1, Ordering::Relaxed);
                Ok(datagram.len())
            }
            Err(e) => {
                not_sent_counter.fetch_add(1, Ordering::Relaxed);
                Err(e)
            }
        }
    }

    /// The oldest datagram a session brought, with its virtual peer.
    fn recv_from(&self, buffer: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        let (from, datagram) = lock(&self.shared.inbound)
            .pop_front()
            .ok_or(io::ErrorKind::WouldBlock)?;
        let bytes = datagram.bytes();
        let n = bytes.len().min(buffer.len());
        buffer[..n].copy_from_slice(&bytes[..n]);
        Ok((n, from))
    }
}
