//! Sizes and fixed values of the netcode 1.02 protocol.
//!
//! STANDARD.md: the sizes of *Connect Token*, *Challenge Token*, *Packets*
//! and *Replay Protection*.
//!
//! Every value here is fixed by the wire format (STANDARD.md) or by the C
//! reference implementation's public header; changing one breaks
//! interoperability.

/// The 13-byte version string every token and connection request starts with:
/// `"NETCODE 1.02"` followed by a NUL byte.
pub const VERSION_INFO: [u8; VERSION_INFO_BYTES] = *b"NETCODE 1.02\0";

/// Length of [`VERSION_INFO`].
pub const VERSION_INFO_BYTES: usize = 13;

/// Size of a public connect token, as handed to a client by the web backend.
pub const CONNECT_TOKEN_BYTES: usize = 2048;

/// Size of the encrypted private part of a connect token (ciphertext and tag).
pub const CONNECT_TOKEN_PRIVATE_BYTES: usize = 1024;

/// Size of the XChaCha20-Poly1305 nonce that encrypts the private connect token.
pub const CONNECT_TOKEN_NONCE_BYTES: usize = 24;

/// Size of an encrypted challenge token (ciphertext and tag).
pub const CHALLENGE_TOKEN_BYTES: usize = 300;

/// Size of every symmetric key: the private key, the packet keys, the challenge key.
pub const KEY_BYTES: usize = 32;

/// Size of a Poly1305 authentication tag (the "HMAC" of the standard).
pub const MAC_BYTES: usize = 16;

/// Size of the application-defined user data carried by a connect token.
pub const USER_DATA_BYTES: usize = 256;

/// Most server addresses a connect token may list.
pub const MAX_SERVERS_PER_CONNECT: usize = 32;

/// Smallest payload a payload packet may carry.
pub const MIN_PAYLOAD_BYTES: usize = 1;

/// Largest payload a payload packet may carry.
pub const MAX_PAYLOAD_BYTES: usize = 1200;

/// Whether a payload of `len` bytes is one the protocol carries: 1 to 1200
/// bytes. Sending, receiving, writing and reading all check with this.
pub const fn is_payload_size(len: usize) -> bool {
    len >= MIN_PAYLOAD_BYTES && len <= MAX_PAYLOAD_BYTES
}

/// Largest datagram the reference sends or receives; every receive buffer
/// should be at least this large.
pub const MAX_PACKET_BYTES: usize = 1300;

/// Largest encrypted packet on the wire: prefix, 8 sequence bytes, a full
/// payload and the tag.
pub const MAX_ENCRYPTED_PACKET_BYTES: usize = 1 + 8 + MAX_PAYLOAD_BYTES + MAC_BYTES;

/// Most bytes a payload packet adds to its payload: the prefix, up to 8
/// sequence bytes and the tag.
pub const PAYLOAD_PACKET_OVERHEAD: usize = MAX_ENCRYPTED_PACKET_BYTES - MAX_PAYLOAD_BYTES;

/// The largest payload whose packet fits in a datagram of at most
/// `datagram_limit` bytes whatever its sequence number: the limit less
/// [`PAYLOAD_PACKET_OVERHEAD`], at most [`MAX_PAYLOAD_BYTES`], zero when no
/// payload fits. A transport with smaller datagrams than UDP's (a
/// WebTransport session in a browser: 1211 bytes in Chromium 156, so 1186)
/// sends payloads up to this.
pub const fn max_payload_within(datagram_limit: usize) -> usize {
    let fits = datagram_limit.saturating_sub(PAYLOAD_PACKET_OVERHEAD);
    if fits < MAX_PAYLOAD_BYTES {
        fits
    } else {
        MAX_PAYLOAD_BYTES
    }
}

/// Exact size of a connection request packet.
pub const CONNECTION_REQUEST_BYTES: usize =
    1 + VERSION_INFO_BYTES + 8 + 8 + CONNECT_TOKEN_NONCE_BYTES + CONNECT_TOKEN_PRIVATE_BYTES;

/// Smallest encrypted packet that can possibly be valid: prefix, one sequence
/// byte, an empty body and the tag.
pub const MIN_ENCRYPTED_PACKET_BYTES: usize = 1 + 1 + MAC_BYTES;

/// Body size of challenge and response packets: the challenge sequence and
/// the encrypted challenge token.
pub const CHALLENGE_BODY_BYTES: usize = 8 + CHALLENGE_TOKEN_BYTES;

/// Body size of a keep-alive packet: client index and max clients.
pub const KEEP_ALIVE_BODY_BYTES: usize = 8;

/// Number of entries in a replay protection window.
pub const REPLAY_PROTECTION_BUFFER_SIZE: u64 = 256;

/// First value of the server's global sequence on every start (2^63), which
/// keeps challenge and denied packets out of the per-client nonce space.
pub const SERVER_GLOBAL_SEQUENCE_BASE: u64 = 1 << 63;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_sizes_match_the_standard() {
        assert_eq!(CONNECTION_REQUEST_BYTES, 1078);
        assert_eq!(MIN_ENCRYPTED_PACKET_BYTES, 18);
        assert_eq!(MAX_ENCRYPTED_PACKET_BYTES, 1225);
        assert_eq!(CHALLENGE_BODY_BYTES, 308);
        assert_eq!(&VERSION_INFO[..12], b"NETCODE 1.02");
        assert!(!is_payload_size(0) && is_payload_size(1));
        assert!(is_payload_size(1200) && !is_payload_size(1201));
    }

    #[test]
    fn payloads_fit_smaller_datagrams() {
        assert_eq!(PAYLOAD_PACKET_OVERHEAD, 25);
        assert_eq!(max_payload_within(1211), 1186);
        assert_eq!(
            max_payload_within(MAX_ENCRYPTED_PACKET_BYTES),
            MAX_PAYLOAD_BYTES
        );
        assert_eq!(max_payload_within(usize::MAX), MAX_PAYLOAD_BYTES);
        assert_eq!(max_payload_within(26), 1);
        assert_eq!(max_payload_within(25), 0);
        assert_eq!(max_payload_within(0), 0);
    }
}
