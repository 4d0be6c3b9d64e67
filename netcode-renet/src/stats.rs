//! What the adapter counts: renet packets framed and unframed, and the
//! payloads and parts it had to drop (the host's own counters are in its
//! `stats()` and `transport_stats()`).

/// Counters of a transport's framing, from its creation.
///
/// Nothing the adapter drops goes uncounted: a payload no sender of the
/// framing makes is `payloads_malformed`, a part whose other half never
/// came is `parts_incomplete`, and a renet packet that could not be sent
/// is `packets_not_sent` (and logged).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FramingStats {
    /// renet packets sent, whole or split.
    pub packets_sent: u64,
    /// Of those, packets sent as two payloads.
    pub packets_split: u64,
    /// renet packets handed to renet, whole or reassembled.
    pub packets_received: u64,
    /// Of those, packets joined from two payloads.
    pub packets_reassembled: u64,
    /// Parts dropped because their other half did not arrive in time
    /// (`PART_TIMEOUT`) or more pairs were waiting than a connection keeps
    /// (`PENDING_PAIRS`); the packet they belonged to is lost, as if the
    /// network had lost it.
    pub parts_incomplete: u64,
    /// Received payloads that no sender of this framing makes (a first part
    /// of the wrong length, an empty second part, a part seen twice),
    /// dropped.
    pub payloads_malformed: u64,
    /// renet packets that were not sent: the host refused a payload (the
    /// connection had just closed), or renet handed over a packet larger
    /// than `MAX_PACKET_BYTES`. Each is also logged.
    pub packets_not_sent: u64,
    /// Split packets whose first part used up a number of sequences other
    /// than 1 or 2 (the host changed how it numbers packets); the second
    /// part was not sent. Zero with this version of netcode-std.
    pub sequence_surprises: u64,
}
