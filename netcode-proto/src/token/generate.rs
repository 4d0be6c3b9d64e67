//! Making connect tokens, as a web backend does (STANDARD.md: *Connect
//! Token*, "generating a connect token").

use core::net::SocketAddr;

use rand_core::CryptoRng;

use crate::address::{AddressError, AddressList};
use crate::constants::{CONNECT_TOKEN_NONCE_BYTES, USER_DATA_BYTES};
use crate::crypto::Key;

use super::{ConnectToken, PrivateConnectToken, TokenError, private};

/// Everything a web backend decides when it issues a connect token.
#[derive(Debug, Clone)]
pub struct ConnectTokenParams<'a> {
    /// Identifies the game or application.
    pub protocol_id: u64,
    /// The key shared by the backend and the dedicated servers.
    pub private_key: &'a Key,
    /// Globally unique id of the authenticated client.
    pub client_id: u64,
    /// Addresses the client connects to, in order of preference (1 to 32).
    pub public_addresses: &'a [SocketAddr],
    /// Addresses the servers know themselves by, one per public address and
    /// in the same order; each server accepts the token only when its own
    /// address is in this list. `None` means the same as the public list.
    pub internal_addresses: Option<&'a [SocketAddr]>,
    /// Unix seconds "now", the create timestamp.
    pub create_timestamp: u64,
    /// Lifetime of the token in seconds; negative means it never expires.
    pub expire_seconds: i64,
    /// Connection timeout in seconds; negative disables timeouts.
    pub timeout_seconds: i32,
    /// Application data delivered to the server with the connection.
    pub user_data: &'a [u8; USER_DATA_BYTES],
}

/// Makes a connect token as the C library's `netcode_generate_connect_token`
/// does: a fresh random nonce and a fresh pair of packet keys from `rng`, the
/// private part listing the internal addresses and sealed with the private
/// key, the public part listing the public addresses.
///
/// Errors: an address list with 0 or more than 32 entries, or public and
/// internal lists of different lengths.
pub fn generate_connect_token<R: CryptoRng + ?Sized>(
    params: &ConnectTokenParams<'_>,
    rng: &mut R,
) -> Result<ConnectToken, TokenError> {
    let internal = params.internal_addresses.unwrap_or(params.public_addresses);
    if internal.len() != params.public_addresses.len() {
        return Err(TokenError::AddressCountMismatch);
    }
    let public_addresses = to_list(params.public_addresses)?;
    let server_addresses = to_list(internal)?;

    let expire_timestamp = match u64::try_from(params.expire_seconds) {
        Ok(seconds) => params.create_timestamp.saturating_add(seconds),
        Err(_) => u64::MAX,
    };
    let mut nonce = [0u8; CONNECT_TOKEN_NONCE_BYTES];
    rng.fill_bytes(&mut nonce);
    let client_to_server_key = Key::generate(rng);
    let server_to_client_key = Key::generate(rng);

    let private = PrivateConnectToken {
        client_id: params.client_id,
        timeout_seconds: params.timeout_seconds,
        server_addresses,
        client_to_server_key: client_to_server_key.clone(),
        server_to_client_key: server_to_client_key.clone(),
        user_data: *params.user_data,
    };
    let mut private_data = private.write()?;
    private::seal(
        &mut private_data,
        params.protocol_id,
        expire_timestamp,
        &nonce,
        params.private_key,
    );
    Ok(ConnectToken {
        protocol_id: params.protocol_id,
        create_timestamp: params.create_timestamp,
        expire_timestamp,
        nonce,
        private_data,
        timeout_seconds: params.timeout_seconds,
        server_addresses: public_addresses,
        client_to_server_key,
        server_to_client_key,
    })
}

fn to_list(addresses: &[SocketAddr]) -> Result<AddressList, AddressError> {
    if addresses.is_empty() {
        return Err(AddressError::BadCount);
    }
    AddressList::from_slice(addresses).map_err(|_| AddressError::BadCount)
}
