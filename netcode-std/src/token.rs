//! Connect token generation for web backends.

use std::net::SocketAddr;

use crate::address::{AddressParseError, ToAddress};

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
    generate_issued_at(request, unix_time())
}

/// [`generate_connect_token`] stamped with `create_timestamp` instead of
/// the current time.
fn generate_issued_at(
    request: &TokenRequest<'_>,
    create_timestamp: u64,
) -> Result<[u8; CONNECT_TOKEN_BYTES], TokenError> {
    let params = ConnectTokenParams {
        protocol_id: request.protocol_id,
        private_key: request.private_key,
        client_id: request.client_id,
        public_addresses: request.public_addresses,
        internal_addresses: request.internal_addresses,
        create_timestamp,
        expire_seconds: request.expire_seconds,
        timeout_seconds: request.timeout_seconds,
        user_data: request.user_data.unwrap_or(&[0; USER_DATA_BYTES]),
    };
    netcode_proto::token::generate_connect_token(&params, &mut os_random())?.write()
}

/// Why [`ConnectTokenBuilder::generate`] failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenBuildError {
    /// Public server address number `index` (from 0) is not an address.
    PublicAddress {
        /// Its position in the list.
        index: usize,
        /// Why.
        error: AddressParseError,
    },
    /// Internal server address number `index` (from 0) is not an address.
    InternalAddress {
        /// Its position in the list.
        index: usize,
        /// Why.
        error: AddressParseError,
    },
    /// The token could not be made: no addresses, more than 32, or public
    /// and internal lists of different lengths.
    Token(TokenError),
}

impl core::fmt::Display for TokenBuildError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::PublicAddress { index, error } => {
                write!(f, "public server address {index}: {error}")
            }
            Self::InternalAddress { index, error } => {
                write!(f, "internal server address {index}: {error}")
            }
            Self::Token(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for TokenBuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::PublicAddress { error, .. } | Self::InternalAddress { error, .. } => Some(error),
            Self::Token(e) => Some(e),
        }
    }
}

impl From<TokenError> for TokenBuildError {
    fn from(e: TokenError) -> Self {
        Self::Token(e)
    }
}

/// Builds a connect token from address strings (in the C library's syntax,
/// see [`parse_address`](crate::parse_address)) or parsed addresses, with
/// the reference's defaults: 30 s expiry, 5 s timeout, zero user data.
///
/// ```
/// use netcode_std::{ConnectTokenBuilder, proto::Key};
///
/// let key = Key::from_bytes([7; 32]);
/// let token: [u8; 2048] = ConnectTokenBuilder::new(0x1122_3344_5566_7788, &key, 42)
///     .server_addresses(["127.0.0.1:40000", "[::1]:40000"])
///     .expire_seconds(60)
///     .timeout_seconds(10)
///     .generate()
///     .unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct ConnectTokenBuilder<'a> {
    protocol_id: u64,
    private_key: &'a Key,
    client_id: u64,
    public: Result<Vec<SocketAddr>, TokenBuildError>,
    internal: Option<Result<Vec<SocketAddr>, TokenBuildError>>,
    expire_seconds: i64,
    timeout_seconds: i32,
    user_data: [u8; USER_DATA_BYTES],
    issued_at: Option<u64>,
}

impl<'a> ConnectTokenBuilder<'a> {
    /// A token for `client_id`, sealed with `private_key`, with no server
    /// addresses yet.
    pub fn new(protocol_id: u64, private_key: &'a Key, client_id: u64) -> Self {
        Self {
            protocol_id,
            private_key,
            client_id,
            public: Ok(Vec::new()),
            internal: None,
            expire_seconds: 30,
            timeout_seconds: 5,
            user_data: [0; USER_DATA_BYTES],
            issued_at: None,
        }
    }

    /// The servers the client tries, in order (1 to 32).
    pub fn server_addresses<A: ToAddress>(
        mut self,
        addresses: impl IntoIterator<Item = A>,
    ) -> Self {
        self.public = parse_all(addresses, |index, error| TokenBuildError::PublicAddress {
            index,
            error,
        });
        self
    }

    /// The addresses the servers know themselves by, one per public
    /// address, when they differ from the public ones (NAT, proxies).
    pub fn internal_server_addresses<A: ToAddress>(
        mut self,
        addresses: impl IntoIterator<Item = A>,
    ) -> Self {
        self.internal = Some(parse_all(addresses, |index, error| {
            TokenBuildError::InternalAddress { index, error }
        }));
        self
    }

    /// Lifetime in seconds; negative means the token never expires.
    pub fn expire_seconds(mut self, seconds: i64) -> Self {
        self.expire_seconds = seconds;
        self
    }

    /// Connection timeout in seconds; negative disables timeouts.
    pub fn timeout_seconds(mut self, seconds: i32) -> Self {
        self.timeout_seconds = seconds;
        self
    }

    /// Application data for the server.
    pub fn user_data(mut self, user_data: &[u8; USER_DATA_BYTES]) -> Self {
        self.user_data = *user_data;
        self
    }

    /// The unix second the token is issued at, from which its expiry
    /// counts (by default the system clock's when it is generated): for a
    /// backend that keeps time its own way, or one that issues tokens for
    /// a server from the second the server admits them
    /// ([`Server::start_nowait`](crate::Server::start_nowait)).
    pub fn issued_at(mut self, unix_seconds: u64) -> Self {
        self.issued_at = Some(unix_seconds);
        self
    }

    /// Issues the 2048-byte token, stamped with the current unix time (or
    /// [`issued_at`](Self::issued_at)'s), with its nonce and keys from the
    /// operating system's CSPRNG.
    pub fn generate(&self) -> Result<[u8; CONNECT_TOKEN_BYTES], TokenBuildError> {
        let public = self.public.as_ref().map_err(|e| *e)?;
        let internal = match &self.internal {
            Some(list) => Some(list.as_ref().map_err(|e| *e)?.as_slice()),
            None => None,
        };
        let request = TokenRequest {
            protocol_id: self.protocol_id,
            private_key: self.private_key,
            client_id: self.client_id,
            public_addresses: public,
            internal_addresses: internal,
            expire_seconds: self.expire_seconds,
            timeout_seconds: self.timeout_seconds,
            user_data: Some(&self.user_data),
        };
        let issued_at = self.issued_at.unwrap_or_else(unix_time);
        Ok(generate_issued_at(&request, issued_at)?)
    }
}

fn parse_all<A: ToAddress>(
    addresses: impl IntoIterator<Item = A>,
    error: impl Fn(usize, AddressParseError) -> TokenBuildError,
) -> Result<Vec<SocketAddr>, TokenBuildError> {
    addresses
        .into_iter()
        .enumerate()
        .map(|(i, a)| a.to_address().map_err(|e| error(i, e)))
        .collect()
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

    #[test]
    fn builder_takes_address_strings() {
        let key = Key::from_bytes([9; 32]);
        let bytes = ConnectTokenBuilder::new(7, &key, 42)
            .server_addresses(["127.0.0.1:40000", "[::1]:40001"])
            .expire_seconds(45)
            .timeout_seconds(3)
            .generate()
            .unwrap();
        let token = ConnectToken::read(&bytes).unwrap();
        let expected: [SocketAddr; 2] = [
            "127.0.0.1:40000".parse().unwrap(),
            "[::1]:40001".parse().unwrap(),
        ];
        assert_eq!(&token.server_addresses[..], &expected);
        assert_eq!(token.expire_timestamp - token.create_timestamp, 45);
        assert_eq!(token.timeout_seconds, 3);
        assert_eq!(token.protocol_id, 7);
    }

    #[test]
    fn builder_reports_which_address_is_bad() {
        let key = Key::from_bytes([9; 32]);
        let result = ConnectTokenBuilder::new(7, &key, 42)
            .server_addresses(["127.0.0.1:40000", "127.0.0.1:40k"])
            .generate();
        assert_eq!(
            result,
            Err(TokenBuildError::PublicAddress {
                index: 1,
                error: AddressParseError::InvalidPort
            })
        );
        let none: [&str; 0] = [];
        let result = ConnectTokenBuilder::new(7, &key, 42)
            .server_addresses(none)
            .generate();
        assert!(matches!(result, Err(TokenBuildError::Token(_))));
        let result = ConnectTokenBuilder::new(7, &key, 42)
            .server_addresses(["127.0.0.1:1"])
            .internal_server_addresses(["127.0.0.2:1", "127.0.0.3:1"])
            .generate();
        assert!(matches!(result, Err(TokenBuildError::Token(_))));
    }
}
