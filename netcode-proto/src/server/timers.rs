//! When each connected client next needs the server's attention: a heap of
//! the slots' timers, so that an update visits only the slots whose
//! keep-alive or timeout is due (STANDARD.md: *Connected Clients*, the
//! keep-alives a server sends and the timeouts it applies).
//!
//! Every connected network client (loopback clients have no timers) has
//! one timer in an indexed min-heap ([`expiry`](super::expiry)), keyed by
//! when its slot is next due: the earlier of its next keep-alive and its
//! timeout, as of when the key was set. Sending and receiving only move
//! those deadlines later, and they leave the key alone: a key is never
//! later than its slot's real deadline, only earlier. An update takes the
//! root while its key has come, does what is really due for that slot, and
//! sets its key to the slot's real next deadline; the slots whose keys have
//! not come are not visited. So an update costs O(k log n) for the k slots
//! whose keys came (at most every slot once per keep-alive interval), and
//! sending or receiving a packet costs nothing here.

use super::compact::Nanos;
use super::expiry::{self, HeapEntry};
use super::slot::ClientSlot;
use crate::time::Instant;
use crate::timing::{SERVER_KEEP_ALIVE, SERVER_TIMEOUT, after, next_send};

/// When the connected client of `slot` is next due: its next keep-alive,
/// or its timeout if that comes first.
pub(crate) fn slot_deadline(slot: &ClientSlot) -> Instant {
    let keep_alive = SERVER_KEEP_ALIVE.earliest(next_send(slot.last_send));
    match slot.timeout {
        Some(timeout) => keep_alive.min(SERVER_TIMEOUT.earliest(after(slot.last_receive, timeout))),
        None => keep_alive,
    }
}

/// The timer of one client slot: its key, and its place in the heap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotTimer {
    /// When the slot is next due, as of when this was set (never later than
    /// its real deadline).
    key: Nanos,
    /// The heap array's element kept beside this timer (see `expiry.rs`).
    heap_at: u32,
    /// This timer's position in the heap array.
    position: u32,
}

impl SlotTimer {
    /// An unarmed timer.
    pub const EMPTY: Self = Self {
        key: Nanos::ZERO,
        heap_at: 0,
        position: 0,
    };
}

impl Default for SlotTimer {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl HeapEntry for SlotTimer {
    type Key = Nanos;

    fn key(&self) -> Nanos {
        self.key
    }

    fn heap_at(&self) -> u32 {
        self.heap_at
    }

    fn set_heap_at(&mut self, entry: u32) {
        self.heap_at = entry;
    }

    fn set_position(&mut self, position: u32) {
        self.position = position;
    }

    fn position(&self) -> Option<u32> {
        Some(self.position)
    }
}

/// Arms (or re-arms) `timers[index]`, the timer of `slot`, for the slot's
/// real deadline, in the heap of the first `armed` timers.
pub(super) fn arm(timers: &mut [SlotTimer], armed: &mut usize, index: usize, slot: &ClientSlot) {
    let Some(timer) = timers.get_mut(index) else {
        return;
    };
    timer.key = Nanos::new(slot_deadline(slot));
    expiry::admit_entry(timers, armed, index);
}

/// Disarms `timers[index]`, if it is armed.
pub(super) fn disarm(timers: &mut [SlotTimer], armed: &mut usize, index: usize) {
    if let Some(timer) = timers.get(index) {
        let position = timer.position as usize;
        expiry::remove_at(timers, armed, position);
    }
}

/// The slot whose timer's key comes first among the `armed` ones, and that
/// key.
pub(super) fn first(timers: &[SlotTimer], armed: usize) -> Option<(usize, Nanos)> {
    expiry::root(timers, armed).map(|index| (index, timers[index].key))
}
