//! The store's file format: a checksummed header, then fixed-size
//! checksummed records, one per used connect token.
//!
//! ```text
//! header (48 bytes)
//!   0  magic "NCTKHIST"                      8
//!   8  version (u32 LE) = 2                  4
//!  12  reserved (zero)                       4
//!  16  recorded_since (u64 LE, unix s)       8
//!  24  latest_unix_seconds (u64 LE)          8
//!  32  checksum of bytes 0..32              16
//! record (64 bytes), the i-th after the header
//!   0  mac: the sealed private token's tag  16
//!  16  expire_timestamp (u64 LE, unix s)     8
//!  24  address family: 4 or 6                1
//!  25  address bytes (IPv4 in the first 4)  16
//!  41  port (u16 LE)                         2
//!  43  reserved (zero)                       5
//!  48  checksum of bytes 0..48, under i     16
//! ```
//!
//! `latest_unix_seconds` is the latest wall-clock second at which the file
//! was written whole: every record it left out then had expired by it.
//! Version 1 (a 40-byte header without it) is refused as unsupported.
//!
//! The checksum is a Poly1305 tag (the core's ChaCha20-Poly1305 with an
//! empty message and the bytes as associated data) under a fixed key, with
//! the record's index as nonce, so a record moved, duplicated or left from
//! an older layout of the file does not verify where it lies. It guards
//! against accidental damage (a torn write, a cut or altered file), not
//! against whoever can write the file, who could as well delete it.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use netcode_proto::Key;
use netcode_proto::crypto::{encrypt, sequence_nonce};
use netcode_proto::server::UsedToken;

use super::error::StoreError;

/// The file's first eight bytes.
pub(super) const MAGIC: [u8; 8] = *b"NCTKHIST";
/// The format version this module writes and reads.
pub(super) const VERSION: u32 = 2;
/// Bytes of the header.
pub(super) const HEADER_BYTES: usize = 48;
/// Bytes of the header the checksum covers.
const HEADER_SUMMED: usize = 32;
/// Bytes of each record.
pub(super) const RECORD_BYTES: usize = 64;

/// The checksum key: fixed and public (see the module documentation).
const CHECKSUM_KEY: Key = Key::from_bytes(*b"netcode token history checksum!!");

/// The header's checksum nonce, apart from every record index.
const HEADER_NONCE: u64 = u64::MAX;

fn checksum(bytes: &[u8], nonce: u64) -> [u8; 16] {
    encrypt(&CHECKSUM_KEY, &sequence_nonce(nonce), bytes, &mut [])
}

/// What a file's header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Header {
    /// Unix seconds since which the file holds every token recorded.
    pub(super) recorded_since: u64,
    /// The latest unix second at which the file was written whole.
    pub(super) latest_unix_seconds: u64,
}

/// The bytes of `header`.
pub(super) fn header(header: &Header) -> [u8; HEADER_BYTES] {
    let mut out = [0u8; HEADER_BYTES];
    out[..8].copy_from_slice(&MAGIC);
    out[8..12].copy_from_slice(&VERSION.to_le_bytes());
    out[16..24].copy_from_slice(&header.recorded_since.to_le_bytes());
    out[24..32].copy_from_slice(&header.latest_unix_seconds.to_le_bytes());
    let sum = checksum(&out[..HEADER_SUMMED], HEADER_NONCE);
    out[HEADER_SUMMED..].copy_from_slice(&sum);
    out
}

/// A file's header, once it checks out.
pub(super) fn read_header(bytes: &[u8]) -> Result<Header, StoreError> {
    if bytes.len() >= 12 && bytes[..8] == MAGIC {
        let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
        if version != VERSION {
            return Err(StoreError::UnsupportedVersion(version));
        }
    }
    let Some(bytes) = bytes.get(..HEADER_BYTES) else {
        return Err(StoreError::Truncated {
            length: bytes.len() as u64,
            records: 0,
        });
    };
    if bytes[..8] != MAGIC {
        return Err(StoreError::NotAHistoryStore);
    }
    if checksum(&bytes[..HEADER_SUMMED], HEADER_NONCE) != bytes[HEADER_SUMMED..] {
        return Err(StoreError::CorruptHeader);
    }
    if bytes[12..16] != [0; 4] {
        return Err(StoreError::CorruptHeader);
    }
    let u64_at = |at: usize| {
        let mut word = [0u8; 8];
        word.copy_from_slice(&bytes[at..at + 8]);
        u64::from_le_bytes(word)
    };
    Ok(Header {
        recorded_since: u64_at(16),
        latest_unix_seconds: u64_at(24),
    })
}

/// Record `index` of the file, for `token`.
pub(super) fn record(token: &UsedToken, index: u64) -> [u8; RECORD_BYTES] {
    let mut out = [0u8; RECORD_BYTES];
    out[..16].copy_from_slice(&token.mac);
    out[16..24].copy_from_slice(&token.expire_timestamp.to_le_bytes());
    match token.address.ip() {
        IpAddr::V4(ip) => {
            out[24] = 4;
            out[25..29].copy_from_slice(&ip.octets());
        }
        IpAddr::V6(ip) => {
            out[24] = 6;
            out[25..41].copy_from_slice(&ip.octets());
        }
    }
    out[41..43].copy_from_slice(&token.address.port().to_le_bytes());
    let sum = checksum(&out[..48], index);
    out[48..].copy_from_slice(&sum);
    out
}

/// The token of record `index`, once it checks out.
pub(super) fn read_record(bytes: &[u8; RECORD_BYTES], index: u64) -> Result<UsedToken, StoreError> {
    let corrupt = StoreError::CorruptRecord { index };
    if checksum(&bytes[..48], index) != bytes[48..] || bytes[43..48] != [0; 5] {
        return Err(corrupt);
    }
    let mut mac = [0u8; 16];
    mac.copy_from_slice(&bytes[..16]);
    let mut expire = [0u8; 8];
    expire.copy_from_slice(&bytes[16..24]);
    let mut ip = [0u8; 16];
    ip.copy_from_slice(&bytes[25..41]);
    let ip = match bytes[24] {
        4 if ip[4..] == [0; 12] => IpAddr::V4(Ipv4Addr::new(ip[0], ip[1], ip[2], ip[3])),
        6 => IpAddr::V6(Ipv6Addr::from(ip)),
        _ => return Err(corrupt),
    };
    let port = u16::from_le_bytes([bytes[41], bytes[42]]);
    Ok(UsedToken {
        mac,
        address: SocketAddr::new(ip, port),
        expire_timestamp: u64::from_le_bytes(expire),
    })
}

/// Every record of a whole file, checked, in order.
pub(super) fn read_file(bytes: &[u8]) -> Result<(Header, Vec<UsedToken>), StoreError> {
    let header = read_header(bytes)?;
    let body = &bytes[HEADER_BYTES..];
    let whole = body.len() / RECORD_BYTES;
    if !body.len().is_multiple_of(RECORD_BYTES) {
        return Err(StoreError::Truncated {
            length: bytes.len() as u64,
            records: whole as u64,
        });
    }
    let tokens = body
        .chunks_exact(RECORD_BYTES)
        .enumerate()
        .map(|(i, chunk)| {
            let mut record = [0u8; RECORD_BYTES];
            record.copy_from_slice(chunk);
            read_record(&record, i as u64)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((header, tokens))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(i: u8, address: &str) -> UsedToken {
        UsedToken {
            mac: [i; 16],
            address: address.parse().unwrap(),
            expire_timestamp: 1_800_000_000 + u64::from(i),
        }
    }

    #[test]
    fn records_and_headers_round_trip() {
        for (i, address) in ["127.0.0.1:40000", "[::1]:5", "[2001:db8::7]:65535"]
            .iter()
            .enumerate()
        {
            let t = token(i as u8, address);
            assert_eq!(read_record(&record(&t, 9), 9).ok(), Some(t));
            assert!(
                matches!(
                    read_record(&record(&t, 9), 10),
                    Err(StoreError::CorruptRecord { index: 10 })
                ),
                "a record only verifies at its own index"
            );
        }
        let written = Header {
            recorded_since: 42,
            latest_unix_seconds: 99,
        };
        assert_eq!(read_header(&header(&written)).ok(), Some(written));
        let mut older = header(&written);
        older[8] = 1;
        assert!(matches!(
            read_header(&older),
            Err(StoreError::UnsupportedVersion(1))
        ));
    }
}
