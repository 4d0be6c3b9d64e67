//! Replay protection: a 256-sequence sliding window per connection.
//!
//! STANDARD.md: *Replay Protection*.
//!
//! The reference keeps 256 `u64` slots (2 KiB per client). This window keeps
//! one bit per sequence of the last 256 plus the most recent sequence (40
//! bytes) and gives the same answer for every sequence, with one deliberate
//! exception: the reference stores `u64::MAX` as its "empty slot" marker, so
//! it cannot detect a replay of the packet with sequence `u64::MAX`; this
//! window can, and does.

use crate::constants::REPLAY_PROTECTION_BUFFER_SIZE;

const WORDS: usize = (REPLAY_PROTECTION_BUFFER_SIZE / 64) as usize;

/// The replay window of one connection on one side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayProtection {
    most_recent: u64,
    /// Bit `s % 256` is set when sequence `s` of the window
    /// `most_recent - 255 ..= most_recent` has been received.
    received: [u64; WORDS],
}

impl Default for ReplayProtection {
    fn default() -> Self {
        Self::new()
    }
}

impl ReplayProtection {
    /// An empty window: nothing received yet.
    pub const fn new() -> Self {
        Self {
            most_recent: 0,
            received: [0; WORDS],
        }
    }

    /// Forgets everything, as at the start of a connection.
    pub fn reset(&mut self) {
        *self = Self::new();
    }

    /// The highest sequence accepted so far (0 when none).
    pub fn most_recent_sequence(&self) -> u64 {
        self.most_recent
    }

    /// Whether `sequence` must be refused: it is older than the window, or
    /// inside it and already received.
    pub fn already_received(&self, sequence: u64) -> bool {
        // Subtraction side, so sequences near u64::MAX cannot overflow.
        if self.most_recent >= REPLAY_PROTECTION_BUFFER_SIZE
            && sequence <= self.most_recent - REPLAY_PROTECTION_BUFFER_SIZE
        {
            return true;
        }
        sequence <= self.most_recent && self.bit(sequence)
    }

    /// Records `sequence` as received. Call only after the packet decrypted.
    pub fn advance(&mut self, sequence: u64) {
        if sequence > self.most_recent {
            let gap = sequence - self.most_recent;
            if gap >= REPLAY_PROTECTION_BUFFER_SIZE {
                self.received = [0; WORDS];
            } else {
                // Sequences most_recent+1 ..= sequence enter the window; their
                // bits still describe sequences 256 older, so clear them.
                for s in self.most_recent + 1..=sequence {
                    self.clear_bit(s);
                }
            }
            self.most_recent = sequence;
        }
        self.set_bit(sequence);
    }

    fn index(sequence: u64) -> (usize, u64) {
        let slot = (sequence % REPLAY_PROTECTION_BUFFER_SIZE) as usize;
        (slot / 64, 1u64 << (slot % 64))
    }

    fn bit(&self, sequence: u64) -> bool {
        let (word, mask) = Self::index(sequence);
        self.received[word] & mask != 0
    }

    fn set_bit(&mut self, sequence: u64) {
        let (word, mask) = Self::index(sequence);
        self.received[word] |= mask;
    }

    fn clear_bit(&mut self, sequence: u64) {
        let (word, mask) = Self::index(sequence);
        self.received[word] &= !mask;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference algorithm, slot for slot, as a model to compare against.
    struct Reference {
        most_recent: u64,
        slots: [u64; 256],
    }

    impl Reference {
        fn new() -> Self {
            Self {
                most_recent: 0,
                slots: [u64::MAX; 256],
            }
        }
        fn already_received(&self, s: u64) -> bool {
            if self.most_recent >= 256 && s <= self.most_recent - 256 {
                return true;
            }
            let v = self.slots[(s % 256) as usize];
            v != u64::MAX && v >= s
        }
        fn advance(&mut self, s: u64) {
            self.most_recent = self.most_recent.max(s);
            self.slots[(s % 256) as usize] = s;
        }
    }

    fn xorshift(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    #[test]
    fn same_answers_as_the_reference_on_random_walks() {
        for seed in 1..=64u64 {
            let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let base = match seed % 4 {
                0 => 0,
                1 => 1 << 63,
                2 => u64::MAX - 5000,
                _ => 12345,
            };
            let mut ours = ReplayProtection::new();
            let mut theirs = Reference::new();
            let mut cursor = base;
            for _ in 0..4000 {
                let r = xorshift(&mut rng);
                // Mostly small steps forward and back, sometimes big jumps.
                let step = match r % 16 {
                    0 => r >> 50,
                    1..=4 => (r >> 40) % 300,
                    _ => (r >> 40) % 8,
                };
                cursor = if r & (1 << 20) != 0 {
                    cursor.saturating_add(step)
                } else {
                    cursor.saturating_sub(step)
                }
                .min(u64::MAX - 1);
                let s = cursor;
                let expected = theirs.already_received(s);
                assert_eq!(
                    ours.already_received(s),
                    expected,
                    "seed {seed} sequence {s}"
                );
                if !expected {
                    ours.advance(s);
                    theirs.advance(s);
                }
            }
        }
    }

    #[test]
    fn reference_test_sequence() {
        for _ in 0..2 {
            let mut w = ReplayProtection::new();
            for s in 0..1024u64 {
                assert!(!w.already_received(s));
                w.advance(s);
            }
            for s in 0..1024u64 {
                assert!(w.already_received(s), "replay of {s}");
            }
            assert!(w.already_received(0), "too old");
            assert!(!w.already_received(1024 + 1_000_000));
            w.advance(1024 + 1_000_000);
            for s in 0..1024u64 {
                assert!(w.already_received(s));
            }
            w.reset();
        }
    }

    #[test]
    fn top_of_the_sequence_space_does_not_overflow() {
        let mut w = ReplayProtection::new();
        for s in [u64::MAX - 256, u64::MAX - 1] {
            assert!(!w.already_received(s));
            w.advance(s);
        }
        assert!(w.already_received(u64::MAX - 1));
        assert!(w.already_received(u64::MAX - 257));
        assert!(!w.already_received(u64::MAX));
        w.advance(u64::MAX);
        assert!(
            w.already_received(u64::MAX),
            "stricter than the reference here"
        );
    }

    #[test]
    fn window_edges() {
        let mut w = ReplayProtection::new();
        w.advance(300);
        assert!(w.already_received(44), "300 - 256 is outside the window");
        assert!(!w.already_received(45));
        w.advance(45);
        assert!(w.already_received(45));
        assert!(!w.already_received(46));
        assert!(!w.already_received(301));
    }
}
