//! The tables' admit and refuse answers against a model of the scanning
//! tables they replaced (STANDARD.md: *Processing Connection Requests*, the
//! connect token history and the encryption mappings).
//!
//! The model is the former implementation's rule, written plainly: when no
//! entry is free, scan the whole table and free every lapsed mapping no
//! client owns, or every expired history entry. The tables must give the
//! same answer to every request, mapping lookup, connect and disconnect, on
//! random sequences with a non-decreasing clock, while they free lapsed
//! entries one at a time (and expired history entries eagerly, as `update`
//! does).

use crate::time::Instant;
use core::net::SocketAddr;
use core::time::Duration;

use super::index::Hasher;
use super::storage::{ArrayStorage, ServerStorage};
use super::tables::{Occupancy, TokenLookup};
use crate::crypto::Key;

const TOKENS: usize = 600;
const ADDRESSES: usize = 20;

#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    Pending,
    Consumed,
}

#[derive(Debug, Clone, Copy)]
struct ModelToken {
    state: State,
    token: usize,
    address: usize,
    expire: u64,
}

#[derive(Debug, Clone, Copy)]
struct ModelMapping {
    address: usize,
    timeout: i32,
    expire: Option<Instant>,
    last_access: Instant,
    owned: bool,
    /// The token whose request added or last refreshed it.
    token: usize,
}

impl ModelMapping {
    /// The reference's strict tests, as the former tables applied them.
    fn expired(&self, now: Instant) -> bool {
        let silent =
            self.timeout > 0 && self.last_access + Duration::from_secs(self.timeout as u64) < now;
        silent || self.expire.is_some_and(|e| e < now)
    }
}

/// The former tables: fixed capacities, a scan when nothing is free.
struct Model {
    tokens: [Option<ModelToken>; 16],
    mappings: [Option<ModelMapping>; 8],
}

impl Model {
    fn find_or_add(&mut self, token: usize, address: usize, expire: u64, now_unix: u64) -> u8 {
        if let Some(e) = self.tokens.iter().flatten().find(|e| e.token == token) {
            return if e.state == State::Pending && e.address == address {
                0
            } else {
                1
            };
        }
        if self.tokens.iter().all(Option::is_some) {
            for e in self.tokens.iter_mut() {
                if e.is_some_and(|e| e.expire <= now_unix) {
                    *e = None;
                }
            }
        }
        match self.tokens.iter_mut().find(|e| e.is_none()) {
            Some(free) => {
                *free = Some(ModelToken {
                    state: State::Pending,
                    token,
                    address,
                    expire,
                });
                0
            }
            None => 2,
        }
    }

    fn add_mapping(&mut self, address: usize, timeout: i32, token: usize, now: Instant) -> bool {
        let existing = self
            .mappings
            .iter_mut()
            .flatten()
            .find(|m| m.address == address && (!m.expired(now) || !m.owned));
        let fresh = ModelMapping {
            address,
            timeout,
            expire: (timeout >= 0).then(|| now + Duration::from_secs(timeout as u64)),
            last_access: now,
            owned: false,
            token,
        };
        if let Some(m) = existing {
            *m = fresh;
            return true;
        }
        if self.mappings.iter().all(Option::is_some) {
            for m in self.mappings.iter_mut() {
                if m.is_some_and(|m| !m.owned && m.expired(now)) {
                    *m = None;
                }
            }
        }
        match self.mappings.iter_mut().find(|m| m.is_none()) {
            Some(free) => {
                *free = Some(fresh);
                true
            }
            None => false,
        }
    }

    /// The mapping a packet from `address` would be read with: its
    /// client's, or a pending one that has not lapsed.
    fn live(&self, address: usize, now: Instant) -> Option<ModelMapping> {
        self.mappings
            .iter()
            .flatten()
            .find(|m| m.address == address)
            .filter(|m| m.owned || !m.expired(now))
            .copied()
    }
}

fn address(i: usize) -> SocketAddr {
    SocketAddr::from(([10, 0, 0, i as u8 + 1], 4000))
}

fn mac(token: usize) -> [u8; 16] {
    core::array::from_fn(|i| (token * 7 + i) as u8)
}

#[test]
fn full_tables_give_the_answers_of_the_former_scans() {
    let timeouts = [-1, 0, 1, 3, 8, 20];
    for seed in 1..=40u64 {
        let mut storage = ArrayStorage::<2>::new();
        let mut tables = storage.tables();
        let mut live = Occupancy::default();
        tables.reset(&mut live);
        let hasher = Hasher::new(seed, !seed);
        let mut model = Model {
            tokens: [None; 16],
            mappings: [None; 8],
        };
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        // Each token has a fixed expiry and timeout: a tag names one token.
        let unix_start = 1_000u64;
        // Tokens of 30 s, one issued every second.
        let expiries: [u64; TOKENS] = core::array::from_fn(|t| unix_start + 30 + t as u64);
        let token_timeouts: [i32; TOKENS] =
            core::array::from_fn(|_| timeouts[next() as usize % timeouts.len()]);
        let key = Key::from_bytes([1; 32]);
        let mut now = Instant::ZERO;
        let mut requests = [0usize; 4];
        for _ in 0..3000 {
            now += Duration::from_millis(next() % 300);
            let unix = unix_start + now.since_epoch().as_secs();
            let a = next() as usize % ADDRESSES;
            let from = address(a);
            match next() % 8 {
                // A connection request: the history, then the mapping. A
                // connected address and an expired token never get this far.
                0..=3 => {
                    let Some(t) = (unix - unix_start).checked_sub(next() % 30) else {
                        continue;
                    };
                    let t = t as usize % TOKENS;
                    if model.live(a, now).is_some_and(|m| m.owned) {
                        continue;
                    }
                    let expected = model.find_or_add(t, a, expiries[t], unix);
                    let found = tables.find_or_add_token(
                        &mut live,
                        &hasher,
                        from,
                        &mac(t),
                        expiries[t],
                        unix,
                    );
                    let answer = match found {
                        TokenLookup::Admitted(_) => 0,
                        TokenLookup::Refused => 1,
                        TokenLookup::Full => 2,
                    };
                    assert_eq!(answer, expected, "seed {seed}: history answer");
                    if let TokenLookup::Admitted(entry) = found {
                        let timeout = token_timeouts[t];
                        let added = tables
                            .add_mapping(&mut live, &hasher, now, from, &key, &key, timeout, entry);
                        let expected = model.add_mapping(a, timeout, t, now);
                        assert_eq!(added.is_some(), expected, "seed {seed}: mapping answer");
                        requests[usize::from(!expected)] += 1;
                    } else {
                        requests[1 + usize::from(answer)] += 1;
                    }
                }
                // A response completes the handshake of a live, pending mapping.
                4 => {
                    let Some(m) = tables.mapping_by_address(&hasher, &from) else {
                        continue;
                    };
                    let pending = model.live(a, now).is_some_and(|m| !m.owned);
                    if !pending || tables.mappings[m].client_index.get().is_some() {
                        continue;
                    }
                    tables.own_mapping(&live, m, a);
                    if let Some(entry) = tables.mappings[m].token_entry.get() {
                        tables.consume_token(entry, &from);
                    }
                    let mm = model.mappings.iter_mut().flatten().find(|m| m.address == a);
                    let mm = mm.expect("the model has the live mapping");
                    mm.owned = true;
                    mm.expire = None;
                    let token = mm.token;
                    let entry =
                        model.tokens.iter_mut().flatten().find(|e| {
                            e.token == token && e.state == State::Pending && e.address == a
                        });
                    if let Some(e) = entry {
                        e.state = State::Consumed;
                    }
                }
                // A connected client leaves.
                5 => {
                    if !model.live(a, now).is_some_and(|m| m.owned) {
                        continue;
                    }
                    let m = tables.mapping_by_address(&hasher, &from).unwrap();
                    tables.remove_mapping(&mut live, &hasher, m);
                    for mm in model.mappings.iter_mut() {
                        if mm.is_some_and(|mm| mm.address == a) {
                            *mm = None;
                        }
                    }
                }
                // A packet from a pending sender refreshes its mapping.
                6 => {
                    if let Some(m) = tables.mapping_by_address(&hasher, &from)
                        && tables.mappings[m].client_index.get().is_none()
                        && !tables.mappings[m].expired(now)
                    {
                        tables.mappings[m].last_access = super::compact::Nanos::new(now);
                        if let Some(mm) = model
                            .mappings
                            .iter_mut()
                            .flatten()
                            .find(|mm| mm.address == a)
                        {
                            mm.last_access = now;
                        }
                    }
                }
                // The server's update frees expired history entries.
                _ => tables.free_expired_tokens(&mut live, &hasher, unix),
            }
            for a in 0..ADDRESSES {
                let m = tables
                    .mapping_by_address(&hasher, &address(a))
                    .filter(|&m| {
                        tables.mappings[m].client_index.get().is_some()
                            || !tables.mappings[m].expired(now)
                    });
                assert_eq!(
                    m.is_some(),
                    model.live(a, now).is_some(),
                    "seed {seed}: mapping of address {a}"
                );
            }
        }
        // Mappings admitted and refused, tokens refused and history full.
        assert!(
            requests.iter().all(|n| *n > 20),
            "seed {seed}: every answer came up: {requests:?}"
        );
    }
}
