//! The public connect token a client is given (STANDARD.md: *Connect
//! Token*, the public part).

use crate::address::{AddressList, read_address_list, write_address_list};
use crate::bytes::{Reader, Writer};
use crate::constants::{
    CONNECT_TOKEN_BYTES, CONNECT_TOKEN_NONCE_BYTES, CONNECT_TOKEN_PRIVATE_BYTES, KEY_BYTES,
    VERSION_INFO, VERSION_INFO_BYTES,
};
use crate::crypto::Key;

use super::TokenError;

/// The public connect token: what the web backend gives a client, 2048
/// bytes on the wire.
///
/// The client can read everything here but `private_data`, which it
/// forwards to the server inside its connection requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectToken {
    /// Identifies the game or application; the server refuses other ids.
    pub protocol_id: u64,
    /// Unix seconds when the token was made.
    pub create_timestamp: u64,
    /// Unix seconds when the token stops being accepted (`u64::MAX`: never).
    pub expire_timestamp: u64,
    /// The XChaCha20-Poly1305 nonce that sealed `private_data`.
    pub nonce: [u8; CONNECT_TOKEN_NONCE_BYTES],
    /// The sealed [`PrivateConnectToken`](super::PrivateConnectToken).
    pub private_data: [u8; CONNECT_TOKEN_PRIVATE_BYTES],
    /// Seconds of silence after which the connection drops; negative disables
    /// timeouts (development only).
    pub timeout_seconds: i32,
    /// Server addresses to try, in order (the "public" addresses).
    pub server_addresses: AddressList,
    /// Key for packets from client to server.
    pub client_to_server_key: Key,
    /// Key for packets from server to client.
    pub server_to_client_key: Key,
}

impl ConnectToken {
    /// The 2048-byte wire form, zero padded.
    ///
    /// Fails only when the address list is empty.
    pub fn write(&self) -> Result<[u8; CONNECT_TOKEN_BYTES], TokenError> {
        if self.server_addresses.is_empty() {
            return Err(crate::address::AddressError::BadCount.into());
        }
        let mut buffer = [0u8; CONNECT_TOKEN_BYTES];
        let mut w = Writer::new(&mut buffer);
        // 13 + 24 + 24 + 1024 + 8 + 32 * 19 + 64 = 1765 bytes at most: always fits.
        let fits = (|| {
            w.bytes(&VERSION_INFO)?;
            w.u64(self.protocol_id)?;
            w.u64(self.create_timestamp)?;
            w.u64(self.expire_timestamp)?;
            w.bytes(&self.nonce)?;
            w.bytes(&self.private_data)?;
            w.i32(self.timeout_seconds)?;
            write_address_list(&mut w, &self.server_addresses)?;
            w.bytes(self.client_to_server_key.as_bytes())?;
            w.bytes(self.server_to_client_key.as_bytes())
        })();
        debug_assert!(fits.is_some());
        Ok(buffer)
    }

    /// Reads and validates a public token as a client does before connecting:
    /// exactly 2048 bytes, the version info, create not after expire, 1 to 32
    /// addresses of type IPv4 or IPv6. Nothing else is checked (the protocol
    /// id, keys and padding are the server's business, and wall-clock expiry
    /// is not the client's).
    pub fn read(bytes: &[u8]) -> Result<Self, TokenError> {
        if bytes.len() != CONNECT_TOKEN_BYTES {
            return Err(TokenError::WrongSize);
        }
        let mut r = Reader::new(bytes);
        // The length check above makes every fixed-size read below succeed
        // until the address list, whose own reader checks its bounds.
        let version = r
            .array::<VERSION_INFO_BYTES>()
            .ok_or(TokenError::WrongSize)?;
        if version != VERSION_INFO {
            return Err(TokenError::VersionMismatch);
        }
        let protocol_id = r.u64().ok_or(TokenError::WrongSize)?;
        let create_timestamp = r.u64().ok_or(TokenError::WrongSize)?;
        let expire_timestamp = r.u64().ok_or(TokenError::WrongSize)?;
        if create_timestamp > expire_timestamp {
            return Err(TokenError::CreateAfterExpire);
        }
        let nonce = r.array().ok_or(TokenError::WrongSize)?;
        let private_data = r.array().ok_or(TokenError::WrongSize)?;
        let timeout_seconds = r.i32().ok_or(TokenError::WrongSize)?;
        let server_addresses = read_address_list(&mut r)?;
        let client_to_server_key = r.array::<KEY_BYTES>().ok_or(TokenError::WrongSize)?;
        let server_to_client_key = r.array::<KEY_BYTES>().ok_or(TokenError::WrongSize)?;
        Ok(Self {
            protocol_id,
            create_timestamp,
            expire_timestamp,
            nonce,
            private_data,
            timeout_seconds,
            server_addresses,
            client_to_server_key: Key::from_bytes(client_to_server_key),
            server_to_client_key: Key::from_bytes(server_to_client_key),
        })
    }

    /// Seconds the client may spend connecting before the token counts as
    /// expired: expire minus create, as the standard measures it.
    pub fn lifetime_seconds(&self) -> u64 {
        self.expire_timestamp.saturating_sub(self.create_timestamp)
    }
}
