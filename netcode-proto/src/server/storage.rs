//! Where a server keeps its state, sized by the caller.
//!
//! STANDARD.md: *Server-Side Overview* (the slots) and the tables of
//! *Processing Connection Requests*.
//!
//! The core never allocates, so a server's tables live in a
//! [`ServerStorage`] the caller provides: [`ArrayStorage`] for a fixed slot
//! count known at compile time (works without an allocator, for example in
//! a `static`), or [`HeapStorage`] (feature `alloc`) for a slot count chosen
//! at run time, built straight on the heap without passing through the stack.
//!
//! The tables scale with the slot count: per slot, 4 encryption mappings and
//! 8 entries of connect token history (the reference's ratios), plus the
//! buckets of three hash indices kept at most half full. The history must
//! hold every token used within one token lifetime, so [`HeapStorage::new`]
//! never goes below the reference's fixed sizes (1024 mappings, 2048 history
//! entries) however few slots it has. [`HeapStorage::with_token_history`]
//! sizes the history by a [`TokenHistorySize`] (what a size absorbs against
//! a flood of valid tokens is worked out in `sizing.rs`, on that type), and
//! [`HeapStorage::with_tables`] sets all three sizes freely.

use super::history::TokenEntry;
use super::mapping::Mapping;
use super::sizing::TOKENS_PER_SLOT;
#[cfg(doc)]
use super::sizing::TokenHistorySize;
use super::slot::ClientSlot;
use super::tables::Tables;
use super::timers::SlotTimer;
use crate::crypto::OpeningKey;

/// Encryption mappings per client slot (the reference has 1024 for 256 slots).
pub const MAPPINGS_PER_SLOT: usize = 4;
/// Address index buckets per slot: twice the mappings.
pub const ADDRESS_BUCKETS_PER_SLOT: usize = 2 * MAPPINGS_PER_SLOT;
/// Client id index buckets per slot.
pub const CLIENT_ID_BUCKETS_PER_SLOT: usize = 2;
/// Token history index buckets per slot: twice the entries.
pub const TOKEN_BUCKETS_PER_SLOT: usize = 2 * TOKENS_PER_SLOT;
/// Fewest encryption mappings `HeapStorage::new` makes (the reference's count).
pub const MIN_MAPPINGS: usize = 1024;

/// Storage for a server's tables. Implement it to place them yourself; the
/// slices must keep their lengths for the life of the server.
pub trait ServerStorage {
    /// Every table, mutably.
    fn tables(&mut self) -> Tables<'_>;

    /// The client slots, for read-only accessors.
    fn slots(&self) -> &[ClientSlot];

    /// Called before a client connects in slot `index`: storage whose
    /// [`prepared_keys`](Tables::prepared_keys) table grows with the
    /// connected clients makes it reach that slot now. The default does
    /// nothing: the table keeps the length it has.
    fn reach_prepared_key(&mut self, index: usize) {
        let _ = index;
    }
}

/// Storage for exactly `N` slots, inline, with the reference's per-slot
/// ratios (4 mappings and 8 history entries per slot). Large: put it in a
/// `static` or on the heap rather than on a small stack. For a handful of
/// slots the history is small too (8 tokens per slot within one token
/// lifetime); implement [`ServerStorage`] over your own arrays to size it
/// separately.
#[derive(Debug, Clone)]
pub struct ArrayStorage<const N: usize> {
    slots: [ClientSlot; N],
    mappings: [[Mapping; MAPPINGS_PER_SLOT]; N],
    tokens: [[TokenEntry; TOKENS_PER_SLOT]; N],
    address_index: [[u32; ADDRESS_BUCKETS_PER_SLOT]; N],
    client_id_index: [[u32; CLIENT_ID_BUCKETS_PER_SLOT]; N],
    token_index: [[u32; TOKEN_BUCKETS_PER_SLOT]; N],
    free_slots: [u64; N],
    timers: [SlotTimer; N],
    prepared_keys: [Option<OpeningKey>; N],
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
            timers: [SlotTimer::EMPTY; N],
            prepared_keys: [const { None }; N],
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
            timers: &mut self.timers,
            prepared_keys: &mut self.prepared_keys,
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
    use alloc::vec::Vec;

    use super::super::sizing::TokenHistorySize;
    use super::*;

    /// Storage for a slot count chosen at run time, on the heap.
    ///
    /// Every table is made at its full size up front, except the prepared
    /// receive keys ([`Tables::prepared_keys`]), which grow with the
    /// connected clients: when a client connects in a slot the table does
    /// not reach yet, it grows to that slot (at least doubling, never past
    /// the slot count). So a server pays for the keys of the most clients
    /// it has had connected at once, not of every slot, and allocates at
    /// most about log2(slots) times in its life, each time on a connection
    /// that sets a new high (never per packet).
    ///
    /// [`clone_from`](Clone::clone_from) onto storage of the same table
    /// sizes copies into its tables without allocating (but for the
    /// prepared key table, when the source's has grown further).
    #[derive(Debug)]
    pub struct HeapStorage {
        slots: Box<[ClientSlot]>,
        mappings: Box<[Mapping]>,
        tokens: Box<[TokenEntry]>,
        address_index: Box<[u32]>,
        client_id_index: Box<[u32]>,
        token_index: Box<[u32]>,
        free_slots: Box<[u64]>,
        timers: Box<[SlotTimer]>,
        prepared_keys: Vec<Option<OpeningKey>>,
    }

    /// How many slots the prepared key table reaches once a client has
    /// connected (or all of them, when fewer).
    const FIRST_PREPARED_KEYS: usize = 16;

    impl HeapStorage {
        /// Empty storage for `slots` client slots, with the reference's
        /// per-slot ratios but never fewer than [`MIN_MAPPINGS`] mappings
        /// and [`MIN_TOKENS`](super::super::MIN_TOKENS) history entries.
        pub fn new(slots: usize) -> Self {
            Self::with_token_history(slots, TokenHistorySize::REFERENCE)
        }

        /// Empty storage for `slots` client slots with the reference's
        /// mappings (4 per slot, at least [`MIN_MAPPINGS`]) and a connect
        /// token history of `history` (see [`TokenHistorySize`] for what a
        /// size absorbs against a flood of valid tokens).
        pub fn with_token_history(slots: usize, history: TokenHistorySize) -> Self {
            Self::with_tables(
                slots,
                slots.saturating_mul(MAPPINGS_PER_SLOT).max(MIN_MAPPINGS),
                history.entries(slots),
            )
        }

        /// Empty storage with every size chosen: `slots` client slots,
        /// `mappings` encryption mappings (at least `slots`, so every
        /// connected client has one) and `tokens` connect token history
        /// entries (every token used within one token lifetime takes one).
        /// The hash indices get twice as many buckets as their tables.
        pub fn with_tables(slots: usize, mappings: usize, tokens: usize) -> Self {
            Self {
                slots: vec![ClientSlot::EMPTY; slots].into_boxed_slice(),
                mappings: vec![Mapping::EMPTY; mappings].into_boxed_slice(),
                tokens: vec![TokenEntry::EMPTY; tokens].into_boxed_slice(),
                address_index: vec![0; 2 * mappings].into_boxed_slice(),
                client_id_index: vec![0; slots * CLIENT_ID_BUCKETS_PER_SLOT].into_boxed_slice(),
                token_index: vec![0; 2 * tokens].into_boxed_slice(),
                free_slots: vec![0; slots.div_ceil(64)].into_boxed_slice(),
                timers: vec![SlotTimer::EMPTY; slots].into_boxed_slice(),
                prepared_keys: Vec::new(),
            }
        }

        /// How many slots the prepared receive key table reaches now.
        pub fn prepared_key_slots(&self) -> usize {
            self.prepared_keys.len()
        }

        /// Makes the prepared receive key table reach the first `slots`
        /// slots now (never past the slot count), so that connections in
        /// them never allocate: for a server that must not allocate at all
        /// once set up.
        pub fn reserve_prepared_keys(&mut self, slots: usize) {
            let length = slots.min(self.slots.len());
            if length > self.prepared_keys.len() {
                self.prepared_keys
                    .reserve_exact(length - self.prepared_keys.len());
                self.prepared_keys.resize(length, None);
            }
        }
    }

    impl Clone for HeapStorage {
        fn clone(&self) -> Self {
            Self {
                slots: self.slots.clone(),
                mappings: self.mappings.clone(),
                tokens: self.tokens.clone(),
                address_index: self.address_index.clone(),
                client_id_index: self.client_id_index.clone(),
                token_index: self.token_index.clone(),
                free_slots: self.free_slots.clone(),
                timers: self.timers.clone(),
                prepared_keys: self.prepared_keys.clone(),
            }
        }

        /// Each table copied in place when its length matches (a boxed
        /// slice's `clone_from` keeps its allocation then).
        fn clone_from(&mut self, source: &Self) {
            let Self {
                slots,
                mappings,
                tokens,
                address_index,
                client_id_index,
                token_index,
                free_slots,
                timers,
                prepared_keys,
            } = self;
            slots.clone_from(&source.slots);
            mappings.clone_from(&source.mappings);
            tokens.clone_from(&source.tokens);
            address_index.clone_from(&source.address_index);
            client_id_index.clone_from(&source.client_id_index);
            token_index.clone_from(&source.token_index);
            free_slots.clone_from(&source.free_slots);
            timers.clone_from(&source.timers);
            prepared_keys.clone_from(&source.prepared_keys);
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
                timers: &mut self.timers,
                prepared_keys: &mut self.prepared_keys,
            }
        }

        fn slots(&self) -> &[ClientSlot] {
            &self.slots
        }

        fn reach_prepared_key(&mut self, index: usize) {
            let reached = self.prepared_keys.len();
            if index >= reached {
                let length = (index + 1).max(reached * 2).max(FIRST_PREPARED_KEYS);
                self.reserve_prepared_keys(length);
            }
        }
    }
}
