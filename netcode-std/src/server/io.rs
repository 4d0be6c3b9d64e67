//! The server's side of the core's [`Output`]: sockets, event queue,
//! per-slot payload queues and the loopback outbox.

use std::collections::VecDeque;
use std::net::SocketAddr;

use netcode_proto::io::Output;
use netcode_proto::server::ServerEvent;

use crate::events::EventQueue;
use crate::loopback::LoopbackPacket;
use crate::packet::{PACKET_QUEUE_SIZE, PacketPool, PacketQueue};
use crate::socket::{SendFailure, SocketIo, Sockets};
use crate::stats::TransportStats;
use crate::transport::Socket;

/// Loopback payloads a server holds for its in-process clients before the
/// application moves them (16 queues' worth).
pub const SERVER_LOOPBACK_QUEUE_SIZE: usize = 16 * PACKET_QUEUE_SIZE;

/// Spare payload buffers a server keeps.
const SERVER_POOL_LIMIT: usize = 4096;

#[derive(Debug)]
pub(crate) struct ServerIo<S> {
    pub(crate) sockets: Sockets<S>,
    pub(crate) events: EventQueue<ServerEvent>,
    pub(crate) queues: Vec<PacketQueue>,
    pub(crate) pool: PacketPool,
    pub(crate) loopback: VecDeque<LoopbackPacket>,
    pub(crate) stats: TransportStats,
}

impl<S> ServerIo<S> {
    pub(crate) fn new(sockets: Sockets<S>) -> Self {
        Self {
            sockets,
            events: EventQueue::new(),
            queues: Vec::new(),
            pool: PacketPool::new(SERVER_POOL_LIMIT),
            loopback: VecDeque::new(),
            stats: TransportStats::default(),
        }
    }

    /// Queues a received payload for slot `index`, or counts it dropped.
    pub(crate) fn enqueue(&mut self, index: usize, data: &[u8], sequence: u64) {
        let queued = self
            .queues
            .get_mut(index)
            .is_some_and(|q| q.push(&mut self.pool, data, sequence));
        if !queued {
            self.stats.queue_full += 1;
        }
    }

    /// Holds a payload for the loopback client of slot `index`.
    pub(crate) fn push_loopback(&mut self, client_index: usize, data: &[u8], sequence: u64) {
        if self.loopback.len() >= SERVER_LOOPBACK_QUEUE_SIZE {
            self.stats.queue_full += 1;
            return;
        }
        let packet = self.pool.packet(data, sequence);
        self.loopback.push_back(LoopbackPacket {
            client_index,
            packet,
        });
    }

    /// Forgets every loopback payload held for slot `index`.
    fn purge_loopback(&mut self, index: usize) {
        for _ in 0..self.loopback.len() {
            if let Some(held) = self.loopback.pop_front() {
                if held.client_index == index {
                    self.pool.recycle(held.packet);
                } else {
                    self.loopback.push_back(held);
                }
            }
        }
    }
}

impl<S> SocketIo<S> for ServerIo<S> {
    fn parts(&mut self) -> (&mut Sockets<S>, &mut TransportStats) {
        (&mut self.sockets, &mut self.stats)
    }
}

impl<S: Socket> Output<ServerEvent> for ServerIo<S> {
    fn send(&mut self, to: SocketAddr, datagram: &[u8]) {
        match self.sockets.send(to, datagram) {
            Ok(()) => self.stats.datagrams_sent += 1,
            Err(SendFailure::NoSocket) => self.stats.send_no_socket += 1,
            Err(SendFailure::Os) => self.stats.send_errors += 1,
        }
    }

    fn event(&mut self, event: ServerEvent) {
        // The slot is being emptied: so is its queue, as in the reference.
        if let ServerEvent::ClientDisconnected { client_index, .. } = event {
            if let Some(queue) = self.queues.get_mut(client_index) {
                queue.clear(&mut self.pool);
            }
            self.purge_loopback(client_index);
        }
        self.events.push(event);
    }
}
