use core::net::SocketAddr;
use core::time::Duration;

use crate::crypto::Key;
use crate::session::after;

/// An encryption mapping: the keys for one client address, from its first
/// accepted connection request until it connects, times out or leaves.
/// Opaque: it only lives in a server's storage.
#[derive(Debug, Clone)]
pub struct Mapping {
    /// `None` when the entry is free.
    pub(crate) address: Option<SocketAddr>,
    pub(crate) send_key: Key,
    pub(crate) receive_key: Key,
    /// The token's timeout in seconds: negative never expires, 0 expires at once.
    pub(crate) timeout_seconds: i32,
    /// Absolute expiry while the handshake is pending; `None` once connected
    /// (or when the token disables timeouts).
    pub(crate) expire_time: Option<Duration>,
    pub(crate) last_access: Duration,
    pub(crate) client_index: Option<u32>,
    pub(crate) token_entry: Option<u32>,
    /// Next free entry, while on the free list.
    pub(crate) next_free: Option<u32>,
}

impl Mapping {
    /// A free entry.
    pub const EMPTY: Self = Self {
        address: None,
        send_key: Key::from_bytes([0; 32]),
        receive_key: Key::from_bytes([0; 32]),
        timeout_seconds: 0,
        expire_time: None,
        last_access: Duration::ZERO,
        client_index: None,
        token_entry: None,
        next_free: None,
    };

    /// Whether the mapping has lapsed at `now`: silent for longer than its
    /// timeout, or past its absolute expiry (the reference's strict tests).
    pub(crate) fn expired(&self, now: Duration) -> bool {
        let silent = u64::try_from(self.timeout_seconds)
            .ok()
            .filter(|s| *s > 0)
            .is_some_and(|s| after(self.last_access, Duration::from_secs(s)) < now);
        silent || self.expire_time.is_some_and(|t| t < now)
    }
}

impl Default for Mapping {
    fn default() -> Self {
        Self::EMPTY
    }
}
