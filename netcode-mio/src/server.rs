//! A netcode server whose sockets wait in the caller's mio event loop.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use mio::{Registry, Token};
use netcode_proto::constants::USER_DATA_BYTES;
use netcode_proto::stats::Stats;
use netcode_std::{
    CreateError, DisconnectReason, ReceivedPacket, SendError, ServerConfig, ServerError,
    ServerEvent, ToAddress, TransportStats,
};

use crate::socket::{self, FAMILIES, RegisteredSocket};

/// A netcode dedicated server for a mio event loop: one UDP socket, or two
/// for dual stack, registered with the caller's [`Registry`] under the
/// caller's [`Token`]s.
///
/// It is [`netcode_std::Server`] on mio sockets: the same protocol core,
/// queues, events and counters, and the same C-style API. What differs is
/// who waits. The server never blocks and has no thread: the caller's
/// [`mio::Poll`] sleeps for at most [`poll_timeout`](Self::poll_timeout),
/// then hands readable events to [`handle_readable`](Self::handle_readable)
/// and calls [`update`](Self::update).
///
/// ```no_run
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::time::Instant;
/// use mio::{Events, Poll, Token};
/// use netcode_mio::{Server, ServerConfig, ServerEvent, proto::Key};
///
/// let mut poll = Poll::new()?;
/// let mut events = Events::with_capacity(256);
/// let config = ServerConfig::new(0x1122_3344_5566_7788, Key::from_bytes([0; 32]));
/// let mut server = Server::new("127.0.0.1:40000", config, poll.registry(), Token(0))?;
/// server.start(64)?;
/// let epoch = Instant::now();
/// loop {
///     // Sleep until a datagram arrives or the next keep-alive or timeout.
///     poll.poll(&mut events, server.poll_timeout(epoch.elapsed().as_secs_f64()))?;
///     let now = epoch.elapsed().as_secs_f64();
///     for event in events.iter() {
///         server.handle_readable(event.token(), now);
///     }
///     server.update(now);
///     while let Some(event) = server.poll_event() {
///         if let ServerEvent::ClientConnected { client_index, .. } = event {
///             println!("client {client_index} connected");
///         }
///     }
///     for index in 0..server.max_clients() {
///         while let Some(packet) = server.receive_packet(index) {
///             let _ = server.send_packet(index, packet.data()); // echo
///             server.free_packet(packet);
///         }
///     }
/// }
/// # }
/// ```
#[derive(Debug)]
pub struct Server {
    inner: netcode_std::Server<RegisteredSocket>,
}

impl Server {
    /// A stopped server on one public address (`"127.0.0.1:40000"`,
    /// `"[::1]:0"`, ...), its socket registered with `registry` for
    /// readable events under `token`.
    ///
    /// As [`netcode_std::Server::new`]: the socket binds the unspecified
    /// address of the address's family at its port, sized, tagged and made
    /// non-blocking as `config` says; port 0 binds an ephemeral port, which
    /// becomes the [`public_address`](Self::public_address)'s port. A failed
    /// registration is [`CreateError::Register`].
    pub fn new(
        address: impl ToAddress,
        config: ServerConfig,
        registry: &Registry,
        token: Token,
    ) -> Result<Self, CreateError> {
        let adopt = socket::adopt(registry, token, token);
        let inner = netcode_std::Server::bind_with(address, None::<SocketAddr>, config, adopt)?;
        Ok(Self { inner })
    }

    /// A stopped dual-stack server: one IPv4 and one IPv6 public address (in
    /// either order), one socket for each, registered under `token_v4` and
    /// `token_v6` (which may be the same token). Tokens may list either
    /// address; each client is answered from the socket of its family.
    pub fn new_dual(
        address: impl ToAddress,
        address2: impl ToAddress,
        config: ServerConfig,
        registry: &Registry,
        token_v4: Token,
        token_v6: Token,
    ) -> Result<Self, CreateError> {
        let adopt = socket::adopt(registry, token_v4, token_v6);
        let inner = netcode_std::Server::bind_with(address, Some(address2), config, adopt)?;
        Ok(Self { inner })
    }

    /// Opens `max_clients` slots (1 to [`MAX_CLIENTS`](netcode_std::MAX_CLIENTS))
    /// with a fresh challenge key; a running server is stopped first. On an
    /// invalid count nothing changes.
    pub fn start(&mut self, max_clients: usize) -> Result<(), ServerError> {
        self.inner.start(max_clients)
    }

    /// Disconnects every client (with disconnect packets) and closes the
    /// slots. The sockets stay registered.
    pub fn stop(&mut self) {
        self.inner.stop();
    }

    /// Reads and handles the datagrams waiting on the socket registered
    /// under `token`, at the caller's `time` in seconds (the clock passed
    /// to [`update`](Self::update)). Call it for every event the poll
    /// reports; returns whether `token` is one of this server's (for an
    /// event of another source it does nothing and returns false).
    ///
    /// mio's events are edge-triggered: this reads until the socket would
    /// block, or 16384 datagrams, after which
    /// [`poll_timeout`](Self::poll_timeout) is zero until the next
    /// `update` reads the rest.
    pub fn handle_readable(&mut self, token: Token, time: f64) -> bool {
        let mut ours = false;
        for family in FAMILIES {
            if self
                .inner
                .socket(family)
                .is_some_and(|s| s.token() == token)
            {
                self.inner.drain_socket(time, family);
                ours = true;
            }
        }
        ours
    }

    /// Advances the server to `time`, the caller's clock in seconds (any
    /// monotonic clock; only differences matter): reads whatever waits on
    /// the sockets, then sends due keep-alives and times out silent
    /// clients. Call it whenever the poll returns, at the latest when
    /// [`poll_timeout`](Self::poll_timeout) has run out.
    pub fn update(&mut self, time: f64) {
        self.inner.update(time);
    }

    /// The timeout for [`mio::Poll::poll`], from the caller's `time` in
    /// seconds: the time left until the next keep-alive or client timeout
    /// (zero when due, or while a socket still holds datagrams from a
    /// drain that stopped at its limit), or `None` when nothing is due
    /// until a datagram arrives. Take the minimum with the loop's other
    /// timeouts.
    pub fn poll_timeout(&self, time: f64) -> Option<Duration> {
        self.inner.poll_timeout(time)
    }

    /// Stops `registry` from reporting this server's sockets. The server
    /// still sends, and [`update`](Self::update) still reads its sockets.
    /// Dropping the server closes them, which deregisters them too.
    pub fn deregister(&mut self, registry: &Registry) -> io::Result<()> {
        socket::deregister(registry, self.inner.sockets_mut())
    }

    /// Sends a payload of 1 to 1200 bytes to the client in slot
    /// `client_index`, right away.
    pub fn send_packet(&mut self, client_index: usize, data: &[u8]) -> Result<(), SendError> {
        self.inner.send_packet(client_index, data)
    }

    /// The oldest payload received from the client in slot `client_index`
    /// (at most 256 wait per slot).
    pub fn receive_packet(&mut self, client_index: usize) -> Option<ReceivedPacket> {
        self.inner.receive_packet(client_index)
    }

    /// Gives a received payload's buffer back for reuse.
    pub fn free_packet(&mut self, packet: ReceivedPacket) {
        self.inner.free_packet(packet);
    }

    /// The next connect or disconnect event, oldest first (at most 4096
    /// wait).
    pub fn poll_event(&mut self) -> Option<ServerEvent> {
        self.inner.poll_event()
    }

    /// Disconnects the client in slot `client_index` with 10 disconnect
    /// packets.
    pub fn disconnect_client(&mut self, client_index: usize) {
        self.inner.disconnect_client(client_index);
    }

    /// Disconnects every client.
    pub fn disconnect_all_clients(&mut self) {
        self.inner.disconnect_all_clients();
    }

    /// Whether the server is started.
    pub fn running(&self) -> bool {
        self.inner.running()
    }

    /// Open slots (0 when stopped).
    pub fn max_clients(&self) -> usize {
        self.inner.max_clients()
    }

    /// Occupied slots.
    pub fn num_connected_clients(&self) -> usize {
        self.inner.num_connected_clients()
    }

    /// Whether slot `client_index` holds a client.
    pub fn client_connected(&self, client_index: usize) -> bool {
        self.inner.client_connected(client_index)
    }

    /// The client id of the client in slot `client_index`.
    pub fn client_id(&self, client_index: usize) -> Option<u64> {
        self.inner.client_id(client_index)
    }

    /// The address of the client in slot `client_index`.
    pub fn client_address(&self, client_index: usize) -> Option<SocketAddr> {
        self.inner.client_address(client_index)
    }

    /// The user data from the connect token of the client in slot
    /// `client_index`.
    pub fn client_user_data(&self, client_index: usize) -> Option<&[u8; USER_DATA_BYTES]> {
        self.inner.client_user_data(client_index)
    }

    /// Why slot `client_index` was last vacated.
    pub fn disconnect_reason(&self, client_index: usize) -> DisconnectReason {
        self.inner.disconnect_reason(client_index)
    }

    /// The sequence the next packet to slot `client_index` will carry.
    pub fn next_packet_sequence(&self, client_index: usize) -> Option<u64> {
        self.inner.next_packet_sequence(client_index)
    }

    /// The address connect tokens list for this server (its first address,
    /// with the bound port when it was 0).
    pub fn public_address(&self) -> SocketAddr {
        self.inner.public_address()
    }

    /// A dual-stack server's second public address.
    pub fn secondary_address(&self) -> Option<SocketAddr> {
        self.inner.secondary_address()
    }

    /// The address the first address's socket is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.inner.local_addr()
    }

    /// The port the first address's socket is bound to.
    pub fn port(&self) -> u16 {
        self.inner.port()
    }

    /// Protocol counters: packets sent and received by type, datagrams
    /// dropped by reason.
    pub fn stats(&self) -> Stats {
        self.inner.stats()
    }

    /// Socket and queue counters.
    pub fn transport_stats(&self) -> TransportStats {
        self.inner.transport_stats()
    }

    /// The `netcode-std` server inside, for the rest of its API (loopback
    /// clients, [`process_packet`](netcode_std::Server::process_packet)).
    pub fn get_ref(&self) -> &netcode_std::Server<RegisteredSocket> {
        &self.inner
    }

    /// The `netcode-std` server inside, mutably.
    pub fn get_mut(&mut self) -> &mut netcode_std::Server<RegisteredSocket> {
        &mut self.inner
    }
}
