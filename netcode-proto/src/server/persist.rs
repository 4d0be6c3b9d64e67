//! The connect token history across restarts: exporting it, starting with
//! a history restored from durable storage, and taking back the records a
//! server asks its host to make durable before it sends anything under a
//! new token's keys (STANDARD.md: *Nonce Reuse and Server Restarts*, the
//! second mitigation, "Persist the connect token history"). The record and
//! the host's answer ([`UsedToken`], [`PersistRequest`], [`PersistOutcome`])
//! are defined in the crate's `durable.rs`, below the output seam that
//! carries them.
//!
//! # Two ways to start
//!
//! * [`Server::start`]: nothing is known about earlier runs. The restart
//!   rule refuses every token that may predate this start (see
//!   `timing::restart_floor`: minted, by its expiry, no later than the
//!   start second), so no token used before can repeat a nonce; tokens
//!   issued just before the start, or with a shorter lifetime, wait out
//!   that window. Choose it when the server keeps no durable state. It
//!   assumes the wall clock did not step back across the restart: a clock
//!   that reads earlier than it did in the previous run reopens the window
//!   by the size of the step, and only a durable history can close it.
//! * [`Server::start_restored`]: the history of every earlier run since
//!   `recorded_since` is restored. Every restored token is refused from
//!   every address until it expires, and the restart rule counts from
//!   `recorded_since` instead of the start, so once the record is older
//!   than one maximum token lifetime a restarted server accepts every fresh
//!   token at once. Expiry is judged against the later of the wall clock
//!   and `latest_unix_seconds`, the latest second the storage saw, so a
//!   clock that stepped back cannot revive a token whose record was
//!   dropped as expired.
//!
//! # Making a token durable: an output out, an input in
//!
//! A server started restored sends nothing under a new token's keys (a
//! challenge or a denial) before the host reports the token's record
//! durable. The token's first request hands a [`PersistRequest`] to
//! [`Output::persist_used_token`] and is held
//! ([`DropReason::TokenNotDurable`](crate::stats::DropReason::TokenNotDurable));
//! the host writes [`PersistRequest::token`] to its storage, off the
//! server's loop and batched with others if it likes, and hands the
//! request back through [`Server::token_persisted`]. If the outcome is
//! [`PersistOutcome::Durable`], the server answers the held request then
//! (the same checks and answer as any request); if it is
//! [`PersistOutcome::Failed`], the token's next request asks again.
//! Requests that arrive in between are dropped unanswered, and the server
//! goes on with every other client meanwhile.
//!
//! # Why every restored token is refused
//!
//! A restored token that was only pending (its client never connected) is
//! refused as if consumed: a restarted server's global sequence begins again
//! at 2^63, so a new challenge or denial under that token's key could repeat
//! the sequence, and so the nonce, of one sent before the restart. The
//! client asks the backend for a new token, as it does whenever a token is
//! refused.

use crate::time::Instant;
use core::net::SocketAddr;

use rand_core::CryptoRng;

use super::handshake::Admission;
use super::history::{Record, TokenState};
use super::{Server, ServerError, ServerEvent, ServerStorage, Tables};
use crate::durable::{PersistOutcome, PersistRequest, UsedToken};
use crate::io::Output;
use crate::packet::ConnectionRequest;
use crate::stats::DroppedDatagram;
use crate::timing::restart_floor;

/// The first byte of a connection request, as dropped requests report it.
const REQUEST_PREFIX: u8 = 0;

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
    /// The latest unix second the storage's writers saw (0 if unknown):
    /// tokens the storage forgot were expired by then. The restarted
    /// server judges expiry against the later of its clock and this, so a
    /// wall clock that now reads earlier cannot revive them.
    pub latest_unix_seconds: u64,
    /// The tokens used since then, in any order, duplicates and expired
    /// ones allowed.
    pub tokens: &'a [UsedToken],
}

impl RestoredHistory<'_> {
    /// How many of the tokens have not expired at the later of
    /// `unix_seconds` and [`latest_unix_seconds`](Self::latest_unix_seconds)
    /// (duplicates counted once each time they appear): the history
    /// entries [`Server::start_restored`] needs for them.
    pub fn unexpired(&self, unix_seconds: u64) -> usize {
        let now = unix_seconds.max(self.latest_unix_seconds);
        self.tokens
            .iter()
            .filter(|t| t.expire_timestamp > now)
            .count()
    }
}

/// The held request, as the server's answer reads it.
fn admission(request: &PersistRequest) -> Admission<'_> {
    Admission {
        from: request.token.address,
        client_id: request.client_id,
        timeout_seconds: request.timeout_seconds,
        client_to_server_key: &request.client_to_server_key,
        server_to_client_key: &request.server_to_client_key,
        user_data: &request.user_data,
    }
}

impl<S: ServerStorage> Server<S> {
    /// Starts like [`start`](Self::start), with the token history of
    /// earlier runs restored (see the module documentation on when to
    /// choose each): every token in `history` that has not expired (at the
    /// later of `unix_seconds` and `history.latest_unix_seconds`) is
    /// refused from every address until it does, the restart rule counts
    /// from `history.recorded_since`, and from now on every newly used
    /// token is handed to [`Output::persist_used_token`] and nothing is
    /// sent under its keys until [`token_persisted`](Self::token_persisted)
    /// reports it durable.
    ///
    /// Fails with [`ServerError::HistoryTooLarge`] (and leaves the server
    /// stopped) when the unexpired tokens do not fit in this server's
    /// history; start with a larger history (the count to make room for
    /// is [`RestoredHistory::unexpired`]).
    pub fn start_restored<R: CryptoRng + ?Sized, O: Output<ServerEvent>>(
        &mut self,
        now: Instant,
        unix_seconds: u64,
        max_clients: usize,
        rng: &mut R,
        history: &RestoredHistory<'_>,
        out: &mut O,
    ) -> Result<(), ServerError> {
        let lifetime = self.config.effective_max_connect_token_lifetime();
        let floor = restart_floor(history.recorded_since, lifetime);
        let unix_seconds = unix_seconds.max(history.latest_unix_seconds);
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

    /// Hands back a [`PersistRequest`] this server gave its output, with
    /// what became of its record. Durable: the held request is answered now
    /// (a challenge, or a denial when the server is full), after the checks
    /// any request gets; a failure is reported through
    /// [`Output::dropped`] as for a datagram. Failed: the token's next
    /// request asks again. A request from an earlier run, for a token no
    /// longer pending (expired, or already answered), or for a server not
    /// running, is ignored.
    pub fn token_persisted<O: Output<ServerEvent>>(
        &mut self,
        now: Instant,
        request: PersistRequest,
        outcome: PersistOutcome,
        out: &mut O,
    ) {
        if !self.running || request.run != self.run {
            return;
        }
        let hasher = self.hasher;
        let mut tables = self.storage.tables();
        let token = &request.token;
        let Some(entry) = tables.find_token(&hasher, &token.mac) else {
            return;
        };
        if tables.pending_record(entry, &token.address) != Some(Record::Asked) {
            return;
        }
        if outcome == PersistOutcome::Failed {
            tables.set_pending_record(entry, Record::Unasked);
            return;
        }
        tables.set_pending_record(entry, Record::Durable);
        self.time = now;
        let admission = admission(&request);
        let answered = self
            .refuse_connected(admission.from, admission.client_id)
            .and_then(|()| self.answer_request(now, &admission, entry, out));
        if let Err(reason) = answered {
            let dropped = DroppedDatagram::new(token.address, Some(REQUEST_PREFIX), reason);
            self.stats.report_drop(out, dropped);
        }
    }

    /// The request to hand to [`Output::persist_used_token`] for a new
    /// token of this run.
    pub(super) fn persist_request(
        &self,
        request: &ConnectionRequest,
        from: SocketAddr,
    ) -> PersistRequest {
        let token = &request.token;
        PersistRequest {
            token: UsedToken {
                mac: request.mac,
                address: from,
                expire_timestamp: request.expire_timestamp,
            },
            run: self.run,
            client_id: token.client_id,
            timeout_seconds: token.timeout_seconds,
            client_to_server_key: token.client_to_server_key.clone(),
            server_to_client_key: token.server_to_client_key.clone(),
            user_data: token.user_data,
        }
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

    /// Whether the server was started with a restored history, and so has
    /// its output make each new token durable before answering it.
    pub fn persists_token_history(&self) -> bool {
        self.persisting
    }
}
