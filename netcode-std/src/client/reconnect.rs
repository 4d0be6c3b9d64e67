//! [`Reconnecting`]: a client that, when its connection ends (the server
//! restarted, timed it out, was full, or the token expired), fetches a
//! fresh connect token and connects again, with bounded exponential
//! backoff and jitter, reporting each attempt. A token is used once: each
//! attempt fetches its own (STANDARD.md, *Connect Token*: a server admits
//! a token's client once, and a restarted server refuses every token it
//! may have seen).

use std::time::Duration;

use netcode_proto::Instant;
pub use netcode_proto::backoff::Backoff;

use super::Client;
use crate::random::random_bytes;
use crate::time::HostTime;
use std::net::UdpSocket;

use crate::transport::Socket;
use crate::{CONNECT_TOKEN_BYTES, ClientState};

/// The wait before attempt `attempt` of `backoff` ([`Backoff::delay`]),
/// jittered with the system's randomness (without it, the bound itself).
pub fn backoff_delay(backoff: &Backoff, attempt: u32) -> Duration {
    let mut random = [0u8; 4];
    let jitter = match random_bytes(&mut random) {
        Ok(()) => u32::from_le_bytes(random),
        Err(_) => u32::MAX,
    };
    backoff.delay(attempt, jitter)
}

/// What [`Reconnecting`] did, for the game to show or log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReconnectEvent {
    /// The connection (or the attempt) ended in `state`; the next attempt
    /// comes after `retry_in`.
    Lost {
        /// The state it ended in.
        state: ClientState,
        /// The wait before the next attempt.
        retry_in: Duration,
    },
    /// Attempt `attempt` fetched a fresh token and is connecting.
    Attempt {
        /// The attempt's number since the connection was lost (1, 2, ...).
        attempt: u32,
    },
    /// Attempt `attempt` could not fetch a token: `error`.
    FetchFailed {
        /// The attempt's number.
        attempt: u32,
        /// Why, as the token source said it.
        error: String,
    },
    /// Connected again, after `attempts` attempts.
    Connected {
        /// Attempts it took.
        attempts: u32,
    },
    /// [`Backoff::max_attempts`] attempts failed: no more are made.
    GaveUp {
        /// Attempts made.
        attempts: u32,
    },
}

/// Events kept at most between two [`Reconnecting::next_event`] calls;
/// older ones are dropped first.
const EVENTS: usize = 16;

/// A [`Client`] that connects again, with a fresh token, whenever its
/// connection ends, until [`stop`](Self::stop).
///
/// `fetch` gets a fresh 2048-byte connect token (from a token service
/// such as the `matcher`); it is called from [`update`](Self::update) on
/// the caller's thread, once per attempt, so it should be quick or bounded
/// (an HTTP request with a timeout). The client underneath is the
/// caller's to send and receive with ([`client`](Self::client),
/// [`client_mut`](Self::client_mut)).
pub struct Reconnecting<F, S: Socket = UdpSocket> {
    client: Client<S>,
    fetch: F,
    backoff: Backoff,
    /// Attempts since the last connection (0 while connected).
    attempts: u32,
    /// When the next attempt is due, while one is.
    next_attempt: Option<Instant>,
    /// Whether the client has been connected since the last attempt.
    was_connected: bool,
    /// Whether a first connection was attempted (here, or by the caller
    /// before wrapping the client).
    started: bool,
    stopped: bool,
    events: std::collections::VecDeque<ReconnectEvent>,
}

impl<F, S: Socket> std::fmt::Debug for Reconnecting<F, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reconnecting")
            .field("state", &self.client.state())
            .field("attempts", &self.attempts)
            .field("next_attempt", &self.next_attempt)
            .field("stopped", &self.stopped)
            .finish_non_exhaustive()
    }
}

impl<F, E, S> Reconnecting<F, S>
where
    F: FnMut() -> Result<[u8; CONNECT_TOKEN_BYTES], E>,
    E: std::fmt::Display,
    S: Socket,
{
    /// Wraps `client`. If it is not connecting yet, the first attempt is
    /// made at the first [`update`](Self::update); if it is (the caller
    /// connected it, to report a first failure its own way), attempts
    /// start when that connection ends.
    pub fn new(client: Client<S>, backoff: Backoff, fetch: F) -> Self {
        let started = client.state().is_active();
        Self {
            started,
            client,
            fetch,
            backoff,
            attempts: 0,
            next_attempt: None,
            was_connected: false,
            stopped: false,
            events: std::collections::VecDeque::new(),
        }
    }

    /// Advances the client to `time` (as [`Client::update`]), then, if its
    /// connection has ended, schedules the next attempt, or makes it when
    /// it is due: a fresh token from `fetch`, and `connect`.
    pub fn update(&mut self, time: impl Into<HostTime>) {
        self.client.update(time);
        if self.stopped {
            return;
        }
        let now = self.client.clock.now;
        let state = self.client.state();
        if state == ClientState::Connected {
            if !self.was_connected {
                self.push(ReconnectEvent::Connected {
                    attempts: self.attempts,
                });
            }
            self.was_connected = true;
            self.attempts = 0;
            self.next_attempt = None;
            return;
        }
        if state.is_active() {
            return;
        }
        let due = match self.next_attempt {
            // The first attempt of all is made at once.
            None if !self.started => now,
            None => {
                if self.backoff.exhausted(self.attempts) {
                    self.stopped = true;
                    self.push(ReconnectEvent::GaveUp {
                        attempts: self.attempts,
                    });
                    return;
                }
                let retry_in = backoff_delay(&self.backoff, self.attempts + 1);
                self.push(ReconnectEvent::Lost { state, retry_in });
                self.was_connected = false;
                now + retry_in
            }
            Some(due) => due,
        };
        self.next_attempt = Some(due);
        if now < due {
            return;
        }
        self.next_attempt = None;
        self.started = true;
        self.attempts = self.attempts.saturating_add(1);
        let attempt = self.attempts;
        match (self.fetch)() {
            Ok(token) => {
                if let Err(e) = self.client.connect(&token) {
                    self.push(ReconnectEvent::FetchFailed {
                        attempt,
                        error: format!("the token was refused: {e}"),
                    });
                } else {
                    self.push(ReconnectEvent::Attempt { attempt });
                }
            }
            Err(e) => self.push(ReconnectEvent::FetchFailed {
                attempt,
                error: e.to_string(),
            }),
        }
    }

    fn push(&mut self, event: ReconnectEvent) {
        if self.events.len() == EVENTS {
            self.events.pop_front();
        }
        self.events.push_back(event);
    }

    /// Takes the oldest event.
    pub fn next_event(&mut self) -> Option<ReconnectEvent> {
        self.events.pop_front()
    }

    /// Disconnects (the netcode way) and makes no more attempts.
    pub fn stop(&mut self) {
        self.stopped = true;
        self.next_attempt = None;
        if self.client.state().is_active() {
            self.client.disconnect();
        }
    }

    /// Whether it has stopped ([`stop`](Self::stop), or given up).
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// Attempts made since the connection was last up.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The client underneath.
    pub fn client(&self) -> &Client<S> {
        &self.client
    }

    /// The client underneath, to send and receive with.
    pub fn client_mut(&mut self) -> &mut Client<S> {
        &mut self.client
    }
}
