//! [`ReconnectingClient`] (wasm32 only): a page's client that, when its
//! connection ends (the server restarted, timed it out, the tab slept),
//! asks its token source for a fresh token and connects again
//! ([`BrowserClient::connect_any`]: WebTransport, else the WebSocket),
//! with netcode-proto's [`Backoff`] between attempts, reporting each one.
//! Every attempt fetches its own token: a token is used once.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::time::Duration;

use netcode_proto::backoff::Backoff;
use netcode_proto::client::ClientState;
use wasm_bindgen_futures::{JsFuture, spawn_local};

use crate::client::{BrowserClient, Endpoints};
use crate::web;

/// What a token source hands over for one attempt: where to connect, and
/// a fresh connect token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ticket {
    /// The server's doors.
    pub endpoints: Endpoints,
    /// The 2048-byte connect token.
    pub connect_token: Vec<u8>,
}

/// A token source's answer, on its way.
pub type TicketFuture = Pin<Box<dyn Future<Output = Result<Ticket, String>>>>;

/// What a [`ReconnectingClient`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReconnectEvent {
    /// The connection (or an attempt) ended in `state`; the next attempt
    /// comes after `retry_in`.
    Lost {
        /// The state it ended in.
        state: ClientState,
        /// The wait before the next attempt.
        retry_in: Duration,
    },
    /// Attempt `attempt` is asking for a token and opening a session.
    Attempt {
        /// Its number since the connection was last up (1, 2, ...).
        attempt: u32,
    },
    /// Attempt `attempt` failed before connecting: no token, or no session.
    Failed {
        /// Its number.
        attempt: u32,
        /// Why.
        error: String,
    },
    /// Connected, after `attempts` attempts.
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

impl fmt::Display for ReconnectEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Lost { state, retry_in } => write!(
                f,
                "connection ended ({}); next attempt in {} ms",
                state.name(),
                retry_in.as_millis()
            ),
            Self::Attempt { attempt } => write!(f, "attempt {attempt}: a fresh token, connecting"),
            Self::Failed { attempt, error } => write!(f, "attempt {attempt} failed: {error}"),
            Self::Connected { attempts } => write!(f, "connected after {attempts} attempt(s)"),
            Self::GaveUp { attempts } => write!(f, "gave up after {attempts} attempt(s)"),
        }
    }
}

/// Events kept at most; older ones are dropped first.
const EVENTS: usize = 32;

/// What the client and its attempt in flight share.
struct State {
    client: Option<BrowserClient>,
    fetch: Box<dyn FnMut() -> TicketFuture>,
    backoff: Backoff,
    attempts: u32,
    /// An attempt is on its way (waiting, fetching or opening).
    in_flight: bool,
    /// A first attempt was made.
    started: bool,
    /// Connected since the last attempt.
    was_connected: bool,
    stopped: bool,
    events: VecDeque<ReconnectEvent>,
}

impl State {
    fn push(&mut self, event: ReconnectEvent) {
        if self.events.len() == EVENTS {
            self.events.pop_front();
        }
        self.events.push_back(event);
    }
}

/// A page's netcode client that connects again, with a fresh token,
/// whenever its connection ends, until [`stop`](Self::stop).
///
/// Call [`update`](Self::update) once per frame: it drives the current
/// client and, once its connection has ended, starts the next attempt in
/// the background (after the backoff's wait, `fetch` is called for a
/// [`Ticket`], then [`BrowserClient::connect_any`]).
pub struct ReconnectingClient {
    state: Rc<RefCell<State>>,
}

impl fmt::Debug for ReconnectingClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReconnectingClient").finish_non_exhaustive()
    }
}

impl ReconnectingClient {
    /// A client whose tokens come from `fetch`; the first attempt starts
    /// at the first [`update`](Self::update).
    pub fn new(backoff: Backoff, fetch: impl FnMut() -> TicketFuture + 'static) -> Self {
        Self {
            state: Rc::new(RefCell::new(State {
                client: None,
                fetch: Box::new(fetch),
                backoff,
                attempts: 0,
                in_flight: false,
                started: false,
                was_connected: false,
                stopped: false,
                events: VecDeque::new(),
            })),
        }
    }

    /// One turn: drives the current client; if its connection has ended
    /// (or there is none yet), starts the next attempt.
    pub fn update(&mut self) {
        let Ok(mut state) = self.state.try_borrow_mut() else {
            return;
        };
        if let Some(client) = state.client.as_mut() {
            client.update();
        }
        let current = state.client.as_ref().map(BrowserClient::state);
        if current == Some(ClientState::Connected) {
            if !state.was_connected {
                let attempts = state.attempts;
                state.push(ReconnectEvent::Connected { attempts });
            }
            state.was_connected = true;
            state.attempts = 0;
            return;
        }
        if current.is_some_and(ClientState::is_active) || state.in_flight || state.stopped {
            return;
        }
        let wait = if state.started {
            if state.backoff.exhausted(state.attempts) {
                state.stopped = true;
                let attempts = state.attempts;
                state.push(ReconnectEvent::GaveUp { attempts });
                return;
            }
            let random = (js_sys::Math::random() * f64::from(u32::MAX)) as u32;
            let retry_in = state.backoff.delay(state.attempts + 1, random);
            let ended = current.unwrap_or(ClientState::Disconnected);
            state.push(ReconnectEvent::Lost {
                state: ended,
                retry_in,
            });
            retry_in
        } else {
            Duration::ZERO
        };
        state.started = true;
        state.was_connected = false;
        state.in_flight = true;
        drop(state);
        spawn_local(attempt(Rc::clone(&self.state), wait));
    }

    /// The current client, while there is one.
    pub fn client(&self) -> Option<std::cell::RefMut<'_, BrowserClient>> {
        std::cell::RefMut::filter_map(self.state.try_borrow_mut().ok()?, |state| {
            state.client.as_mut()
        })
        .ok()
    }

    /// The current client's state ([`ClientState::Disconnected`] while
    /// there is none).
    pub fn state(&self) -> ClientState {
        self.client()
            .map_or(ClientState::Disconnected, |client| client.state())
    }

    /// Takes the oldest event.
    pub fn next_event(&mut self) -> Option<ReconnectEvent> {
        self.state.try_borrow_mut().ok()?.events.pop_front()
    }

    /// Attempts since the connection was last up.
    pub fn attempts(&self) -> u32 {
        self.state.try_borrow().map_or(0, |state| state.attempts)
    }

    /// Disconnects (the netcode way) and makes no more attempts; an
    /// attempt in flight is disconnected as soon as it connects.
    pub fn stop(&mut self) {
        if let Ok(mut state) = self.state.try_borrow_mut() {
            state.stopped = true;
            if let Some(client) = state.client.as_mut() {
                client.disconnect();
            }
        }
    }
}

/// One attempt: the wait, a ticket, a session; its outcome recorded.
async fn attempt(shared: Rc<RefCell<State>>, wait: Duration) {
    if !wait.is_zero() {
        let milliseconds = i32::try_from(wait.as_millis()).unwrap_or(i32::MAX);
        let _ = JsFuture::from(web::delay(milliseconds)).await;
    }
    let (number, ticket) = {
        let Ok(mut state) = shared.try_borrow_mut() else {
            return;
        };
        if state.stopped {
            state.in_flight = false;
            return;
        }
        state.attempts = state.attempts.saturating_add(1);
        let number = state.attempts;
        state.push(ReconnectEvent::Attempt { attempt: number });
        (number, (state.fetch)())
    };
    let outcome = match ticket.await {
        Ok(ticket) => BrowserClient::connect_any(&ticket.endpoints, &ticket.connect_token)
            .await
            .map_err(|e| e.to_string()),
        Err(e) => Err(format!("no token: {e}")),
    };
    let Ok(mut state) = shared.try_borrow_mut() else {
        return;
    };
    state.in_flight = false;
    match outcome {
        Ok(mut client) if state.stopped => client.disconnect(),
        // The ended client (if any) is dropped: its session closes.
        Ok(client) => state.client = Some(client),
        Err(error) => state.push(ReconnectEvent::Failed {
            attempt: number,
            error,
        }),
    }
}
