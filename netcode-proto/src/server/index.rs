//! A small open-addressing hash index over caller-provided buckets.
//!
//! STANDARD.md: none (the lookups behind *Processing Connection Requests* and
//! *Connected Clients*).
//!
//! Buckets hold `entry index + 1` (0 is empty). Probing is linear and
//! deletion shifts entries back, so there are no tombstones and a lookup for
//! an absent key stops at the first empty bucket. Keys live in the tables the
//! index points into; callers pass closures that compare or rehash them.

use core::net::SocketAddr;

/// Keyed hashing of the values the server indexes. The keys are drawn from
/// the caller's RNG at every start, so outsiders cannot aim for collisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Hasher {
    k0: u64,
    k1: u64,
}

/// A folded 64x64 -> 128 multiply: a fast mixer with good diffusion.
fn fold(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ ((product >> 64) as u64)
}

const SPREAD: u64 = 0x9E37_79B9_7F4A_7C15;

impl Hasher {
    pub(crate) const fn new(k0: u64, k1: u64) -> Self {
        Self { k0, k1: k1 | 1 }
    }

    pub(crate) fn u64(&self, value: u64) -> u64 {
        fold(value ^ self.k0, self.k1 ^ SPREAD)
    }

    pub(crate) fn mac(&self, mac: &[u8; 16]) -> u64 {
        let mut lo = [0u8; 8];
        let mut hi = [0u8; 8];
        lo.copy_from_slice(&mac[..8]);
        hi.copy_from_slice(&mac[8..]);
        fold(
            u64::from_le_bytes(lo) ^ self.k0,
            u64::from_le_bytes(hi) ^ self.k1,
        )
    }

    pub(crate) fn address(&self, address: &SocketAddr) -> u64 {
        let port = u64::from(address.port());
        match address {
            SocketAddr::V4(v4) => fold(
                u64::from(v4.ip().to_bits()) ^ (port << 32) ^ self.k0,
                self.k1 ^ SPREAD,
            ),
            SocketAddr::V6(v6) => {
                let bits = v6.ip().to_bits();
                let h = fold((bits as u64) ^ self.k0, ((bits >> 64) as u64) ^ self.k1);
                fold(h ^ port ^ SPREAD, self.k1)
            }
        }
    }
}

/// The home bucket of `hash` among `len` buckets (Lemire's range reduction).
fn home(hash: u64, len: usize) -> usize {
    ((u128::from(hash) * len as u128) >> 64) as usize
}

/// Finds the entry whose key matches, given the key's hash.
pub(crate) fn find(
    buckets: &[u32],
    hash: u64,
    mut matches: impl FnMut(usize) -> bool,
) -> Option<usize> {
    let len = buckets.len();
    if len == 0 {
        return None;
    }
    let mut i = home(hash, len);
    for _ in 0..len {
        let value = buckets[i];
        if value == 0 {
            return None;
        }
        let entry = value as usize - 1;
        if matches(entry) {
            return Some(entry);
        }
        i = if i + 1 == len { 0 } else { i + 1 };
    }
    None
}

/// Adds `entry` under `hash`. Returns false when every bucket is taken
/// (callers size the buckets so that this cannot happen).
pub(crate) fn insert(buckets: &mut [u32], hash: u64, entry: usize) -> bool {
    let len = buckets.len();
    let Ok(value) = u32::try_from(entry + 1) else {
        return false;
    };
    if len == 0 {
        return false;
    }
    let mut i = home(hash, len);
    for _ in 0..len {
        if buckets[i] == 0 {
            buckets[i] = value;
            return true;
        }
        i = if i + 1 == len { 0 } else { i + 1 };
    }
    false
}

/// Removes `entry`, stored under `hash`; `hash_of` gives the hash of any
/// other entry so the ones after it can shift back.
pub(crate) fn remove(
    buckets: &mut [u32],
    hash: u64,
    entry: usize,
    mut hash_of: impl FnMut(usize) -> u64,
) -> bool {
    let len = buckets.len();
    let Ok(target) = u32::try_from(entry + 1) else {
        return false;
    };
    if len == 0 {
        return false;
    }
    let mut hole = home(hash, len);
    let mut found = false;
    for _ in 0..len {
        match buckets[hole] {
            0 => return false,
            v if v == target => {
                found = true;
                break;
            }
            _ => hole = if hole + 1 == len { 0 } else { hole + 1 },
        }
    }
    if !found {
        return false;
    }
    // Backward-shift deletion: pull later entries of the run into the hole
    // when the hole lies between their home and their position.
    let mut j = hole;
    loop {
        j = if j + 1 == len { 0 } else { j + 1 };
        let value = buckets[j];
        if value == 0 || j == hole {
            break;
        }
        let h = home(hash_of(value as usize - 1), len);
        let movable = if hole <= j {
            h <= hole || h > j
        } else {
            h <= hole && h > j
        };
        if movable {
            buckets[hole] = value;
            hole = j;
        }
    }
    buckets[hole] = 0;
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_find_remove_against_a_model() {
        // Few buckets and a weak hash, so runs and wrap-around happen a lot.
        let mut buckets = [0u32; 16];
        let keys: [u64; 12] = [3, 19, 35, 51, 7, 15, 16, 31, 0, 47, 63, 8];
        let hash = |k: u64| k.wrapping_mul(0x1000_0000_0000_0000);
        let mut present = [false; 12];
        let mut state = 0x1234_5678u64;
        for _ in 0..5000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let e = (state % 12) as usize;
            if present[e] {
                assert!(remove(&mut buckets, hash(keys[e]), e, |x| hash(keys[x])));
                present[e] = false;
            } else {
                assert!(insert(&mut buckets, hash(keys[e]), e));
                present[e] = true;
            }
            for (i, &k) in keys.iter().enumerate() {
                let found = find(&buckets, hash(k), |x| keys[x] == k);
                assert_eq!(found, present[i].then_some(i), "key {k}");
            }
        }
    }

    #[test]
    fn full_and_empty_tables_are_refused_not_panicking() {
        let mut none: [u32; 0] = [];
        assert!(!insert(&mut none, 1, 0));
        assert_eq!(find(&none, 1, |_| true), None);
        let mut one = [0u32; 1];
        assert!(insert(&mut one, 5, 0));
        assert!(!insert(&mut one, 5, 1));
        assert!(!remove(&mut one, 5, 1, |_| 5));
        assert!(remove(&mut one, 5, 0, |_| 5));
    }

    #[test]
    fn keyed_hashes_differ_by_key() {
        let a: SocketAddr = "127.0.0.1:40000".parse().unwrap();
        let b: SocketAddr = "[::1]:40000".parse().unwrap();
        let h1 = Hasher::new(1, 2);
        let h2 = Hasher::new(3, 4);
        assert_ne!(h1.address(&a), h2.address(&a));
        assert_ne!(h1.address(&a), h1.address(&b));
        assert_ne!(h1.u64(7), h2.u64(7));
        assert_ne!(h1.mac(&[1; 16]), h1.mac(&[2; 16]));
    }
}
