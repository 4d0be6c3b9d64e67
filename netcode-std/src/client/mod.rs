//! A netcode client on UDP sockets, with the C library's API: creation,
//! connecting and the clock that drives it (this file); payloads, events
//! and loopback mode ([`session`]); the core's output ([`io`]).
//!
//! Every protocol decision is made by the sans-IO
//! [`netcode_proto::client::Client`] inside; this type moves datagrams
//! between it and its socket in batches, keeps the time, and queues
//! received payloads and state changes for the application.

mod config;
mod io;
mod reconnect;
mod session;

pub use config::ClientConfig;
pub use reconnect::{Backoff, ReconnectEvent, Reconnecting, backoff_delay};

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use netcode_proto::ConnectToken;
use netcode_proto::Instant;
use netcode_proto::client::{Client as Core, ClientState};
use netcode_proto::stats::Stats;

use crate::address::ToAddress;
use crate::batch::{Batch, Batching};
use crate::clock::Clock;
use crate::error::{ConnectError, CreateError, Family};
use crate::link::{Inbox, Link, Outbox, ReadBudget};
use crate::logging::TARGET;
use crate::stats::TransportStats;
use crate::time::HostTime;
use crate::transport::{self, Socket, SocketOptions, Sockets};
use io::ClientIo;

/// Datagrams read in one update at most; the rest wait for the next one.
const MAX_RECEIVE_PER_UPDATE: usize = 1024;

/// Datagrams a client reads per batch: it hears from one server.
const RECEIVE_BATCH: usize = 8;

/// Datagrams a client holds before sending: a disconnect's ten fit.
const SEND_BATCH: usize = 16;

/// A netcode client on one UDP socket, or two (one per family).
///
/// Drive it as the C library's client: [`connect`](Self::connect) with a
/// token from the web backend, then [`update`](Self::update) once per frame
/// with the caller's clock, [`receive_packet`](Self::receive_packet) and
/// [`send_packet`](Self::send_packet) while
/// [`state`](Self::state) is [`ClientState::Connected`]. State changes are
/// also reported as events, drained with [`poll_event`](Self::poll_event).
///
/// It reads only the socket of its current server's address family, as the
/// reference does. Datagrams leave before the call that produced them
/// returns, or together at the end of a [`batch`](Self::batch).
///
/// ```no_run
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::time::{Duration, Instant};
/// use netcode_std::{Client, ClientState};
///
/// # let token = [0u8; 2048];
/// let mut client = Client::new_dual("0.0.0.0", "::")?;
/// client.connect(&token)?;
/// let epoch = Instant::now();
/// loop {
///     client.update(epoch.elapsed().as_secs_f64());
///     if client.state() == ClientState::Connected {
///         client.send_packet(b"hello")?;
///     }
///     while let Some(packet) = client.receive_packet() {
///         println!("{} bytes", packet.len());
///         client.free_packet(packet);
///     }
///     if client.state().code() <= 0 {
///         break;
///     }
///     client.wait(Duration::from_millis(16));
/// }
/// # Ok(()) }
/// ```
///
/// The type parameter is the socket type: [`std::net::UdpSocket`] unless a
/// transport such as `netcode-mio` builds the client with
/// [`bind_with`](Self::bind_with), or on sockets of its own with
/// [`with_sockets`](Self::with_sockets) (see [`transport`](crate::transport)).
#[derive(Debug)]
pub struct Client<S: Socket = UdpSocket> {
    core: Core,
    io: ClientIo<S>,
    inbox: Inbox,
    clock: Clock,
}

impl Client<UdpSocket> {
    /// A disconnected client with one socket bound to `address`, for
    /// example `"0.0.0.0"` (any interface, ephemeral port) or
    /// `"127.0.0.1:50000"`. It can reach servers of that address's family
    /// only; see [`new_dual`](Self::new_dual).
    pub fn new(address: impl ToAddress) -> Result<Self, CreateError> {
        Self::with_config(address, ClientConfig::default())
    }

    /// A disconnected client with an IPv4 and an IPv6 socket, bound to the
    /// two addresses (in either order), as the C client's
    /// `create_dual("0.0.0.0", "::")`.
    pub fn new_dual(
        address: impl ToAddress,
        address2: impl ToAddress,
    ) -> Result<Self, CreateError> {
        Self::dual_with_config(address, address2, ClientConfig::default())
    }

    /// [`new`](Self::new) with socket options.
    pub fn with_config(address: impl ToAddress, config: ClientConfig) -> Result<Self, CreateError> {
        Self::bind_with(address, None::<SocketAddr>, config, transport::keep_std)
    }

    /// [`new_dual`](Self::new_dual) with socket options.
    pub fn dual_with_config(
        address: impl ToAddress,
        address2: impl ToAddress,
        config: ClientConfig,
    ) -> Result<Self, CreateError> {
        Self::bind_with(address, Some(address2), config, transport::keep_std)
    }

    /// Blocks until a datagram from the server's family arrives or the
    /// client next has something to send or check (per the core's
    /// `next_deadline`), at most `max`. Returns whether a datagram is ready;
    /// call [`update`](Self::update) either way. While idle it just sleeps
    /// `max`.
    pub fn wait(&self, max: Duration) -> bool {
        let timeout = self
            .core
            .next_deadline()
            .map_or(max, |d| self.clock.until(d).min(max));
        let socket = self
            .server_family()
            .and_then(|f| self.io.link.sockets.get(f));
        transport::wait(socket, timeout)
    }
}

impl<S: Socket> Client<S> {
    /// A disconnected client with a socket bound to `address` (and, for
    /// two families, one bound to `address2`, of the other family),
    /// created and bound as [`Client::with_config`] and
    /// [`Client::dual_with_config`] do and then handed to `adopt` to become
    /// the transport's sockets (see [`transport`](crate::transport)). An
    /// error from `adopt` is [`CreateError::Register`].
    pub fn bind_with<A: ToAddress, B: ToAddress>(
        address: A,
        address2: Option<B>,
        config: ClientConfig,
        adopt: impl FnMut(Family, UdpSocket) -> std::io::Result<S>,
    ) -> Result<Self, CreateError> {
        let (first, second) = transport::parse_addresses(address, address2)?;
        let options = SocketOptions {
            buffer_bytes: config.socket_buffer_bytes,
            packet_tagging: config.packet_tagging,
        };
        let sockets = Sockets::bind(first, second, &options, adopt)?;
        Ok(Self::assemble(sockets))
    }

    /// A disconnected client whose sockets `make` returns, one for
    /// `address` (and, for two families, one for `address2`, of the other
    /// family), called with each address's family and the address itself,
    /// and nothing bound: for transports whose sockets are not the
    /// system's (a relay, a platform's peer-to-peer sockets, the C
    /// library's send and receive callbacks). Each socket's local address,
    /// and so [`local_addr`](Self::local_addr) and [`port`](Self::port), is
    /// the address it was made for. An error from `make` is
    /// [`CreateError::CreateSocket`].
    pub fn with_sockets<A: ToAddress, B: ToAddress>(
        address: A,
        address2: Option<B>,
        make: impl FnMut(Family, SocketAddr) -> std::io::Result<S>,
    ) -> Result<Self, CreateError> {
        let (first, second) = transport::parse_addresses(address, address2)?;
        let sockets = Sockets::adopt(first, second, make)?;
        Ok(Self::assemble(sockets))
    }

    /// A disconnected client on `sockets`.
    fn assemble(sockets: Sockets<S>) -> Self {
        Self {
            core: Core::new(),
            io: ClientIo::new(Link::new(sockets, Outbox::new(SEND_BATCH))),
            inbox: Inbox::new(RECEIVE_BATCH),
            clock: Clock::new(),
        }
    }

    /// Starts connecting with a connect token (2048 bytes) from the web
    /// backend. Disconnects first if connecting or connected.
    ///
    /// An unreadable token moves the client to
    /// [`ClientState::InvalidConnectToken`] and returns why. A token none
    /// of whose server addresses this client's sockets can reach (all
    /// IPv6 for an IPv4-only client, say) is refused with
    /// [`ConnectError::Unreachable`] and changes nothing. Otherwise the
    /// first connection request leaves at the next [`update`](Self::update);
    /// addresses of a family the client cannot reach are still tried in
    /// turn, and time out (the log says so).
    ///
    /// As in the C library, the attempt starts at the time of the last
    /// update (or of the first update, when there was none yet).
    pub fn connect(&mut self, connect_token: &[u8]) -> Result<(), ConnectError> {
        if let Ok(token) = ConnectToken::read(connect_token) {
            let families: heapless::Vec<Family, 2> = self.io.link.sockets.families().collect();
            let reachable = |a: &SocketAddr| families.contains(&Family::of(a));
            let unreachable = token.server_addresses.iter().filter(|a| !reachable(a));
            let unreachable = unreachable.count();
            if unreachable == token.server_addresses.len()
                && let [client] = families[..]
            {
                log::warn!(target: TARGET, "client: connect token refused: no {client} server address in it");
                return Err(ConnectError::Unreachable { client });
            }
            if unreachable > 0 {
                log::warn!(
                    target: TARGET,
                    "client: {unreachable} server address(es) of the connect token are of a family this client has no socket for; they will time out"
                );
            }
        }
        let result = self
            .core
            .connect(self.clock.now, connect_token, &mut self.io);
        self.io.servers.clear();
        for address in self.core.token_server_addresses() {
            let _ = self.io.servers.push(*address);
        }
        self.finish();
        result.map_err(ConnectError::Token)
    }

    /// Advances the client to `time`, the caller's clock: seconds as an
    /// `f64` (any monotonic clock; only differences matter, and bogus
    /// values are survived: see [`MAX_TIME_STEP`](crate::MAX_TIME_STEP)),
    /// or a `std::time::Instant` (see [`HostTime`]): reads and
    /// handles every datagram waiting on the socket of the server's family,
    /// then sends what is due and applies token expiry and timeouts.
    pub fn update(&mut self, time: impl Into<HostTime>) {
        let now = self.advance(time);
        self.receive(now, false);
        self.core.update(now, &mut self.io);
        self.finish();
    }

    /// Reads and handles the datagrams waiting on the socket of the
    /// server's family at the caller's `time` (in seconds, as for
    /// [`update`](Self::update)), without sending or applying timeouts:
    /// what an event loop calls when that socket becomes readable. Reads
    /// until the socket has no more, or 1024 datagrams; in the second case
    /// [`poll_timeout`](Self::poll_timeout) is zero until the rest is read.
    /// Does nothing but keep the time while the client has no server (or
    /// is a loopback client); the other family's socket is never read, as
    /// in the reference.
    pub fn drain_socket(&mut self, time: impl Into<HostTime>) {
        let now = self.advance(time);
        self.receive(now, true);
        self.finish();
    }

    /// Moves the clock to the caller's `time`, counting and logging what
    /// was wrong with it.
    fn advance(&mut self, time: impl Into<HostTime>) -> Instant {
        self.clock
            .advance(time.into(), &mut self.io.link.stats, &mut self.io.log)
    }

    /// Reads and handles what waits on the server's socket. An event
    /// loop's drain (`from_event`) that leaves it empty spares the update
    /// that follows in the same turn the read; an update reads otherwise.
    fn receive(&mut self, now: Instant, from_event: bool) {
        let Some(family) = self.server_family() else {
            return;
        };
        if !from_event && self.io.link.sockets.take_emptied(family.into()) {
            return;
        }
        let mut budget = ReadBudget::new(MAX_RECEIVE_PER_UPDATE);
        while let Some(count) = self
            .io
            .link
            .read(family.into(), &mut self.inbox, &mut budget)
        {
            for (datagram, from) in self.inbox.datagrams(count) {
                if let Some(payload) = self.core.handle(now, from, datagram, &mut self.io) {
                    self.io.enqueue(payload.data, payload.sequence);
                }
            }
        }
        if from_event && budget.emptied() {
            self.io.link.sockets.set_emptied(family.into());
        }
    }

    /// Sends the datagrams the last call produced, unless a batch holds
    /// them.
    fn finish(&mut self) {
        self.io.link.finish();
    }

    /// Holds every datagram the client produces until the returned scope
    /// ends, then sends them together: several payloads in one frame, in
    /// one system call on Linux. The scope dereferences to the client. See
    /// [`Batch`].
    pub fn batch(&mut self) -> Batch<'_, Self> {
        Batch::new(self)
    }

    /// How long an event loop may sleep, from the caller's `time` (in
    /// seconds, as for [`update`](Self::update)), before the client next
    /// needs an update: until its next packet to send, token expiry or
    /// timeout, zero when one is due or its socket still has datagrams
    /// waiting from a drain that stopped at its limit, and `None` while
    /// it is idle (disconnected, or a loopback client).
    pub fn poll_timeout(&self, time: impl Into<HostTime>) -> Option<Duration> {
        self.clock.poll_timeout(
            self.core.next_deadline(),
            self.io.link.sockets.backlog(),
            time.into(),
        )
    }

    /// The socket of `family`, if the client has one.
    pub fn socket(&self, family: Family) -> Option<&S> {
        self.io.link.sockets.get(family)
    }

    /// Every socket, mutably, for what only their transport does
    /// (deregistering them from an event loop, for example). Reading from
    /// them directly steals the client's datagrams.
    pub fn sockets_mut(&mut self) -> impl Iterator<Item = &mut S> {
        self.io.link.sockets.all_mut()
    }

    /// The family of the socket the client reads: its server's, unless it
    /// has no server or is a loopback client.
    fn server_family(&self) -> Option<Family> {
        match self.core.server_address() {
            Some(server) if !self.core.is_loopback() => Some(Family::of(&server)),
            _ => None,
        }
    }

    /// Handles one datagram that arrived some other way than this client's
    /// socket (a custom transport), as if read in `update`. Replies still
    /// leave through this client's sockets; for a transport with no sockets
    /// at all, drive [`netcode_proto::client::Client`] directly.
    pub fn process_packet(&mut self, from: SocketAddr, datagram: &mut [u8]) {
        self.io.link.stats.datagrams_received += 1;
        if let Some(payload) = self
            .core
            .handle(self.clock.now, from, datagram, &mut self.io)
        {
            self.io.enqueue(payload.data, payload.sequence);
        }
        self.finish();
    }

    /// The current state.
    pub fn state(&self) -> ClientState {
        self.core.state()
    }

    /// The address of the first address's socket (with the real port when
    /// bound to port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.io.link.sockets.primary_local_addr()
    }

    /// The port of the first address's socket.
    pub fn port(&self) -> u16 {
        self.local_addr().port()
    }

    /// Protocol counters: packets sent and received by type, datagrams
    /// dropped by reason.
    pub fn stats(&self) -> Stats {
        self.core.stats().clone()
    }

    /// Socket and queue counters.
    pub fn transport_stats(&self) -> TransportStats {
        TransportStats {
            events_dropped: self.io.events.dropped,
            ..self.io.link.stats
        }
    }
}

impl<S: Socket> Batching for Client<S> {
    fn set_batching(&mut self, on: bool) {
        self.io.link.hold(on);
    }
}

impl<S: Socket> Drop for Client<S> {
    /// Disconnects, so the server hears of it at once, as the C library's
    /// `destroy` does.
    fn drop(&mut self) {
        self.io.link.hold(false);
        self.core.disconnect(self.clock.now, &mut self.io);
        self.finish();
    }
}
