//! A netcode client on tokio sockets: netcode-std's client inside, the
//! driver's timer, and the async methods that drive it while they wait for
//! the connection, a payload or a state change (this file); the host's
//! methods that make sense under tokio, on the client itself (`host.rs`).

mod host;
mod reconnect;

pub use reconnect::Reconnecting;

use std::future::poll_fn;
use std::net::SocketAddr;
use std::task::{Context, Poll};
use std::time::Duration;

use netcode_std::ToAddress;
use netcode_std::{ClientConfig, ClientEvent, ClientState, CreateError, Family, ReceivedPacket};

use crate::driver::{self, Driven, Driver, now, poll_readable, poll_until};
use crate::socket::{TokioSocket, adopt};

/// A netcode client on tokio UDP sockets: [`netcode_std::Client`] on
/// [`TokioSocket`]s, driven by async methods on tokio's clock.
///
/// Its methods are those of the host that make sense under tokio, with the
/// C library's names: [`connect`](Self::connect), [`state`](Self::state),
/// [`send_packet`](Self::send_packet), [`receive_packet`](Self::receive_packet),
/// [`free_packet`](Self::free_packet), [`poll_event`](Self::poll_event),
/// [`disconnect`](Self::disconnect), [`batch`](Self::batch) and the rest
/// below. None takes a time (the client reads tokio's clock itself) and
/// nothing blocks.
///
/// The client moves while one of its async methods is awaited
/// ([`connected`](Self::connected), [`recv`](Self::recv),
/// [`next_event`](Self::next_event), [`turn`](Self::turn)); each sleeps
/// until the socket of the server's family is readable or the client next
/// has a packet to send or a timeout to check. It is `Send`, for spawning.
///
/// # Cancellation
///
/// Every async method is cancellation-safe, for the reason given on
/// [`Server`](crate::Server): a turn is done within one poll, and a
/// payload or event leaves its queue only in the poll that returns it.
///
/// # Runtime
///
/// As for [`Server`](crate::Server): made inside a tokio runtime with I/O
/// and timers enabled; outside any runtime, construction fails with
/// [`CreateError::Register`].
#[derive(Debug)]
pub struct Client {
    inner: netcode_std::Client<TokioSocket>,
    driver: Driver,
}

impl Client {
    /// A disconnected client with one socket bound to `address`, for
    /// example `"0.0.0.0"` (any interface, ephemeral port); it reaches
    /// servers of that family only (see [`new_dual`](Self::new_dual)).
    pub async fn new(address: impl ToAddress) -> Result<Self, CreateError> {
        Self::with_config(address, ClientConfig::default()).await
    }

    /// A disconnected client with an IPv4 and an IPv6 socket, bound to the
    /// two addresses (in either order), such as `("0.0.0.0", "::")`.
    pub async fn new_dual(
        address: impl ToAddress,
        address2: impl ToAddress,
    ) -> Result<Self, CreateError> {
        Self::dual_with_config(address, address2, ClientConfig::default()).await
    }

    /// [`new`](Self::new) with socket options.
    pub async fn with_config(
        address: impl ToAddress,
        config: ClientConfig,
    ) -> Result<Self, CreateError> {
        let inner = netcode_std::Client::bind_with(address, None::<SocketAddr>, config, adopt)?;
        Ok(Self::from_host(inner))
    }

    /// [`new_dual`](Self::new_dual) with socket options.
    pub async fn dual_with_config(
        address: impl ToAddress,
        address2: impl ToAddress,
        config: ClientConfig,
    ) -> Result<Self, CreateError> {
        let inner = netcode_std::Client::bind_with(address, Some(address2), config, adopt)?;
        Ok(Self::from_host(inner))
    }

    fn from_host(inner: netcode_std::Client<TokioSocket>) -> Self {
        Self {
            inner,
            driver: Driver::new(),
        }
    }

    /// Reads what waits on the socket of the server's family, then sends
    /// what is due and applies token expiry and timeouts, now on tokio's
    /// clock: `netcode_std::Client::update`. Only datagrams the runtime's
    /// reactor has seen arrive are read.
    pub fn update(&mut self) {
        self.inner.update(now());
    }

    /// Reads and handles what waits on the socket of the server's family,
    /// without sending or applying timeouts.
    pub fn drain_socket(&mut self) {
        self.inner.drain_socket(now());
    }

    /// How long from now until the client next needs an
    /// [`update`](Self::update) (`None` while idle).
    pub fn poll_timeout(&self) -> Option<Duration> {
        self.inner.poll_timeout(now())
    }

    /// The socket the client reads: its server's family's, unless it has
    /// no server or is a loopback client.
    fn server_socket(&self) -> Option<&TokioSocket> {
        if self.inner.loopback() {
            return None;
        }
        let family = Family::of(&self.inner.server_address()?);
        self.inner.socket(family)
    }

    /// One turn of the driver, as a poll: `Ready` once it has drained the
    /// server's socket (when the reactor reports it readable) and, when the
    /// client's next deadline has come, updated the client; `Pending` with
    /// the task's waker registered otherwise. An idle client (disconnected,
    /// failed, or loopback) has nothing to wait for and stays `Pending`.
    pub fn poll_turn(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        driver::poll_turn(self, cx)
    }

    /// Sleeps until the server's socket is readable or the client's next
    /// deadline, then handles what arrived and sends what is due. Never
    /// completes on an idle client (check [`state`](netcode_std::Client::state)
    /// first). Cancellation-safe.
    pub async fn turn(&mut self) {
        poll_fn(|cx| self.poll_turn(cx)).await;
    }

    /// Drives the client until it is connected (`Ok`), or until its
    /// attempt ends (`Err` with the state it ended in: denied, timed out,
    /// token expired or invalid, or disconnected). Call after
    /// [`connect`](netcode_std::Client::connect). Cancellation-safe.
    pub async fn connected(&mut self) -> Result<(), ClientState> {
        poll_fn(|cx| {
            poll_until(self, cx, Self::poll_turn, |c| match c.inner.state() {
                ClientState::Connected => Some(Ok(())),
                state if !state.is_active() => Some(Err(state)),
                _ => None,
            })
        })
        .await
    }

    /// The next payload from the server, driving the client until one
    /// arrives; `None` once the client is idle with none queued (the
    /// connection ended or never started: [`state`](netcode_std::Client::state)
    /// says why). Cancellation-safe. A loopback client receives only what
    /// `process_loopback_packet` delivers: with nothing queued, this waits
    /// forever.
    pub async fn recv(&mut self) -> Option<ReceivedPacket> {
        poll_fn(|cx| {
            poll_until(self, cx, Self::poll_turn, |c| {
                match c.inner.receive_packet() {
                    Some(packet) => Some(Some(packet)),
                    None if !c.inner.state().is_active() => Some(None),
                    None => None,
                }
            })
        })
        .await
    }

    /// The next state change, driving the client until one happens; `None`
    /// once the client is idle with none queued. Cancellation-safe.
    pub async fn next_event(&mut self) -> Option<ClientEvent> {
        poll_fn(|cx| {
            poll_until(self, cx, Self::poll_turn, |c| match c.inner.poll_event() {
                Some(event) => Some(Some(event)),
                None if !c.inner.state().is_active() => Some(None),
                None => None,
            })
        })
        .await
    }

    /// The netcode-std client inside, with its own time-taking methods.
    pub fn get_ref(&self) -> &netcode_std::Client<TokioSocket> {
        &self.inner
    }

    /// The netcode-std client inside, mutably. Times passed to its methods
    /// should be tokio's instants (`tokio::time::Instant::now().into_std()`),
    /// as this client passes them.
    pub fn get_mut(&mut self) -> &mut netcode_std::Client<TokioSocket> {
        &mut self.inner
    }

    /// The netcode-std client inside, to drive by hand from here on.
    pub fn into_inner(self) -> netcode_std::Client<TokioSocket> {
        self.inner
    }
}

impl Driven for Client {
    fn driver(&mut self) -> &mut Driver {
        &mut self.driver
    }

    fn drain_readable(&mut self, cx: &mut Context<'_>) -> bool {
        let readable = self.server_socket().is_some_and(|s| poll_readable(s, cx));
        if readable {
            self.drain_socket();
        }
        readable
    }

    fn timeout(&self) -> Option<Duration> {
        self.poll_timeout()
    }

    fn update_now(&mut self) {
        self.update();
    }
}
