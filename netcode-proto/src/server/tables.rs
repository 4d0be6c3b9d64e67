//! A server's tables ([`Tables`], the views a
//! [`ServerStorage`](super::ServerStorage) lends) and the operations on
//! them: the encryption mappings, the connect token history and the
//! free-slot bitmap, each kept O(1) per packet through the hash indices, and
//! O(log n) per admitted request through the expiry heaps (`expiry.rs`) that
//! find a free or lapsed entry without a scan; and the slot timers
//! (`timers.rs`).
//!
//! STANDARD.md: *Processing Connection Requests* (the encryption mappings and
//! the connect token history) and *Processing Connection Response Packets*
//! (the free slot).

use crate::time::Instant;
use core::net::SocketAddr;

use super::compact::{Endpoint, Link, Nanos};
use super::expiry;
use super::history::{Record, TokenEntry, TokenState};
use super::index::{self, Hasher};
use super::mapping::Mapping;
use super::slot::ClientSlot;
use super::timers::{self, SlotTimer};
use crate::constants::MAC_BYTES;
use crate::crypto::{Key, OpeningKey};
use crate::timing::TokenTimeout;

/// Mutable views of every table of a server.
#[derive(Debug)]
pub struct Tables<'a> {
    /// One per client slot.
    pub slots: &'a mut [ClientSlot],
    /// Encryption mappings: at least one per slot (each connected client
    /// owns one), more for handshakes in progress.
    pub mappings: &'a mut [Mapping],
    /// Connect token history entries: at least one.
    pub tokens: &'a mut [TokenEntry],
    /// At least twice as many buckets as mappings.
    pub address_index: &'a mut [u32],
    /// At least twice as many buckets as slots.
    pub client_id_index: &'a mut [u32],
    /// At least twice as many buckets as token history entries.
    pub token_index: &'a mut [u32],
    /// At least one bit per slot.
    pub free_slots: &'a mut [u64],
    /// One per client slot: when each connected client is next due.
    pub timers: &'a mut [SlotTimer],
    /// The receive keys of connected clients, set up once when each
    /// connects, by slot. May be shorter than `slots`, even empty: a client
    /// whose slot is past its end has its key set up for every packet it
    /// sends instead (with `ring`, about 100 more instructions per packet
    /// received; with the portable backend, no difference).
    pub prepared_keys: &'a mut [Option<OpeningKey>],
}

/// How many entries of the mapping table and of the token history are live,
/// and how many slot timers are armed: the lengths of their heaps, kept
/// beside the tables.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Occupancy {
    pub(crate) mappings: usize,
    pub(crate) tokens: usize,
    /// Armed slot timers (see `timers.rs`).
    pub(crate) timers: usize,
}

/// Result of looking a connect token up in the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenLookup {
    /// New, or a retry of a pending token from its own address: the entry.
    Admitted(u32),
    /// Pending from another address, or consumed.
    Refused,
    /// No free entry and none expired.
    Full,
}

impl Tables<'_> {
    /// Empties every table.
    pub(crate) fn reset(&mut self, live: &mut Occupancy) {
        for slot in self.slots.iter_mut() {
            slot.clear();
        }
        self.address_index.fill(0);
        self.client_id_index.fill(0);
        self.token_index.fill(0);
        let slots = self.slots.len();
        for (i, word) in self.free_slots.iter_mut().enumerate() {
            let first = i * 64;
            let count = slots.saturating_sub(first).min(64);
            *word = if count == 64 {
                u64::MAX
            } else {
                (1u64 << count) - 1
            };
        }
        self.mappings.fill(Mapping::EMPTY);
        expiry::reset(self.mappings, &mut live.mappings);
        self.tokens.fill(TokenEntry::EMPTY);
        expiry::reset(self.tokens, &mut live.tokens);
        expiry::reset(self.timers, &mut live.timers);
        self.prepared_keys.fill(None);
    }

    // ---- client slots ----

    /// The lowest free slot below `max_clients`.
    pub(crate) fn lowest_free_slot(&self, max_clients: usize) -> Option<usize> {
        self.free_slots
            .iter()
            .enumerate()
            .find(|(_, w)| **w != 0)
            .map(|(i, w)| i * 64 + w.trailing_zeros() as usize)
            .filter(|i| *i < max_clients)
    }

    pub(crate) fn mark_slot(&mut self, index: usize, free: bool) {
        let (word, bit) = (index / 64, 1u64 << (index % 64));
        if let Some(w) = self.free_slots.get_mut(word) {
            if free {
                *w |= bit;
            } else {
                *w &= !bit;
            }
        }
    }

    /// The connected slot holding `client_id`.
    pub(crate) fn slot_by_client_id(&self, hasher: &Hasher, client_id: u64) -> Option<usize> {
        let slots = &*self.slots;
        index::find(self.client_id_index, hasher.u64(client_id), |i| {
            slots[i].connected && slots[i].client_id == client_id
        })
    }

    pub(crate) fn index_client_id(&mut self, hasher: &Hasher, slot: usize) {
        let id = self.slots[slot].client_id;
        index::insert(self.client_id_index, hasher.u64(id), slot);
    }

    pub(crate) fn unindex_client_id(&mut self, hasher: &Hasher, slot: usize) {
        let slots = &*self.slots;
        index::remove(
            self.client_id_index,
            hasher.u64(slots[slot].client_id),
            slot,
            |i| hasher.u64(slots[i].client_id),
        );
    }

    // ---- encryption mappings ----

    /// The mapping entry for `address`, expired or not.
    pub(crate) fn mapping_by_address(
        &self,
        hasher: &Hasher,
        address: &SocketAddr,
    ) -> Option<usize> {
        let mappings = &*self.mappings;
        index::find(self.address_index, hasher.address(address), |i| {
            mappings[i].address.matches(address)
        })
    }

    /// The connected slot whose client is at `address`.
    pub(crate) fn slot_by_address(&self, hasher: &Hasher, address: &SocketAddr) -> Option<usize> {
        let mapping = self.mapping_by_address(hasher, address)?;
        let slot = self.mappings[mapping].client_index.get()? as usize;
        self.slots.get(slot).filter(|s| s.connected).map(|_| slot)
    }

    /// Adds or refreshes the mapping for `address`, as a pending handshake.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn add_mapping(
        &mut self,
        live: &mut Occupancy,
        hasher: &Hasher,
        now: Instant,
        address: SocketAddr,
        send_key: &Key,
        receive_key: &Key,
        timeout_seconds: i32,
        token_entry: u32,
    ) -> Option<usize> {
        let existing = self.mapping_by_address(hasher, &address).filter(|&i| {
            let m = &self.mappings[i];
            !m.expired(now) || m.client_index == Link::NONE
        });
        let index = match existing {
            Some(i) => i,
            None => {
                let i = self.free_mapping(live, hasher, now)?;
                index::insert(self.address_index, hasher.address(&address), i);
                i
            }
        };
        let now = Nanos::new(now);
        let timeout = TokenTimeout::new(timeout_seconds);
        let expire_time = timeout
            .handshake_seconds()
            .map_or(Nanos::NEVER, |s| now.after_seconds(s));
        let m = &mut self.mappings[index];
        m.address = Endpoint::new(&address);
        m.send_key = send_key.clone();
        m.receive_key = receive_key.clone();
        m.timeout = timeout;
        m.expire_time = expire_time;
        m.last_access = now;
        m.challenge_at = now;
        m.token_entry = Link::to(token_entry);
        match existing {
            Some(_) => {
                let position = m.heap_position as usize;
                expiry::rekeyed(self.mappings, live.mappings, position);
            }
            None => expiry::admit_free(self.mappings, &mut live.mappings),
        }
        Some(index)
    }

    /// Gives mapping `index` to the client in `slot`: it no longer expires.
    pub(crate) fn own_mapping(&mut self, live: &Occupancy, index: usize, slot: usize) {
        let m = &mut self.mappings[index];
        m.expire_time = Nanos::NEVER;
        m.client_index = Link::to(slot as u32);
        let position = m.heap_position as usize;
        expiry::rekeyed(self.mappings, live.mappings, position);
    }

    /// The free mapping the next admission takes: a free one if any, else
    /// the heap's root if it is a lapsed mapping no client owns (then
    /// freed). The root is the only candidate: if any unowned mapping has
    /// lapsed, the one with the earliest expiry has.
    fn free_mapping(
        &mut self,
        live: &mut Occupancy,
        hasher: &Hasher,
        now: Instant,
    ) -> Option<usize> {
        if let Some(i) = expiry::first_free(self.mappings, live.mappings) {
            return Some(i);
        }
        let root = expiry::root(self.mappings, live.mappings)?;
        let m = &self.mappings[root];
        if m.client_index != Link::NONE || !m.expired(now) {
            return None;
        }
        self.remove_mapping(live, hasher, root);
        Some(root)
    }

    /// Frees a mapping and drops it from the address index.
    pub(crate) fn remove_mapping(&mut self, live: &mut Occupancy, hasher: &Hasher, index: usize) {
        if let Some(address) = self.mappings[index].address.get() {
            let mappings = &*self.mappings;
            index::remove(self.address_index, hasher.address(&address), index, |i| {
                mappings[i].address.get().map_or(0, |a| hasher.address(&a))
            });
        }
        let position = self.mappings[index].heap_position as usize;
        expiry::remove_at(self.mappings, &mut live.mappings, position);
        self.mappings[index] = self.mappings[index].cleared();
    }

    // ---- connect token history ----

    /// Finds or records the connect token whose tag is `mac`, with the
    /// rules of the newest reference: a new token becomes pending; a pending
    /// token is admitted again only from its own address; a consumed token
    /// is refused everywhere; a full history refuses rather than evicts.
    pub(crate) fn find_or_add_token(
        &mut self,
        live: &mut Occupancy,
        hasher: &Hasher,
        address: SocketAddr,
        mac: &[u8; MAC_BYTES],
        expire_timestamp: u64,
        current_timestamp: u64,
    ) -> TokenLookup {
        if let Some(i) = self.find_token(hasher, mac) {
            let entry = &self.tokens[i as usize];
            let own_retry = matches!(entry.state, TokenState::Pending { .. })
                && entry.address.matches(&address);
            return if own_retry {
                TokenLookup::Admitted(i)
            } else {
                TokenLookup::Refused
            };
        }
        let i = match expiry::first_free(self.tokens, live.tokens) {
            Some(i) => i,
            // The root expires first: if it has not expired, none has.
            None => match expiry::root(self.tokens, live.tokens) {
                Some(root) if self.tokens[root].expire_timestamp <= current_timestamp => {
                    self.free_token(live, hasher, root);
                    root
                }
                _ => return TokenLookup::Full,
            },
        };
        self.tokens[i] = TokenEntry {
            state: TokenState::Pending {
                record: Record::Unasked,
            },
            mac: *mac,
            address: Endpoint::new(&address),
            expire_timestamp,
            ..self.tokens[i].cleared()
        };
        index::insert(self.token_index, hasher.mac(mac), i);
        expiry::admit_free(self.tokens, &mut live.tokens);
        TokenLookup::Admitted(i as u32)
    }

    /// Frees every history entry whose token expired at or before
    /// `current_timestamp`, earliest first: O(log n) each, and nothing when
    /// none has.
    pub(crate) fn free_expired_tokens(
        &mut self,
        live: &mut Occupancy,
        hasher: &Hasher,
        current_timestamp: u64,
    ) {
        while let Some(root) = expiry::root(self.tokens, live.tokens) {
            if self.tokens[root].expire_timestamp > current_timestamp {
                break;
            }
            self.free_token(live, hasher, root);
        }
    }

    /// Marks history entry `entry`, linked from the mapping of a client now
    /// connecting from `address`, consumed. The entry must still be that
    /// handshake's: pending, from that address. (Once its token expired, a
    /// never-lapsing mapping may outlive the entry, which may then hold
    /// another address's token.)
    pub(crate) fn consume_token(&mut self, entry: u32, address: &SocketAddr) {
        if let Some(e) = self.tokens.get_mut(entry as usize)
            && matches!(e.state, TokenState::Pending { .. })
            && e.address.matches(address)
        {
            e.state = TokenState::Consumed;
        }
    }

    /// The history entry holding the token whose tag is `mac`, if any.
    pub(crate) fn find_token(&self, hasher: &Hasher, mac: &[u8; MAC_BYTES]) -> Option<u32> {
        let tokens = &*self.tokens;
        index::find(self.token_index, hasher.mac(mac), |i| {
            tokens[i].state != TokenState::Free && tokens[i].mac == *mac
        })
        .map(|i| i as u32)
    }

    /// Where the durable record of history entry `entry`'s token stands,
    /// when the entry is pending from `address`; `None` otherwise (free,
    /// consumed, or another address's).
    pub(crate) fn pending_record(&self, entry: u32, address: &SocketAddr) -> Option<Record> {
        let e = self.tokens.get(entry as usize)?;
        match e.state {
            TokenState::Pending { record } if e.address.matches(address) => Some(record),
            _ => None,
        }
    }

    /// Moves the durable record of history entry `entry`, which must be
    /// pending, to `record`.
    pub(crate) fn set_pending_record(&mut self, entry: u32, record: Record) {
        if let Some(e) = self.tokens.get_mut(entry as usize)
            && let TokenState::Pending { record: r } = &mut e.state
        {
            *r = record;
        }
    }

    /// Adds a token used in an earlier run as consumed: refused from every
    /// address until it expires. A token already in the history stays as
    /// it is. Returns false when no entry is free.
    pub(crate) fn restore_token(
        &mut self,
        live: &mut Occupancy,
        hasher: &Hasher,
        address: &SocketAddr,
        mac: &[u8; MAC_BYTES],
        expire_timestamp: u64,
    ) -> bool {
        if self.find_token(hasher, mac).is_some() {
            return true;
        }
        let Some(i) = expiry::first_free(self.tokens, live.tokens) else {
            return false;
        };
        self.tokens[i] = TokenEntry {
            state: TokenState::Consumed,
            mac: *mac,
            address: Endpoint::new(address),
            expire_timestamp,
            ..self.tokens[i].cleared()
        };
        index::insert(self.token_index, hasher.mac(mac), i);
        expiry::admit_free(self.tokens, &mut live.tokens);
        true
    }

    /// Frees the history entry at the heap's root, `index`.
    fn free_token(&mut self, live: &mut Occupancy, hasher: &Hasher, index: usize) {
        let tokens = &*self.tokens;
        index::remove(
            self.token_index,
            hasher.mac(&tokens[index].mac),
            index,
            |i| hasher.mac(&tokens[i].mac),
        );
        expiry::remove_at(self.tokens, &mut live.tokens, 0);
        self.tokens[index] = self.tokens[index].cleared();
    }

    // ---- slot timers ----

    /// Arms (or re-arms) the timer of slot `index` for the slot's real
    /// deadline.
    pub(crate) fn arm_timer(&mut self, live: &mut Occupancy, index: usize) {
        if let Some(slot) = self.slots.get(index) {
            timers::arm(self.timers, &mut live.timers, index, slot);
        }
    }

    /// Disarms the timer of slot `index`, if it is armed.
    pub(crate) fn disarm_timer(&mut self, live: &mut Occupancy, index: usize) {
        timers::disarm(self.timers, &mut live.timers, index);
    }

    /// Sets up the receive key of `mapping` for the client connecting in
    /// slot `index`, where the prepared key table reaches that slot.
    pub(crate) fn prepare_key(&mut self, index: usize, mapping: usize) {
        if let (Some(prepared), Some(m)) = (
            self.prepared_keys.get_mut(index),
            self.mappings.get(mapping),
        ) {
            *prepared = Some(OpeningKey::new(&m.receive_key));
        }
    }

    /// Forgets the prepared receive key of slot `index`.
    pub(crate) fn forget_key(&mut self, index: usize) {
        if let Some(prepared) = self.prepared_keys.get_mut(index) {
            *prepared = None;
        }
    }

    /// The slot whose timer's key comes first, and that key.
    pub(crate) fn first_timer(&self, live: &Occupancy) -> Option<(usize, Nanos)> {
        timers::first(self.timers, live.timers)
    }
}
