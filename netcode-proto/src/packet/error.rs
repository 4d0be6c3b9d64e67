//! Why a datagram is dropped by the packet reader, and why a packet cannot
//! be written (STANDARD.md: each "ignore the packet" of *Reading Encrypted
//! Packets* and of the request checks of *Processing Connection Requests*).

/// Why a received datagram is not a valid packet and must be dropped.
///
/// Listed in the order the checks run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PacketError {
    /// Shorter than any packet of its kind can be.
    TooSmall,
    /// The packet type is not one this side accepts.
    TypeNotAccepted,
    /// A connection request that is not exactly 1078 bytes.
    RequestWrongSize,
    /// No key to open it: a request with no private key, or an encrypted
    /// packet from a sender with no key.
    NoKey,
    /// The version info is not `"NETCODE 1.02\0"`.
    VersionMismatch,
    /// The protocol id is not ours.
    ProtocolMismatch,
    /// The connect token's expire timestamp is not after the current time.
    TokenExpired,
    /// The connect token may have been issued before this server started
    /// (the restart rule).
    TokenPredatesStart,
    /// The low four bits of the prefix are not a packet type (7 and up, or 0
    /// on an encrypted packet).
    InvalidType,
    /// The high four bits of the prefix are outside `1..=8`.
    InvalidSequenceBytes,
    /// The sequence was already received, or is older than the replay window.
    Replayed,
    /// Authentication failed: wrong key, or the packet was altered.
    DecryptFailed,
    /// The decrypted private connect token is malformed.
    InvalidPrivateToken,
    /// The decrypted body has the wrong size for its type.
    WrongBodySize,
}

impl PacketError {
    /// How many variants there are, for counter arrays.
    pub const COUNT: usize = 14;

    /// Every variant, in check order.
    pub const ALL: [Self; Self::COUNT] = [
        Self::TooSmall,
        Self::TypeNotAccepted,
        Self::RequestWrongSize,
        Self::NoKey,
        Self::VersionMismatch,
        Self::ProtocolMismatch,
        Self::TokenExpired,
        Self::TokenPredatesStart,
        Self::InvalidType,
        Self::InvalidSequenceBytes,
        Self::Replayed,
        Self::DecryptFailed,
        Self::InvalidPrivateToken,
        Self::WrongBodySize,
    ];

    /// A stable index in `0..COUNT`.
    pub fn index(self) -> usize {
        self as usize
    }

    /// A short snake_case name, for logs and stats.
    pub fn name(self) -> &'static str {
        match self {
            Self::TooSmall => "too_small",
            Self::TypeNotAccepted => "type_not_accepted",
            Self::RequestWrongSize => "request_wrong_size",
            Self::NoKey => "no_key",
            Self::VersionMismatch => "version_mismatch",
            Self::ProtocolMismatch => "protocol_mismatch",
            Self::TokenExpired => "token_expired",
            Self::TokenPredatesStart => "token_predates_start",
            Self::InvalidType => "invalid_type",
            Self::InvalidSequenceBytes => "invalid_sequence_bytes",
            Self::Replayed => "replayed",
            Self::DecryptFailed => "decrypt_failed",
            Self::InvalidPrivateToken => "invalid_private_token",
            Self::WrongBodySize => "wrong_body_size",
        }
    }
}

impl core::fmt::Display for PacketError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

impl core::error::Error for PacketError {}

/// Why a packet could not be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WriteError {
    /// The output buffer is too small for this packet.
    BufferTooSmall,
    /// A payload outside `1..=1200` bytes.
    PayloadSize,
}

impl core::fmt::Display for WriteError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Self::BufferTooSmall => "output buffer too small for the packet",
            Self::PayloadSize => "payload must be 1 to 1200 bytes",
        })
    }
}

impl core::error::Error for WriteError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_are_dense() {
        for (i, e) in PacketError::ALL.iter().enumerate() {
            assert_eq!(e.index(), i);
        }
    }
}
