//! The server's side of the sessions: the relay a netcode server reads its
//! WebTransport peers' datagrams from and sends theirs through, as one more
//! socket (`netcode_std::transport`'s relay of virtual peers).
//!
//! Each open session is a virtual peer: an address in `100::/64` of its
//! own, the session's QUIC connection behind it. Datagrams the sessions
//! receive wait in one bounded queue until the server's next read; the
//! server's replies go straight to the session's `send_datagram`, which
//! only queues them for QUIC, on the server's own thread.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use netcode_std::transport::Socket;
use tokio::sync::Notify;
use wtransport::Connection;
use wtransport::datagram::Datagram;
use wtransport::error::SendDatagramError;

/// Datagrams from sessions that wait for the server at most; beyond this
/// the newest are dropped (and counted) until the server reads.
pub const INBOUND_LIMIT: usize = 4096;

/// What the sessions and the relay share.
#[derive(Debug)]
pub(crate) struct Shared {
    inbound: Mutex<VecDeque<(SocketAddr, Datagram)>>,
    sessions: Mutex<HashMap<SocketAddr, Connection>>,
    /// Notified when datagrams wait: the server's driver wakes for it.
    pub(crate) ready: Arc<Notify>,
    pub(crate) counters: Counters,
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
            ready: Arc::new(Notify::new()),
            counters: Counters::default(),
        }
    }

    /// Takes one of `max` places for a session about to be accepted;
    /// false when all are taken. Given back by [`release`](Self::release)
    /// (or [`close`](Self::close) once opened).
    pub(crate) fn try_reserve(&self, max: usize) -> bool {
        self.counters
            .sessions_open
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |open| {
                (open < max).then_some(open + 1)
            })
            .is_ok()
    }

    /// Gives back a place taken by [`try_reserve`](Self::try_reserve) for a
    /// session that was not opened after all.
    pub(crate) fn release(&self) {
        self.counters.sessions_open.fetch_sub(1, Ordering::AcqRel);
    }

    /// Opens the session of virtual peer `address`, in a place reserved.
    pub(crate) fn open(&self, address: SocketAddr, connection: Connection) {
        lock(&self.sessions).insert(address, connection);
        self.counters
            .sessions_accepted
            .fetch_add(1, Ordering::Relaxed);
    }

    /// Closes the session of virtual peer `address` and gives back its
    /// place: its datagrams still queued are read as usual; the netcode
    /// slot it may hold is left to the protocol (the client's disconnect
    /// packets, or its timeout), so nothing is freed early.
    pub(crate) fn close(&self, address: &SocketAddr) {
        if lock(&self.sessions).remove(address).is_some() {
            self.release();
        }
    }

    /// Queues a datagram from virtual peer `from` for the server.
    pub(crate) fn deliver(&self, from: SocketAddr, datagram: Datagram) {
        {
            let mut inbound = lock(&self.inbound);
            if inbound.len() >= INBOUND_LIMIT {
                self.counters
                    .datagrams_dropped_full
                    .fetch_add(1, Ordering::Relaxed);
                return;
            }
            inbound.push_back((from, datagram));
        }
        self.counters
            .datagrams_received
            .fetch_add(1, Ordering::Relaxed);
        self.ready.notify_one();
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

impl Socket for Relay {
    /// Hands `datagram` to the session of virtual peer `to`, without
    /// waiting: QUIC queues it.
    fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<usize> {
        let counters = &self.shared.counters;
        let sent = match lock(&self.shared.sessions).get(&to) {
            Some(connection) => connection.send_datagram(datagram).map_err(|e| match e {
                SendDatagramError::TooLarge => io::Error::new(io::ErrorKind::InvalidInput, e),
                _ => io::Error::new(io::ErrorKind::NotConnected, e),
            }),
            None => Err(io::ErrorKind::NotConnected.into()),
        };
        match sent {
            Ok(()) => {
                counters.datagrams_sent.fetch_add(1, Ordering::Relaxed);
                Ok(datagram.len())
            }
            Err(e) => {
                counters.datagrams_not_sent.fetch_add(1, Ordering::Relaxed);
                Err(e)
            }
        }
    }

    /// The oldest datagram a session brought, with its virtual peer.
    fn recv_from(&self, buffer: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        let (from, datagram) = lock(&self.shared.inbound)
            .pop_front()
            .ok_or(io::ErrorKind::WouldBlock)?;
        let n = datagram.len().min(buffer.len());
        buffer[..n].copy_from_slice(&datagram[..n]);
        Ok((n, from))
    }
}
