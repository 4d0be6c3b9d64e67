//! The replay window against a plain set-based model.

use std::collections::BTreeSet;

use netcode_proto::ReplayProtection;
use netcode_proto::constants::REPLAY_PROTECTION_BUFFER_SIZE;
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    /// Move the cursor a little, forward or back, and offer it.
    Step(i16),
    /// Move the cursor far forward and offer it.
    Leap(u64),
    /// Offer a sequence that was accepted before.
    Repeat(prop::sample::Index),
    /// Offer the sequence just past the window's lower edge, or on it.
    Edge(bool),
    /// Start over, as a new connection.
    Reset,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        12 => any::<i16>().prop_map(|d| Op::Step(d % 300)),
        2 => (0u64..2000).prop_map(Op::Leap),
        1 => any::<u64>().prop_map(|v| Op::Leap(v >> 4)),
        4 => any::<prop::sample::Index>().prop_map(Op::Repeat),
        2 => any::<bool>().prop_map(Op::Edge),
        1 => Just(Op::Reset),
    ]
}

fn base() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        0u64..1000,
        Just(1u64 << 63),
        Just(u64::MAX - 700),
        any::<u64>(),
    ]
}

/// Everything accepted so far: a replay is a sequence in here, or one at or
/// below the highest accepted minus the window size.
#[derive(Default)]
struct Model {
    accepted: BTreeSet<u64>,
    history: Vec<u64>,
}

impl Model {
    fn highest(&self) -> Option<u64> {
        self.accepted.last().copied()
    }

    fn refuses(&self, sequence: u64) -> bool {
        let too_old = self.highest().is_some_and(|m| {
            m >= REPLAY_PROTECTION_BUFFER_SIZE && sequence <= m - REPLAY_PROTECTION_BUFFER_SIZE
        });
        too_old || self.accepted.contains(&sequence)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn the_window_matches_the_model(base in base(), ops in prop::collection::vec(op(), 1..400)) {
        let mut window = ReplayProtection::new();
        let mut model = Model::default();
        let mut cursor = base;
        for op in ops {
            let sequence = match op {
                Op::Step(d) => {
                    cursor = cursor.saturating_add_signed(i64::from(d));
                    cursor
                }
                Op::Leap(d) => {
                    cursor = cursor.saturating_add(d);
                    cursor
                }
                Op::Repeat(i) if !model.history.is_empty() => model.history[i.index(model.history.len())],
                Op::Repeat(_) => cursor,
                Op::Edge(inside) => {
                    let top = window.most_recent_sequence();
                    let edge = top.saturating_sub(REPLAY_PROTECTION_BUFFER_SIZE);
                    if inside { edge.saturating_add(1) } else { edge }
                }
                Op::Reset => {
                    window.reset();
                    model = Model::default();
                    prop_assert_eq!(&window, &ReplayProtection::new());
                    continue;
                }
            };

            let accepted = !window.already_received(sequence);
            prop_assert_eq!(accepted, !model.refuses(sequence), "sequence {}", sequence);
            if model.accepted.contains(&sequence) {
                prop_assert!(!accepted, "accepted {} twice", sequence);
            }
            if model.highest().is_none_or(|m| sequence > m) {
                prop_assert!(accepted, "refused {}, newer than everything before", sequence);
            }
            if accepted {
                window.advance(sequence);
                model.accepted.insert(sequence);
                model.history.push(sequence);
                prop_assert!(window.already_received(sequence), "{} accepted again right away", sequence);
                prop_assert_eq!(Some(window.most_recent_sequence()), model.highest());
            }
        }
    }

    #[test]
    fn increasing_sequences_are_accepted_once(
        start in any::<u64>(),
        gaps in prop::collection::vec(prop_oneof![1u64..4, 1u64..300, 1u64..u64::MAX / 1024], 1..200),
    ) {
        let mut window = ReplayProtection::new();
        let mut sequence = start;
        let mut seen = Vec::new();
        for gap in gaps {
            prop_assert!(!window.already_received(sequence), "refused new {}", sequence);
            window.advance(sequence);
            seen.push(sequence);
            for &old in &seen {
                prop_assert!(window.already_received(old), "would accept {} again", old);
            }
            match sequence.checked_add(gap) {
                Some(next) => sequence = next,
                None => break,
            }
        }
    }
}
