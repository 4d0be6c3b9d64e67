//! Connect token generation for web backends.

use std::net::SocketAddr;

use netcode_proto::Key;
use netcode_proto::constants::{CONNECT_TOKEN_BYTES, USER_DATA_BYTES};
use netcode_proto::token::{ConnectTokenParams, TokenError};

use crate::random::os_random;
use crate::time::unix_time;

/// What a web backend decides when it issues a connect token.
#[derive(Debug, Clone)]
pub struct TokenRequest<'a> {
    /// Identifies the game or application.
    pub protocol_id: u64,
    /// The key shared by the backend and the dedicated servers.
    pub private_key: &'a Key,
    /// Globally unique id of the authenticated client.
    pub client_id: u64,
    /// Addresses the client connects to, in order (1 to 32).
    pub public_addresses: &'a [SocketAddr],
    /// Addresses the servers know themselves by, one per public address;
    /// `None` means the same as the public ones.
    pub internal_addresses: Option<&'a [SocketAddr]>,
    /// Lifetime in seconds; negative means the token never expires.
    pub expire_seconds: i64,
    /// Connection timeout in seconds; negative disables timeouts.
    pub timeout_seconds: i32,
    /// Application data for the server; `None` sends zeros.
    pub user_data: Option<&'a [u8; USER_DATA_BYTES]>,
}

/// Issues a 2048-byte connect token stamped with the current unix time, with
/// its nonce and keys from the operating system's CSPRNG.
pub fn generate_connect_token(
    request: &TokenRequest<'_>,
) -> Result<[u8; CONNECT_TOKEN_BYTES], TokenError> {
    let params = ConnectTokenParams {
        protocol_id: request.protocol_id,
        private_key: request.private_key,
        client_id: request.client_id,
        public_addresses: request.public_addresses,
        internal_addresses: request.internal_addresses,
        create_timestamp: unix_time(),
        expire_seconds: request.expire_seconds,
        timeout_seconds: request.timeout_seconds,
        user_data: request.user_data.unwrap_or(&[0; USER_DATA_BYTES]),
    };
    netcode_proto::token::generate_connect_token(&params, &mut os_random())?.write()
}

#[cfg(test)]
mod tests {
    use super::*;
    use netcode_proto::ConnectToken;

    #[test]
    fn generated_token_reads_back_with_fresh_keys() {
        let key = Key::from_bytes([9; 32]);
        let addresses: [SocketAddr; 1] = ["127.0.0.1:40000".parse().unwrap()];
        let request = TokenRequest {
            protocol_id: 0x1122_3344_5566_7788,
            private_key: &key,
            client_id: 42,
            public_addresses: &addresses,
            internal_addresses: None,
            expire_seconds: 30,
            timeout_seconds: 5,
            user_data: None,
        };
        let a = ConnectToken::read(&generate_connect_token(&request).unwrap()).unwrap();
        let b = ConnectToken::read(&generate_connect_token(&request).unwrap()).unwrap();
        assert_eq!(a.expire_timestamp - a.create_timestamp, 30);
        assert_eq!(&a.server_addresses[..], &addresses);
        assert_ne!(a.nonce, b.nonce, "every token gets a fresh nonce");
        assert_ne!(a.client_to_server_key, b.client_to_server_key);
        assert!(
            a.create_timestamp > 1_700_000_000,
            "stamped with the wall clock"
        );
    }

    #[test]
    fn refuses_empty_and_oversized_address_lists() {
        let key = Key::from_bytes([9; 32]);
        let many = vec!["127.0.0.1:1".parse::<SocketAddr>().unwrap(); 33];
        for addresses in [&many[..0], &many[..]] {
            let request = TokenRequest {
                protocol_id: 1,
                private_key: &key,
                client_id: 1,
                public_addresses: addresses,
                internal_addresses: None,
                expire_seconds: 30,
                timeout_seconds: 5,
                user_data: None,
            };
            assert!(generate_connect_token(&request).is_err());
        }
    }
}
