//! How large a server's connect token history is, and what that size buys
//! against a flood of valid tokens (STANDARD.md: *Processing Connection
//! Requests*, the history of connect tokens already used; the reference's
//! 1.4.5 rule that a full history refuses rather than evicts).
//!
//! The arithmetic is on [`TokenHistorySize`], where the public
//! documentation shows it.

use super::history::TokenEntry;

/// Connect token history entries per client slot (the reference has 2048
/// for 256): the per-slot ratio of [`TokenHistorySize::REFERENCE`].
pub const TOKENS_PER_SLOT: usize = 8;
/// Fewest token history entries `HeapStorage::new` makes (the reference's
/// count, the minimum of [`TokenHistorySize::REFERENCE`]): with fewer, a
/// small server would refuse new connect tokens once a few dozen were used
/// within one token lifetime.
pub const MIN_TOKENS: usize = 2048;

/// How many connect token history entries a server of a given slot count
/// has: `per_slot` for each slot, but never fewer than `minimum`.
///
/// # The flood arithmetic
///
/// Every connect token a server admits takes one history entry until the
/// token expires, at most one token lifetime `L` after the backend issued
/// it, whether or not its client connects or stays. A full history refuses
/// every new token (counted as
/// [`DropReason::TokenHistoryFull`](crate::stats::DropReason::TokenHistoryFull))
/// rather than evicting one, because evicting would let an evicted token
/// start a second session that repeats nonces. So a history of `C` entries
/// absorbs `C` distinct tokens per lifetime: whoever can obtain more than
/// `C / L` valid tokens per second from the backend (and send each once, from
/// any address) blocks every new connection for up to `L` after their last
/// token. Clients already connected are not affected.
///
/// With the reference's sizes (2048 entries, 30 s tokens) that is 68 tokens
/// per second. Size the history as at least the backend's peak issue rate
/// times the token lifetime, with room for what one abuser of the backend
/// can obtain: [`absorbing`](Self::absorbing). Each entry costs
/// [`BYTES_PER_ENTRY`](Self::BYTES_PER_ENTRY) bytes (56): a million entries,
/// 33 333 tokens per second at 30 s, take 56 MB.
///
/// # What operators watch
///
/// * [`Server::token_history_in_use`](super::Server::token_history_in_use)
///   against [`Server::token_history_capacity`](super::Server::token_history_capacity):
///   entries held by unexpired tokens (expired ones are freed by every
///   `update`);
/// * the [`TokenHistoryFull`](crate::stats::DropReason::TokenHistoryFull)
///   drop counter of [`Server::stats`](super::Server::stats): requests
///   refused because the history was full. Any increase means new clients
///   are being turned away.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TokenHistorySize {
    /// Entries per client slot.
    pub per_slot: usize,
    /// Fewest entries, whatever the slot count.
    pub minimum: usize,
}

impl TokenHistorySize {
    /// The reference's sizing: 8 entries per slot, at least 2048.
    pub const REFERENCE: Self = Self {
        per_slot: TOKENS_PER_SLOT,
        minimum: MIN_TOKENS,
    };

    /// Bytes of heap storage per entry: the entry and its two hash buckets.
    pub const BYTES_PER_ENTRY: usize =
        core::mem::size_of::<TokenEntry>() + 2 * core::mem::size_of::<u32>();

    /// The reference's per-slot ratio, but at least enough entries for
    /// `tokens_per_second` tokens issued over a lifetime of
    /// `lifetime_seconds` (see [the flood arithmetic](Self)).
    pub const fn absorbing(tokens_per_second: usize, lifetime_seconds: u64) -> Self {
        let needed = tokens_per_second.saturating_mul(lifetime_seconds as usize);
        Self {
            per_slot: TOKENS_PER_SLOT,
            minimum: if needed > MIN_TOKENS {
                needed
            } else {
                MIN_TOKENS
            },
        }
    }

    /// Entries for a server of `slots` slots.
    pub const fn entries(&self, slots: usize) -> usize {
        let scaled = slots.saturating_mul(self.per_slot);
        if scaled > self.minimum {
            scaled
        } else {
            self.minimum
        }
    }
}

impl Default for TokenHistorySize {
    fn default() -> Self {
        Self::REFERENCE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_scale_by_slot_above_their_minimum() {
        let size = TokenHistorySize::REFERENCE;
        assert_eq!(size.entries(4), 2048);
        assert_eq!(size.entries(256), 2048);
        assert_eq!(size.entries(4096), 32_768);
        assert_eq!(TokenHistorySize::absorbing(100, 30).entries(4), 3000);
        assert_eq!(
            TokenHistorySize::absorbing(1, 30),
            TokenHistorySize::REFERENCE
        );
        assert_eq!(TokenHistorySize::BYTES_PER_ENTRY, 56);
        let custom = TokenHistorySize {
            per_slot: 1,
            minimum: 0,
        };
        assert_eq!(custom.entries(3), 3);
        assert_eq!(custom.entries(usize::MAX), usize::MAX);
    }
}
