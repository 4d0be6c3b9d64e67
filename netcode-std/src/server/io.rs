//! The server's side of the core's [`Output`]: the link to the sockets,
//! the event queue, per-slot payload queues, the loopback outbox, and the
//! log.

use std::collections::VecDeque;
use std::net::SocketAddr;

use netcode_proto::io::Output;
use netcode_proto::server::{PersistRequest, ServerEvent};
use netcode_proto::stats::DroppedDatagram;

use crate::events::EventQueue;
use crate::link::Link;
use crate::logging::{DropLog, TARGET};
use crate::packet::{PACKET_QUEUE_SIZE, PacketPool, PacketQueue, ReceivedPacket};
use crate::transport::Socket;

use super::history::HistoryFile;

/// Loopback payloads a server holds for its in-process clients before the
/// application moves them (16 queues' worth).
pub const SERVER_LOOPBACK_QUEUE_SIZE: usize = 16 * PACKET_QUEUE_SIZE;

#[derive(Debug)]
pub(crate) struct ServerIo<S> {
    pub(crate) link: Link<S>,
    pub(crate) events: EventQueue<ServerEvent>,
    pub(crate) queues: Vec<PacketQueue>,
    /// The slots whose queues got payloads, each at most once, in the order
    /// they got them: what `receive_any` visits, instead of every slot.
    pub(crate) ready: VecDeque<u32>,
    pub(crate) pool: PacketPool,
    /// Payloads for loopback clients, with their slots, oldest first.
    loopback: VecDeque<(usize, ReceivedPacket)>,
    pub(crate) log: DropLog,
    /// The durable token history, when the config names a file.
    pub(crate) history: Option<HistoryFile>,
}

impl<S: Socket> ServerIo<S> {
    /// The output of a server whose pool keeps at most `pool_limit` spare
    /// payload buffers.
    pub(crate) fn new(link: Link<S>, history: Option<HistoryFile>, pool_limit: usize) -> Self {
        Self {
            link,
            events: EventQueue::new(),
            queues: Vec::new(),
            ready: VecDeque::new(),
            pool: PacketPool::new(pool_limit),
            loopback: VecDeque::new(),
            log: DropLog::new(),
            history,
        }
    }

    /// Queues a received payload for slot `index`, or counts it dropped.
    pub(crate) fn enqueue(&mut self, index: usize, data: &[u8], sequence: u64) {
        let Some(queue) = self.queues.get_mut(index) else {
            self.link.stats.queue_full += 1;
            return;
        };
        if !queue.push(&mut self.pool, data, sequence) {
            self.link.stats.queue_full += 1;
            return;
        }
        if !queue.listed {
            queue.listed = true;
            self.ready.push_back(index as u32);
        }
    }

    /// The oldest payload of the first slot in the ready list that has one,
    /// with the slot; that slot goes to the back of the list if it has more
    /// (so clients take turns, a payload each), and slots found empty leave
    /// it.
    pub(crate) fn pop_ready(&mut self) -> Option<(usize, ReceivedPacket)> {
        while let Some(slot) = self.ready.pop_front() {
            let index = slot as usize;
            let Some(queue) = self.queues.get_mut(index) else {
                continue;
            };
            let Some(packet) = queue.pop() else {
                queue.listed = false;
                continue;
            };
            if queue.is_empty() {
                queue.listed = false;
            } else {
                self.ready.push_back(slot);
            }
            return Some((index, packet));
        }
        None
    }

    /// Holds a payload for the loopback client of slot `index`.
    pub(crate) fn push_loopback(&mut self, index: usize, data: &[u8], sequence: u64) {
        if self.loopback.len() >= SERVER_LOOPBACK_QUEUE_SIZE {
            self.link.stats.queue_full += 1;
            return;
        }
        let packet = self.pool.packet(data, sequence);
        self.loopback.push_back((index, packet));
    }

    /// The oldest payload held for the loopback client of slot `index`.
    pub(crate) fn pop_loopback(&mut self, index: usize) -> Option<ReceivedPacket> {
        let position = self.loopback.iter().position(|(i, _)| *i == index)?;
        self.loopback.remove(position).map(|(_, packet)| packet)
    }

    /// Forgets every loopback payload held for slot `index`.
    fn purge_loopback(&mut self, index: usize) {
        for _ in 0..self.loopback.len() {
            if let Some((i, packet)) = self.loopback.pop_front() {
                if i == index {
                    self.pool.recycle(packet);
                } else {
                    self.loopback.push_back((i, packet));
                }
            }
        }
    }
}

impl<S: Socket> Output<ServerEvent> for ServerIo<S> {
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

    fn event(&mut self, event: ServerEvent) {
        match event {
            ServerEvent::ClientConnected {
                client_index,
                client_id,
                address,
            } => match address {
                Some(address) => log::info!(
                    target: TARGET,
                    "client {client_id:#x} connected from {address} in slot {client_index}"
                ),
                None => log::info!(
                    target: TARGET,
                    "loopback client {client_id:#x} connected in slot {client_index}"
                ),
            },
            ServerEvent::ClientDisconnected {
                client_index,
                client_id,
                reason,
                ..
            } => {
                log::info!(
                    target: TARGET,
                    "client {client_id:#x} in slot {client_index} disconnected: {reason}"
                );
                // The slot is being emptied: so is its queue, as in the
                // reference.
                if let Some(queue) = self.queues.get_mut(client_index) {
                    queue.clear(&mut self.pool);
                }
                self.purge_loopback(client_index);
            }
        }
        self.events.push(event);
    }

    fn dropped(&mut self, dropped: DroppedDatagram) {
        self.log.dropped(dropped, true);
    }

    /// Hands the token's record to the history file's writer thread; the
    /// server answers the request once it is durable (see
    /// `Server::settle_history`). A writer that is full hands it back, to
    /// be reported failed.
    fn persist_used_token(&mut self, request: PersistRequest) {
        if let Some(history) = &mut self.history
            && let Err(request) = history.writer.submit(request)
        {
            history.refused.push(request);
        }
    }
}
