//! Every timing rule of the client and server, each written once: how often
//! they send, when a connection or a handshake lapses, and how "now" is
//! compared with each deadline.
//!
//! STANDARD.md: *Client State Machine* (requests, responses and keep-alives
//! at 10 Hz, timeouts, token expiry), *Processing Connection Requests* (the
//! encryption mapping's expiry), *Connected Clients* (keep-alives, timeouts,
//! redundant disconnect packets) and *Nonce Reuse and Server Restarts* (the
//! maximum connect token lifetime). The comparisons follow the C reference
//! (BEHAVIOR.md sections 3.3, 3.4, 4.7, 4.10, 4.11 and 13.6).

use core::time::Duration;

use crate::time::Instant;

/// How often connection requests, responses and keep-alives are sent: 10 Hz,
/// as in the reference.
pub const PACKET_SEND_INTERVAL: Duration = Duration::from_millis(100);

/// How many redundant disconnect packets a disconnect sends, as in the
/// reference.
pub const NUM_DISCONNECT_PACKETS: usize = 10;

/// The reference's default maximum connect token lifetime, in seconds: what
/// the restart rule assumes when a server's configuration says 0.
pub const DEFAULT_MAX_CONNECT_TOKEN_LIFETIME: u64 = 30;

/// The restart rule's floor: a connection request whose token expires
/// before this (unix seconds) is refused, for a server whose knowledge of
/// used tokens begins at unix second `since` (its start, or the start of
/// the durable history it restored) and whose backend issues tokens of at
/// most `lifetime` seconds.
///
/// STANDARD.md (*Nonce Reuse and Server Restarts*, "Reject connect tokens
/// that predate the server start") and the reference since 1.4.5 refuse a
/// token whose expiry is *earlier than* `since + lifetime`: a token minted
/// in the very second `since` passes. Unix seconds are whole, so a server
/// killed and restarted within one second cannot tell a token minted
/// before its start from one minted after it, and a token its predecessor
/// used in that second would be admitted again, repeating nonces under the
/// token's keys. This floor is one second later: a token passes only if
/// it was minted (by its expiry, assuming the full lifetime) strictly
/// after the second `since`, which no earlier run can have seen.
///
/// The cost: a full-lifetime token minted in the server's start second
/// (or, with a restored history, the second that history began) is
/// refused, and its client must fetch a new one; a token with a shorter
/// lifetime waits one second longer than under the standard's wording.
/// The rule assumes the backend's clock is not ahead of the server's; a
/// `lifetime` configured above the backend's real one buys that much
/// margin against skew.
pub(crate) fn restart_floor(since: u64, lifetime: u64) -> u64 {
    since.saturating_add(lifetime).saturating_add(1)
}

/// `base + delta`, saturating at the end of time.
pub(crate) fn after(base: Instant, delta: Duration) -> Instant {
    base.saturating_add(delta)
}

/// How a deadline is compared with "now". The reference is strict on the
/// client's send and timeout tests and on the mapping's expiry, inclusive
/// on the server's keep-alive and timeout tests and on the client's token
/// expiry (BEHAVIOR.md 13.6); each rule below names which, so the two sides
/// keep the reference's behaviour to the nanosecond.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Due {
    /// Due once now is past the deadline (`deadline < now`).
    After,
    /// Due once now reaches the deadline (`deadline <= now`).
    AtOrAfter,
}

impl Due {
    /// Whether something with this deadline is due at `now`.
    pub(crate) fn holds<T: Ord>(self, deadline: T, now: T) -> bool {
        match self {
            Self::After => deadline < now,
            Self::AtOrAfter => deadline <= now,
        }
    }

    /// The first time at which [`holds`](Self::holds) is true: one
    /// nanosecond past a strict deadline, the deadline itself otherwise.
    pub(crate) fn earliest(self, deadline: Instant) -> Instant {
        match self {
            Self::After => after(deadline, Duration::from_nanos(1)),
            Self::AtOrAfter => deadline,
        }
    }
}

/// The client sends its next request, response or keep-alive once the send
/// interval since its last packet has passed (strictly).
pub(crate) const CLIENT_SEND: Due = Due::After;
/// The client times out once its token's timeout since the last packet from
/// the server has passed (strictly).
pub(crate) const CLIENT_TIMEOUT: Due = Due::After;
/// The server sends a keep-alive once the send interval since its last
/// packet to that client is reached (inclusive).
pub(crate) const SERVER_KEEP_ALIVE: Due = Due::AtOrAfter;
/// The server times a client out once its timeout since the last packet
/// from it is reached (inclusive).
pub(crate) const SERVER_TIMEOUT: Due = Due::AtOrAfter;
/// An encryption mapping lapses once its silence timeout or its absolute
/// expiry has passed (strictly).
pub(crate) const MAPPING_EXPIRY: Due = Due::After;

/// When the send interval since `last_send` is over, for [`CLIENT_SEND`]
/// and [`SERVER_KEEP_ALIVE`].
pub(crate) fn next_send(last_send: Instant) -> Instant {
    after(last_send, PACKET_SEND_INTERVAL)
}

/// Whether a connection attempt that started at `start` has outlived its
/// connect token's `lifetime` at `now` (inclusive, and no elapsed time
/// before the start).
pub(crate) fn token_expired(start: Instant, lifetime: Duration, now: Instant) -> bool {
    now.saturating_duration_since(start) >= lifetime
}

/// The timeout a connect token carries, in seconds, and the two ways the
/// reference reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct TokenTimeout(i32);

impl TokenTimeout {
    /// The timeout of a token that says `seconds`.
    pub(crate) const fn new(seconds: i32) -> Self {
        Self(seconds)
    }

    /// Seconds of silence after which a connection (or a pending mapping)
    /// lapses, or `None`: zero or negative disables timeouts, as in the
    /// reference.
    pub(crate) fn silence_seconds(self) -> Option<u64> {
        u64::try_from(self.0).ok().filter(|s| *s > 0)
    }

    /// [`silence_seconds`](Self::silence_seconds) as a duration.
    pub(crate) fn silence(self) -> Option<Duration> {
        self.silence_seconds().map(Duration::from_secs)
    }

    /// Seconds a pending handshake's encryption mapping lives from when it
    /// was added, or `None` (never) for a negative timeout. A zero timeout
    /// lapses at once, so a handshake under it cannot complete, as in the
    /// reference (BEHAVIOR.md 4.7).
    pub(crate) fn handshake_seconds(self) -> Option<u64> {
        u64::try_from(self.0).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_restart_floor_refuses_tokens_minted_in_its_second() {
        // Started at second 1000 with 30 s tokens: a token minted in second
        // 1000 expires at 1030 and is refused; one minted at 1001 passes.
        let floor = restart_floor(1000, 30);
        assert!(1030 < floor && 1031 >= floor);
        assert_eq!(restart_floor(u64::MAX - 5, 30), u64::MAX);
    }

    #[test]
    fn strict_and_inclusive_deadlines() {
        let d = Instant::from_millis(100);
        let tick = Duration::from_nanos(1);
        assert!(!Due::After.holds(d, d));
        assert!(Due::After.holds(d, d + tick));
        assert!(Due::AtOrAfter.holds(d, d));
        assert!(!Due::AtOrAfter.holds(d, d - tick));
        for due in [Due::After, Due::AtOrAfter] {
            let first = due.earliest(d);
            assert!(due.holds(d, first) && !due.holds(d, first - tick));
        }
        assert_eq!(Due::After.earliest(Instant::MAX), Instant::MAX);
    }

    #[test]
    fn token_timeouts_as_the_reference_reads_them() {
        assert_eq!(TokenTimeout::new(-1).silence(), None);
        assert_eq!(TokenTimeout::new(0).silence(), None);
        assert_eq!(TokenTimeout::new(5).silence(), Some(Duration::from_secs(5)));
        assert_eq!(TokenTimeout::new(-1).handshake_seconds(), None);
        assert_eq!(TokenTimeout::new(0).handshake_seconds(), Some(0));
        assert_eq!(
            TokenTimeout::new(i32::MAX).silence_seconds(),
            Some(i32::MAX as u64)
        );
    }

    #[test]
    fn token_expiry_is_inclusive_and_never_before_the_start() {
        let s = Instant::from_secs(10);
        let l = Duration::from_secs(30);
        assert!(!token_expired(s, l, s + l - Duration::from_nanos(1)));
        assert!(token_expired(s, l, s + l));
        assert!(!token_expired(s, l, Instant::ZERO));
    }
}
