//! A bounded queue of the events the core reports, drained by the caller.

use std::collections::VecDeque;

/// Events kept for the caller before the oldest are dropped.
pub const EVENT_QUEUE_SIZE: usize = 4096;

/// Events in arrival order; when full, the oldest is dropped and counted.
#[derive(Debug)]
pub(crate) struct EventQueue<E> {
    events: VecDeque<E>,
    pub(crate) dropped: u64,
}

impl<E> EventQueue<E> {
    pub(crate) fn new() -> Self {
        Self {
            events: VecDeque::new(),
            dropped: 0,
        }
    }

    pub(crate) fn push(&mut self, event: E) {
        if self.events.len() >= EVENT_QUEUE_SIZE {
            self.events.pop_front();
            self.dropped += 1;
        }
        self.events.push_back(event);
    }

    pub(crate) fn pop(&mut self) -> Option<E> {
        self.events.pop_front()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_newest_when_full() {
        let mut queue = EventQueue::new();
        for i in 0..EVENT_QUEUE_SIZE + 2 {
            queue.push(i);
        }
        assert_eq!(queue.dropped, 2);
        assert_eq!(queue.pop(), Some(2));
    }
}
