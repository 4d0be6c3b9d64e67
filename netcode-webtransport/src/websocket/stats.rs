//! What the WebSocket door counts: its sessions, what it refused, and the
//! messages it carried.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// The WebSocket door's counters, shared by its tasks and the relay.
#[derive(Debug, Default)]
pub(crate) struct WebSocketCounters {
    pub(crate) upgrades: AtomicUsize,
    pub(crate) sessions_accepted: AtomicU64,
    pub(crate) sessions_open: AtomicUsize,
    pub(crate) sessions_over_cap: AtomicU64,
    pub(crate) sessions_wrong_path: AtomicU64,
    pub(crate) sessions_silent: AtomicU64,
    pub(crate) sessions_failed: AtomicU64,
    pub(crate) sessions_flooding: AtomicU64,
    pub(crate) sessions_sent_text: AtomicU64,
    pub(crate) connections_refused: AtomicU64,
    pub(crate) messages_received: AtomicU64,
    pub(crate) messages_oversized: AtomicU64,
    pub(crate) messages_dropped_full: AtomicU64,
    pub(crate) messages_sent: AtomicU64,
    pub(crate) messages_not_sent: AtomicU64,
}

/// What a [`WebSocket`](crate::WebSocket) endpoint has seen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WebSocketStats {
    /// Sessions accepted (upgraded).
    pub sessions_accepted: u64,
    /// Sessions open now (and being upgraded).
    pub sessions_open: usize,
    /// Upgrades refused because the session cap was reached (429).
    pub sessions_over_cap: u64,
    /// Upgrades for another path, refused (404).
    pub sessions_wrong_path: u64,
    /// Sessions closed because they sent nothing for the silence timeout.
    pub sessions_silent: u64,
    /// Connections whose TLS handshake or upgrade failed or took too long.
    pub sessions_failed: u64,
    /// Sessions closed for sending more messages a second than allowed.
    pub sessions_flooding: u64,
    /// Sessions closed for sending a text message (netcode is binary).
    pub sessions_sent_text: u64,
    /// TCP connections closed at once because too many were being
    /// upgraded.
    pub connections_refused: u64,
    /// Binary messages received and queued for the server.
    pub messages_received: u64,
    /// Messages longer than any netcode packet, dropped (and those longer
    /// than [`MAX_MESSAGE_BYTES`](crate::MAX_MESSAGE_BYTES), which also
    /// ended their session).
    pub messages_oversized: u64,
    /// Messages dropped because the server's queue was full.
    pub messages_dropped_full: u64,
    /// Messages the server sent to sessions.
    pub messages_sent: u64,
    /// Messages the server addressed to a session that was gone or whose
    /// outgoing queue was full (a peer that does not read).
    pub messages_not_sent: u64,
}

impl WebSocketCounters {
    pub(crate) fn stats(&self) -> WebSocketStats {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        WebSocketStats {
            sessions_accepted: get(&self.sessions_accepted),
            sessions_open: self.sessions_open.load(Ordering::Relaxed),
            sessions_over_cap: get(&self.sessions_over_cap),
            sessions_wrong_path: get(&self.sessions_wrong_path),
            sessions_silent: get(&self.sessions_silent),
            sessions_failed: get(&self.sessions_failed),
            sessions_flooding: get(&self.sessions_flooding),
            sessions_sent_text: get(&self.sessions_sent_text),
            connections_refused: get(&self.connections_refused),
            messages_received: get(&self.messages_received),
            messages_oversized: get(&self.messages_oversized),
            messages_dropped_full: get(&self.messages_dropped_full),
            messages_sent: get(&self.messages_sent),
            messages_not_sent: get(&self.messages_not_sent),
        }
    }
}
