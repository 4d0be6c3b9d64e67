//! [`Reconnecting`]: the tokio client that, when its connection ends,
//! fetches a fresh connect token (an async token source, such as an HTTP
//! request to the `matcher`) and connects again, with netcode-std's
//! [`Backoff`] between attempts and its [`ReconnectEvent`]s reporting
//! each one. A token is used once: every attempt fetches its own.

use std::collections::VecDeque;
use std::fmt::Display;
use std::future::Future;

use netcode_std::{
    Backoff, CONNECT_TOKEN_BYTES, ClientState, ReceivedPacket, ReconnectEvent, backoff_delay,
};

use super::Client;

/// Events kept at most between two [`Reconnecting::next_event`] calls;
/// older ones are dropped first.
const EVENTS: usize = 16;

/// A tokio [`Client`] that connects again, with a fresh token from
/// `fetch`, whenever its connection ends, until [`stop`](Self::stop) or
/// [`Backoff::max_attempts`].
///
/// [`connect`](Self::connect) makes the first connection;
/// [`recv`](Self::recv) hands out payloads and, when the connection ends,
/// reconnects before going on. Send with [`client_mut`](Self::client_mut).
pub struct Reconnecting<F> {
    client: Client,
    fetch: F,
    backoff: Backoff,
    /// Attempts since the connection was last up.
    attempts: u32,
    stopped: bool,
    events: VecDeque<ReconnectEvent>,
}

impl<F> std::fmt::Debug for Reconnecting<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reconnecting")
            .field("client", &self.client)
            .field("attempts", &self.attempts)
            .field("stopped", &self.stopped)
            .finish_non_exhaustive()
    }
}

impl<F, Fut, E> Reconnecting<F>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<[u8; CONNECT_TOKEN_BYTES], E>>,
    E: Display,
{
    /// Wraps `client` (not connecting yet).
    pub fn new(client: Client, backoff: Backoff, fetch: F) -> Self {
        Self {
            client,
            fetch,
            backoff,
            attempts: 0,
            stopped: false,
            events: VecDeque::new(),
        }
    }

    /// Connects: fetches a token and connects, and after a failed attempt
    /// (no token, refused, timed out, denied) waits the backoff and tries
    /// again, until connected (`Ok`) or out of attempts (`Err` with the
    /// state the last one ended in). Not cancellation-safe: an attempt in
    /// progress is abandoned, and the next call starts a new one.
    pub async fn connect(&mut self) -> Result<(), ClientState> {
        self.attempt_until_connected(false).await
    }

    /// Attempts until connected; the first one after the backoff's wait
    /// if `wait` (a connection that just ended).
    async fn attempt_until_connected(&mut self, mut wait: bool) -> Result<(), ClientState> {
        loop {
            if self.stopped {
                return Err(self.client.state());
            }
            if wait {
                if self.backoff.exhausted(self.attempts) {
                    self.stopped = true;
                    self.push(ReconnectEvent::GaveUp {
                        attempts: self.attempts,
                    });
                    return Err(self.client.state());
                }
                let retry_in = backoff_delay(&self.backoff, self.attempts + 1);
                self.push(ReconnectEvent::Lost {
                    state: self.client.state(),
                    retry_in,
                });
                tokio::time::sleep(retry_in).await;
            }
            wait = true;
            self.attempts = self.attempts.saturating_add(1);
            let attempt = self.attempts;
            let token = match (self.fetch)().await {
                Ok(token) => token,
                Err(e) => {
                    self.push(ReconnectEvent::FetchFailed {
                        attempt,
                        error: e.to_string(),
                    });
                    continue;
                }
            };
            if let Err(e) = self.client.connect(&token) {
                self.push(ReconnectEvent::FetchFailed {
                    attempt,
                    error: format!("the token was refused: {e}"),
                });
                continue;
            }
            self.push(ReconnectEvent::Attempt { attempt });
            if self.client.connected().await.is_ok() {
                self.push(ReconnectEvent::Connected { attempts: attempt });
                self.attempts = 0;
                return Ok(());
            }
        }
    }

    /// The next payload from the server. When the connection ends, it
    /// reconnects ([`connect`](Self::connect)) and goes on; `None` once
    /// stopped or out of attempts.
    pub async fn recv(&mut self) -> Option<ReceivedPacket> {
        loop {
            if let Some(packet) = self.client.recv().await {
                return Some(packet);
            }
            if self.stopped {
                return None;
            }
            // The connection ended (or never began): the first retry waits
            // the backoff's first delay.
            if self.attempt_until_connected(true).await.is_err() {
                return None;
            }
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
        if self.client.state().is_active() {
            self.client.disconnect();
        }
    }

    /// The client underneath.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The client underneath, to send with.
    pub fn client_mut(&mut self) -> &mut Client {
        &mut self.client
    }
}
