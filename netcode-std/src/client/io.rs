//! The client's side of the core's [`Output`]: the link to the sockets,
//! state-change events, the payload queue, the loopback outbox, and the
//! log.

use std::collections::VecDeque;
use std::net::SocketAddr;

use netcode_proto::client::{ClientEvent, ClientState};
use netcode_proto::constants::MAX_SERVERS_PER_CONNECT;
use netcode_proto::io::Output;
use netcode_proto::stats::DroppedDatagram;

use crate::events::EventQueue;
use crate::link::Link;
use crate::logging::{DropLog, TARGET};
use crate::packet::{PACKET_QUEUE_SIZE, PacketPool, PacketQueue, ReceivedPacket};
use crate::transport::Socket;

#[derive(Debug)]
pub(crate) struct ClientIo<S> {
    pub(crate) link: Link<S>,
    pub(crate) events: EventQueue<ClientEvent>,
    pub(crate) queue: PacketQueue,
    pub(crate) pool: PacketPool,
    pub(crate) loopback: VecDeque<ReceivedPacket>,
    pub(crate) log: DropLog,
    /// The current token's server addresses, for the log of a failure.
    pub(crate) servers: heapless::Vec<SocketAddr, MAX_SERVERS_PER_CONNECT>,
}

impl<S: Socket> ClientIo<S> {
    pub(crate) fn new(link: Link<S>) -> Self {
        Self {
            link,
            events: EventQueue::new(),
            queue: PacketQueue::default(),
            pool: PacketPool::new(PACKET_QUEUE_SIZE),
            loopback: VecDeque::new(),
            log: DropLog::new(),
            servers: heapless::Vec::new(),
        }
    }

    /// Queues a received payload, or counts it dropped.
    pub(crate) fn enqueue(&mut self, data: &[u8], sequence: u64) {
        if !self.queue.push(&mut self.pool, data, sequence) {
            self.link.stats.queue_full += 1;
        }
    }

    /// Holds a payload for the in-process server.
    pub(crate) fn push_loopback(&mut self, data: &[u8], sequence: u64) {
        if self.loopback.len() >= PACKET_QUEUE_SIZE {
            self.link.stats.queue_full += 1;
            return;
        }
        let packet = self.pool.packet(data, sequence);
        self.loopback.push_back(packet);
    }
}

impl<S: Socket> Output<ClientEvent> for ClientIo<S> {
    fn send(&mut self, to: SocketAddr, datagram: &[u8]) {
        self.link.send(to, datagram);
    }

    fn send_with(
        &mut self,
        to: SocketAddr,
        write: &mut dyn FnMut(&mut [u8]) -> Option<usize>,
    ) -> Option<usize> {
        self.link.send_with(to, write)
    }

    fn event(&mut self, event: ClientEvent) {
        let ClientEvent::StateChanged { from, to } = event;
        log_state_change(from, to, &self.servers);
        // Leaving the connection empties the queues, as in the reference.
        if !to.is_active() {
            self.queue.clear(&mut self.pool);
            while let Some(packet) = self.loopback.pop_front() {
                self.pool.recycle(packet);
            }
        }
        self.events.push(event);
    }

    fn dropped(&mut self, dropped: DroppedDatagram) {
        self.log.dropped(dropped, false);
    }
}

/// Logs a state change: failures at `warn` with the addresses tried and
/// what to check, the rest at `info`.
fn log_state_change(from: ClientState, to: ClientState, servers: &[SocketAddr]) {
    let servers = AddressList(servers);
    let hint = match to {
        ClientState::ConnectionRequestTimedOut => {
            "no server answered: is one running there, reachable, and listed in the token under the public address it was given?"
        }
        ClientState::ConnectionResponseTimedOut => {
            "a server answered the request but not the response"
        }
        ClientState::ConnectionDenied => "every server that answered was full",
        ClientState::ConnectTokenExpired => {
            "the connect token expired before a connection was made"
        }
        ClientState::ConnectionTimedOut => "the server went silent",
        _ => {
            log::info!(target: TARGET, "client: {from} -> {to}");
            return;
        }
    };
    log::warn!(target: TARGET, "client: {to} (tried {servers}): {hint}");
}

/// Addresses, comma-separated.
struct AddressList<'a>(&'a [SocketAddr]);

impl core::fmt::Display for AddressList<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        for (i, address) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{address}")?;
        }
        Ok(())
    }
}
