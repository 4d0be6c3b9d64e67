//! A netcode server on tokio sockets: netcode-std's server inside, the
//! driver's timer, and the async methods that drive it while they wait for
//! a payload or an event (this file); the host's methods that make sense
//! under tokio, on the server itself (`host.rs`).

mod host;

use std::future::poll_fn;
use std::net::SocketAddr;
use std::task::{Context, Poll};
use std::time::Duration;

use netcode_std::{CreateError, Family, ReceivedPacket, ServerConfig, ServerEvent, ToAddress};

use crate::driver::{self, Driven, Driver, RelayReady, now, poll_readable, poll_until};
use crate::socket::{TokioSocket, adopt};

/// What [`Server::next`] returns: an event, or a payload with the slot of
/// the client that sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Incoming {
    /// A client connected or disconnected.
    Event(ServerEvent),
    /// A payload from the client in slot `client_index`.
    Payload {
        /// The sender's slot.
        client_index: usize,
        /// The payload; give it back with `free_packet` to reuse its buffer.
        packet: ReceivedPacket,
    },
}

/// A netcode dedicated server on tokio UDP sockets: [`netcode_std::Server`]
/// on [`TokioSocket`]s, driven by async methods on tokio's clock.
///
/// Its methods are those of the host that make sense under tokio, with
/// the C library's names: [`start`](Self::start) (async: it waits out the
/// restart rule's second on tokio's timer), [`send_packet`](Self::send_packet),
/// [`receive_packet`](Self::receive_packet), [`free_packet`](Self::free_packet),
/// [`poll_event`](Self::poll_event), [`batch`](Self::batch),
/// [`disconnect_client`](Self::disconnect_client), [`stats`](Self::stats) and
/// the rest below. None takes a time: the server reads tokio's clock
/// itself, and hands the host instants. Nothing blocks: there is no `wait`
/// (the drivers sleep on tokio's reactor and timer instead).
///
/// ```compile_fail
/// # fn f(server: &mut netcode_tokio::Server) {
/// server.wait(std::time::Duration::from_millis(16)); // blocking: not here
/// # }
/// ```
///
/// ```compile_fail
/// # fn f(server: &mut netcode_tokio::Server) {
/// server.update(1.5); // no caller's clock: tokio's
/// # }
/// ```
///
/// The server has no task of its own: it moves while one of its async
/// methods is awaited ([`turn`](Self::turn), [`recv`](Self::recv),
/// [`next_event`](Self::next_event), [`next`](Self::next)), each of which
/// sleeps until a socket is readable or the protocol's next deadline (a
/// keep-alive, a timeout) and does what is due. It is `Send`, so it can be
/// moved into a spawned task; it is not `Sync`-shared: one task owns it.
///
/// # Cancellation
///
/// Every async method is cancellation-safe: a turn's work (reading the
/// sockets, handling datagrams, sending keep-alives) is done within one
/// poll of the future, and what it produces waits in the server's queues;
/// a payload or event is taken from its queue only in the poll that
/// returns it. A future dropped before completion (a `select!` branch that
/// lost, a `timeout` that fired) has taken nothing.
///
/// # Runtime
///
/// It must be made inside a tokio runtime with I/O and timers enabled
/// (`#[tokio::main]`, or a `Builder` with `enable_all`); its sockets belong
/// to that runtime's reactor. Made outside any runtime, construction fails
/// with [`CreateError::Register`]; a runtime without I/O or timers makes
/// tokio panic, as for any tokio socket or timer.
#[derive(Debug)]
pub struct Server {
    inner: netcode_std::Server<TokioSocket>,
    driver: Driver,
    /// The readiness of an attached relay of virtual peers.
    relay: Option<RelayReady>,
}

impl Server {
    /// A stopped server on one public address, for example
    /// `"127.0.0.1:40000"`, its socket set up as
    /// [`netcode_std::Server::new`] sets it up (the unspecified address at
    /// the public port unless the config binds exactly; port 0 binds an
    /// ephemeral port) and registered with the current runtime.
    pub async fn new(address: impl ToAddress, config: ServerConfig) -> Result<Self, CreateError> {
        let inner = netcode_std::Server::bind_with(address, None::<SocketAddr>, config, adopt)?;
        Ok(Self::from_host(inner))
    }

    /// A stopped dual-stack server: one IPv4 and one IPv6 public address
    /// (in either order), one socket for each, as
    /// [`netcode_std::Server::new_dual`].
    pub async fn new_dual(
        address: impl ToAddress,
        address2: impl ToAddress,
        config: ServerConfig,
    ) -> Result<Self, CreateError> {
        let inner = netcode_std::Server::bind_with(address, Some(address2), config, adopt)?;
        Ok(Self::from_host(inner))
    }

    /// Opens `max_clients` slots, as [`netcode_std::Server::start`], then
    /// sleeps on tokio's timer until the second the restart rule counts
    /// from is over (up to a second), so that any token issued after this
    /// returns is admitted.
    pub async fn start(&mut self, max_clients: usize) -> Result<(), netcode_std::ServerError> {
        let admitted_from = self.inner.start_nowait(max_clients)?;
        let admitted_at = Duration::from_secs(admitted_from);
        let unix = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        if let Some(wait) = admitted_at
            .checked_sub(unix)
            .filter(|wait| *wait <= Duration::from_secs(1))
        {
            tokio::time::sleep(wait + Duration::from_millis(1)).await;
        }
        Ok(())
    }

    fn from_host(inner: netcode_std::Server<TokioSocket>) -> Self {
        Self {
            inner,
            driver: Driver::new(),
            relay: None,
        }
    }

    /// Attaches `relay`, a transport of virtual peers (a WebTransport
    /// endpoint, for example), as [`netcode_std::Server::attach_relay`]
    /// does; `ready` is notified whenever datagrams wait in it, and wakes
    /// the driver to read them.
    pub fn attach_relay(
        &mut self,
        relay: impl netcode_std::transport::Socket + Send + Sync + 'static,
        ready: std::sync::Arc<tokio::sync::Notify>,
    ) {
        self.inner.attach_relay(relay);
        self.relay = Some(RelayReady::new(ready));
    }

    /// Reads every datagram waiting on the sockets, then sends due
    /// keep-alives and times out silent clients, now on tokio's clock:
    /// `netcode_std::Server::update`. Only datagrams the runtime's reactor
    /// has seen arrive are read, so call it from a task that yields to the
    /// runtime between calls.
    pub fn update(&mut self) {
        self.inner.update(now());
    }

    /// Reads and handles the datagrams waiting on the socket of `family`,
    /// without sending keep-alives or applying timeouts.
    pub fn drain_socket(&mut self, family: Family) {
        self.inner.drain_socket(now(), family);
    }

    /// How long from now until the server next needs an
    /// [`update`](Self::update) (`None`: not until a datagram arrives).
    pub fn poll_timeout(&self) -> Option<Duration> {
        self.inner.poll_timeout(now())
    }

    /// One turn of the driver, as a poll: `Ready` once it has drained the
    /// sockets the reactor reports readable and, when the protocol's
    /// deadline has come, updated the server; `Pending` (with the task's
    /// waker registered with the sockets and the timer) when nothing is
    /// due. For hand-written futures and streams; [`turn`](Self::turn) is
    /// its async form.
    pub fn poll_turn(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        driver::poll_turn(self, cx)
    }

    /// Sleeps until a socket is readable or the protocol's next deadline,
    /// then handles what arrived and sends what is due. With no clients
    /// and no datagrams, it sleeps until a datagram arrives. Afterwards
    /// read the queues (`poll_event`, `receive_packet`), ideally inside one
    /// `batch()` so the replies leave together. Cancellation-safe.
    pub async fn turn(&mut self) {
        poll_fn(|cx| self.poll_turn(cx)).await;
    }

    /// The next payload from any client, with its slot, driving the server
    /// until one arrives. Clients take turns, a payload each
    /// ([`receive_any`](Self::receive_any)): only slots holding payloads are
    /// visited. Events wait in their queue for
    /// [`next_event`](Self::next_event) (at most 4096, then the oldest are
    /// dropped): use [`next`](Self::next) to get both. Cancellation-safe.
    pub async fn recv(&mut self) -> (usize, ReceivedPacket) {
        poll_fn(|cx| poll_until(self, cx, Self::poll_turn, Self::receive_any)).await
    }

    /// The next connect or disconnect event, driving the server until one
    /// happens. Payloads wait in their queues (at most 256 per client, then
    /// the newest are dropped). Cancellation-safe.
    pub async fn next_event(&mut self) -> ServerEvent {
        poll_fn(|cx| poll_until(self, cx, Self::poll_turn, |s| s.inner.poll_event())).await
    }

    /// The next event or payload, events first (a client's connect comes
    /// before its payloads), driving the server until there is one.
    /// Cancellation-safe.
    pub async fn next(&mut self) -> Incoming {
        poll_fn(|cx| {
            poll_until(self, cx, Self::poll_turn, |s| match s.inner.poll_event() {
                Some(event) => Some(Incoming::Event(event)),
                None => s
                    .receive_any()
                    .map(|(client_index, packet)| Incoming::Payload {
                        client_index,
                        packet,
                    }),
            })
        })
        .await
    }

    /// The netcode-std server inside, with its own time-taking methods.
    pub fn get_ref(&self) -> &netcode_std::Server<TokioSocket> {
        &self.inner
    }

    /// The netcode-std server inside, mutably. Times passed to its methods
    /// should be tokio's instants (`tokio::time::Instant::now().into_std()`),
    /// as this server passes them.
    pub fn get_mut(&mut self) -> &mut netcode_std::Server<TokioSocket> {
        &mut self.inner
    }

    /// The netcode-std server inside, to drive by hand from here on.
    pub fn into_inner(self) -> netcode_std::Server<TokioSocket> {
        self.inner
    }
}

impl Driven for Server {
    fn driver(&mut self) -> &mut Driver {
        &mut self.driver
    }

    fn drain_readable(&mut self, cx: &mut Context<'_>) -> bool {
        let mut drained = false;
        for family in [Family::V4, Family::V6] {
            let readable = self
                .inner
                .socket(family)
                .is_some_and(|s| poll_readable(s, cx));
            if readable {
                self.drain_socket(family);
                drained = true;
            }
        }
        if let Some(relay) = &mut self.relay
            && relay.poll_ready(cx)
        {
            self.inner.drain_relay(now());
            drained = true;
        }
        drained
    }

    fn timeout(&self) -> Option<Duration> {
        self.poll_timeout()
    }

    fn update_now(&mut self) {
        self.update();
    }
}
