//! Memory handed to C through the config's allocator (allocator.rs): the
//! received payloads a client or server
//! has handed out and not yet had back ([`Packets`]), so that a free of
//! anything else is refused, with the blocks it keeps for the next ones,
//! and the values C reads through pointers into an object ([`Exposed`]).

use std::collections::HashSet;
use std::ffi::c_void;
use std::hash::{BuildHasherDefault, Hasher};
use std::ptr::NonNull;

use netcode_std::proto::constants::MAX_PAYLOAD_BYTES;

use crate::allocator::Allocator;
use crate::{logging, objects};

/// Zeroed bytes after every payload handed out, as the reference keeps
/// since 1.4.6, so a reader that loads 8 bytes at a time from the last
/// bytes of a payload stays inside the allocation.
pub(crate) const PAYLOAD_SLACK: usize = 8;

/// Hashes a pointer by multiplying it: addresses of live blocks are
/// distinct, and this is all the mixing a set of them needs.
#[derive(Debug, Default)]
struct PointerHasher(u64);

impl Hasher for PointerHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(29);
    }
}

/// The bytes of every block a payload is handed out in: the largest
/// payload and its slack, so that any block holds any payload and a block
/// C gives back can carry the next one.
const BLOCK_BYTES: usize = MAX_PAYLOAD_BYTES + PAYLOAD_SLACK;

/// Outstanding payloads recorded without hashing.
const RECENT: usize = 8;

/// Blocks C gave back that an object keeps for its next payloads (about
/// 77 KB at most); those beyond go back to the allocator at once.
const SPARE_BLOCKS: usize = 64;

/// The payloads a client or server has handed to C and not yet had back,
/// and the blocks it keeps for the next ones: a payload costs a copy and
/// no allocation while C gives payloads back as fast as it takes them.
#[derive(Debug, Default)]
pub(crate) struct Packets {
    /// The first outstanding payloads, each in the first free entry: a
    /// program that frees what it receives before the next finds its
    /// payload here at once. The pointers themselves (not their
    /// addresses), so that each is freed through the pointer the allocator
    /// returned, provenance and all.
    recent: [Option<NonNull<u8>>; RECENT],
    /// The others, when more than [`RECENT`] are outstanding.
    outstanding: HashSet<NonNull<u8>, BuildHasherDefault<PointerHasher>>,
    /// Blocks from the allocator, [`BLOCK_BYTES`] each, free for the next
    /// payloads.
    spare: Vec<NonNull<u8>>,
}

impl Packets {
    /// A copy of `data` (at most `MAX_PAYLOAD_BYTES`), followed by
    /// [`PAYLOAD_SLACK`] zero bytes, in a spare block or one from
    /// `allocator`, recorded as outstanding; NULL (logged) when the
    /// allocator fails, or returns memory of a live object (a broken
    /// allocator: that memory is left alone); NULL also for `data` longer
    /// than a payload, which the host never holds.
    pub(crate) fn hand_out(&mut self, allocator: &Allocator, data: &[u8]) -> *mut u8 {
        if data.len() > MAX_PAYLOAD_BYTES {
            return std::ptr::null_mut();
        }
        let Some(pointer) = self.spare.pop().or_else(|| fresh_block(allocator)) else {
            return std::ptr::null_mut();
        };
        // SAFETY: `pointer` is a block of `BLOCK_BYTES` (from `fresh_block`,
        // or given back and kept), owned here and not outstanding, so
        // nothing else uses it; `data.len() + PAYLOAD_SLACK` fit in it, and
        // it cannot overlap `data` (a live Rust slice).
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), pointer.as_ptr(), data.len());
            pointer.add(data.len()).write_bytes(0, PAYLOAD_SLACK);
        }
        match self.recent.iter_mut().find(|entry| entry.is_none()) {
            Some(entry) => *entry = Some(pointer),
            None => {
                self.outstanding.insert(pointer);
            }
        }
        pointer.as_ptr()
    }

    /// Takes `packet` back if it is outstanding here (kept for the next
    /// payload, or freed when enough are kept), and returns true; returns
    /// false (the caller logs) for anything else: NULL, freed already, or
    /// handed out by another object.
    pub(crate) fn take_back(&mut self, allocator: &Allocator, packet: *mut c_void) -> bool {
        let Some(packet) = NonNull::new(packet.cast::<u8>()) else {
            return false;
        };
        // The pointer the allocator returned (equal to `packet`).
        let recent = self.recent.iter_mut().find(|entry| **entry == Some(packet));
        let Some(pointer) = recent
            .and_then(Option::take)
            .or_else(|| self.outstanding.take(&packet))
        else {
            return false;
        };
        if self.spare.len() < SPARE_BLOCKS {
            self.spare.push(pointer);
        } else {
            // SAFETY: it was outstanding: a block from this object's
            // allocator, not freed since (taken out of the set now, and not
            // kept, so never freed again).
            unsafe { allocator.free(pointer) };
        }
        true
    }

    /// Frees every block: the outstanding payloads (what C never freed)
    /// and the spare ones; returns how many payloads were outstanding.
    pub(crate) fn free_all(&mut self, allocator: &Allocator) -> usize {
        let count = self.len();
        let recent = self.recent.iter_mut().filter_map(Option::take);
        for pointer in recent
            .chain(self.outstanding.drain())
            .chain(self.spare.drain(..))
        {
            // SAFETY: each a block from this allocator, never freed, and
            // taken out of the recent entries, the set or the spare list.
            unsafe { allocator.free(pointer) };
        }
        count
    }

    /// How many payloads are outstanding.
    pub(crate) fn len(&self) -> usize {
        self.recent.iter().flatten().count() + self.outstanding.len()
    }
}

/// A new block of [`BLOCK_BYTES`] from `allocator`; `None` (logged) when
/// it returns NULL, or memory of a live object (left alone, unwritten).
fn fresh_block(allocator: &Allocator) -> Option<NonNull<u8>> {
    let Some(pointer) = allocator.alloc(BLOCK_BYTES) else {
        logging::error(format_args!(
            "receive_packet: the allocate function returned NULL; payload dropped"
        ));
        return None;
    };
    if let Some(name) = objects::live_memory(pointer.as_ptr(), BLOCK_BYTES) {
        logging::error(format_args!(
            "receive_packet: the allocate function returned {pointer:p}, memory of a live {name}; payload dropped"
        ));
        return None;
    }
    Some(pointer)
}

/// Values C reads through pointers an object handed it (a server's slot
/// addresses and user data, a client's server address), in an allocation
/// of their own rather than in the object's state: a call holds the state
/// as `&mut` while it runs, and C may read what it was given from inside
/// that call (from a send or receive override), which must not alias that
/// borrow. They are written through the raw pointer only, between
/// callbacks; no Rust reference to them is ever made.
pub(crate) struct Exposed<T> {
    /// A leaked `Box<[T]>`, taken back and freed by `drop`.
    values: NonNull<[T]>,
}

impl<T: Copy> Exposed<T> {
    /// `len` values, each `value`.
    pub(crate) fn new(value: T, len: usize) -> Self {
        let values: &mut [T] = Box::leak(vec![value; len].into_boxed_slice());
        Self {
            values: NonNull::from(values),
        }
    }

    /// Where C reads value `index`; `None` past the end.
    pub(crate) fn at(&self, index: usize) -> Option<*mut T> {
        (index < self.values.len()).then(|| self.values.as_ptr().cast::<T>().wrapping_add(index))
    }

    /// Sets value `index` (nothing past the end).
    pub(crate) fn set(&mut self, index: usize, value: T) {
        if let Some(pointer) = self.at(index) {
            // SAFETY: in bounds of our allocation (checked by `at`), which
            // lives until `drop`; written through the raw pointer, so no
            // reference aliases C's pointers, and C does not read it
            // meanwhile (no callback runs during a write; one thread).
            unsafe { pointer.write(value) };
        }
    }
}

impl<T> Drop for Exposed<T> {
    fn drop(&mut self) {
        // SAFETY: the `Box` leaked in `new`, taken back once, here; C's
        // pointers into it are valid until the object is destroyed (this
        // drop), as documented for each function that hands one out.
        drop(unsafe { Box::from_raw(self.values.as_ptr()) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_come_back_once() {
        let allocator = Allocator::new(std::ptr::null_mut(), None, None);
        let mut packets = Packets::default();
        let mut other = Packets::default();
        let a = packets.hand_out(&allocator, b"hello");
        assert!(!a.is_null());
        // SAFETY: 5 bytes and the slack were handed out.
        let copy = unsafe { std::slice::from_raw_parts(a, 5 + PAYLOAD_SLACK) };
        assert_eq!(&copy[..5], b"hello");
        assert!(copy[5..].iter().all(|&b| b == 0));
        assert!(!other.take_back(&allocator, a.cast()), "another object's");
        assert!(packets.take_back(&allocator, a.cast()));
        assert!(!packets.take_back(&allocator, a.cast()), "freed twice");
        assert!(!packets.take_back(&allocator, std::ptr::null_mut()));
        let _ = packets.hand_out(&allocator, b"");
        let _ = packets.hand_out(&allocator, &[7; 1200]);
        assert_eq!(packets.len(), 2);
        assert_eq!(packets.free_all(&allocator), 2);
        assert_eq!(packets.len(), 0);
    }

    #[test]
    fn many_outstanding_come_back_in_any_order_and_blocks_are_reused() {
        let allocator = Allocator::new(std::ptr::null_mut(), None, None);
        let mut packets = Packets::default();
        let handed: Vec<_> = (0..3 * RECENT as u8)
            .map(|i| packets.hand_out(&allocator, &[i; 10]))
            .collect();
        assert_eq!(packets.len(), 3 * RECENT);
        // Every other one back, from the last: some from the recent
        // entries, some from the set.
        for &pointer in handed.iter().rev().step_by(2) {
            assert!(packets.take_back(&allocator, pointer.cast()));
            assert!(!packets.take_back(&allocator, pointer.cast()), "twice");
        }
        assert_eq!(packets.len(), 3 * RECENT / 2);
        for (i, &pointer) in handed.iter().enumerate().rev().skip(1).step_by(2) {
            // SAFETY: outstanding: 10 bytes and the slack.
            let copy = unsafe { std::slice::from_raw_parts(pointer, 10 + PAYLOAD_SLACK) };
            assert_eq!(&copy[..10], &[i as u8; 10], "untouched by the frees");
        }
        // A block given back carries the next payload.
        let next = packets.hand_out(&allocator, b"again");
        assert!(handed.contains(&next), "a spare block is reused");
        // SAFETY: 5 bytes and the slack were handed out.
        let copy = unsafe { std::slice::from_raw_parts(next, 5 + PAYLOAD_SLACK) };
        assert_eq!(copy, b"again\0\0\0\0\0\0\0\0");
        assert_eq!(packets.free_all(&allocator), 3 * RECENT / 2 + 1);
        assert_eq!(packets.len(), 0);
        assert!(packets.spare.is_empty());
    }

    #[test]
    fn exposed_values_are_written_in_bounds_only() {
        let mut values = Exposed::new(1u32, 3);
        values.set(1, 7);
        values.set(3, 9);
        assert!(values.at(3).is_none());
        let read: Vec<u32> = (0..3)
            // SAFETY: in bounds, and nothing writes meanwhile.
            .map(|i| unsafe { values.at(i).unwrap().read() })
            .collect();
        assert_eq!(read, [1, 7, 1]);
    }
}
