//! An indexed binary min-heap of a table's live entries, ordered by when
//! each can be reclaimed (its expiry), with the free entries kept after it.
//!
//! It is what lets a full encryption mapping table or connect token history
//! find a reusable entry without a scan (STANDARD.md: *Processing
//! Connection Requests*, the history and the mappings): the root is the one
//! entry to look at, since if any live entry has lapsed, the root has. A
//! request against a full table costs one look at the root; admitting,
//! removing or re-keying an entry costs O(log n) sift steps.
//!
//! The heap's array is a permutation of every entry of the table: its
//! first `len` positions are the heap of live entries, the rest are the free
//! entries in no order, so taking a free entry needs no free list and `len`
//! is the table's occupancy. The array lives inside the entries, in bytes
//! they had spare: entry `i` keeps the array's element `i` (which entry is
//! at position `i`) and, for tables that re-key or remove entries anywhere
//! in the heap, its own position.

/// An entry of a table kept in an expiry heap.
pub(crate) trait HeapEntry {
    /// Ordered by when the entry can be reclaimed, earliest first.
    type Key: Ord;

    /// This entry's key.
    fn key(&self) -> Self::Key;

    /// The heap array's element stored beside this entry: which entry is at
    /// the position equal to this entry's index.
    fn heap_at(&self) -> u32;

    /// Sets [`heap_at`](Self::heap_at).
    fn set_heap_at(&mut self, entry: u32);

    /// Records that this entry now sits at `position`. Tables that only
    /// ever remove or re-key the root need not keep it.
    fn set_position(&mut self, position: u32);

    /// Where this entry sits, for tables that keep it (see
    /// [`set_position`](Self::set_position)); `None` for the others.
    fn position(&self) -> Option<u32> {
        None
    }
}

/// Empties the heap: every entry free, at the position of its own index.
pub(crate) fn reset<T: HeapEntry>(entries: &mut [T], len: &mut usize) {
    for (i, entry) in entries.iter_mut().enumerate() {
        entry.set_heap_at(i as u32);
        entry.set_position(i as u32);
    }
    *len = 0;
}

/// The live entry at the root: the earliest to lapse.
pub(crate) fn root<T: HeapEntry>(entries: &[T], len: usize) -> Option<usize> {
    (len > 0).then(|| entry_at(entries, 0))
}

/// A free entry, if any: the one [`admit_free`] admits next.
pub(crate) fn first_free<T: HeapEntry>(entries: &[T], len: usize) -> Option<usize> {
    (len < entries.len()).then(|| entry_at(entries, len))
}

/// Admits the entry [`first_free`] named, once the caller has given it its
/// key.
pub(crate) fn admit_free<T: HeapEntry>(entries: &mut [T], len: &mut usize) {
    if *len < entries.len() {
        *len += 1;
        sift_up(entries, *len - 1);
    }
}

/// Makes entry `entry` live with the key it now has: admitted if it was
/// free, re-keyed if it was live. Only for tables that keep positions.
pub(crate) fn admit_entry<T: HeapEntry>(entries: &mut [T], len: &mut usize, entry: usize) {
    let Some(position) = entries.get(entry).and_then(|e| e.position()) else {
        return;
    };
    let position = position as usize;
    if position < *len {
        rekeyed(entries, *len, position);
        return;
    }
    // Free: swap it to the first free position, then admit that one.
    let first_free = *len;
    let there = entry_at(entries, first_free);
    place(entries, position, there);
    place(entries, first_free, entry);
    admit_free(entries, len);
}

/// Moves the live entry at `position` to the free entries.
pub(crate) fn remove_at<T: HeapEntry>(entries: &mut [T], len: &mut usize, position: usize) {
    if position >= *len {
        return;
    }
    *len -= 1;
    let last = *len;
    let removed = entry_at(entries, position);
    if position != last {
        let moved = entry_at(entries, last);
        place(entries, position, moved);
        place(entries, last, removed);
        rekeyed(entries, *len, position);
    }
}

/// Restores the heap order after the key of the live entry at `position`
/// changed.
pub(crate) fn rekeyed<T: HeapEntry>(entries: &mut [T], len: usize, position: usize) {
    if position < len {
        let position = sift_up(entries, position);
        sift_down(entries, len, position);
    }
}

fn entry_at<T: HeapEntry>(entries: &[T], position: usize) -> usize {
    entries[position].heap_at() as usize
}

fn place<T: HeapEntry>(entries: &mut [T], position: usize, entry: usize) {
    entries[position].set_heap_at(entry as u32);
    entries[entry].set_position(position as u32);
}

fn sift_up<T: HeapEntry>(entries: &mut [T], mut position: usize) -> usize {
    let moving = entry_at(entries, position);
    while position > 0 {
        let parent = (position - 1) / 2;
        let above = entry_at(entries, parent);
        if entries[above].key() <= entries[moving].key() {
            break;
        }
        place(entries, position, above);
        position = parent;
    }
    place(entries, position, moving);
    position
}

fn sift_down<T: HeapEntry>(entries: &mut [T], len: usize, mut position: usize) {
    let moving = entry_at(entries, position);
    loop {
        let left = 2 * position + 1;
        if left >= len {
            break;
        }
        let right = left + 1;
        let mut child = left;
        if right < len
            && entries[entry_at(entries, right)].key() < entries[entry_at(entries, left)].key()
        {
            child = right;
        }
        let below = entry_at(entries, child);
        if entries[moving].key() <= entries[below].key() {
            break;
        }
        place(entries, position, below);
        position = child;
    }
    place(entries, position, moving);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, Default)]
    struct Item {
        key: u32,
        heap_at: u32,
        position: u32,
    }

    impl HeapEntry for Item {
        type Key = u32;
        fn key(&self) -> u32 {
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
    }

    fn check(items: &[Item], len: usize) {
        let mut seen = [false; 257];
        for p in 0..items.len() {
            let e = items[p].heap_at as usize;
            assert!(!seen[e], "a permutation");
            seen[e] = true;
            assert_eq!(items[e].position as usize, p, "positions agree");
            if p > 0 && p < len {
                let parent = items[(p - 1) / 2].heap_at as usize;
                assert!(items[parent].key <= items[e].key, "heap order");
            }
        }
        let live = (0..len).map(|p| items[items[p].heap_at as usize].key);
        assert_eq!(root(items, len).map(|r| items[r].key), live.min());
    }

    #[test]
    fn admit_remove_and_rekey_keep_the_order_and_the_minimum_at_the_root() {
        for size in [1usize, 2, 3, 7, 64, 257] {
            let mut storage = [Item::default(); 257];
            let items = &mut storage[..size];
            let mut len = 0;
            reset(items, &mut len);
            check(items, len);
            let mut state = 0x2545_f491_u64 ^ size as u64;
            for _ in 0..4000 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let key = (state >> 32) as u32 % 50;
                match state % 4 {
                    0 | 1 => {
                        if let Some(e) = first_free(items, len) {
                            items[e].key = key;
                            admit_free(items, &mut len);
                        }
                    }
                    2 if len > 0 => {
                        let position = (state >> 8) as usize % len;
                        remove_at(items, &mut len, position);
                    }
                    _ if len > 0 => {
                        let position = (state >> 8) as usize % len;
                        let e = items[position].heap_at as usize;
                        items[e].key = key;
                        rekeyed(items, len, position);
                    }
                    _ => {}
                }
                check(items, len);
            }
        }
        assert_eq!(root::<Item>(&[], 0), None);
        assert_eq!(first_free::<Item>(&[], 0), None);
    }
}
