//! One encryption mapping: the keys for a client address from its first
//! accepted connection request until it connects, lapses or leaves
//! (STANDARD.md: *Processing Connection Requests*, "Add an encryption
//! mapping ...").

use core::time::Duration;

use super::compact::{Endpoint, Link, Nanos};
use crate::crypto::Key;
use crate::timing::{MAPPING_EXPIRY, TokenTimeout};

/// An encryption mapping: the keys for one client address, from its first
/// accepted connection request until it connects, times out or leaves.
/// Opaque: it only lives in a server's storage.
#[derive(Debug, Clone)]
pub struct Mapping {
    /// [`Endpoint::NONE`] when the entry is free.
    pub(crate) address: Endpoint,
    pub(crate) send_key: Key,
    pub(crate) receive_key: Key,
    /// The token's timeout: negative never expires, 0 expires at once.
    pub(crate) timeout: TokenTimeout,
    /// Absolute expiry while the handshake is pending; [`Nanos::NEVER`] once
    /// connected (or when the token disables timeouts).
    pub(crate) expire_time: Nanos,
    pub(crate) last_access: Nanos,
    pub(crate) client_index: Link,
    pub(crate) token_entry: Link,
    /// Next free entry, while on the free list.
    pub(crate) next_free: Link,
}

impl Mapping {
    /// A free entry.
    pub const EMPTY: Self = Self {
        address: Endpoint::NONE,
        send_key: Key::from_bytes([0; 32]),
        receive_key: Key::from_bytes([0; 32]),
        timeout: TokenTimeout::new(0),
        expire_time: Nanos::NEVER,
        last_access: Nanos::ZERO,
        client_index: Link::NONE,
        token_entry: Link::NONE,
        next_free: Link::NONE,
    };

    /// Whether the mapping has lapsed at `now`: silent for longer than its
    /// timeout, or past its absolute expiry (the reference's strict tests).
    pub(crate) fn expired(&self, now: Duration) -> bool {
        let now = Nanos::new(now);
        let silent = self
            .timeout
            .silence_seconds()
            .is_some_and(|s| MAPPING_EXPIRY.holds(self.last_access.after_seconds(s), now));
        silent || (self.expire_time != Nanos::NEVER && MAPPING_EXPIRY.holds(self.expire_time, now))
    }
}

impl Default for Mapping {
    fn default() -> Self {
        Self::EMPTY
    }
}
