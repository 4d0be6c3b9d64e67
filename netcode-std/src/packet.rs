//! Received payloads, the bounded per-connection queues that hold them, and
//! the pool their buffers come back to.
//!
//! The core decrypts each payload in place in the transport's one receive
//! buffer. To offer the C library's `receive_packet` / `free_packet`, the
//! transport copies the payload into a buffer taken from a pool and queues
//! it; [`free_packet`](crate::Server::free_packet) puts the buffer back, so
//! in steady state no payload allocates.

use std::collections::VecDeque;

use netcode_proto::constants::MAX_PAYLOAD_BYTES;

/// Received payloads queued per client (and per server slot) before the
/// application takes them: 256, as in the reference. When a queue is full
/// the newest payload is dropped, as in the reference.
pub const PACKET_QUEUE_SIZE: usize = 256;

/// A payload received from the peer, with its packet sequence.
///
/// Give it back with `free_packet` on the client or server it came from so
/// its buffer is reused. Dropping it instead is harmless: it only costs an
/// allocation later.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceivedPacket {
    data: Vec<u8>,
    sequence: u64,
}

impl ReceivedPacket {
    /// The payload, 1 to 1200 bytes.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// The sequence of the packet that carried it.
    pub fn sequence(&self) -> u64 {
        self.sequence
    }

    /// The payload's length in bytes.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether the payload is empty (never, for a payload from the network).
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The payload as an owned vector (its buffer then leaves the pool).
    pub fn into_vec(self) -> Vec<u8> {
        self.data
    }
}

impl core::ops::Deref for ReceivedPacket {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.data
    }
}

impl AsRef<[u8]> for ReceivedPacket {
    fn as_ref(&self) -> &[u8] {
        &self.data
    }
}

/// Spare payload buffers, each with room for the largest payload.
#[derive(Debug)]
pub(crate) struct PacketPool {
    free: Vec<Vec<u8>>,
    limit: usize,
}

impl PacketPool {
    /// An empty pool that keeps at most `limit` spare buffers.
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            free: Vec::new(),
            limit,
        }
    }

    /// A packet holding a copy of `data`, in a recycled buffer when one is
    /// spare.
    pub(crate) fn packet(&mut self, data: &[u8], sequence: u64) -> ReceivedPacket {
        let mut buffer = self
            .free
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(MAX_PAYLOAD_BYTES));
        buffer.clear();
        buffer.extend_from_slice(data);
        ReceivedPacket {
            data: buffer,
            sequence,
        }
    }

    /// Takes a packet's buffer back.
    pub(crate) fn recycle(&mut self, packet: ReceivedPacket) {
        if self.free.len() < self.limit && packet.data.capacity() >= MAX_PAYLOAD_BYTES {
            self.free.push(packet.data);
        }
    }

    /// Spare buffers right now.
    #[cfg(test)]
    pub(crate) fn spare(&self) -> usize {
        self.free.len()
    }
}

/// One connection's received payloads, oldest first, at most
/// [`PACKET_QUEUE_SIZE`].
#[derive(Debug, Default)]
pub(crate) struct PacketQueue {
    packets: VecDeque<ReceivedPacket>,
    /// Whether the slot is in its server's list of slots with payloads
    /// (where it may stay, empty, until that list next passes it).
    pub(crate) listed: bool,
}

impl PacketQueue {
    /// Copies a payload in; returns false (and keeps nothing) when full.
    pub(crate) fn push(&mut self, pool: &mut PacketPool, data: &[u8], sequence: u64) -> bool {
        if self.packets.len() >= PACKET_QUEUE_SIZE {
            return false;
        }
        self.packets.push_back(pool.packet(data, sequence));
        true
    }

    /// The oldest payload.
    pub(crate) fn pop(&mut self) -> Option<ReceivedPacket> {
        self.packets.pop_front()
    }

    /// Whether no payload waits.
    pub(crate) fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }

    /// Drops every payload, returning the buffers to `pool`.
    pub(crate) fn clear(&mut self, pool: &mut PacketPool) {
        while let Some(packet) = self.packets.pop_front() {
            pool.recycle(packet);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_is_fifo_bounded_and_recycles() {
        let mut pool = PacketPool::new(8);
        let mut queue = PacketQueue::default();
        for i in 0..PACKET_QUEUE_SIZE {
            assert!(queue.push(&mut pool, &[i as u8; 3], i as u64));
        }
        assert!(!queue.push(&mut pool, &[0; 3], 999), "the 257th is dropped");
        let first = queue.pop().unwrap();
        assert_eq!((first.data(), first.sequence()), (&[0u8; 3][..], 0));
        pool.recycle(first);
        assert_eq!(pool.spare(), 1);
        let reused = pool.packet(&[5; 1200], 7);
        assert_eq!(pool.spare(), 0, "the spare buffer was reused");
        assert_eq!(reused.len(), 1200);
        queue.clear(&mut pool);
        assert_eq!(pool.spare(), 8, "the pool keeps at most its limit");
        assert!(queue.pop().is_none());
    }
}
