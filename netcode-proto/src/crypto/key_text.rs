//! Keys as text and as byte slices: what a web backend reads from its
//! configuration or environment. Not part of the wire format.

use core::fmt;
use core::str::FromStr;

use super::Key;
use crate::constants::KEY_BYTES;

/// Why text or bytes are not a [`Key`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyError {
    /// Not [`KEY_BYTES`] bytes (or twice as many hex digits): the length
    /// found, in bytes for a slice and in characters for text.
    Length(usize),
    /// The character at this byte offset of the text is not a hex digit.
    NotHex(usize),
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Length(n) => write!(
                f,
                "a key is {KEY_BYTES} bytes ({} hex digits), not {n}",
                2 * KEY_BYTES
            ),
            Self::NotHex(at) => write!(f, "not a hex digit at offset {at}"),
        }
    }
}

impl core::error::Error for KeyError {}

/// A key from exactly 64 hex digits (either case), as [`Key::to_hex`]
/// writes it.
///
/// ```
/// use netcode_proto::Key;
///
/// let text = "606abe6ec91910ea9a6562f66f2b30e44371d62cd19927266b3c60f4b715aba1";
/// let key: Key = text.parse()?;
/// assert_eq!(key.to_hex().to_string(), text);
/// # Ok::<(), netcode_proto::crypto::KeyError>(())
/// ```
impl FromStr for Key {
    type Err = KeyError;

    fn from_str(text: &str) -> Result<Self, KeyError> {
        let digits = text.as_bytes();
        if digits.len() != 2 * KEY_BYTES {
            return Err(KeyError::Length(text.chars().count()));
        }
        let mut bytes = [0u8; KEY_BYTES];
        for (i, byte) in bytes.iter_mut().enumerate() {
            let high = hex_value(digits[2 * i]).ok_or(KeyError::NotHex(2 * i))?;
            let low = hex_value(digits[2 * i + 1]).ok_or(KeyError::NotHex(2 * i + 1))?;
            *byte = high << 4 | low;
        }
        Ok(Self::from_bytes(bytes))
    }
}

/// A key from a slice of exactly 32 bytes.
impl TryFrom<&[u8]> for Key {
    type Error = KeyError;

    fn try_from(bytes: &[u8]) -> Result<Self, KeyError> {
        <[u8; KEY_BYTES]>::try_from(bytes)
            .map(Self::from_bytes)
            .map_err(|_| KeyError::Length(bytes.len()))
    }
}

impl Key {
    /// The key as 64 lowercase hex digits, for configuration files. This is
    /// the key material itself: `Debug` never prints it, this does.
    pub fn to_hex(&self) -> KeyHex<'_> {
        KeyHex(self)
    }
}

/// A key's hex digits, from [`Key::to_hex`]; `Display` writes them.
#[derive(Clone, Copy)]
pub struct KeyHex<'a>(&'a Key);

impl fmt::Display for KeyHex<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for byte in self.0.as_bytes() {
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for KeyHex<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("KeyHex(..)")
    }
}

fn hex_value(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        b'A'..=b'F' => Some(digit - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_in_either_case() {
        let key = Key::from_bytes(core::array::from_fn(|i| (i * 37) as u8));
        let mut text = heapless::String::<64>::new();
        core::fmt::write(&mut text, format_args!("{}", key.to_hex())).unwrap();
        assert_eq!(text.parse::<Key>(), Ok(key.clone()));
        assert_eq!(text.to_ascii_uppercase().parse::<Key>(), Ok(key));
    }

    #[test]
    fn bad_text_and_slices_say_why() {
        assert_eq!("abc".parse::<Key>(), Err(KeyError::Length(3)));
        let mut text = [b'0'; 64];
        text[17] = b'g';
        let text = core::str::from_utf8(&text).unwrap();
        assert_eq!(text.parse::<Key>(), Err(KeyError::NotHex(17)));
        // 64 bytes that are 63 characters: refused at the first byte that
        // is no digit, never split inside a character.
        let mut wide = [b'0'; 64];
        wide[..2].copy_from_slice("é".as_bytes());
        let wide = core::str::from_utf8(&wide).unwrap();
        assert_eq!(wide.parse::<Key>(), Err(KeyError::NotHex(0)));
        assert_eq!("é".parse::<Key>(), Err(KeyError::Length(1)));
        assert_eq!(Key::try_from(&[0u8; 31][..]), Err(KeyError::Length(31)));
        assert_eq!(Key::try_from(&[5u8; 32][..]), Ok(Key::from_bytes([5; 32])));
    }
}
