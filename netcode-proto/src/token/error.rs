//! Why a token could not be read, written or made (STANDARD.md: *Connect
//! Token*, *Challenge Token*).

use crate::address::AddressError;
use crate::crypto::DecryptError;

/// Why a connect token could not be made, read or opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TokenError {
    /// The token is not exactly the size the format fixes.
    WrongSize,
    /// The version info is not `"NETCODE 1.02\0"`.
    VersionMismatch,
    /// The create timestamp is later than the expire timestamp.
    CreateAfterExpire,
    /// The server address list is malformed, or has 0 or more than 32 entries.
    Address(AddressError),
    /// The public and internal address lists given to the generator differ in length.
    AddressCountMismatch,
    /// The private part does not decrypt with this key, protocol id and expire timestamp.
    Decrypt(DecryptError),
}

impl core::fmt::Display for TokenError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::WrongSize => f.write_str("token has the wrong size"),
            Self::VersionMismatch => f.write_str("token version info is not NETCODE 1.02"),
            Self::CreateAfterExpire => {
                f.write_str("token create timestamp is after its expire timestamp")
            }
            Self::Address(e) => write!(f, "token server addresses: {e}"),
            Self::AddressCountMismatch => {
                f.write_str("public and internal server address lists differ in length")
            }
            Self::Decrypt(e) => write!(f, "private connect token: {e}"),
        }
    }
}

impl core::error::Error for TokenError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Address(e) => Some(e),
            Self::Decrypt(e) => Some(e),
            _ => None,
        }
    }
}

impl From<AddressError> for TokenError {
    fn from(e: AddressError) -> Self {
        Self::Address(e)
    }
}

impl From<DecryptError> for TokenError {
    fn from(e: DecryptError) -> Self {
        Self::Decrypt(e)
    }
}
