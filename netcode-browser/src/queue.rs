//! Bounded queues: [`BoundedQueue`], which drops what does not fit and
//! counts it, and [`Inbox`], where the session's reader leaves received
//! datagrams (and the news that the session closed) for the next update.

use std::collections::VecDeque;

/// Datagrams an [`Inbox`] holds between two updates; more are dropped and
/// counted. 1024 is over a second of a 60 Hz server's traffic at 10
/// datagrams a frame.
pub const INBOX_CAPACITY: usize = 1024;

/// A first-in first-out queue of at most `capacity` items: a push onto a
/// full queue drops the new item and counts it.
#[derive(Debug, Clone)]
pub struct BoundedQueue<T> {
    items: VecDeque<T>,
    capacity: usize,
    dropped: u64,
}

impl<T> BoundedQueue<T> {
    /// An empty queue that holds at most `capacity` items.
    pub fn new(capacity: usize) -> Self {
        Self {
            items: VecDeque::new(),
            capacity,
            dropped: 0,
        }
    }

    /// Appends `item`; returns false (and counts the drop) when the queue
    /// is full.
    pub fn push(&mut self, item: T) -> bool {
        if self.items.len() >= self.capacity {
            self.dropped = self.dropped.saturating_add(1);
            return false;
        }
        self.items.push_back(item);
        true
    }

    /// Takes the oldest item.
    pub fn pop(&mut self) -> Option<T> {
        self.items.pop_front()
    }

    /// Items waiting.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether no item is waiting.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The most items the queue holds.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Items dropped because the queue was full, since it was made.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

/// What the session's reader hands the client between updates: received
/// datagrams (at most [`INBOX_CAPACITY`]) and, once, why the session
/// closed.
#[derive(Debug, Clone)]
pub struct Inbox {
    datagrams: BoundedQueue<Vec<u8>>,
    closed: Option<String>,
}

impl Default for Inbox {
    fn default() -> Self {
        Self::new(INBOX_CAPACITY)
    }
}

impl Inbox {
    /// An empty inbox for at most `capacity` datagrams.
    pub fn new(capacity: usize) -> Self {
        Self {
            datagrams: BoundedQueue::new(capacity),
            closed: None,
        }
    }

    /// Leaves a received datagram; returns false (and counts the drop) when
    /// the inbox is full or the session is already closed.
    pub fn push(&mut self, datagram: Vec<u8>) -> bool {
        if self.closed.is_some() {
            return false;
        }
        self.datagrams.push(datagram)
    }

    /// Takes the oldest datagram.
    pub fn pop(&mut self) -> Option<Vec<u8>> {
        self.datagrams.pop()
    }

    /// Records that the session closed, and why; the first reason given
    /// is kept. Datagrams already left are still handed over.
    pub fn close(&mut self, reason: impl Into<String>) {
        if self.closed.is_none() {
            self.closed = Some(reason.into());
        }
    }

    /// Why the session closed, once it has.
    pub fn closed(&self) -> Option<&str> {
        self.closed.as_deref()
    }

    /// Datagrams waiting.
    pub fn len(&self) -> usize {
        self.datagrams.len()
    }

    /// Whether no datagram is waiting.
    pub fn is_empty(&self) -> bool {
        self.datagrams.is_empty()
    }

    /// Datagrams dropped because the inbox was full.
    pub fn dropped(&self) -> u64 {
        self.datagrams.dropped()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_queue_drops_and_counts_new_items() {
        let mut q = BoundedQueue::new(2);
        assert!(q.push(1) && q.push(2));
        assert!(!q.push(3));
        assert_eq!((q.len(), q.dropped(), q.capacity()), (2, 1, 2));
        assert_eq!(q.pop(), Some(1));
        assert!(q.push(4));
        assert_eq!((q.pop(), q.pop(), q.pop()), (Some(2), Some(4), None));
        assert!(q.is_empty());
    }

    #[test]
    fn a_closed_inbox_keeps_the_first_reason_and_takes_nothing_new() {
        let mut inbox = Inbox::new(4);
        assert!(inbox.push(vec![1]));
        inbox.close("server closed the session");
        inbox.close("later");
        assert!(!inbox.push(vec![2]));
        assert_eq!(inbox.closed(), Some("server closed the session"));
        assert_eq!(inbox.pop(), Some(vec![1]));
        assert!(inbox.is_empty());
    }
}
