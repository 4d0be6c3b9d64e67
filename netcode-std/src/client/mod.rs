//! A netcode client on `std::net` UDP sockets, with the C library's API.
//!
//! Every protocol decision is made by the sans-IO
//! [`netcode_proto::client::Client`] inside; this type moves datagrams
//! between it and its socket, keeps the time, and queues received payloads
//! and state changes for the application.

mod config;
mod io;

pub use config::ClientConfig;

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use netcode_proto::client::{Client as Core, ClientEvent, ClientState, LoopbackError};
use netcode_proto::constants::MAX_PACKET_BYTES;
use netcode_proto::session::{SendError, Sent};
use netcode_proto::stats::Stats;
use netcode_proto::token::TokenError;

use crate::address::ToAddress;
use crate::clock::Clock;
use crate::error::{CreateError, Family};
use crate::packet::ReceivedPacket;
use crate::socket::{self, SocketOptions, Sockets};
use crate::stats::TransportStats;
use crate::transport::Socket;
use io::ClientIo;

/// Datagrams read in one update at most; the rest wait for the next one.
const MAX_RECEIVE_PER_UPDATE: usize = 1024;

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
/// reference does.
///
/// ```no_run
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::time::{Duration, Instant};
/// use netcode_std::{Client, proto::client::ClientState};
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
/// [`bind_with`](Self::bind_with) (see [`transport`](crate::transport)).
#[derive(Debug)]
pub struct Client<S: Socket = UdpSocket> {
    core: Core,
    io: ClientIo<S>,
    clock: Clock,
    buffer: Box<[u8; MAX_PACKET_BYTES]>,
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
        Self::bind_with(address, None::<SocketAddr>, config, socket::keep_std)
    }

    /// [`new_dual`](Self::new_dual) with socket options.
    pub fn dual_with_config(
        address: impl ToAddress,
        address2: impl ToAddress,
        config: ClientConfig,
    ) -> Result<Self, CreateError> {
        Self::bind_with(address, Some(address2), config, socket::keep_std)
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
        let socket = self.server_family().and_then(|f| self.io.sockets.get(f));
        socket::wait(socket, timeout)
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
        let (first, second) = socket::parse_addresses(address, address2)?;
        let options = SocketOptions {
            buffer_bytes: config.socket_buffer_bytes,
            packet_tagging: config.packet_tagging,
        };
        let sockets = Sockets::bind(first, second, &options, adopt)?;
        Ok(Self {
            core: Core::new(),
            io: ClientIo::new(sockets),
            clock: Clock::new(),
            buffer: Box::new([0; MAX_PACKET_BYTES]),
        })
    }

    /// Starts connecting with a connect token (2048 bytes) from the web
    /// backend. Disconnects first if connecting or connected. An unreadable
    /// token moves the client to [`ClientState::InvalidConnectToken`] and
    /// returns why; otherwise the first connection request leaves at the
    /// next [`update`](Self::update).
    ///
    /// As in the C library, the attempt starts at the time of the last
    /// update (or of the first update, when there was none yet).
    pub fn connect(&mut self, connect_token: &[u8]) -> Result<(), TokenError> {
        self.core
            .connect(self.clock.now, connect_token, &mut self.io)
    }

    /// Advances the client to `time`, the caller's clock in seconds (any
    /// monotonic clock; only differences matter): reads and handles every
    /// datagram waiting on the socket of the server's family, then sends
    /// what is due and applies token expiry and timeouts.
    pub fn update(&mut self, time: f64) {
        self.drain_socket(time);
        self.core.update(self.clock.now, &mut self.io);
    }

    /// Reads and handles the datagrams waiting on the socket of the
    /// server's family at the caller's `time` (in seconds, as for
    /// [`update`](Self::update)), without sending or applying timeouts:
    /// what an event loop calls when that socket becomes readable. Reads
    /// until the socket would block, or 1024 datagrams; in the second case
    /// [`poll_timeout`](Self::poll_timeout) is zero until the rest is read.
    /// Does nothing but keep the time while the client has no server (or
    /// is a loopback client); the other family's socket is never read, as
    /// in the reference.
    pub fn drain_socket(&mut self, time: f64) {
        let now = self.clock.update(time);
        if let Some(family) = self.server_family() {
            self.receive(now, family);
        }
    }

    fn receive(&mut self, now: Duration, family: Family) {
        let core = &mut self.core;
        let buffer = &mut self.buffer[..];
        socket::drain(
            &mut self.io,
            family,
            buffer,
            MAX_RECEIVE_PER_UPDATE,
            |io, datagram, from| {
                if let Some(payload) = core.handle(now, from, datagram, io) {
                    io.enqueue(payload.data, payload.sequence);
                }
            },
        );
    }

    /// How long an event loop may sleep, from the caller's `time` (in
    /// seconds, as for [`update`](Self::update)), before the client next
    /// needs an update: until its next packet to send, token expiry or
    /// timeout, zero when one is due or its socket still has datagrams
    /// waiting from a drain that stopped at its limit, and `None` while
    /// it is idle (disconnected, or a loopback client).
    pub fn poll_timeout(&self, time: f64) -> Option<Duration> {
        self.clock
            .poll_timeout(self.core.next_deadline(), self.io.sockets.backlog(), time)
    }

    /// The socket of `family`, if the client has one.
    pub fn socket(&self, family: Family) -> Option<&S> {
        self.io.sockets.get(family)
    }

    /// Every socket, mutably, for what only their transport does
    /// (deregistering them from an event loop, for example). Reading from
    /// them directly steals the client's datagrams.
    pub fn sockets_mut(&mut self) -> impl Iterator<Item = &mut S> {
        self.io.sockets.all_mut()
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
        self.io.stats.datagrams_received += 1;
        if let Some(payload) = self
            .core
            .handle(self.clock.now, from, datagram, &mut self.io)
        {
            self.io.enqueue(payload.data, payload.sequence);
        }
    }

    /// The current state.
    pub fn state(&self) -> ClientState {
        self.core.state()
    }

    /// The next state change, oldest first.
    pub fn poll_event(&mut self) -> Option<ClientEvent> {
        self.io.events.pop()
    }

    /// Sends a payload of 1 to 1200 bytes to the server, right away (to the
    /// loopback outbox in loopback mode). Fails unless connected.
    pub fn send_packet(&mut self, data: &[u8]) -> Result<(), SendError> {
        match self.core.send_payload(self.clock.now, data, &mut self.io)? {
            Sent::Network => {}
            Sent::Loopback { sequence, .. } => self.io.push_loopback(data, sequence),
        }
        Ok(())
    }

    /// The oldest payload received from the server (at most 256 wait; more
    /// are dropped as in the reference).
    pub fn receive_packet(&mut self) -> Option<ReceivedPacket> {
        self.io.queue.pop()
    }

    /// Gives a received payload's buffer back for reuse. Dropping the
    /// packet instead is fine; it only costs an allocation later.
    pub fn free_packet(&mut self, packet: ReceivedPacket) {
        self.io.pool.recycle(packet);
    }

    /// Disconnects: when connecting or connected, sends 10 disconnect
    /// packets, then moves to [`ClientState::Disconnected`]. A loopback
    /// client leaves loopback mode.
    pub fn disconnect(&mut self) {
        self.core.disconnect(self.clock.now, &mut self.io);
    }

    /// The slot the server gave this client (0 until connected).
    pub fn client_index(&self) -> usize {
        self.core.client_index() as usize
    }

    /// The server's slot count (0 until connected).
    pub fn max_clients(&self) -> usize {
        self.core.max_clients() as usize
    }

    /// The server address being tried or connected to.
    pub fn server_address(&self) -> Option<SocketAddr> {
        self.core.server_address()
    }

    /// The sequence the next packet sent will carry.
    pub fn next_packet_sequence(&self) -> u64 {
        self.core.next_packet_sequence()
    }

    /// Becomes the loopback client of an in-process server, in slot
    /// `client_index` of `max_clients` (the server side calls
    /// [`Server::connect_loopback_client`](crate::Server::connect_loopback_client)):
    /// connected at once, with no packets, keep-alives or timeouts.
    pub fn connect_loopback(
        &mut self,
        client_index: usize,
        max_clients: usize,
    ) -> Result<(), LoopbackError> {
        let index = u32::try_from(client_index).map_err(|_| LoopbackError::InvalidClientIndex)?;
        let max = u32::try_from(max_clients).unwrap_or(u32::MAX);
        self.core.connect_loopback(index, max, &mut self.io)
    }

    /// Leaves loopback mode and moves to [`ClientState::Disconnected`].
    pub fn disconnect_loopback(&mut self) {
        self.core.disconnect_loopback(&mut self.io);
    }

    /// Whether the client is the loopback client of an in-process server.
    pub fn loopback(&self) -> bool {
        self.core.is_loopback()
    }

    /// Delivers a payload the in-process server sent this loopback client
    /// (from [`Server::poll_loopback_packet`](crate::Server::poll_loopback_packet)).
    pub fn process_loopback_packet(&mut self, data: &[u8], sequence: u64) -> Result<(), SendError> {
        let payload = self.core.receive_loopback_payload(data, sequence)?;
        self.io.enqueue(payload.data, payload.sequence);
        Ok(())
    }

    /// The oldest payload this loopback client sent, for the application to
    /// deliver with [`Server::process_loopback_packet`](crate::Server::process_loopback_packet)
    /// (or use [`transfer_loopback`](crate::transfer_loopback)). Free it
    /// afterwards.
    pub fn poll_loopback_packet(&mut self) -> Option<ReceivedPacket> {
        self.io.loopback.pop_front()
    }

    /// The address of the first address's socket (with the real port when
    /// bound to port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.io.sockets.primary_local_addr()
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
            ..self.io.stats
        }
    }
}

impl<S: Socket> Drop for Client<S> {
    /// Disconnects, so the server hears of it at once, as the C library's
    /// `destroy` does.
    fn drop(&mut self) {
        self.core.disconnect(self.clock.now, &mut self.io);
    }
}
