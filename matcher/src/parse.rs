//! The values the matcher reads from its command line and from callers'
//! requests that are neither addresses nor paths: ids in decimal or hex,
//! and durations in seconds.

use std::num::{ParseFloatError, ParseIntError};
use std::time::Duration;

/// Why text is not an id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not a 64-bit id in decimal or 0x hex: {error}")]
pub struct IdError {
    /// The text, trimmed.
    pub text: String,
    /// Why it does not parse.
    pub error: ParseIntError,
}

/// Why text is not a number of seconds the matcher takes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecondsError {
    /// Not a number at all.
    #[error("{text:?} is not a number of seconds: {error}")]
    NotANumber {
        /// The text.
        text: String,
        /// Why it does not parse.
        error: ParseFloatError,
    },
    /// A number, but 0 or less, over a day, or not finite.
    #[error("{text:?}: expected more than 0 and at most 86400 seconds")]
    OutOfRange {
        /// The text.
        text: String,
    },
}

/// A positive duration written in seconds, fractions allowed (`2`, `0.5`),
/// at most a day.
pub fn parse_seconds(text: &str) -> Result<Duration, SecondsError> {
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|error| SecondsError::NotANumber {
            text: text.to_owned(),
            error,
        })?;
    if !(seconds > 0.0 && seconds <= 86_400.0) {
        return Err(SecondsError::OutOfRange {
            text: text.to_owned(),
        });
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// An id written in decimal or as 0x-prefixed hex.
pub fn parse_id(text: &str) -> Result<u64, IdError> {
    let text = text.trim();
    let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.map_err(|error| IdError {
        text: text.to_owned(),
        error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_decimal_or_hex_and_nothing_else() {
        assert_eq!(parse_id("42"), Ok(42));
        assert_eq!(parse_id("0x1122334455667788"), Ok(0x1122_3344_5566_7788));
        assert_eq!(parse_id("0XFF"), Ok(255));
        assert_eq!(parse_id("18446744073709551615"), Ok(u64::MAX));
        for bad in ["", "-1", "0x", "18446744073709551616", "12a", "0x1g", "1.5"] {
            let error = parse_id(bad).unwrap_err();
            assert!(
                error.to_string().contains("not a 64-bit id"),
                "{bad:?}: {error}"
            );
        }
    }

    #[test]
    fn seconds_are_positive_and_may_be_fractions() {
        assert_eq!(parse_seconds("2"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_seconds(" 0.25 "), Ok(Duration::from_millis(250)));
        for bad in ["", "0", "-1", "x", "NaN", "inf", "86401"] {
            assert!(parse_seconds(bad).is_err(), "{bad:?}");
        }
        assert!(matches!(
            parse_seconds("x"),
            Err(SecondsError::NotANumber { .. })
        ));
        assert_eq!(
            parse_seconds("0").unwrap_err().to_string(),
            "\"0\": expected more than 0 and at most 86400 seconds"
        );
    }
}
