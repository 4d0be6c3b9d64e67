//! Where a server keeps its state, sized by the caller.
//!
//! The core never allocates, so a server's tables live in a
//! [`ServerStorage`] the caller provides: [`ArrayStorage`] for a fixed slot
//! count known at compile time (works without an allocator, for example in
//! a `static`), or [`HeapStorage`] (feature `alloc`) for a slot count chosen
//! at run time, built straight on the heap without passing through the stack.
//!
//! Every table scales with the slot count: per slot, 4 encryption mappings
//! and 8 entries of connect token history (the reference's ratios), plus
//! the buckets of three hash indices kept at most half full.

use super::history::TokenEntry;
use super::mapping::Mapping;
use super::slot::ClientSlot;

/// Encryption mappings per client slot (the reference has 1024 for 256 slots).
pub const MAPPINGS_PER_SLOT: usize = 4;
/// Connect token history entries per client slot (the reference has 2048 for 256).
pub const TOKENS_PER_SLOT: usize = 8;
/// Address index buckets per slot: twice the mappings.
pub const ADDRESS_BUCKETS_PER_SLOT: usize = 2 * MAPPINGS_PER_SLOT;
/// Client id index buckets per slot.
pub const CLIENT_ID_BUCKETS_PER_SLOT: usize = 2;
/// Token history index buckets per slot: twice the entries.
pub const TOKEN_BUCKETS_PER_SLOT: usize = 2 * TOKENS_PER_SLOT;

/// Mutable views of every table of a server.
#[derive(Debug)]
pub struct Tables<'a> {
    /// One per client slot.
    pub slots: &'a mut [ClientSlot],
    /// `MAPPINGS_PER_SLOT` per slot.
    pub mappings: &'a mut [Mapping],
    /// `TOKENS_PER_SLOT` per slot.
    pub tokens: &'a mut [TokenEntry],
    /// `ADDRESS_BUCKETS_PER_SLOT` per slot.
    pub address_index: &'a mut [u32],
    /// `CLIENT_ID_BUCKETS_PER_SLOT` per slot.
    pub client_id_index: &'a mut [u32],
    /// `TOKEN_BUCKETS_PER_SLOT` per slot.
    pub token_index: &'a mut [u32],
    /// At least one bit per slot.
    pub free_slots: &'a mut [u64],
}

/// Storage for a server's tables. Implement it to place them yourself; the
/// slices must keep their lengths for the life of the server.
pub trait ServerStorage {
    /// Every table, mutably.
    fn tables(&mut self) -> Tables<'_>;

    /// The client slots, for read-only accessors.
    fn slots(&self) -> &[ClientSlot];
}

/// Storage for exactly `N` slots, inline. Large: put it in a `static` or on
/// the heap rather than on a small stack.
#[derive(Debug, Clone)]
pub struct ArrayStorage<const N: usize> {
    slots: [ClientSlot; N],
    mappings: [[Mapping; MAPPINGS_PER_SLOT]; N],
    tokens: [[TokenEntry; TOKENS_PER_SLOT]; N],
    address_index: [[u32; ADDRESS_BUCKETS_PER_SLOT]; N],
    client_id_index: [[u32; CLIENT_ID_BUCKETS_PER_SLOT]; N],
    token_index: [[u32; TOKEN_BUCKETS_PER_SLOT]; N],
    free_slots: [u64; N],
}

const NO_MAPPINGS: [Mapping; MAPPINGS_PER_SLOT] = [Mapping::EMPTY; MAPPINGS_PER_SLOT];
const NO_TOKENS: [TokenEntry; TOKENS_PER_SLOT] = [TokenEntry::EMPTY; TOKENS_PER_SLOT];

impl<const N: usize> ArrayStorage<N> {
    /// Empty storage.
    pub const fn new() -> Self {
        Self {
            slots: [ClientSlot::EMPTY; N],
            mappings: [NO_MAPPINGS; N],
            tokens: [NO_TOKENS; N],
            address_index: [[0; ADDRESS_BUCKETS_PER_SLOT]; N],
            client_id_index: [[0; CLIENT_ID_BUCKETS_PER_SLOT]; N],
            token_index: [[0; TOKEN_BUCKETS_PER_SLOT]; N],
            free_slots: [0; N],
        }
    }
}

impl<const N: usize> Default for ArrayStorage<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> ServerStorage for ArrayStorage<N> {
    fn tables(&mut self) -> Tables<'_> {
        Tables {
            slots: &mut self.slots,
            mappings: self.mappings.as_flattened_mut(),
            tokens: self.tokens.as_flattened_mut(),
            address_index: self.address_index.as_flattened_mut(),
            client_id_index: self.client_id_index.as_flattened_mut(),
            token_index: self.token_index.as_flattened_mut(),
            free_slots: &mut self.free_slots[..N.div_ceil(64)],
        }
    }

    fn slots(&self) -> &[ClientSlot] {
        &self.slots
    }
}

#[cfg(feature = "alloc")]
pub use heap::HeapStorage;

#[cfg(feature = "alloc")]
mod heap {
    use alloc::boxed::Box;
    use alloc::vec;

    use super::*;

    /// Storage for a slot count chosen at run time, on the heap.
    #[derive(Debug, Clone)]
    pub struct HeapStorage {
        slots: Box<[ClientSlot]>,
        mappings: Box<[Mapping]>,
        tokens: Box<[TokenEntry]>,
        address_index: Box<[u32]>,
        client_id_index: Box<[u32]>,
        token_index: Box<[u32]>,
        free_slots: Box<[u64]>,
    }

    impl HeapStorage {
        /// Empty storage for `slots` client slots.
        pub fn new(slots: usize) -> Self {
            Self {
                slots: vec![ClientSlot::EMPTY; slots].into_boxed_slice(),
                mappings: vec![Mapping::EMPTY; slots * MAPPINGS_PER_SLOT].into_boxed_slice(),
                tokens: vec![TokenEntry::EMPTY; slots * TOKENS_PER_SLOT].into_boxed_slice(),
                address_index: vec![0; slots * ADDRESS_BUCKETS_PER_SLOT].into_boxed_slice(),
                client_id_index: vec![0; slots * CLIENT_ID_BUCKETS_PER_SLOT].into_boxed_slice(),
                token_index: vec![0; slots * TOKEN_BUCKETS_PER_SLOT].into_boxed_slice(),
                free_slots: vec![0; slots.div_ceil(64)].into_boxed_slice(),
            }
        }
    }

    impl ServerStorage for HeapStorage {
        fn tables(&mut self) -> Tables<'_> {
            Tables {
                slots: &mut self.slots,
                mappings: &mut self.mappings,
                tokens: &mut self.tokens,
                address_index: &mut self.address_index,
                client_id_index: &mut self.client_id_index,
                token_index: &mut self.token_index,
                free_slots: &mut self.free_slots,
            }
        }

        fn slots(&self) -> &[ClientSlot] {
            &self.slots
        }
    }
}
