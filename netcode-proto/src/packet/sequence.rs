//! The prefix byte and the variable-length sequence number of encrypted
//! packets (STANDARD.md: *Packets*).

use crate::bytes::Writer;

/// How many bytes the sequence takes on the wire: the fewest that hold it,
/// and never fewer than one.
pub fn sequence_bytes(sequence: u64) -> usize {
    let significant_bits = 64 - sequence.leading_zeros() as usize;
    significant_bits.div_ceil(8).max(1)
}

/// Writes the prefix byte `(sequence bytes << 4) | type` and the sequence,
/// least significant byte first. Returns the header length.
pub fn write_prefix_and_sequence(
    writer: &mut Writer<'_>,
    packet_type: u8,
    sequence: u64,
) -> Option<usize> {
    let count = sequence_bytes(sequence);
    writer.u8(((count as u8) << 4) | packet_type)?;
    writer.bytes(&sequence.to_le_bytes()[..count])?;
    Some(1 + count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts_match_the_reference_list() {
        let cases = [
            (0u64, 1),
            (0x11, 1),
            (0x1122, 2),
            (0x11_2233, 3),
            (0x1122_3344, 4),
            (0x11_2233_4455, 5),
            (0x1122_3344_5566, 6),
            (0x11_2233_4455_6677, 7),
            (0x1122_3344_5566_7788, 8),
            (0xff, 1),
            (0x100, 2),
            (u64::MAX, 8),
        ];
        for (sequence, bytes) in cases {
            assert_eq!(sequence_bytes(sequence), bytes, "{sequence:#x}");
        }
    }

    #[test]
    fn writes_1000_as_e8_03() {
        let mut buf = [0u8; 9];
        let mut w = Writer::new(&mut buf);
        assert_eq!(write_prefix_and_sequence(&mut w, 5, 1000), Some(3));
        assert_eq!(&buf[..3], &[0x25, 0xe8, 0x03]);
    }
}
