//! Certificate hashes written as text: the SHA-256 of a server's
//! certificate, which a page pins with WebTransport's
//! `serverCertificateHashes` instead of trusting a certificate authority.

use crate::error::ConnectError;

/// Reads a certificate's SHA-256 written as 64 hexadecimal digits (either
/// case; `:` separators and whitespace, as `openssl x509 -fingerprint`
/// prints them, are allowed). An empty string (or only separators) means
/// no pinned hash: `Ok(None)`, for a server whose certificate a
/// certificate authority signed.
pub fn parse_certificate_hash(text: &str) -> Result<Option<[u8; 32]>, ConnectError> {
    let mut digits = text
        .chars()
        .filter(|c| *c != ':' && !c.is_whitespace())
        .peekable();
    if digits.peek().is_none() {
        return Ok(None);
    }
    let mut hash = [0u8; 32];
    let mut count = 0usize;
    for c in digits {
        let Some(value) = c.to_digit(16) else {
            return Err(ConnectError::BadCertificateHash(format!(
                "{c:?} is not a hexadecimal digit"
            )));
        };
        if let Some(byte) = hash.get_mut(count / 2) {
            // `value` is below 16: it fits a nibble.
            let nibble = value as u8;
            *byte = if count.is_multiple_of(2) {
                nibble << 4
            } else {
                *byte | nibble
            };
        }
        count += 1;
    }
    if count != 64 {
        return Err(ConnectError::BadCertificateHash(format!(
            "{count} hexadecimal digits, where a SHA-256 has 64"
        )));
    }
    Ok(Some(hash))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191A1B1C1D1E1F";

    fn counting() -> [u8; 32] {
        core::array::from_fn(|i| i as u8)
    }

    #[test]
    fn reads_64_digits_in_either_case() {
        assert_eq!(parse_certificate_hash(HEX), Ok(Some(counting())));
    }

    #[test]
    fn allows_colons_and_whitespace() {
        let colons: Vec<String> = counting().iter().map(|b| format!("{b:02X}")).collect();
        let text = format!(" {}\n", colons.join(":"));
        assert_eq!(parse_certificate_hash(&text), Ok(Some(counting())));
    }

    #[test]
    fn empty_means_no_pinned_hash() {
        assert_eq!(parse_certificate_hash(""), Ok(None));
        assert_eq!(parse_certificate_hash("  "), Ok(None));
    }

    #[test]
    fn refuses_wrong_lengths_and_non_digits() {
        assert!(matches!(
            parse_certificate_hash(&HEX[..62]),
            Err(ConnectError::BadCertificateHash(m)) if m.starts_with("62 ")
        ));
        assert!(matches!(
            parse_certificate_hash(&format!("{HEX}00")),
            Err(ConnectError::BadCertificateHash(m)) if m.starts_with("66 ")
        ));
        assert!(matches!(
            parse_certificate_hash(&HEX.replace('a', "g")),
            Err(ConnectError::BadCertificateHash(m)) if m.contains("'g'")
        ));
    }
}
