//! The private connect token, sealed with XChaCha20-Poly1305 (STANDARD.md:
//! *Connect Token*, the private part and its encryption).

use crate::address::{AddressList, read_address_list, write_address_list};
use crate::bytes::{Reader, Writer};
use crate::constants::{
    CONNECT_TOKEN_NONCE_BYTES, CONNECT_TOKEN_PRIVATE_BYTES, KEY_BYTES, MAC_BYTES, USER_DATA_BYTES,
    VERSION_INFO, VERSION_INFO_BYTES,
};
use crate::crypto::{self, Key, Tag};

use super::TokenError;

/// Bytes of the private token that are encrypted; the tag takes the rest.
const ENCRYPTED_BYTES: usize = CONNECT_TOKEN_PRIVATE_BYTES - MAC_BYTES;

/// The private part of a connect token, readable only by the web backend and
/// the dedicated servers that share its private key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrivateConnectToken {
    /// Globally unique identifier of the authenticated client.
    pub client_id: u64,
    /// Seconds of silence after which either side drops the connection;
    /// negative disables timeouts (development only).
    pub timeout_seconds: i32,
    /// The addresses of the servers the token is valid for, as the servers
    /// themselves know them (the "internal" addresses of the C library).
    pub server_addresses: AddressList,
    /// Key for packets from client to server.
    pub client_to_server_key: Key,
    /// Key for packets from server to client.
    pub server_to_client_key: Key,
    /// Application data for the server, delivered with the connection.
    pub user_data: [u8; USER_DATA_BYTES],
}

/// The associated data that binds a private connect token to its version,
/// protocol id and expire timestamp: 29 bytes.
pub fn private_token_associated_data(protocol_id: u64, expire_timestamp: u64) -> [u8; 29] {
    let mut ad = [0u8; VERSION_INFO_BYTES + 16];
    ad[..VERSION_INFO_BYTES].copy_from_slice(&VERSION_INFO);
    ad[VERSION_INFO_BYTES..VERSION_INFO_BYTES + 8].copy_from_slice(&protocol_id.to_le_bytes());
    ad[VERSION_INFO_BYTES + 8..].copy_from_slice(&expire_timestamp.to_le_bytes());
    ad
}

impl PrivateConnectToken {
    /// The 1024-byte plaintext buffer: the fields, zero padded, with the last
    /// 16 bytes (where the tag goes) zero.
    ///
    /// Fails only when the address list is empty.
    pub fn write(&self) -> Result<[u8; CONNECT_TOKEN_PRIVATE_BYTES], TokenError> {
        if self.server_addresses.is_empty() {
            return Err(crate::address::AddressError::BadCount.into());
        }
        let mut buffer = [0u8; CONNECT_TOKEN_PRIVATE_BYTES];
        let mut w = Writer::new(&mut buffer[..ENCRYPTED_BYTES]);
        // 8 + 4 + 4 + 32 * 19 + 64 + 256 = 944 bytes at most: always fits.
        let fits = (|| {
            w.u64(self.client_id)?;
            w.i32(self.timeout_seconds)?;
            write_address_list(&mut w, &self.server_addresses)?;
            w.bytes(self.client_to_server_key.as_bytes())?;
            w.bytes(self.server_to_client_key.as_bytes())?;
            w.bytes(&self.user_data)
        })();
        debug_assert!(fits.is_some());
        Ok(buffer)
    }

    /// Reads the fields from a decrypted buffer (at least the 1008 encrypted
    /// bytes). Padding is not checked, as in the reference.
    pub fn read(plaintext: &[u8]) -> Result<Self, TokenError> {
        let mut r = Reader::new(plaintext);
        let client_id = r.u64().ok_or(TokenError::WrongSize)?;
        let timeout_seconds = r.i32().ok_or(TokenError::WrongSize)?;
        let server_addresses = read_address_list(&mut r)?;
        let client_to_server_key = r.array::<KEY_BYTES>().ok_or(TokenError::WrongSize)?;
        let server_to_client_key = r.array::<KEY_BYTES>().ok_or(TokenError::WrongSize)?;
        let user_data = r.array::<USER_DATA_BYTES>().ok_or(TokenError::WrongSize)?;
        Ok(Self {
            client_id,
            timeout_seconds,
            server_addresses,
            client_to_server_key: Key::from_bytes(client_to_server_key),
            server_to_client_key: Key::from_bytes(server_to_client_key),
            user_data,
        })
    }

    /// Writes and encrypts the token into its 1024-byte sealed form.
    pub fn encrypt(
        &self,
        protocol_id: u64,
        expire_timestamp: u64,
        nonce: &[u8; CONNECT_TOKEN_NONCE_BYTES],
        private_key: &Key,
    ) -> Result<[u8; CONNECT_TOKEN_PRIVATE_BYTES], TokenError> {
        let mut buffer = self.write()?;
        seal(
            &mut buffer,
            protocol_id,
            expire_timestamp,
            nonce,
            private_key,
        );
        Ok(buffer)
    }

    /// Decrypts a sealed private token in place and reads it.
    ///
    /// On success the first 1008 bytes of `buffer` hold the plaintext and the
    /// last 16 still hold the tag; on a decryption failure the contents of
    /// the first 1008 are unspecified.
    pub fn decrypt(
        buffer: &mut [u8; CONNECT_TOKEN_PRIVATE_BYTES],
        protocol_id: u64,
        expire_timestamp: u64,
        nonce: &[u8; CONNECT_TOKEN_NONCE_BYTES],
        private_key: &Key,
    ) -> Result<Self, TokenError> {
        open(buffer, protocol_id, expire_timestamp, nonce, private_key)?;
        Self::read(&buffer[..ENCRYPTED_BYTES])
    }
}

/// Encrypts a 1024-byte private token plaintext in place, writing the tag
/// into its last 16 bytes.
pub(crate) fn seal(
    buffer: &mut [u8; CONNECT_TOKEN_PRIVATE_BYTES],
    protocol_id: u64,
    expire_timestamp: u64,
    nonce: &[u8; CONNECT_TOKEN_NONCE_BYTES],
    private_key: &Key,
) {
    let ad = private_token_associated_data(protocol_id, expire_timestamp);
    let (text, tag) = buffer.split_at_mut(ENCRYPTED_BYTES);
    tag.copy_from_slice(&crypto::encrypt_x(private_key, nonce, &ad, text));
}

/// Decrypts a sealed 1024-byte private token in place, leaving the tag.
pub(crate) fn open(
    buffer: &mut [u8; CONNECT_TOKEN_PRIVATE_BYTES],
    protocol_id: u64,
    expire_timestamp: u64,
    nonce: &[u8; CONNECT_TOKEN_NONCE_BYTES],
    private_key: &Key,
) -> Result<(), TokenError> {
    let ad = private_token_associated_data(protocol_id, expire_timestamp);
    let (text, tag) = buffer.split_at_mut(ENCRYPTED_BYTES);
    let tag: &Tag = (&*tag).try_into().map_err(|_| TokenError::WrongSize)?;
    Ok(crypto::decrypt_x(private_key, nonce, &ad, text, tag)?)
}
