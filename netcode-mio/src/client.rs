//! A netcode client whose socket waits in the caller's mio event loop.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use mio::{Registry, Token};
use netcode_proto::stats::Stats;
use netcode_proto::token::TokenError;
use netcode_std::{
    ClientConfig, ClientEvent, ClientState, CreateError, ReceivedPacket, SendError, ToAddress,
    TransportStats,
};

use crate::socket::{self, FAMILIES, RegisteredSocket};

/// A netcode client for a mio event loop: one UDP socket, or two (one per
/// family), registered with the caller's [`Registry`] under the caller's
/// [`Token`]s.
///
/// It is [`netcode_std::Client`] on mio sockets, driven like the
/// [`Server`](crate::Server): sleep in [`mio::Poll::poll`] for at most
/// [`poll_timeout`](Self::poll_timeout), hand readable events to
/// [`handle_readable`](Self::handle_readable), then call
/// [`update`](Self::update). Many clients can share one poll, each under
/// its own token.
///
/// ```no_run
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::time::Instant;
/// use mio::{Events, Poll, Token};
/// use netcode_mio::{Client, ClientConfig, ClientState};
///
/// # let connect_token = [0u8; 2048];
/// let mut poll = Poll::new()?;
/// let mut events = Events::with_capacity(16);
/// let mut client = Client::new("0.0.0.0", ClientConfig::default(), poll.registry(), Token(1))?;
/// client.connect(&connect_token)?;
/// let epoch = Instant::now();
/// while client.state().code() > 0 {
///     poll.poll(&mut events, client.poll_timeout(epoch.elapsed().as_secs_f64()))?;
///     let now = epoch.elapsed().as_secs_f64();
///     for event in events.iter() {
///         client.handle_readable(event.token(), now);
///     }
///     client.update(now);
///     while let Some(packet) = client.receive_packet() {
///         if client.state() == ClientState::Connected {
///             client.send_packet(packet.data())?; // echo it back
///         }
///         client.free_packet(packet);
///     }
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Client {
    inner: netcode_std::Client<RegisteredSocket>,
}

impl Client {
    /// A disconnected client with one socket bound to `address` (for
    /// example `"0.0.0.0"`: any interface, an ephemeral port), registered
    /// with `registry` for readable events under `token`. It reaches
    /// servers of that address's family only; see
    /// [`new_dual`](Self::new_dual). A failed registration is
    /// [`CreateError::Register`].
    pub fn new(
        address: impl ToAddress,
        config: ClientConfig,
        registry: &Registry,
        token: Token,
    ) -> Result<Self, CreateError> {
        let adopt = socket::adopt(registry, token, token);
        let inner = netcode_std::Client::bind_with(address, None::<SocketAddr>, config, adopt)?;
        Ok(Self { inner })
    }

    /// A disconnected client with an IPv4 and an IPv6 socket bound to the
    /// two addresses (in either order, for example `"0.0.0.0"` and `"::"`),
    /// registered under `token_v4` and `token_v6` (which may be the same).
    pub fn new_dual(
        address: impl ToAddress,
        address2: impl ToAddress,
        config: ClientConfig,
        registry: &Registry,
        token_v4: Token,
        token_v6: Token,
    ) -> Result<Self, CreateError> {
        let adopt = socket::adopt(registry, token_v4, token_v6);
        let inner = netcode_std::Client::bind_with(address, Some(address2), config, adopt)?;
        Ok(Self { inner })
    }

    /// Starts connecting with a connect token (2048 bytes) from the web
    /// backend, disconnecting first if connecting or connected. An
    /// unreadable token moves the client to
    /// [`ClientState::InvalidConnectToken`] and returns why; otherwise the
    /// first request leaves at the next [`update`](Self::update) (which
    /// [`poll_timeout`](Self::poll_timeout) then says is due).
    pub fn connect(&mut self, connect_token: &[u8]) -> Result<(), TokenError> {
        self.inner.connect(connect_token)
    }

    /// Reads and handles the datagrams waiting on the socket registered
    /// under `token`, at the caller's `time` in seconds (the clock passed
    /// to [`update`](Self::update)). Returns whether `token` is one of this
    /// client's. Only the socket of the server's family is read, as in the
    /// reference; the other one's events are acknowledged and ignored.
    pub fn handle_readable(&mut self, token: Token, time: f64) -> bool {
        let ours = FAMILIES
            .into_iter()
            .any(|f| self.inner.socket(f).is_some_and(|s| s.token() == token));
        if ours {
            self.inner.drain_socket(time);
        }
        ours
    }

    /// Advances the client to `time`, the caller's clock in seconds (any
    /// monotonic clock; only differences matter): reads whatever waits on
    /// the server's socket, then sends what is due and applies token
    /// expiry and timeouts. Call it whenever the poll returns, at the
    /// latest when [`poll_timeout`](Self::poll_timeout) has run out.
    pub fn update(&mut self, time: f64) {
        self.inner.update(time);
    }

    /// The timeout for [`mio::Poll::poll`], from the caller's `time` in
    /// seconds: the time left until the client next sends, gives up on its
    /// token or times out (zero when due), or `None` while idle
    /// (disconnected). Take the minimum with the loop's other timeouts.
    pub fn poll_timeout(&self, time: f64) -> Option<Duration> {
        self.inner.poll_timeout(time)
    }

    /// Stops `registry` from reporting this client's sockets. Dropping the
    /// client closes them, which deregisters them too.
    pub fn deregister(&mut self, registry: &Registry) -> io::Result<()> {
        socket::deregister(registry, self.inner.sockets_mut())
    }

    /// The current state.
    pub fn state(&self) -> ClientState {
        self.inner.state()
    }

    /// The next state change, oldest first.
    pub fn poll_event(&mut self) -> Option<ClientEvent> {
        self.inner.poll_event()
    }

    /// Sends a payload of 1 to 1200 bytes to the server, right away. Fails
    /// unless connected.
    pub fn send_packet(&mut self, data: &[u8]) -> Result<(), SendError> {
        self.inner.send_packet(data)
    }

    /// The oldest payload received from the server (at most 256 wait).
    pub fn receive_packet(&mut self) -> Option<ReceivedPacket> {
        self.inner.receive_packet()
    }

    /// Gives a received payload's buffer back for reuse.
    pub fn free_packet(&mut self, packet: ReceivedPacket) {
        self.inner.free_packet(packet);
    }

    /// Disconnects: when connecting or connected, sends 10 disconnect
    /// packets, then moves to [`ClientState::Disconnected`].
    pub fn disconnect(&mut self) {
        self.inner.disconnect();
    }

    /// The slot the server gave this client (0 until connected).
    pub fn client_index(&self) -> usize {
        self.inner.client_index()
    }

    /// The server's slot count (0 until connected).
    pub fn max_clients(&self) -> usize {
        self.inner.max_clients()
    }

    /// The server address being tried or connected to.
    pub fn server_address(&self) -> Option<SocketAddr> {
        self.inner.server_address()
    }

    /// The sequence the next packet sent will carry.
    pub fn next_packet_sequence(&self) -> u64 {
        self.inner.next_packet_sequence()
    }

    /// The address of the first address's socket (with the real port when
    /// bound to port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.inner.local_addr()
    }

    /// The port of the first address's socket.
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

    /// The `netcode-std` client inside, for the rest of its API (loopback
    /// mode, [`process_packet`](netcode_std::Client::process_packet)).
    pub fn get_ref(&self) -> &netcode_std::Client<RegisteredSocket> {
        &self.inner
    }

    /// The `netcode-std` client inside, mutably.
    pub fn get_mut(&mut self) -> &mut netcode_std::Client<RegisteredSocket> {
        &mut self.inner
    }
}
