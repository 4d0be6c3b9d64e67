//! A netcode server on UDP sockets, with the C library's API: start and
//! stop, and the clock that drives it (this file); creation ([`create`]);
//! what the application does with its clients ([`slots`]); the core's
//! output ([`io`]).
//!
//! Every protocol decision is made by the sans-IO
//! [`netcode_proto::server::Server`] inside; this type moves datagrams
//! between it and the sockets in batches, keeps the time, and queues what
//! the application reads: received payloads per slot, and connect and
//! disconnect events.

mod config;
mod create;
mod history;
mod io;
mod slots;

pub use config::{BindMode, MAX_CLIENTS, ServerConfig};
pub use history::MAX_RESTORED_TOKENS;
pub use io::SERVER_LOOPBACK_QUEUE_SIZE;

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use netcode_proto::Instant;
use netcode_proto::server::{HeapStorage, Server as Core, ServerConfig as CoreConfig, ServerError};
use netcode_proto::stats::Stats;

use crate::batch::{Batch, Batching};
use crate::clock::Clock;
use crate::error::Family;
use crate::link::{Inbox, ReadBudget};
use crate::logging::TARGET;
use crate::packet::PacketQueue;
use crate::random::OsRandom;
use crate::stats::{TransportStats, accumulate};
use crate::time::{HostTime, unix_time, wait_past};
use crate::transport::{self, Path, Socket};
use history::HistoryFile;
use io::ServerIo;

/// Slots the server's tables are made for at creation, so that any start
/// of up to the reference's 256 slots reuses them; a larger start makes
/// larger tables. (However few slots the tables hold, the core keeps the
/// reference's 2048-entry token history and 1024 mappings.)
const MIN_TABLE_SLOTS: usize = 256;

/// Datagrams read from one socket in one update at most, so a flood cannot
/// hold `update` forever; the rest wait in the socket for the next update.
const MAX_RECEIVE_PER_UPDATE: usize = 16 * 1024;

/// Spare payload buffers a server keeps: one update's reads from a
/// socket, so a server whose application frees each frame's payloads
/// never allocates in steady state, even at thousands of clients. Buffers
/// are made only when needed: a server that never receives that many at
/// once never holds that many (at most 20 MB when it does).
const SERVER_POOL_LIMIT: usize = MAX_RECEIVE_PER_UPDATE;

/// A netcode dedicated server on one UDP socket, or two for dual stack.
///
/// Drive it as the C library's server: [`update`](Self::update) once per
/// frame with the caller's clock, then [`receive_packet`](Self::receive_packet)
/// for each slot and [`send_packet`](Self::send_packet) to talk back.
/// Connects and disconnects are reported as [`ServerEvent`](crate::ServerEvent)s
/// drained with [`poll_event`](Self::poll_event) (a polled queue rather
/// than a callback, so handling them can use the server freely).
///
/// Datagrams leave before the call that produced them returns; inside a
/// [`batch`](Self::batch) they leave together when it ends, in one system
/// call per 32 on Linux.
///
/// ```no_run
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::time::{Duration, Instant};
/// use netcode_std::{Server, ServerConfig, proto::Key};
///
/// let config = ServerConfig::new(0x1122_3344_5566_7788, Key::from_bytes([0; 32]));
/// let mut server = Server::new("127.0.0.1:40000", config)?;
/// server.start(64)?;
/// let epoch = Instant::now();
/// loop {
///     server.update(epoch.elapsed().as_secs_f64());
///     while let Some(event) = server.poll_event() {
///         println!("{event:?}");
///     }
///     let mut batch = server.batch(); // the echoes leave together
///     while let Some((index, packet)) = batch.receive_any() {
///         let _ = batch.send_packet(index, packet.data());
///         batch.free_packet(packet);
///     }
///     drop(batch);
///     server.wait(Duration::from_millis(16)); // until a datagram or a deadline
/// }
/// # }
/// ```
///
/// The type parameter is the socket type: [`std::net::UdpSocket`] unless a
/// transport such as `netcode-mio` builds the server with
/// [`bind_with`](Self::bind_with), or on sockets of its own with
/// [`with_sockets`](Self::with_sockets) (see [`transport`](crate::transport)).
#[derive(Debug)]
pub struct Server<S: Socket = UdpSocket> {
    core: Core<HeapStorage>,
    core_config: CoreConfig,
    io: ServerIo<S>,
    inbox: Inbox,
    clock: Clock,
    /// Counters of cores replaced when `start` needed more slots.
    retired: Stats,
    rng: OsRandom,
}

impl Server<UdpSocket> {
    /// Blocks until a datagram arrives or the server next has something to
    /// do (a keep-alive or a timeout, per the core's `next_deadline`), at
    /// most `max`. Returns whether a datagram (or a socket error) is ready;
    /// call [`update`](Self::update) either way.
    ///
    /// The deadline is measured from the last update, assuming the
    /// caller's clock keeps pace with real time. On Unix this is one
    /// `poll` of the server's sockets.
    pub fn wait(&self, max: Duration) -> bool {
        let mut timeout = self
            .core
            .next_deadline()
            .map_or(max, |d| self.clock.until(d).min(max));
        if let Some(limit) = self.io.history.as_ref().and_then(HistoryFile::poll_limit) {
            timeout = timeout.min(limit);
        }
        transport::wait(self.io.link.sockets.all(), timeout)
    }
}

impl<S: Socket> Server<S> {
    /// Opens `max_clients` slots (1 to [`MAX_CLIENTS`]) with a fresh
    /// challenge key. A running server is stopped first: its clients get
    /// disconnect packets. On an invalid count nothing changes.
    ///
    /// Returns once the wall clock has left the second the restart rule
    /// counts from (the start itself, or when the token history file
    /// began), which can take up to a second: the rule refuses every token
    /// issued in or before that second, because a server killed and
    /// restarted within it cannot tell whether its predecessor used them
    /// (see [`ServerConfig::max_connect_token_lifetime`]). So any token
    /// issued after `start` returns is admitted, as the standard promises.
    /// [`start_nowait`](Self::start_nowait) returns at once instead.
    pub fn start(&mut self, max_clients: usize) -> Result<(), ServerError> {
        let admitted_from = self.start_nowait(max_clients)?;
        wait_past(admitted_from.saturating_sub(1));
        Ok(())
    }

    /// Starts as [`start`](Self::start) does, without waiting: returns the
    /// first unix second of issue whose tokens the restart rule admits
    /// (one past the second it counts from). A token issued earlier is
    /// refused; an event loop that must not block waits for that second
    /// itself, or issues its own tokens as of it
    /// ([`ConnectTokenBuilder::issued_at`](crate::ConnectTokenBuilder::issued_at)).
    pub fn start_nowait(&mut self, max_clients: usize) -> Result<u64, ServerError> {
        if max_clients == 0 || max_clients > MAX_CLIENTS {
            return Err(ServerError::InvalidMaxClients);
        }
        let now = self.clock.now;
        let unix = unix_time();
        let stored = self.io.history.as_ref().map(|h| h.writer.history());
        let restored = stored.as_ref().map_or(0, |h| h.restored().unexpired(unix));
        let size = history::history_size(max_clients, restored);
        if max_clients > self.core.capacity()
            || size.entries(max_clients) > self.core.token_history_capacity()
        {
            self.core.stop(now, &mut self.io);
            let slots = max_clients.max(self.core.capacity());
            let storage = HeapStorage::with_token_history(slots, size);
            let core = Core::new(self.core_config.clone(), storage)?;
            let old = std::mem::replace(&mut self.core, core);
            accumulate(&mut self.retired, old.stats());
        }
        let rng = &mut self.rng;
        let started = match &stored {
            Some(history) => self.core.start_restored(
                now,
                unix,
                max_clients,
                rng,
                &history.restored(),
                &mut self.io,
            ),
            None => self.core.start(now, unix, max_clients, rng, &mut self.io),
        };
        self.finish();
        started?;
        if self.io.queues.len() < max_clients {
            self.io
                .queues
                .resize_with(max_clients, PacketQueue::default);
        }
        let ready = &mut self.io.ready;
        ready.reserve(max_clients.saturating_sub(ready.len()));
        log::info!(
            target: TARGET,
            "server {} started with {max_clients} slots",
            self.core_config.public_address
        );
        Ok(self.core.tokens_admitted_from())
    }

    /// Disconnects every client (network clients get disconnect packets)
    /// and closes the slots. Does nothing when stopped.
    pub fn stop(&mut self) {
        if self.core.running() {
            log::info!(target: TARGET, "server {} stopped", self.core_config.public_address);
        }
        self.core.stop(self.clock.now, &mut self.io);
        self.finish();
    }

    /// Whether the server is started.
    pub fn running(&self) -> bool {
        self.core.running()
    }

    /// Open slots (0 when stopped).
    pub fn max_clients(&self) -> usize {
        self.core.max_clients()
    }

    /// Occupied slots.
    pub fn num_connected_clients(&self) -> usize {
        self.core.num_connected_clients()
    }

    /// Advances the server to `time`, the caller's clock: seconds as an
    /// `f64` (any monotonic clock; only differences matter, and bogus
    /// values are survived: see [`MAX_TIME_STEP`](crate::MAX_TIME_STEP)),
    /// or a `std::time::Instant` (see [`HostTime`]): reads every
    /// datagram waiting on the sockets and handles it, then sends due
    /// keep-alives and times out silent clients. Token expiry is checked
    /// against the system's unix time, which the server reads itself. A
    /// socket that [`drain_socket`](Self::drain_socket) has just read empty
    /// (an event loop's turn) is not read again until the next update.
    pub fn update(&mut self, time: impl Into<HostTime>) {
        let now = self.advance(time);
        for path in [Path::Udp(Family::V4), Path::Udp(Family::V6), Path::Relay] {
            // A path with no socket (the other family, no relay) costs
            // nothing; one an event loop's drain just emptied is not read.
            if self.io.link.sockets.on(path).is_none() {
                continue;
            }
            if !self.io.link.sockets.take_emptied(path) {
                self.receive(now, path);
            }
        }
        self.settle_history(now);
        let unix = unix_time();
        self.core.update(now, unix, &mut self.io);
        if let Some(history) = &mut self.io.history {
            history.compact_when_due(unix);
        }
        self.finish();
    }

    /// Hands the core the token records finished since the last call
    /// (answering the requests held for them), and the failed ones.
    fn settle_history(&mut self, now: Instant) {
        let Some(history) = &mut self.io.history else {
            return;
        };
        history.collect(&mut self.io.log);
        let mut answered = 0;
        while let Some((request, outcome)) = self
            .io
            .history
            .as_mut()
            .and_then(|h| h.next_settled(&mut answered))
        {
            self.core
                .token_persisted(now, request, outcome, &mut self.io);
        }
    }

    /// Reads and handles the datagrams waiting on the socket of `family`
    /// at the caller's `time` (in seconds, as for [`update`](Self::update)),
    /// without sending keep-alives or applying timeouts: what an event loop
    /// calls when that socket becomes readable. Reads until the socket has
    /// no more, or 16384 datagrams; in the second case
    /// [`poll_timeout`](Self::poll_timeout) is zero until the rest is read.
    pub fn drain_socket(&mut self, time: impl Into<HostTime>, family: Family) {
        self.drain(time.into(), Path::Udp(family));
    }

    /// Attaches `relay`, a transport of virtual peers (WebTransport
    /// sessions, for example): from now on the server reads it with its
    /// sockets in every [`update`](Self::update), and sends through it
    /// every datagram addressed into
    /// [`VIRTUAL_PEERS`](crate::transport::VIRTUAL_PEERS). Its peers hold
    /// slots of this server beside the UDP clients, with the same tokens
    /// and key. A relay attached before replaces the earlier one. See
    /// [`transport`](crate::transport) (the relay module).
    pub fn attach_relay(&mut self, relay: impl Socket + Send + Sync + 'static) {
        self.io.link.sockets.attach_relay(Box::new(relay));
    }

    /// [`drain_socket`](Self::drain_socket) for the relay of virtual peers:
    /// what an event loop calls when the relay says datagrams wait.
    pub fn drain_relay(&mut self, time: impl Into<HostTime>) {
        self.drain(time.into(), Path::Relay);
    }

    /// Reads and handles what waits on the socket on `path`, at `time`.
    fn drain(&mut self, time: HostTime, path: Path) {
        let now = self.advance(time);
        if self.receive(now, path) {
            self.io.link.sockets.set_emptied(path);
        }
        self.settle_history(now);
        self.finish();
    }

    /// Moves the clock to the caller's `time`, counting and logging what
    /// was wrong with it.
    fn advance(&mut self, time: impl Into<HostTime>) -> Instant {
        self.clock
            .advance(time.into(), &mut self.io.link.stats, &mut self.io.log)
    }

    /// Reads and handles what waits on the socket on `path`, a batch at a
    /// time; returns whether it was left empty.
    fn receive(&mut self, now: Instant, path: Path) -> bool {
        let mut budget = ReadBudget::new(MAX_RECEIVE_PER_UPDATE);
        while let Some(count) = self.io.link.read(path, &mut self.inbox, &mut budget) {
            for (datagram, from) in self.inbox.datagrams(count) {
                if let Some((index, payload)) = self.core.handle(now, from, datagram, &mut self.io)
                {
                    self.io.enqueue(index, payload.data, payload.sequence);
                }
            }
        }
        budget.emptied()
    }

    /// Sends the datagrams the last call produced, unless a batch holds
    /// them.
    fn finish(&mut self) {
        self.io.link.finish();
    }

    /// Holds every datagram the server produces until the returned scope
    /// ends, then sends them together (and whenever 32 are waiting): the
    /// way to answer many clients in few system calls. The scope
    /// dereferences to the server. See [`Batch`].
    pub fn batch(&mut self) -> Batch<'_, Self> {
        Batch::new(self)
    }

    /// How long an event loop may sleep, from the caller's `time` (in
    /// seconds, as for [`update`](Self::update)), before the server next
    /// needs an update: until the core's next keep-alive or timeout, zero
    /// when one is due or a socket still has datagrams waiting from a
    /// drain that stopped at its limit, and `None` when there is nothing
    /// to do until a datagram arrives. While token records are being
    /// written to the history file it is at most 2 ms, so that a request
    /// held for its record is answered soon after the record is durable
    /// (zero while durable records wait to be answered: at most 256 are
    /// answered per call, so that a large group does not hold one call).
    /// Pass it (with the loop's other timeouts) to the event loop's wait,
    /// then call `update`.
    pub fn poll_timeout(&self, time: impl Into<HostTime>) -> Option<Duration> {
        let timeout = self.clock.poll_timeout(
            self.core.next_deadline(),
            self.io.link.sockets.backlog(),
            time.into(),
        );
        match self.io.history.as_ref().and_then(HistoryFile::poll_limit) {
            Some(limit) => Some(timeout.map_or(limit, |t| t.min(limit))),
            None => timeout,
        }
    }

    /// The socket of `family`, if the server has one.
    pub fn socket(&self, family: Family) -> Option<&S> {
        self.io.link.sockets.get(family)
    }

    /// Every socket, mutably, for what only their transport does
    /// (deregistering them from an event loop, for example). Reading from
    /// them directly steals the server's datagrams.
    pub fn sockets_mut(&mut self) -> impl Iterator<Item = &mut S> {
        self.io.link.sockets.all_mut()
    }

    /// Handles one datagram that arrived some other way than this server's
    /// sockets (a custom transport, a relay), as if read in `update`:
    /// decrypted in place, a payload queued for its slot. Replies still
    /// leave through this server's sockets; for a transport with no sockets
    /// at all, drive [`netcode_proto::server::Server`] directly.
    pub fn process_packet(&mut self, from: SocketAddr, datagram: &mut [u8]) {
        self.io.link.stats.datagrams_received += 1;
        if let Some((index, payload)) =
            self.core
                .handle(self.clock.now, from, datagram, &mut self.io)
        {
            self.io.enqueue(index, payload.data, payload.sequence);
        }
        self.settle_history(self.clock.now);
        self.finish();
    }

    /// The address connect tokens list for this server (its first address,
    /// with the bound port when it was 0).
    pub fn public_address(&self) -> SocketAddr {
        self.core_config.public_address
    }

    /// A dual-stack server's second public address.
    pub fn secondary_address(&self) -> Option<SocketAddr> {
        self.core_config.secondary_address
    }

    /// The address the first address's socket is bound to: by default the
    /// unspecified address and the real port; the public address itself
    /// with [`BindMode::Exact`].
    pub fn local_addr(&self) -> SocketAddr {
        self.io.link.sockets.primary_local_addr()
    }

    /// The port the first address's socket is bound to.
    pub fn port(&self) -> u16 {
        self.local_addr().port()
    }

    /// Protocol counters: packets sent and received by type, datagrams
    /// dropped by reason.
    pub fn stats(&self) -> Stats {
        let mut total = self.retired.clone();
        accumulate(&mut total, self.core.stats());
        total
    }

    /// Entries of the connect token history: how many tokens it holds at
    /// once. With a token history file, room is made at start for the
    /// unexpired tokens the file holds, beyond the usual size.
    pub fn token_history_capacity(&self) -> usize {
        self.core.token_history_capacity()
    }

    /// History entries holding an unexpired token (used in this run, or
    /// restored from the token history file).
    pub fn token_history_in_use(&self) -> usize {
        self.core.token_history_in_use()
    }

    /// Records of newly used connect tokens handed to the token history
    /// file's writer whose requests are not answered yet (0 without a
    /// file): a request is answered once its record is durable. A number
    /// that stays high says the disk cannot keep up with new connections.
    pub fn token_records_pending(&self) -> usize {
        self.io.history.as_ref().map_or(0, HistoryFile::pending)
    }

    /// The token history file's writer counters (records made durable,
    /// syncs, failures), when the server has a file.
    pub fn token_history_stats(&self) -> Option<crate::history_store::WriterStats> {
        self.io.history.as_ref().map(|h| h.writer.stats())
    }

    /// Socket and queue counters.
    pub fn transport_stats(&self) -> TransportStats {
        TransportStats {
            events_dropped: self.io.events.dropped,
            ..self.io.link.stats
        }
    }
}

impl<S: Socket> Batching for Server<S> {
    fn set_batching(&mut self, on: bool) {
        self.io.link.hold(on);
    }
}

impl<S: Socket> Drop for Server<S> {
    /// Stops the server, so connected clients get disconnect packets, as
    /// the C library's `destroy` does.
    fn drop(&mut self) {
        self.io.link.hold(false);
        self.stop();
    }
}
