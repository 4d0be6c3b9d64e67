//! One entry of the connect token history: a used token's tag, address,
//! expiry and state (STANDARD.md: *Processing Connection Requests*, "the
//! history of connect tokens already used"; the pending and consumed states
//! of the reference's 1.4.5 lifecycle).

use super::compact::Endpoint;
use super::expiry::HeapEntry;
use crate::constants::MAC_BYTES;

/// Where a connect token is in its life on this server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenState {
    Free,
    /// A request was accepted; the handshake may be retried from the same
    /// address. `record` is where the token's durable record stands on a
    /// server that persists its history (nothing is sent under the token's
    /// keys before it is durable); other servers leave it unasked.
    Pending {
        record: Record,
    },
    /// A client connected with it, or it was restored from an earlier run;
    /// refused from every address until it expires.
    Consumed,
}

/// Where a pending token's durable record stands, on a server started with
/// a restored history (see `persist.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Record {
    /// Not asked for yet, or the host reported that writing it failed: the
    /// token's next request asks.
    Unasked,
    /// Asked for ([`Output::persist_used_token`](crate::io::Output::persist_used_token));
    /// the host has not answered yet. Requests meanwhile are dropped.
    Asked,
    /// Durable: the token's requests are answered.
    Durable,
}

/// One entry of the history of used connect tokens. Opaque: it only lives in
/// a server's storage.
#[derive(Debug, Clone)]
pub struct TokenEntry {
    pub(crate) state: TokenState,
    pub(crate) mac: [u8; MAC_BYTES],
    pub(crate) address: Endpoint,
    pub(crate) expire_timestamp: u64,
    /// The history's expiry heap array element kept beside this entry (see
    /// `expiry.rs`): not part of the entry, so kept when it is overwritten.
    pub(crate) heap_at: u32,
}

impl TokenEntry {
    /// A free entry.
    pub const EMPTY: Self = Self {
        state: TokenState::Free,
        mac: [0; MAC_BYTES],
        address: Endpoint::NONE,
        expire_timestamp: 0,
        heap_at: 0,
    };

    /// A free entry in the place of this one (its heap element stays).
    pub(crate) fn cleared(&self) -> Self {
        Self {
            heap_at: self.heap_at,
            ..Self::EMPTY
        }
    }
}

/// Live entries are reclaimed in the order their tokens expire; only the
/// root is ever removed or re-keyed, so no position is kept.
impl HeapEntry for TokenEntry {
    type Key = u64;

    fn key(&self) -> u64 {
        self.expire_timestamp
    }

    fn heap_at(&self) -> u32 {
        self.heap_at
    }

    fn set_heap_at(&mut self, entry: u32) {
        self.heap_at = entry;
    }

    fn set_position(&mut self, _position: u32) {}
}

impl Default for TokenEntry {
    fn default() -> Self {
        Self::EMPTY
    }
}
