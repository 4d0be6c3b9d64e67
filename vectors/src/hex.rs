//! Hex strings as the manifest writes them: two digits per byte, in wire
//! order, no prefix, no separators. An empty string is zero bytes.

use crate::{Error, Result};

/// Decodes a hex string (upper or lower case digits) into bytes.
pub fn decode(text: &str) -> Result<Vec<u8>> {
    let digits = text.as_bytes();
    if !digits.len().is_multiple_of(2) {
        return Err(Error::new(format!(
            "hex string has an odd number of digits ({})",
            digits.len()
        )));
    }
    digits
        .chunks_exact(2)
        .map(|pair| Ok((digit(pair[0])? << 4) | digit(pair[1])?))
        .collect()
}

/// Decodes a hex string that must hold exactly `N` bytes.
pub fn decode_array<const N: usize>(text: &str) -> Result<[u8; N]> {
    let bytes = decode(text)?;
    bytes
        .as_slice()
        .try_into()
        .map_err(|_| Error::new(format!("expected {N} bytes of hex, got {}", bytes.len())))
}

/// Encodes bytes as lowercase hex.
pub fn encode(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
    out
}

fn digit(c: u8) -> Result<u8> {
    match c {
        b'0'..=b'9' => Ok(c - b'0'),
        b'a'..=b'f' => Ok(c - b'a' + 10),
        b'A'..=b'F' => Ok(c - b'A' + 10),
        _ => Err(Error::new(format!("invalid hex digit {:?}", char::from(c)))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        assert_eq!(decode("").unwrap(), Vec::<u8>::new());
        assert_eq!(decode("00ff7Fa0").unwrap(), vec![0x00, 0xff, 0x7f, 0xa0]);
        assert_eq!(encode(&[0x00, 0xff, 0x7f, 0xa0]), "00ff7fa0");
        assert_eq!(decode_array::<2>("0102").unwrap(), [1, 2]);
    }

    #[test]
    fn rejects_bad_input() {
        assert!(decode("abc").is_err());
        assert!(decode("zz").is_err());
        assert!(decode_array::<3>("0102").is_err());
    }
}
