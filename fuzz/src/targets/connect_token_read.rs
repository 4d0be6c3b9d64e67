//! `ConnectToken::read` on any bytes never panics, and a token it accepts
//! reads back the same after `write`.

use netcode_proto::ConnectToken;

/// The `connect_token_read` fuzz target: runs one input, panicking on a failed check.
pub fn connect_token_read(data: &[u8]) {
    if let Ok(token) = ConnectToken::read(data)
        && let Ok(bytes) = token.write()
    {
        assert_eq!(
            ConnectToken::read(&bytes).as_ref(),
            Ok(&token),
            "write then read changed an accepted token"
        );
    }
}
