//! The implementations' names, as every table and criterion id gives them.

use netcode_proto::crypto;

/// Ours, with the AEAD backend this build measures: `netcode-rs (ring)` or
/// `netcode-rs (rustcrypto)`.
pub fn ours() -> String {
    format!("netcode-rs ({})", crypto::BACKEND)
}

/// renetcode 2.x.
pub const RENETCODE: &str = "renetcode";

/// netcode-official 1.x (the `netcode` crate).
pub const NETCODE_OFFICIAL: &str = "netcode-official";
