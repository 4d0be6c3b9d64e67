//! The connect token history across restarts: exporting it, starting with
//! a history restored from durable storage, and the record a server asks
//! its host to make durable before it sends anything under a new token's
//! keys (STANDARD.md: *Nonce Reuse and Server Restarts*, the second
//! mitigation, "Persist the connect token history").
//!
//! # Two ways to start
//!
//! * [`Server::start`]: nothing is known about earlier runs. The restart
//!   rule refuses every token that may predate this start (expiring before
//!   start plus the maximum token lifetime), so no token used before can
//!   repeat a nonce; tokens issued just before the start, or with a shorter
//!   lifetime, wait out that window. Choose it when the server keeps no
//!   durable state.
//! * [`Server::start_restored`]: the history of every earlier run since
//!   `recorded_since` is restored. Every restored token is refused from
//!   every address until it expires, and the restart rule counts from
//!   `recorded_since` instead of the start, so once the record is older
//!   than one maximum token lifetime a restarted server accepts every fresh
//!   token at once. The server then asks its [`Output`] to make each newly
//!   used token durable ([`Output::persist_used_token`]) before the first
//!   packet under that token's keys (a challenge or a denial) leaves, and
//!   drops the request until it is
//!   ([`DropReason::TokenNotDurable`](crate::stats::DropReason::TokenNotDurable)).
//!   Choose it when the host has durable storage and tokens of varying
//!   lifetimes, or cannot afford the waiting window.
//!
//! # Why every restored token is refused
//!
//! A restored token that was only pending (its client never connected) is
//! refused as if consumed: a restarted server's global sequence begins again
//! at 2^63, so a new challenge or denial under that token's key could repeat
//! the sequence, and so the nonce, of one sent before the restart. The
//! client asks the backend for a new token, as it does whenever a token is
//! refused.

use core::net::SocketAddr;
use core::time::Duration;

use rand_core::CryptoRng;

use super::history::TokenState;
use super::{Server, ServerError, ServerEvent, ServerStorage, Tables};
use crate::constants::MAC_BYTES;
use crate::io::Output;

/// A used connect token, as the history keeps it and durable storage
/// records it: what the standard's second restart mitigation persists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UsedToken {
    /// The sealed private token's tag, which identifies the token.
    pub mac: [u8; MAC_BYTES],
    /// The address of the request that first used it.
    pub address: SocketAddr,
    /// The token's expire timestamp (unix seconds): after it, nothing needs
    /// remembering.
    pub expire_timestamp: u64,
}

/// One entry of a running server's history, as
/// [`Server::token_history`] exports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HistoryEntry {
    /// The token.
    pub token: UsedToken,
    /// Whether a client connected with it (consumed) or its handshake is
    /// still pending. Restored tokens count as consumed.
    pub consumed: bool,
}

/// The connect token history of earlier runs, restored from durable
/// storage, for [`Server::start_restored`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestoredHistory<'a> {
    /// Unix seconds since which the storage holds every token any run of
    /// this server used (when it was created). A token used before then is
    /// not in `tokens`: the restart rule counts from this time, so such a
    /// token is refused if it may still be valid.
    pub recorded_since: u64,
    /// The tokens used since then, in any order, duplicates and expired
    /// ones allowed.
    pub tokens: &'a [UsedToken],
}

impl<S: ServerStorage> Server<S> {
    /// Starts like [`start`](Self::start), with the token history of
    /// earlier runs restored (see the module documentation on when to
    /// choose each): every token in `history` that has not expired at
    /// `unix_seconds` is refused from every address until it does, the
    /// restart rule counts from `history.recorded_since`, and from now on
    /// every newly used token is passed to [`Output::persist_used_token`]
    /// before anything is sent under its keys.
    ///
    /// Fails with [`ServerError::HistoryTooLarge`] (and leaves the server
    /// stopped) when the unexpired tokens do not fit in this server's
    /// history; start with a larger history, or with
    /// [`start`](Self::start).
    pub fn start_restored<R: CryptoRng + ?Sized, O: Output<ServerEvent>>(
        &mut self,
        now: Duration,
        unix_seconds: u64,
        max_clients: usize,
        rng: &mut R,
        history: &RestoredHistory<'_>,
        out: &mut O,
    ) -> Result<(), ServerError> {
        let floor = history
            .recorded_since
            .saturating_add(self.config.effective_max_connect_token_lifetime());
        self.begin(now, unix_seconds, max_clients, floor, rng, out)?;
        self.persisting = true;
        let hasher = self.hasher;
        let mut tables = self.storage.tables();
        for token in history.tokens {
            if token.expire_timestamp <= unix_seconds {
                continue;
            }
            let restored = tables.restore_token(
                &mut self.live,
                &hasher,
                &token.address,
                &token.mac,
                token.expire_timestamp,
            );
            if !restored {
                self.stop(now, out);
                return Err(ServerError::HistoryTooLarge);
            }
        }
        Ok(())
    }

    /// Every entry of the connect token history (unexpired as of the last
    /// update), for inspection or for durable storage. Stopping forgets the
    /// history: export it before.
    pub fn token_history(&mut self) -> impl Iterator<Item = HistoryEntry> + '_ {
        let Tables { tokens, .. } = self.storage.tables();
        tokens.iter().filter_map(|entry| {
            let consumed = match entry.state {
                TokenState::Free => return None,
                TokenState::Pending { .. } => false,
                TokenState::Consumed => true,
            };
            Some(HistoryEntry {
                token: UsedToken {
                    mac: entry.mac,
                    address: entry.address.get()?,
                    expire_timestamp: entry.expire_timestamp,
                },
                consumed,
            })
        })
    }

    /// Whether the server was started with a restored history, and so asks
    /// its output to make each new token durable.
    pub fn persists_token_history(&self) -> bool {
        self.persisting
    }
}
