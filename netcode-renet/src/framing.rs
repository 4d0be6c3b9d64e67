//! The adapter's framing: how a renet packet of any size renet emits
//! travels in netcode payloads of at most 1200 bytes (STANDARD.md,
//! "Encrypted packets": a payload packet carries 1 to 1200 bytes).
//!
//! The first byte of each payload says what it holds:
//!
//! | first byte | payload |
//! | --- | --- |
//! | `0x00..=0xFB` | a whole renet packet, as it is (renet 2.x packets start with their type, 0 to 4) |
//! | `0xFC` | a whole renet packet after this byte (a packet whose own first byte is `0xFC` or above) |
//! | `0xFD` | the first part of a split packet: its first 1199 bytes |
//! | `0xFE` | the second part: the rest; its first part is the payload sent 2 sequences before |
//! | `0xFF` | the second part: the rest; its first part is the payload sent 1 sequence before |
//!
//! A packet over 1200 bytes (or of 1200 whose first byte needs escaping)
//! is split in two payloads sent one after the other. The second names its
//! first by the distance between their netcode packet sequences, which the
//! protocol authenticates and never repeats on a connection, so a pair is
//! never confused with another. The distance is 1, or 2 when the server
//! puts a keep-alive before each payload to a client that has not yet
//! confirmed its slot; the sender reads it off the host's sequence counter
//! after sending the first part.
//!
//! Overhead: none for a whole packet under 1201 bytes whose first byte is
//! below `0xFC` (every renet 2.x packet of that size), one byte for an
//! escaped one, and for a split packet two bytes plus a second netcode
//! packet (its header and tag, and the datagram's UDP and IP headers).

use netcode_std::SendError;
use netcode_std::constants::MAX_PAYLOAD_BYTES;

use crate::error::NetcodeTransportError;
use crate::stats::FramingStats;

/// Packet bytes one part of a split packet carries: a payload less its tag.
pub(crate) const PART_BYTES: usize = MAX_PAYLOAD_BYTES - 1;

/// The largest packet the framing carries: two full parts, 2398 bytes.
/// renet 2.x serializes every packet into a 1400-byte buffer, so none of
/// its packets comes near it.
pub const MAX_PACKET_BYTES: usize = 2 * PART_BYTES;

/// First bytes from here up are tags; a whole packet starting with one is
/// escaped.
const ESCAPED: u8 = 0xFC;
/// The tag of a first part.
const FIRST_PART: u8 = 0xFD;
/// The tag of a second part whose first part is 2 sequences back.
const SECOND_PART_GAP_2: u8 = 0xFE;
/// The tag of a second part whose first part is 1 sequence back.
const SECOND_PART_GAP_1: u8 = 0xFF;

/// Where the framing's payloads go: one netcode connection of the host.
pub(crate) trait PayloadSink {
    /// The sequence the connection's next packet will carry.
    fn next_sequence(&self) -> u64;
    /// Sends one payload of 1 to 1200 bytes.
    fn send(&mut self, payload: &[u8]) -> Result<(), SendError>;
}

/// Sends one renet packet through `sink` in one payload or two, with
/// `scratch` to build a tagged payload in. Counts what it did in `stats`.
pub(crate) fn send_packet(
    packet: &[u8],
    sink: &mut impl PayloadSink,
    scratch: &mut [u8; MAX_PAYLOAD_BYTES],
    stats: &mut FramingStats,
) -> Result<(), NetcodeTransportError> {
    let needs_escape = packet.first().is_none_or(|&b| b >= ESCAPED);
    if !needs_escape && packet.len() <= MAX_PAYLOAD_BYTES {
        sink.send(packet)?;
    } else if packet.len() <= PART_BYTES {
        sink.send(tagged(scratch, ESCAPED, packet))?;
    } else if packet.len() <= MAX_PACKET_BYTES {
        let (first, second) = packet.split_at(PART_BYTES);
        let before = sink.next_sequence();
        sink.send(tagged(scratch, FIRST_PART, first))?;
        // The first part went out with the last sequence it used up; the
        // second uses up as many (a keep-alive before each payload or none).
        let tag = match sink.next_sequence().wrapping_sub(before) {
            1 => SECOND_PART_GAP_1,
            2 => SECOND_PART_GAP_2,
            used => {
                stats.sequence_surprises += 1;
                return Err(NetcodeTransportError::SequenceGap { used });
            }
        };
        sink.send(tagged(scratch, tag, second))?;
        stats.packets_split += 1;
    } else {
        return Err(NetcodeTransportError::PacketTooLarge { len: packet.len() });
    }
    stats.packets_sent += 1;
    Ok(())
}

/// `data` after `tag` in `scratch` (`data` is at most [`PART_BYTES`]).
fn tagged<'a>(scratch: &'a mut [u8; MAX_PAYLOAD_BYTES], tag: u8, data: &[u8]) -> &'a [u8] {
    scratch[0] = tag;
    scratch[1..=data.len()].copy_from_slice(data);
    &scratch[..=data.len()]
}

/// What one received payload holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part<'a> {
    /// A whole renet packet.
    Whole(&'a [u8]),
    /// The first [`PART_BYTES`] bytes of a split packet.
    First(&'a [u8]),
    /// The rest of a split packet, whose first part is `gap` sequences
    /// before this payload's.
    Second {
        /// The packet's bytes from [`PART_BYTES`] on.
        data: &'a [u8],
        /// How many sequences back the first part is.
        gap: u64,
    },
}

/// Reads a payload's tag. `None` for a payload no sender of this framing
/// makes: empty, a first part of another length than [`PART_BYTES`], or a
/// second part that is empty or longer than [`PART_BYTES`].
pub(crate) fn parse(payload: &[u8]) -> Option<Part<'_>> {
    let (&tag, rest) = payload.split_first()?;
    match tag {
        ..ESCAPED => Some(Part::Whole(payload)),
        ESCAPED => Some(Part::Whole(rest)),
        FIRST_PART => (rest.len() == PART_BYTES).then_some(Part::First(rest)),
        SECOND_PART_GAP_2 | SECOND_PART_GAP_1 => {
            let gap = if tag == SECOND_PART_GAP_1 { 1 } else { 2 };
            (1..=PART_BYTES)
                .contains(&rest.len())
                .then_some(Part::Second { data: rest, gap })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connection that records its payloads, using up `per_payload`
    /// sequences for each.
    struct Recorder {
        sequence: u64,
        per_payload: u64,
        sent: Vec<(u64, Vec<u8>)>,
    }

    impl Recorder {
        fn new(per_payload: u64) -> Self {
            Self {
                sequence: 100,
                per_payload,
                sent: Vec::new(),
            }
        }
    }

    impl PayloadSink for Recorder {
        fn next_sequence(&self) -> u64 {
            self.sequence
        }

        fn send(&mut self, payload: &[u8]) -> Result<(), SendError> {
            if payload.is_empty() || payload.len() > MAX_PAYLOAD_BYTES {
                return Err(SendError::PayloadSize);
            }
            self.sequence += self.per_payload;
            self.sent.push((self.sequence - 1, payload.to_vec()));
            Ok(())
        }
    }

    /// Sends `packet` and joins what was sent back together by the tags
    /// and sequences alone.
    fn round_trip(packet: &[u8], per_payload: u64) -> (Vec<u8>, usize) {
        let mut sink = Recorder::new(per_payload);
        let mut stats = FramingStats::default();
        send_packet(packet, &mut sink, &mut [0; MAX_PAYLOAD_BYTES], &mut stats).unwrap();
        assert_eq!(stats.packets_sent, 1);
        let parts: Vec<_> = sink
            .sent
            .iter()
            .map(|(seq, p)| (*seq, parse(p).unwrap()))
            .collect();
        let joined = match parts[..] {
            [(_, Part::Whole(whole))] => whole.to_vec(),
            [
                (first_seq, Part::First(first)),
                (seq, Part::Second { data, gap }),
            ] => {
                assert_eq!(seq - gap, first_seq, "the second part names its first");
                [first, data].concat()
            }
            _ => panic!("unexpected payloads {parts:?}"),
        };
        (joined, sink.sent.len())
    }

    fn pattern(len: usize, first: u8) -> Vec<u8> {
        let mut packet: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
        if let Some(b) = packet.first_mut() {
            *b = first;
        }
        packet
    }

    #[test]
    fn every_size_and_first_byte_round_trips_within_the_payload_limit() {
        for len in (0..=MAX_PACKET_BYTES)
            .step_by(7)
            .chain([1199, 1200, 1201, 2397, 2398])
        {
            for first in [0, 4, 0xFB, 0xFC, 0xFD, 0xFE, 0xFF] {
                for per_payload in [1, 2] {
                    let packet = pattern(len, first);
                    let (joined, payloads) = round_trip(&packet, per_payload);
                    assert_eq!(joined, packet, "len {len} first {first:#x}");
                    let split =
                        len > MAX_PAYLOAD_BYTES || (len == MAX_PAYLOAD_BYTES && first >= ESCAPED);
                    assert_eq!(payloads, if split { 2 } else { 1 }, "len {len}");
                }
            }
        }
    }

    #[test]
    fn renet_packets_up_to_1200_bytes_cost_nothing() {
        for packet_type in 0..=4 {
            let packet = pattern(1200, packet_type);
            let mut sink = Recorder::new(1);
            let mut stats = FramingStats::default();
            send_packet(&packet, &mut sink, &mut [0; 1200], &mut stats).unwrap();
            assert_eq!(sink.sent, vec![(100, packet)]);
        }
    }

    #[test]
    fn too_large_is_an_error_and_sends_nothing() {
        let mut sink = Recorder::new(1);
        let mut stats = FramingStats::default();
        let packet = pattern(MAX_PACKET_BYTES + 1, 0);
        let result = send_packet(&packet, &mut sink, &mut [0; 1200], &mut stats);
        assert!(matches!(
            result,
            Err(NetcodeTransportError::PacketTooLarge { len: 2399 })
        ));
        assert!(sink.sent.is_empty());
        assert_eq!(stats.packets_sent, 0);
    }

    #[test]
    fn an_unexpected_sequence_step_is_reported_not_guessed() {
        let mut sink = Recorder::new(3);
        let mut stats = FramingStats::default();
        let result = send_packet(&pattern(1300, 2), &mut sink, &mut [0; 1200], &mut stats);
        assert!(matches!(
            result,
            Err(NetcodeTransportError::SequenceGap { used: 3 })
        ));
        assert_eq!(sink.sent.len(), 1, "only the first part left");
        assert_eq!(stats.sequence_surprises, 1);
    }

    #[test]
    fn payloads_no_sender_makes_are_refused() {
        assert_eq!(parse(&[]), None);
        assert_eq!(parse(&[FIRST_PART; 1199]), None, "short first part");
        assert_eq!(parse(&[FIRST_PART; 1201]), None, "long first part");
        assert_eq!(parse(&[SECOND_PART_GAP_1]), None, "empty second part");
        assert_eq!(parse(&[SECOND_PART_GAP_2]), None, "empty second part");
        assert_eq!(parse(&[SECOND_PART_GAP_1; 1201]), None, "long second part");
        assert_eq!(parse(&[ESCAPED]), Some(Part::Whole(&[])));
        assert_eq!(parse(&[3, 1]), Some(Part::Whole(&[3, 1])));
    }
}
