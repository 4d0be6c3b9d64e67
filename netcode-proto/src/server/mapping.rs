//! One encryption mapping: the keys for a client address from its first
//! accepted connection request until it connects, lapses or leaves
//! (STANDARD.md: *Processing Connection Requests*, "Add an encryption
//! mapping ...").

use crate::time::Instant;

use super::compact::{Endpoint, Link, Nanos};
use super::expiry::HeapEntry;
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
    /// When the last challenge under this mapping was sent: the start of
    /// the handshake's round trip.
    pub(crate) challenge_at: Nanos,
    pub(crate) client_index: Link,
    pub(crate) token_entry: Link,
    /// The mapping table's expiry heap array element kept beside this entry
    /// (see `expiry.rs`): not part of the entry, so kept when it is
    /// overwritten.
    pub(crate) heap_at: u32,
    /// Where this entry sits in the expiry heap array.
    pub(crate) heap_position: u32,
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
        challenge_at: Nanos::ZERO,
        client_index: Link::NONE,
        token_entry: Link::NONE,
        heap_at: 0,
        heap_position: 0,
    };

    /// A free entry in the place of this one (its heap fields stay).
    pub(crate) fn cleared(&self) -> Self {
        Self {
            heap_at: self.heap_at,
            heap_position: self.heap_position,
            ..Self::EMPTY
        }
    }

    /// Whether the mapping has lapsed at `now`: silent for longer than its
    /// timeout, or past its absolute expiry (the reference's strict tests).
    pub(crate) fn expired(&self, now: Instant) -> bool {
        let now = Nanos::new(now);
        let silent = self
            .timeout
            .silence_seconds()
            .is_some_and(|s| MAPPING_EXPIRY.holds(self.last_access.after_seconds(s), now));
        silent || (self.expire_time != Nanos::NEVER && MAPPING_EXPIRY.holds(self.expire_time, now))
    }
}

/// Live mappings are reclaimed in the order of their absolute expiry, the
/// earliest a pending one can lapse (a connected client's is never). With a
/// non-decreasing clock, a mapping silent for its timeout is also past its
/// expiry (which is at most its last access plus the timeout), so if any
/// unowned mapping has lapsed, the root has.
impl HeapEntry for Mapping {
    type Key = Nanos;

    fn key(&self) -> Nanos {
        self.expire_time
    }

    fn heap_at(&self) -> u32 {
        self.heap_at
    }

    fn set_heap_at(&mut self, entry: u32) {
        self.heap_at = entry;
    }

    fn set_position(&mut self, position: u32) {
        self.heap_position = position;
    }
}

impl Default for Mapping {
    fn default() -> Self {
        Self::EMPTY
    }
}
