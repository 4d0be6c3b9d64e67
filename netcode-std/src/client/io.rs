//! The client's side of the core's [`Output`]: sockets, state-change
//! events, the payload queue and the loopback outbox.

use std::collections::VecDeque;
use std::net::SocketAddr;

use netcode_proto::client::ClientEvent;
use netcode_proto::io::Output;

use crate::events::EventQueue;
use crate::packet::{PACKET_QUEUE_SIZE, PacketPool, PacketQueue, ReceivedPacket};
use crate::socket::{SendFailure, SocketIo, Sockets};
use crate::stats::TransportStats;
use crate::transport::Socket;

#[derive(Debug)]
pub(crate) struct ClientIo<S> {
    pub(crate) sockets: Sockets<S>,
    pub(crate) events: EventQueue<ClientEvent>,
    pub(crate) queue: PacketQueue,
    pub(crate) pool: PacketPool,
    pub(crate) loopback: VecDeque<ReceivedPacket>,
    pub(crate) stats: TransportStats,
}

impl<S> ClientIo<S> {
    pub(crate) fn new(sockets: Sockets<S>) -> Self {
        Self {
            sockets,
            events: EventQueue::new(),
            queue: PacketQueue::default(),
            pool: PacketPool::new(PACKET_QUEUE_SIZE),
            loopback: VecDeque::new(),
            stats: TransportStats::default(),
        }
    }

    /// Queues a received payload, or counts it dropped.
    pub(crate) fn enqueue(&mut self, data: &[u8], sequence: u64) {
        if !self.queue.push(&mut self.pool, data, sequence) {
            self.stats.queue_full += 1;
        }
    }

    /// Holds a payload for the in-process server.
    pub(crate) fn push_loopback(&mut self, data: &[u8], sequence: u64) {
        if self.loopback.len() >= PACKET_QUEUE_SIZE {
            self.stats.queue_full += 1;
            return;
        }
        let packet = self.pool.packet(data, sequence);
        self.loopback.push_back(packet);
    }
}

impl<S> SocketIo<S> for ClientIo<S> {
    fn parts(&mut self) -> (&mut Sockets<S>, &mut TransportStats) {
        (&mut self.sockets, &mut self.stats)
    }
}

impl<S: Socket> Output<ClientEvent> for ClientIo<S> {
    fn send(&mut self, to: SocketAddr, datagram: &[u8]) {
        match self.sockets.send(to, datagram) {
            Ok(()) => self.stats.datagrams_sent += 1,
            Err(SendFailure::NoSocket) => self.stats.send_no_socket += 1,
            Err(SendFailure::Os) => self.stats.send_errors += 1,
        }
    }

    fn event(&mut self, event: ClientEvent) {
        // Leaving the connection empties the queues, as in the reference.
        let ClientEvent::StateChanged { to, .. } = event;
        if !to.is_active() {
            self.queue.clear(&mut self.pool);
            while let Some(packet) = self.loopback.pop_front() {
                self.pool.recycle(packet);
            }
        }
        self.events.push(event);
    }
}
