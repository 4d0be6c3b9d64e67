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

/// Room in the buffers of small payloads: most game traffic is below it,
/// and a queue of such payloads then takes a fifth of the memory (and of
/// the cache lines) it would in buffers of the largest size.
const SMALL_PAYLOAD_BYTES: usize = 256;

/// Spare payload buffers in two sizes: room for [`SMALL_PAYLOAD_BYTES`],
/// and room for the largest payload.
#[derive(Debug)]
pub(crate) struct PacketPool {
    small: Vec<Vec<u8>>,
    large: Vec<Vec<u8>>,
    limit: usize,
}

impl PacketPool {
    /// An empty pool that keeps at most `limit` spare buffers.
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            small: Vec::new(),
            large: Vec::new(),
            limit,
        }
    }

    /// A packet holding a copy of `data`, in a recycled buffer of its size
    /// when one is spare.
    pub(crate) fn packet(&mut self, data: &[u8], sequence: u64) -> ReceivedPacket {
        let (free, room) = if data.len() <= SMALL_PAYLOAD_BYTES {
            (&mut self.small, SMALL_PAYLOAD_BYTES)
        } else {
            (&mut self.large, MAX_PAYLOAD_BYTES)
        };
        let mut buffer = free.pop().unwrap_or_else(|| Vec::with_capacity(room));
        buffer.clear();
        buffer.extend_from_slice(data);
        ReceivedPacket {
            data: buffer,
            sequence,
        }
    }

    /// Takes a packet's buffer back.
    pub(crate) fn recycle(&mut self, packet: ReceivedPacket) {
        if self.small.len() + self.large.len() >= self.limit {
            return;
        }
        let room = packet.data.capacity();
        if room >= MAX_PAYLOAD_BYTES {
            self.large.push(packet.data);
        } else if room >= SMALL_PAYLOAD_BYTES {
            self.small.push(packet.data);
        }
    }

    /// Spare buffers right now.
    #[cfg(test)]
    pub(crate) fn spare(&self) -> usize {
        self.small.len() + self.large.len()
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
        let reused = pool.packet(&[5; 200], 7);
        assert_eq!(pool.spare(), 0, "the spare buffer was reused");
        assert_eq!(reused.len(), 200);
        let large = pool.packet(&[6; 1200], 8);
        assert_eq!(large.len(), 1200);
        pool.recycle(reused);
        pool.recycle(large);
        assert_eq!(pool.spare(), 2);
        let small_again = pool.packet(&[7; 1], 9);
        let large_again = pool.packet(&[8; 257], 10);
        assert_eq!(pool.spare(), 0, "each size reused its own spare");
        assert!(small_again.data.capacity() < MAX_PAYLOAD_BYTES);
        assert!(large_again.data.capacity() >= MAX_PAYLOAD_BYTES);
        queue.clear(&mut pool);
        assert_eq!(pool.spare(), 8, "the pool keeps at most its limit");
        assert!(queue.pop().is_none());
    }
}
