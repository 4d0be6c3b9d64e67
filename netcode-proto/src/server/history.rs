//! One entry of the connect token history: a used token's tag, address,
//! expiry and state (STANDARD.md: *Processing Connection Requests*, "the
//! history of connect tokens already used"; the pending and consumed states
//! of the reference's 1.4.5 lifecycle).

use super::compact::{Endpoint, Link};
use crate::constants::MAC_BYTES;

/// Where a connect token is in its life on this server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenState {
    Free,
    /// A request was accepted; the handshake may be retried from the same address.
    Pending,
    /// A client connected with it; refused from every address until it expires.
    Consumed,
}

/// One entry of the history of used connect tokens. Opaque: it only lives in
/// a server's storage.
#[derive(Debug, Clone)]
pub struct TokenEntry {
    pub(crate) state: TokenState,
    pub(crate) mac: [u8; MAC_BYTES],
    pub(crate) address: Endpoint,
    pub(crate) expire_timestamp: u64,
    pub(crate) next_free: Link,
}

impl TokenEntry {
    /// A free entry.
    pub const EMPTY: Self = Self {
        state: TokenState::Free,
        mac: [0; MAC_BYTES],
        address: Endpoint::NONE,
        expire_timestamp: 0,
        next_free: Link::NONE,
    };
}

impl Default for TokenEntry {
    fn default() -> Self {
        Self::EMPTY
    }
}
